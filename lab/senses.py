"""Word senses by context: the sense pairs, their scoring, anisotropy, and the WordNet
senses of a word's uses in the reference corpus (the use maps' colours).

The pairs live in ``lab/data/sense_pairs.json`` (12 ambiguous words, two senses with two
sentences each, written for this project and never trained on). A layer separates senses
when the cosine between a word's vectors in two sentences is higher for same-sense pairs
than for different-sense pairs; the score is the ROC AUC of that cosine (0.5 = chance).

Layers scored, by name:
- ``word_emb``, ``lstm_outputs1``, ``lstm_outputs2``, ``elmo``: ELMo v3's standard outputs
  (``word_emb`` is context-free, so it scores exactly 0.5);
- ``context1``, ``context2``: the context-only views of ``lstm_outputs1`` / ``lstm_outputs2``
  (``lab.analysis.context_only``: the forward state at the word before and the backward
  state at the word after, what the biLM uses to predict the word; not ELMo outputs).

Everything but ``layer_vectors`` / ``layer_aucs`` / ``word_cosines`` (which call a runner:
any object with ``run(tokens) -> LayerVectors``) is pure NumPy or plain Python.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from lab.analysis import context_only
from lab.tokenize import split_words

PAIRS_FILE = Path(__file__).resolve().parent / "data" / "sense_pairs.json"
# Other words, same layout: for choosing a training design or checkpoint (``lab.elmo_training``
# logs them), so that the test pairs above judge only a finished model.
DEV_PAIRS_FILE = PAIRS_FILE.with_name("sense_pairs_dev.json")
STANDARD = ("word_emb", "lstm_outputs1", "lstm_outputs2", "elmo")
CONTEXTUAL = STANDARD[1:]  # the standard outputs that see the context (word_emb scores 0.5)
CONTEXT = ("context1", "context2")  # context-only views of lstm_outputs1, lstm_outputs2
LAYERS = STANDARD + CONTEXT
# A model separates senses well when its best standard contextual output reaches
# SENSE_AUC_TARGET and its best context-only view CONTEXT_AUC_TARGET (the ELMo page says
# "only weakly" below the first; tests/test_elmo_mini.py holds ELMo-mini to both).
SENSE_AUC_TARGET = 0.75
CONTEXT_AUC_TARGET = 0.80


@lru_cache(maxsize=2)
def senses(path: Path = PAIRS_FILE) -> dict[str, dict[str, list[str]]]:
    """word -> sense name -> sentences (each holding the word once)."""
    return json.loads(Path(path).read_text())["words"]


def sense_pairs(path: Path = PAIRS_FILE) -> list[tuple[str, str, str, int]]:
    """Every pair of sentences of the same word: (word, sentence_a, sentence_b, same_sense)."""
    out = []
    for word, by_sense in senses(path).items():
        tagged = [(sense, s) for sense, sentences in by_sense.items() for s in sentences]
        for (sa, a), (sb, b) in itertools.combinations(tagged, 2):
            out.append((word, a, b, int(sa == sb)))
    return out


def roc_auc(scores, labels) -> float:
    """P(score of a positive > score of a negative), ties counting half (Mann-Whitney).

    From the positives' rank sum (ties given their average rank), in O(n log n): a class
    board of 300 sentences has 45,000 pairs, and comparing every positive pair with every
    negative one would be a billion comparisons per layer."""
    scores, labels = np.asarray(scores, float), np.asarray(labels, int)
    pos = labels == 1
    n_pos, n_neg = int(pos.sum()), int((labels == 0).sum())
    _, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    ranks = (np.cumsum(counts) - (counts - 1) / 2.0)[inverse]  # 1-based, ties averaged
    u = ranks[pos].sum() - n_pos * (n_pos + 1) / 2.0  # pairs a positive wins, ties half
    return float(u / (n_pos * n_neg))


def best_sense_auc(by_layer: dict[str, float]) -> float:
    """The best standard contextual output: ``lstm_outputs1``, ``lstm_outputs2`` or ``elmo``."""
    return max(by_layer[k] for k in CONTEXTUAL if k in by_layer)


def best_context_auc(by_layer: dict[str, float]) -> float:
    """The best context-only view: ``context1`` or ``context2``."""
    return max(by_layer[k] for k in CONTEXT if k in by_layer)


def best_layer(by_layer: dict[str, float], names) -> str:
    """The name among ``names`` with the highest score (the first on ties)."""
    names = [k for k in names if k in by_layer]
    return max(names, key=lambda k: (by_layer[k], -names.index(k)))


def views(out) -> dict[str, np.ndarray]:
    """Every scored layer of an ELMo run (``LayerVectors``), by name: (B, T, C') arrays, 0
    past each length."""
    lstm1, lstm2 = out.layer("lstm_outputs1"), out.layer("lstm_outputs2")
    return {
        "word_emb": out.elmo.word_emb,
        "lstm_outputs1": lstm1,
        "lstm_outputs2": lstm2,
        "elmo": out.elmo.elmo,
        "context1": context_only(lstm1, out.lengths),
        "context2": context_only(lstm2, out.lengths),
    }


def row_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of matching rows: (..., C), (..., C) -> (...); 0 where a vector is all zeros."""
    na, nb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)
    return (a * b).sum(-1) / np.maximum(na * nb, 1e-12)


