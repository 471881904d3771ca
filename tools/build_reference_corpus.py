"""Build ``lab/data/reference_corpus.tsv``: the reference corpus of the "ELMo vs BERT" page.

    python tools/build_reference_corpus.py [--wordnet DIR] [--out FILE] [--size N]

The sentences are WordNet 3.0's example sentences (the quoted examples of its glosses),
fetched like ELMo-mini's training text (``lab.elmo_training.corpus.fetch_wordnet``: Debian's
``wordnet-base``), each kept with the synset it is an example of (``lab.reference_corpus.corpus_line``):
its NLTK name, its lemmas with WordNet's tag count of each in that sense (``cntlist.rev``,
matched to the synset through the sense numbers of the ``index.*`` files), the first clause
of its definition, and the headword (the lemma the sentence uses).

For every one of ``DEMO_WORDS`` (the default sentences' words and the sense-pair words),
first every example of a sense of the word itself (the word or a plain inflection of it is
one of the synset's lemmas and the sentence uses it: its sense is known), then other
examples holding the word, up to ``PER_WORD`` in all; the rest of the ``--size`` sentences
are the other examples in a fixed order (a CRC-32 of the text), so the output is the same
on every run. At the end come the sentences of ``WRITTEN``, more examples of senses WordNet
gives few of. Sentences are cleaned and whitespace-normalized as the app cleans typed text.
"""

from __future__ import annotations

import argparse
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lab.elmo_training.corpus import DATA_FILES, fetch_wordnet, parse_synset_line
from lab.reference_corpus import corpus_line
from lab.senses import Synset, forms, known_sense
from lab.tokenize import clean_text, split_words

OUT = ROOT / "lab" / "data" / "reference_corpus.tsv"
DEMO_WORDS = (
    "bank river money interest rate loan deposit shore water fish fisherman sunset central "
    "raise yesterday rest credit account cash stream boat pitcher bat spring bark light match "
    "plant crane seal bass palm ball glass"
).split()
PER_WORD = 80
INDEX_FILES = {"n": "index.noun", "v": "index.verb", "a": "index.adj", "r": "index.adv"}
COUNTS_FILE = "cntlist.rev"
SENSE_TYPES = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}  # a sense key's ss_type -> its index file
# More examples of senses WordNet gives one or two of, written for this project: the default
# sentences' "bank" in its two commonest senses
WRITTEN = Path(__file__).resolve().with_name("reference_examples.tsv")
HEADER = """\
# Context Lab reference corpus: English example sentences from WordNet 3.0, one per line, and
# at the end a few written for Context Lab (tools/reference_examples.tsv).
# Built by tools/build_reference_corpus.py (deterministic); lines starting with '#' are comments.
# Tab-separated: the sentence; the synset it is WordNet's example of (NLTK's name); the headword
# (the synset's lemma the sentence uses, else its first); the synset's lemmas, each with WordNet's
# tag count of it in this sense (cntlist.rev; underscores for spaces); the definition's first clause.
# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. Used under the
# WordNet 3.0 licence (free to use, copy, modify and distribute with this notice): see
# lab/data/README.md for the full licence text.
"""


@dataclass(frozen=True)
class Example:
    text: str
    synset: Synset
    headword: str


