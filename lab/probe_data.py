"""The probing tasks' data: labelled words of WordNet's example sentences, their splits, and
the control tasks.

``lab/data/probe_words.tsv`` (``tools/build_probe_data.py``) holds one WordNet example
sentence a line with its headword's index, part of speech (Universal POS) and supersense
(WordNet's lexicographer file, nouns and verbs only) and its split. The tasks:

- ``pos``: the headword's part of speech (NOUN, VERB, ADJ, ADV). Open-class words only:
  WordNet has no closed-class words, so "I", "with", "them" are outside the task's classes.
- ``supersense``: the headword's coarse sense class, shared across words (``noun.group`` for
  money-bank, ``noun.object`` for river-bank), so a probe can learn it from other words.
- ``position``: which quarter of the sentence a word is in (``quarter``), for up to
  ``POSITION_WORDS`` words of each sentence: what the input layer gives away (BERT adds
  position embeddings; ELMo's characters carry none) and what deeper layers keep.

Splits are by sentence: a headword lemma among the held-out words (``HELD_OUT_PERCENT`` of
lemmas, by a stable hash) puts every sentence of it in ``unseen``, the word-held-out test
(no probe trains on its words as labelled examples; ``close_unseen`` also moves there every
sentence whose headword shares a form with one held out); the other sentences go to
``train``, ``dev`` or ``test`` by a hash of the sentence. The position task has no word-held-out test.

The control task of a task (Hewitt and Liang 2019) gives each word type (a word as written,
case-folded) one label, drawn from the task's label distribution in training and kept for
all its occurrences (``control_labels``): a probe can only score on it by memorising words,
so task accuracy minus control accuracy, the selectivity, is what the layer adds.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

DATA_FILE = Path(__file__).resolve().parent / "data" / "probe_words.tsv"
COLUMNS = ("sentence", "word", "headword", "lemma", "pos", "supersense", "split")
UPOS = {"n": "NOUN", "v": "VERB", "a": "ADJ", "s": "ADJ", "r": "ADV"}  # WordNet's parts of speech
TASKS = ("pos", "supersense", "position")
TASK_NAMES = {"pos": "part of speech", "supersense": "supersense", "position": "position in the sentence"}
LEXICAL = ("pos", "supersense")  # the tasks with a word-held-out test
SPLITS = ("train", "dev", "test", "unseen")
HELD_OUT_PERCENT = 12  # of headword lemmas: the word-held-out test's words
DEV_TEST_PERCENT = 10  # each, of the other sentences
POSITION_WORDS = 2  # words per sentence in the position task
QUARTERS = ("1st quarter", "2nd quarter", "3rd quarter", "4th quarter")


def _hash(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def split_of(sentence: str, lemma: str) -> str:
    """The split of a sentence whose headword's lemma is ``lemma``."""
    if _hash("word:" + lemma.casefold()) % 100 < HELD_OUT_PERCENT:
        return "unseen"
    h = _hash("sentence:" + sentence) % 100
    return "test" if h < DEV_TEST_PERCENT else "dev" if h < 2 * DEV_TEST_PERCENT else "train"


def close_unseen(words: list[str], lemmas: list[str], splits: list[str]) -> list[str]:
    """``splits`` with every sentence whose headword (as written, case-folded) or lemma is also
    a word-held-out sentence's moved to ``unseen``, until none is left: then no word of the
    word-held-out test is a training headword in any form ("dehydrated" as an adjective held
    out, as a form of the verb "dehydrate" in training)."""
    out = list(splits)
    while True:
        held = {("w", w.casefold()) for w, s in zip(words, out) if s == "unseen"} | {
            ("l", lemma) for lemma, s in zip(lemmas, out) if s == "unseen"}
        moved = [i for i, (w, lemma, s) in enumerate(zip(words, lemmas, out))
                 if s != "unseen" and (("w", w.casefold()) in held or ("l", lemma) in held)]
        if not moved:
            return out
        for i in moved:
            out[i] = "unseen"