def layer_vectors(runner, sentences: list[str], words: list[str]) -> dict[str, np.ndarray]:
    """Each sentence's vector of its word (first match, case-blind) in every layer: name -> (N, C')."""
    tokens = [split_words(s) for s in sentences]
    index = [[t.lower() for t in toks].index(w.lower()) for toks, w in zip(tokens, words)]
    rows = np.arange(len(tokens))
    return {name: v[rows, index] for name, v in views(runner.run(tokens)).items()}


def layer_aucs(runner, path: Path = PAIRS_FILE) -> dict[str, float]:
    """ROC AUC per layer (``LAYERS``) of the cosine between a word's vectors in two sentences,
    same-sense pairs (positives) against different-sense pairs (negatives); ``path``: the
    test pairs, or ``DEV_PAIRS_FILE``."""
    pairs = sense_pairs(path)
    labels = [same for *_, same in pairs]
    words = [p[0] for p in pairs]
    a = layer_vectors(runner, [p[1] for p in pairs], words)
    b = layer_vectors(runner, [p[2] for p in pairs], words)
    return {name: roc_auc(row_cosines(a[name], b[name]), labels) for name in LAYERS}


def word_cosines(runner, sentence_a: str, sentence_b: str, word: str) -> dict[str, float]:
    """The cosine, per layer, between ``word`` in sentence A and in sentence B."""
    v = layer_vectors(runner, [sentence_a, sentence_b], [word, word])
    return {name: float(row_cosines(x[0], x[1])) for name, x in v.items()}


def anisotropy(vectors: list[np.ndarray], n_pairs: int = 1000, seed: int = 0) -> float:
    """Mean cosine of ``n_pairs`` random pairs of tokens taken from different sentences.

    ``vectors``: one (T_i, C) array per sentence (real tokens only). Pairs are drawn with a
    seeded generator: a sentence pair (i != j), then a token of each. A high value means the
    vectors share a common direction (Ethayarajh 2019), so raw cosines read high everywhere.
    """
    rng = np.random.default_rng(seed)
    sentences = [np.asarray(v, np.float64) for v in vectors if len(v)]
    if len(sentences) < 2:
        raise ValueError("anisotropy needs tokens from at least two sentences")
    i = rng.integers(len(sentences), size=n_pairs)
    j = (i + rng.integers(1, len(sentences), size=n_pairs)) % len(sentences)  # never i
    a = np.stack([sentences[k][rng.integers(len(sentences[k]))] for k in i])
    b = np.stack([sentences[k][rng.integers(len(sentences[k]))] for k in j])
    return float(row_cosines(a, b).mean())


# --- the senses of a word's uses in the reference corpus -----------------------------------------
#
# The reference corpus (``lab.reference``) keeps WordNet's examples with the synset each is an
# example of and its headword, the synset's lemma the sentence uses. That synset is the sense
# of the headword only: in an example of sit.v.01 ("he sat on the bank of the river") "bank"
# has no known sense, nor in one of deposit.v.02 ("she deposited her salary at the bank"),
# though "bank" is one of that synset's lemmas (to bank money).

NAMED_SENSES = 4  # a use map names the word's most frequent senses, up to this many
OTHER_SENSE = "other sense"  # the uses of the word's less frequent senses, together
UNKNOWN_SENSE = "sense not known"  # uses in an example of another word's sense (or of none)


