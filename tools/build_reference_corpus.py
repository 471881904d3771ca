"""Build ``lab/data/reference_corpus.txt``: the reference corpus of the "ELMo vs BERT" page.

    python tools/build_reference_corpus.py [--wordnet DIR] [--out FILE] [--size N]

The sentences are WordNet 3.0's example sentences (the quoted examples of its glosses),
fetched like ELMo-mini's training text (``lab.elmo_training.corpus.fetch_wordnet``: Debian's
``wordnet-base``). Every example holding one of ``DEMO_WORDS`` (the default sentences'
words and the sense-pair words, with plain inflections) is kept, up to ``PER_WORD`` per
word; the rest of the ``--size`` sentences are the other examples in a fixed order (a
CRC-32 of the text), so the output is the same on every run. Sentences are cleaned and
whitespace-normalized as the app cleans typed text.
"""

from __future__ import annotations

import argparse
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lab.elmo_training.corpus import DATA_FILES, fetch_wordnet, parse_synset_line  # noqa: E402
from lab.tokenize import clean_text, split_words  # noqa: E402

OUT = ROOT / "lab" / "data" / "reference_corpus.txt"
DEMO_WORDS = (
    "bank river money interest rate loan deposit shore water fish fisherman sunset central "
    "raise yesterday rest credit account cash stream boat pitcher bat spring bark light match "
    "plant crane seal bass palm ball glass"
).split()
PER_WORD = 80
HEADER = """\
# Context Lab reference corpus: English example sentences from WordNet 3.0, one per line.
# Built by tools/build_reference_corpus.py (deterministic); lines starting with '#' are comments.
# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. Used under the
# WordNet 3.0 licence (free to use, copy, modify and distribute with this notice): see
# lab/data/README.md for the full licence text.
"""


def forms(word: str) -> set[str]:
    """A word and its plain inflections: bank -> bank, banks, banked, banking."""
    return {word, word + "s", word + "es", word + "ed", word + "d", word + "ing"}


def examples(folder: Path) -> list[str]:
    """Every example sentence of WordNet, cleaned, in file order, without repeats."""
    seen, out = set(), []
    for name in DATA_FILES:
        with open(folder / name, encoding="utf-8", errors="replace") as f:
            for line in f:
                parsed = parse_synset_line(line)
                for text in parsed[3] if parsed else []:
                    text = " ".join(clean_text(text).split())
                    if len(split_words(text)) >= 4 and text not in seen:
                        seen.add(text)
                        out.append(text)
    return out


def select(sentences: list[str], size: int) -> list[str]:
    """The demo words' sentences (up to PER_WORD each), then a fixed-order fill to ``size``."""
    words = [{w.lower() for w in split_words(s)} for s in sentences]
    chosen: dict[int, None] = {}
    for demo in DEMO_WORDS:
        hits = [i for i, ws in enumerate(words) if ws & forms(demo)]
        for i in hits[:PER_WORD]:
            chosen[i] = None
    rest = sorted((i for i in range(len(sentences)) if i not in chosen),
                  key=lambda i: zlib.crc32(sentences[i].encode()))
    picked = list(chosen) + rest[: max(0, size - len(chosen))]
    return [sentences[i] for i in sorted(picked)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wordnet", default=None, help="folder with WordNet's data.* files (default: fetch)")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--size", type=int, default=4000)
    args = parser.parse_args(argv)
    sentences = select(examples(Path(args.wordnet) if args.wordnet else fetch_wordnet()), args.size)
    Path(args.out).write_text(HEADER + "\n".join(sentences) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(sentences)} sentences, {Path(args.out).stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
