"""Build ``lab/data/probe_words.tsv``: the labelled words the layer probes learn from.

    python tools/build_probe_data.py [--wordnet DIR] [--out FILE]

The sentences are WordNet 3.0's example sentences (fetched like the reference corpus's:
Debian's ``wordnet-base``), each with the synset it illustrates. In each, the headword (the
synset's one-word lemma the sentence uses, found as written, as a plain inflection or through
WordNet's irregular forms ``*.exc``) is labelled with:

- its part of speech, a Universal POS tag from the synset's (n, v, a, s, r: NOUN, VERB, ADJ,
  ADJ, ADV);
- its supersense, the synset's lexicographer file (``noun.group``, ``verb.motion``), for
  nouns and verbs; adjectives and adverbs have none ("-"): WordNet's ``adj.all`` and
  ``adv.all`` are one class each and would only repeat the part of speech.

Sentences whose headword cannot be found (a phrase, an unlisted form) are left out. Each
part of speech gets a fixed number of sentences (``QUOTA``): first the examples of the demo
words (the app's default sentences and the sense-pair words), then the rest in a fixed
order (a CRC-32 of the text), so the output is the same on every run. The split is by
sentence (``lab.probe_data.split_of``): a headword lemma among the held-out words puts its
every sentence in ``unseen`` (the word-held-out test); the others go to train, dev or test
by a hash of the sentence; then ``close_unseen`` moves to ``unseen`` every sentence whose
headword shares a form or lemma with a held-out one.
"""

from __future__ import annotations

import argparse
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from build_reference_corpus import DEMO_WORDS, examples, read_wordnet

from lab.elmo_training.corpus import DATA_FILES, fetch_wordnet, parse_synset_line
from lab.probe_data import COLUMNS, UPOS, close_unseen, split_of
from lab.senses import forms
from lab.tokenize import split_words

OUT = ROOT / "lab" / "data" / "probe_words.tsv"
QUOTA = {"NOUN": 1700, "VERB": 1300, "ADJ": 650, "ADV": 350}
EXCEPTIONS = ("noun.exc", "verb.exc", "adj.exc", "adv.exc")
HEADER = """\
# Context Lab probe data: WordNet 3.0 example sentences, each with its headword's position,
# part of speech (Universal POS) and supersense (lexicographer file; "-" for ADJ and ADV),
# and the split it belongs to (train, dev, test, unseen = the word-held-out test).
# Built by tools/build_probe_data.py (deterministic); lines starting with '#' are comments.
# Tab-separated columns: {columns}.
# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. Used under the
# WordNet 3.0 licence (free to use, copy, modify and distribute with this notice): see
# lab/data/README.md for the full licence text.
"""


def lexnames(folder: Path) -> list[str]:
    """Each synset's lexicographer file, in the order ``read_wordnet`` reads the synsets."""
    out = []
    for name in DATA_FILES:
        with open(folder / name, encoding="utf-8", errors="replace") as f:
            out += [parsed[4] for parsed in map(parse_synset_line, f) if parsed]
    return out


def irregular(folder: Path) -> dict[str, set[str]]:
    """Inflected form -> its lemmas (WordNet's ``*.exc``: ``ran run``)."""
    out: dict[str, set[str]] = {}
    for name in EXCEPTIONS:
        for line in (folder / name).read_text(encoding="utf-8", errors="replace").splitlines():
            form, *lemmas = line.split()
            out.setdefault(form, set()).update(lemmas)
    return out


def find_headword(words: list[str], lemma: str, exc: dict[str, set[str]]) -> int:
    """The index of the first of ``words`` that is ``lemma`` (one word), a plain inflection
    of it or one of its irregular forms; -1 where none is."""
    if " " in lemma or "-" in lemma:
        return -1
    plain = forms(lemma)
    for i, w in enumerate(words):
        folded = w.casefold()
        if folded in plain or lemma.casefold() in exc.get(folded, ()):
            return i
    return -1


def rows(folder: Path) -> list[tuple[str, ...]]:
    """Every usable example as a row of ``COLUMNS``, in WordNet's file order."""
    wordnet = read_wordnet(folder)
    lex = dict(zip((s.name for s, _ in wordnet), lexnames(folder)))
    exc = irregular(folder)
    out = []
    for e in examples(wordnet):
        words = split_words(e.text)
        at = find_headword(words, e.headword, exc)
        if at < 0:
            continue
        pos = UPOS[e.synset.name.split(".")[-2]]
        sense = lex[e.synset.name] if pos in ("NOUN", "VERB") else "-"
        lemma = e.headword.casefold()
        out.append((" ".join(words), str(at), words[at], lemma, pos, sense, split_of(e.text, lemma)))
    return out


def select(found: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """``QUOTA`` rows of each part of speech, the demo words' first, then in CRC-32 order;
    returned in WordNet's order."""
    demo = set(DEMO_WORDS)
    chosen = []
    for pos, quota in QUOTA.items():
        mine = [i for i, r in enumerate(found) if r[4] == pos]
        mine.sort(key=lambda i: (found[i][3] not in demo, zlib.crc32(found[i][0].encode())))
        chosen += mine[:quota]
    return [found[i] for i in sorted(chosen)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wordnet", default=None, help="folder with WordNet's data.*, index.*, *.exc and "
                                                        "cntlist.rev files (default: fetch)")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    folder = Path(args.wordnet) if args.wordnet else fetch_wordnet()
    chosen = select(rows(folder))
    splits = close_unseen([r[2] for r in chosen], [r[3] for r in chosen], [r[6] for r in chosen])
    chosen = [(*r[:6], split) for r, split in zip(chosen, splits)]
    text = HEADER.format(columns=", ".join(COLUMNS)) + "\n".join("\t".join(r) for r in chosen) + "\n"
    Path(args.out).write_text(text, encoding="utf-8")
    splits = {s: sum(r[-1] == s for r in chosen) for s in ("train", "dev", "test", "unseen")}
    print(f"wrote {args.out}: {len(chosen):,} sentences ({', '.join(f'{k} {v:,}' for k, v in splits.items())}), "
          f"{len({r[3] for r in chosen}):,} headwords, {Path(args.out).stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
