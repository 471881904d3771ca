"""The reference corpus: WordNet 3.0's example sentences, each with its synset and the
headword the sentence illustrates (``lab/data/reference_corpus.tsv``, built by
``tools/build_reference_corpus.py``; ``LAB_REFERENCE_CORPUS`` names another file). The
baselines, self-similarities and use maps of ``lab.reference`` are computed over it."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from lab.senses import Synset

CORPUS_FILE = Path(__file__).resolve().parent / "data" / "reference_corpus.tsv"


@dataclass(frozen=True)
class Corpus:
    """The reference sentences, their word tokens (``split_words``), the synset each is
    WordNet's example of and the lemma of it the sentence uses (None and "" where not
    known), and the file's SHA-256."""

    path: str
    sentences: tuple[str, ...]
    words: tuple[tuple[str, ...], ...]
    digest: str
    synsets: tuple[Synset | None, ...]
    headwords: tuple[str, ...]

    def containing(self, word: str) -> list[int]:
        """Indices of the sentences that hold ``word`` (case-blind), in corpus order."""
        return list(self.sentences_with.get(word.casefold(), ()))

    @cached_property
    def sentences_with(self) -> dict[str, tuple[int, ...]]:
        """Every casefolded word -> the sentences that hold it, in corpus order (built once)."""
        found: dict[str, list[int]] = {}
        for i, words in enumerate(self.words):
            for word in dict.fromkeys(w.casefold() for w in words):
                found.setdefault(word, []).append(i)
        return {word: tuple(rows) for word, rows in found.items()}


def corpus_path() -> Path:
    return Path(os.environ.get("LAB_REFERENCE_CORPUS") or CORPUS_FILE)


# A corpus line: the sentence alone (its sense not known), or tab-separated, the sentence and
# the synset it is an example of: its name, the headword (the lemma the sentence uses), its
# lemmas each with its tag count (``bank:25``, underscores for spaces) and its gloss.
COLUMNS = ("sentence", "synset", "headword", "lemmas", "gloss")


def corpus_line(sentence: str, synset: Synset | None = None, headword: str = "") -> str:
    """One line of a corpus file (``COLUMNS``); the sentence alone without a synset."""
    if synset is None:
        return sentence
    lemmas = " ".join(f"{lemma.replace(' ', '_')}:{n}" for lemma, n in zip(synset.lemmas, synset.counts))
    return "\t".join([sentence, synset.name, headword, lemmas, synset.gloss])


def parse_line(line: str) -> tuple[str, Synset | None, str]:
    """A corpus line (``corpus_line``) -> (sentence, synset or None, headword); a clear error
    for a line with a synset whose columns are not ``COLUMNS``."""
    fields = line.rstrip("\r\n").split("\t")
    if len(fields) == 1:
        return " ".join(fields[0].split()), None, ""
    try:
        sentence, name, headword, lemmas, gloss = fields
        pairs = [lemma.rsplit(":", 1) for lemma in lemmas.split()]
        synset = Synset(name, tuple(w.replace("_", " ") for w, _ in pairs), tuple(int(n) for _, n in pairs),
                        gloss.strip())
    except ValueError:
        raise ValueError(f"a corpus line with a synset needs the {len(COLUMNS)} tab-separated columns "
                         f"{', '.join(COLUMNS)} (lemmas as bank:25): {line.strip()[:120]!r}") from None
    return " ".join(sentence.split()), synset, headword.strip()


def load_corpus(path: str | None = None) -> Corpus:
    """Read a corpus file (default ``corpus_path()``, looked up at each call): one sentence
    per line (``corpus_line``); blank lines and ``#`` comments skipped."""
    return _read_corpus(str(path or corpus_path()))


@lru_cache(maxsize=4)
def _read_corpus(path: str) -> Corpus:
    from lab.tokenize import split_words

    file = Path(path)
    raw = file.read_bytes()
    rows = [parse_line(line) for line in raw.decode("utf-8").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
    rows = [r for r in rows if split_words(r[0])]
    if len(rows) < 2:
        raise ValueError(f"the reference corpus {file} needs at least two sentences")
    sentences, synsets, headwords = zip(*rows)
    return Corpus(str(file), sentences, tuple(tuple(split_words(s)) for s in sentences),
                  hashlib.sha256(raw).hexdigest(), synsets, headwords)