def quarter(index: int, length: int) -> int:
    """Which quarter (0-3) of a sentence of ``length`` words the word at ``index`` is in."""
    if not 0 <= index < length:
        raise ValueError(f"word {index} is outside a sentence of {length} words")
    return min(3, 4 * index // length)


@dataclass(frozen=True)
class ProbeData:
    """The file's rows: each sentence's words, its headword's index and labels, its split."""

    path: str
    digest: str  # the file's SHA-256
    words: tuple[tuple[str, ...], ...]
    headword: tuple[int, ...]
    lemma: tuple[str, ...]
    pos: tuple[str, ...]
    supersense: tuple[str, ...]  # "-" where the headword has none (ADJ, ADV)
    split: tuple[str, ...]

    @property
    def sentences(self) -> list[str]:
        return [" ".join(w) for w in self.words]


def load_data(path: str | Path | None = None) -> ProbeData:
    """Read a probe data file (default ``DATA_FILE``); a clear error for a malformed line. Read
    once per process while the file's size and modification time stay the same."""
    path = Path(path or DATA_FILE)
    st = path.stat()
    return _read(str(path), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=2)
def _read(path: str, size: int, mtime_ns: int) -> ProbeData:
    raw = Path(path).read_bytes()
    rows = []
    for n, line in enumerate(raw.decode("utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != len(COLUMNS) or fields[-1] not in SPLITS or not fields[1].isdigit():
            raise ValueError(f"{path}, line {n}: expected the {len(COLUMNS)} tab-separated columns "
                             f"{', '.join(COLUMNS)} (split one of {', '.join(SPLITS)})")
        words = tuple(fields[0].split(" "))
        if int(fields[1]) >= len(words) or words[int(fields[1])] != fields[2]:
            raise ValueError(f"{path}, line {n}: word {fields[1]} of the sentence is not {fields[2]!r}")
        rows.append((words, int(fields[1]), fields[3], fields[4], fields[5], fields[6]))
    if not rows:
        raise ValueError(f"{path} holds no sentences")
    words, at, lemma, pos, sense, split = zip(*rows)
    return ProbeData(path, hashlib.sha256(raw).hexdigest(), words, at, lemma, pos, sense, split)


@dataclass(frozen=True)
class Examples:
    """One task's labelled words: the sentence (row of ``ProbeData``) and word index of each,
    its label, its word type (case-folded) and its split; ``classes`` in a fixed order."""

    task: str
    sentence: np.ndarray  # (M,) int
    word: np.ndarray  # (M,) int
    labels: np.ndarray  # (M,) int, indices into classes
    types: np.ndarray  # (M,) str
    split: np.ndarray  # (M,) str
    classes: tuple[str, ...]

    def where(self, split: str) -> np.ndarray:
        """The indices of the examples in ``split``."""
        return np.nonzero(self.split == split)[0]


def is_word(token: str) -> bool:
    return any(c.isalnum() for c in token)


def task_examples(data: ProbeData, task: str) -> Examples:
    """The labelled words of ``task`` (one of ``TASKS``)."""
    check_task(task)
    rows, at, labels = [], [], []
    for r, words in enumerate(data.words):
        if task == "position":
            candidates = [i for i, w in enumerate(words) if is_word(w)]
            start = _hash("position:" + " ".join(words))
            picked = sorted({candidates[(start + k * 7919) % len(candidates)] for k in range(POSITION_WORDS)})
            for i in picked:
                rows.append(r)
                at.append(i)
                labels.append(QUARTERS[quarter(i, len(words))])
        else:
            label = data.pos[r] if task == "pos" else data.supersense[r]
            if label != "-":
                rows.append(r)
                at.append(data.headword[r])
                labels.append(label)
    classes = tuple(QUARTERS) if task == "position" else tuple(sorted(set(labels)))
    index = {c: i for i, c in enumerate(classes)}
    split = [data.split[r] for r in rows]
    if task == "position":  # no word-held-out test: those sentences train and test as any other
        split = ["train" if s == "unseen" else s for s in split]
    return Examples(task, np.array(rows, np.int64), np.array(at, np.int64), np.array([index[c] for c in labels]),
                    np.array([data.words[r][i].casefold() for r, i in zip(rows, at)]), np.array(split), classes)


def check_task(task: str) -> str:
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}: use one of {', '.join(TASKS)}")
    return task


def control_labels(ex: Examples, seed: int = 0) -> np.ndarray:
    """The control task's label of every example (M,): each word type one label, drawn from
    the distribution of ``ex``'s training labels by a hash of the type and ``seed``, so that
    every occurrence of a type gets the same label and the labels keep the task's mix."""
    train = ex.labels[ex.where("train")]
    cumulative = np.cumsum(np.bincount(train, minlength=len(ex.classes))) / max(1, len(train))
    by_type = {}
    for t in dict.fromkeys(ex.types.tolist()):
        u = (_hash(f"control:{seed}:{t}") + 0.5) / 2**32  # uniform in (0, 1), fixed per type
        by_type[t] = min(int(np.searchsorted(cumulative, u, side="right")), len(ex.classes) - 1)
    return np.array([by_type[t] for t in ex.types.tolist()], np.int64)