def sense_numbers(folder: Path) -> dict[tuple[str, str], list[str]]:
    """(lemma, index part of speech) -> its synsets' offsets, sense 1 first (``index.*``)."""
    out = {}
    for pos, name in INDEX_FILES.items():
        with open(folder / name, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(" "):  # the licence header
                    continue
                fields = line.split()
                lemma, synsets = fields[0], int(fields[2])
                out[(lemma, pos)] = fields[-synsets:]
    return out


def tag_counts(folder: Path) -> dict[tuple[str, str, int], int]:
    """(lemma, index part of speech, sense number) -> WordNet's tag count (``cntlist.rev``:
    ``bank%1:17:01:: 1 25``, sense key, sense number, count)."""
    out = {}
    with open(folder / COUNTS_FILE, encoding="utf-8", errors="replace") as f:
        for line in f:
            key, number, count = line.split()
            lemma, kind = key.split("%")
            out[(lemma, SENSE_TYPES[kind[0]], int(number))] = int(count)
    return out


def headword(words: list[str], lemmas: tuple[str, ...]) -> str:
    """The first of ``lemmas`` the sentence's ``words`` use (a one-word lemma or a plain
    inflection of it, a phrase word by word), else the first lemma."""
    folded = [w.casefold() for w in words]
    for lemma in lemmas:
        parts = lemma.casefold().split()
        if len(parts) == 1 and forms(lemma) & set(folded):
            return lemma
        if len(parts) > 1 and any(folded[i : i + len(parts)] == parts for i in range(len(folded))):
            return lemma
    return lemmas[0]


def read_wordnet(folder: Path) -> list[tuple[Synset, list[str]]]:
    """Every synset of WordNet's ``data.*`` files with its example sentences, in file order."""
    missing = [n for n in (*DATA_FILES, *INDEX_FILES.values(), COUNTS_FILE) if not (folder / n).is_file()]
    if missing:
        raise SystemExit(f"{folder} lacks WordNet's {', '.join(missing)}: install Debian's wordnet-base "
                         "(apt-get install wordnet-base) or leave --wordnet out to fetch it")
    numbers, counts = sense_numbers(folder), tag_counts(folder)
    out = []
    for name in DATA_FILES:
        with open(folder / name, encoding="utf-8", errors="replace") as f:
            for line in f:
                parsed = parse_synset_line(line)
                if not parsed:
                    continue
                key, lemmas, definition, texts, _ = parsed
                offset, pos = key[:-1], key[-1]
                index_pos = "a" if pos == "s" else pos  # a satellite adjective is in index.adj
                keys = [lemma.lower().replace(" ", "_") for lemma in lemmas]
                sense = [numbers[(k, index_pos)].index(offset) + 1 for k in keys]
                out.append((Synset(f"{keys[0]}.{pos}.{sense[0]:02d}", tuple(lemmas),
                                   tuple(counts.get((k, index_pos, n), 0) for k, n in zip(keys, sense)),
                                   " ".join(definition.split(";")[0].split())), texts))
    return out


def example(text: str, synset: Synset) -> Example | None:
    """A sentence of ``synset``, cleaned as the app cleans typed text; None under 4 words."""
    text = " ".join(clean_text(text).split())
    words = split_words(text)
    return Example(text, synset, headword(words, synset.lemmas)) if len(words) >= 4 else None


def examples(wordnet: list[tuple[Synset, list[str]]]) -> list[Example]:
    """Every example sentence of WordNet with its synset, in file order, without repeats (a
    sentence two synsets share keeps the first)."""
    seen, out = set(), []
    for synset, texts in wordnet:
        for e in filter(None, (example(t, synset) for t in texts)):
            if e.text not in seen:
                seen.add(e.text)
                out.append(e)
    return out


def written(wordnet: list[tuple[Synset, list[str]]], path: Path = WRITTEN) -> list[Example]:
    """The sentences of ``WRITTEN`` (sentence, tab, synset name), each with its synset."""
    by_name = {synset.name: synset for synset, _ in wordnet}
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            text, name = line.split("\t")
            out.append(example(text, by_name[name]))
    return out


def select(found: list[Example], size: int, always: list[Example] = ()) -> list[Example]:
    """``always``, then each demo word's sentences of ``found``, those of its own senses first
    (up to PER_WORD in all), then a fixed-order fill of ``found`` to ``size`` in all."""
    words = [{w.lower() for w in split_words(e.text)} for e in found]
    chosen: dict[int, None] = {}
    for demo in DEMO_WORDS:
        hits = [i for i, ws in enumerate(words) if ws & forms(demo)]
        own = [i for i in hits
               if any(known_sense(w, found[i].synset, found[i].headword) for w in words[i] & forms(demo))]
        for i in (own + [i for i in hits if i not in own])[:PER_WORD]:
            chosen[i] = None
    rest = sorted((i for i in range(len(found)) if i not in chosen), key=lambda i: zlib.crc32(found[i].text.encode()))
    picked = list(chosen) + rest[: max(0, size - len(always) - len(chosen))]
    return [found[i] for i in sorted(picked)] + list(always)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wordnet", default=None, help="folder with WordNet's data.*, index.* and cntlist.rev "
                                                        "files (default: fetch)")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--size", type=int, default=4000)
    args = parser.parse_args(argv)
    wordnet = read_wordnet(Path(args.wordnet) if args.wordnet else fetch_wordnet())
    chosen = select(examples(wordnet), args.size, written(wordnet))
    lines = [corpus_line(e.text, e.synset, e.headword) for e in chosen]
    Path(args.out).write_text(HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(chosen)} sentences, {len({e.synset for e in chosen}):,} synsets, "
          f"{Path(args.out).stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