@dataclass(frozen=True)
class Synset:
    """A WordNet sense as the reference corpus keeps it.

    ``name`` as NLTK names it (``bank.n.01``: its first lemma, part of speech, that lemma's
    sense number); ``lemmas`` its words (``river bank``: spaces, not underscores); ``counts``
    WordNet's tag count of each lemma in this sense (how often the sense-tagged texts use
    that word in this sense: ``cntlist.rev``); ``gloss`` the first clause of its definition.
    """

    name: str
    lemmas: tuple[str, ...]
    counts: tuple[int, ...]
    gloss: str

    def tag_count(self, lemma: str) -> int:
        """WordNet's tag count of ``lemma`` (one of ``lemmas``, case-blind) in this sense."""
        return dict(zip((w.lower() for w in self.lemmas), self.counts))[lemma.lower()]


def forms(lemma: str) -> set[str]:
    """A one-word lemma and its plain inflections, lower case: bank -> bank, banks, banked,
    banking (and a few non-words, bankd, bankes, that match nothing)."""
    w = lemma.lower()
    return {w, w + "s", w + "es", w + "d", w + "ed", w + "ing"}


def known_sense(word: str, synset: Synset | None, headword: str) -> Synset | None:
    """The sense of ``word`` in an example of ``synset`` whose headword is ``headword``: the
    synset where the word (case-blind) is the headword or a plain inflection of it and the
    headword one of the synset's one-word lemmas; else None (not known)."""
    if synset is None or " " in headword or word.lower() not in forms(headword):
        return None
    return synset if headword.lower() in (w.lower() for w in synset.lemmas) else None


@dataclass(frozen=True)
class Sense:
    """One entry of a use map's legend: a sense of the word (``synset`` set), the word's other
    senses together (``OTHER_SENSE``) or the uses of unknown sense (``UNKNOWN_SENSE``)."""

    label: str  # the synset's name, OTHER_SENSE or UNKNOWN_SENSE
    gloss: str  # the synset's gloss; "" for the two groups
    tag_count: int  # WordNet's tag count of the word in this sense (of the group's senses, summed)
    uses: int  # the map's uses in it
    synset: Synset | None = None

    @property
    def named(self) -> bool:
        """A sense of its own in the legend (not one of the two groups)."""
        return self.synset is not None

    @property
    def known(self) -> bool:
        """A sense of the word, named or among the other senses."""
        return self.label != UNKNOWN_SENSE


@dataclass(frozen=True)
class UseSenses:
    """The senses of a word's uses: a legend and each use's entry in it."""

    legend: tuple[Sense, ...]  # named senses, most frequent first; then OTHER_SENSE, UNKNOWN_SENSE (where any)
    of_use: tuple[int, ...]  # (U,): each use's entry of ``legend``


def sense_legend(word: str, synsets, headwords, named: int = NAMED_SENSES) -> UseSenses:
    """The senses of the uses of ``word``, one in each sentence of ``synsets`` (each one's
    synset, or None) and ``headwords``: each use's known sense (``known_sense``); the
    ``named`` senses with the highest tag count of the word (then the most uses, then the
    name) in the legend each, the others one ``OTHER_SENSE`` entry, the uses of no known
    sense one ``UNKNOWN_SENSE`` entry."""
    known = [(known_sense(word, s, h), h) for s, h in zip(synsets, headwords, strict=True)]
    uses: dict[Synset, int] = {}
    count: dict[Synset, int] = {}
    for s, h in known:
        if s is not None:
            uses[s] = uses.get(s, 0) + 1
            count[s] = s.tag_count(h)
    ranked = sorted(uses, key=lambda s: (-count[s], -uses[s], s.name))
    legend = [Sense(s.name, s.gloss, count[s], uses[s], s) for s in ranked[:named]]
    entry: dict[Synset | None, int] = {s: k for k, s in enumerate(ranked[:named])}
    rest = ranked[named:]
    if rest:
        entry |= {s: len(legend) for s in rest}
        legend.append(Sense(OTHER_SENSE, "", sum(count[s] for s in rest), sum(uses[s] for s in rest)))
    unknown = sum(s is None for s, _ in known)
    if unknown:
        entry[None] = len(legend)
        legend.append(Sense(UNKNOWN_SENSE, "", 0, unknown))
    return UseSenses(tuple(legend), tuple(entry[s] for s, _ in known))
