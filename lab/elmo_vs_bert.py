"""ELMo vs BERT: the two models on the same words, and each read against its own baselines.

The page works on *words*: the word tokens of ``lab.tokenize.split_words`` (the tokens ELMo
reads). ``align`` re-words a BERT run to those words, so that ``lab.views.word_pair`` works
on both models unchanged: a word's BERT vector is pooled from the word pieces inside the
word's characters (first piece or mean, as the BERT page does).

Every function here is pure NumPy over ``LayerVectors`` and reference results (``lab.reference``);
each page section is one call that returns a small frozen dataclass.

Shape letters: N layers, B rows, T tokens, C width, K contexts of one word, M corpus words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from lab import analysis, views
from lab.senses import UseSenses, sense_legend
from lab.tokenize import word_spans
from lab.vectors import LayerVectors

MIN_OCCURRENCES = 5  # fewer contexts in the corpus: too rare for a self-similarity
# Below this spread (root mean square, in unit-vector lengths) the uses of a word do not
# differ: the index stores its unit vectors as float16 (a few 1e-4 of rounding), and a
# character layer gives every use of a word one vector
STORAGE_NOISE = 0.01
NEIGHBOURS = 8


# --- words ---------------------------------------------------------------------------------


def is_word(token: str) -> bool:
    """True for a token with a letter or digit (not punctuation, not an emoji)."""
    return bool(re.search(r"\w", token))


def align(out: LayerVectors) -> LayerVectors:
    """``out`` with ``words`` = the word tokens of each sentence and ``word_positions`` =
    the model's token positions inside each word; an empty list where the model has no
    token there (cut off by its length limit).

    An ELMo run already reads those words and is returned as is. A BERT run (one sentence
    per row) is re-worded through its pieces' character offsets: "don't" is one word here,
    three pieces (don ' t) there.
    """
    if out.bert is None:
        return out
    if out.bert.pair:
        raise ValueError("align needs one sentence per row, not a packed pair")
    words, positions = [], []
    for enc in out.bert.encodings:
        spans = np.array(enc.spans, np.int64).reshape(-1, 2)  # (P, 2) character offsets of each piece
        row_words, row_pos = [], []
        for word, s, e in word_spans(enc.text):
            inside = np.nonzero((spans[:, 0] >= s) & (spans[:, 1] <= e) & (spans[:, 1] > spans[:, 0]))[0]
            row_words.append(word)
            row_pos.append([1 + int(i) for i in inside])  # piece i sits at position i + 1, after [CLS]
        words.append(row_words)
        positions.append(row_pos)
    return replace(out, words=words, word_positions=positions)


def find_word(words: Sequence[str], word: str) -> int:
    """Index of the first occurrence of ``word`` in ``words``, case-blind; -1 when absent."""
    folded = [w.casefold() for w in words]
    return folded.index(word.casefold()) if word.casefold() in folded else -1


def word_matrix(out: LayerVectors, layer: int | None = None, pool: str = "first",
                keep=is_word) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every kept word of an aligned run: vectors, row and word index of each.

    Returns ((N, M, C) or, with ``layer``, (M, C)) float32 vectors, rows (M,), words (M,).
    Words the model could not place (no tokens) are left out.
    """
    layers = out.layers if layer is None else out.layers[layer : layer + 1]
    vecs, rows, idx = [], [], []
    for r, row_words in enumerate(out.words):
        for w, word in enumerate(row_words):
            pos = out.word_positions[r][w]
            if pos and keep(word):
                vecs.append(analysis.pool_pieces(layers[:, r], pos, pool))  # (N, C)
                rows.append(r)
                idx.append(w)
    N, C = layers.shape[0], layers.shape[-1]
    v = np.stack(vecs, axis=1) if vecs else np.zeros((N, 0, C), np.float32)  # (N, M, C)
    return (v if layer is None else v[0]).astype(np.float32), np.array(rows, np.int64), np.array(idx, np.int64)


# --- 1. one word, both models ------------------------------------------------------------------


@dataclass(frozen=True)
class ModelCurve:
    """One model's cosine of the two selected words per layer, on the relative-depth axis."""

    model_label: str
    short_label: str
    layer_names: list[str]
    depth: np.ndarray  # (N,): 0 = input layer, 1 = top layer
    cosine: np.ndarray  # (N,)
    baseline: np.ndarray  # (N,): the anisotropy baseline of each layer
    texts: tuple[str, str]
    vectors_a: np.ndarray  # (N, C): word A's vector at each layer (the neighbour query)
    vectors_b: np.ndarray  # (N, C): word B's

    @property
    def adjusted(self) -> np.ndarray:
        """(cos - base) / (1 - base) per layer."""
        return analysis.adjusted(self.cosine, self.baseline)

    def lines(self, adjusted: bool) -> tuple[np.ndarray, np.ndarray]:
        """The two lines a chart draws: (cosine, baseline), or both adjusted (the baseline is then 0)."""
        if adjusted:
            return self.adjusted, analysis.adjusted(self.baseline, self.baseline)
        return self.cosine, self.baseline


def curve_rows(curves: Sequence[ModelCurve]) -> list[dict]:
    """One row per model and layer: model, layer, depth, cosine, baseline and adjusted
    similarity, rounded to 4 decimals (the comparison's table)."""
    return [{"model": c.short_label, "layer": n, "depth": round(float(d), 4), "cosine": round(float(cos), 4),
             "baseline": round(float(b), 4), "adjusted": round(float(adj), 4)}
            for c in curves for n, d, cos, b, adj in zip(c.layer_names, c.depth, c.cosine, c.baseline, c.adjusted)]


def _why_unplaced(out: LayerVectors, row: int, word: int) -> str:
    """Why an aligned run has no token inside word ``word`` of ``row``: its pieces end before
    the word (the length limit), or one piece spans the word and what touches it."""
    if out.bert is not None:
        enc = out.bert.encodings[row]
        start = list(word_spans(enc.text))[word][1]
        ends = np.array(enc.spans, np.int64).reshape(-1, 2)[:, 1]
        if ends.size and ends.max() > start:
            return ("the model read it together with the characters next to it as one token (an emoji or a "
                    "symbol joined to the word, say); with a space between them it can place the word")
    return "it was cut off at the model's length limit"


def depth(n_layers: int) -> np.ndarray:
    """Relative depth of each of N layers: 0 (input) ... 1 (top); (N,)."""
    return np.linspace(0.0, 1.0, n_layers) if n_layers > 1 else np.zeros(n_layers)


def model_curve(out: LayerVectors, a: tuple[int, int], b: tuple[int, int], pool: str,
                baseline: np.ndarray) -> ModelCurve:
    """The per-layer cosine of word ``a = (row, word)`` and word ``b`` of an aligned run.

    Raises ValueError (with the word) when the model has no token for one of them.
    """
    for row, word in (a, b):
        if 0 <= word < len(out.words[row]) and not out.positions(row, word):
            raise ValueError(f"{out.short_label} cannot place “{out.words[row][word]}” "
                             f"(sentence {'AB'[row]}): {_why_unplaced(out, row, word)}")
    pair = views.word_pair(out, a, b, pool)
    baseline = np.asarray(baseline, np.float64)
    if baseline.shape != pair.cosine.shape:
        raise ValueError(f"{len(baseline)} baselines for {len(pair.cosine)} layers")
    return ModelCurve(out.model_label, out.short_label, pair.layer_names, depth(len(pair.layer_names)),
                      pair.cosine, baseline, pair.texts, pair.vectors[0], pair.vectors[1])


# --- 3. nearest neighbours in context ------------------------------------------------------------


@dataclass(frozen=True)
class Neighbour:
    """One word occurrence of the corpus near the query: its sentence cut around it."""

    cosine: float
    sentence: int  # index into the corpus
    word: str
    before: str  # the sentence's text before the word
    after: str  # and after it


def neighbours(index, sentences: Sequence[str], query: np.ndarray, k: int = NEIGHBOURS) -> list[Neighbour]:
    """The ``k`` corpus words nearest to ``query`` (C,) by cosine at the index's layer.

    ``index`` is a ``lab.reference.LayerIndex`` (unit rows, their sentence and word index);
    ``sentences`` the corpus sentences it was built from.
    """
    best, cos = analysis.top_k(index.unit, query, k)
    found = []
    for i, c in zip(best, cos):
        before, word, after = in_context(sentences[index.rows[i]], index.words[i], room=None)
        found.append(Neighbour(float(c), int(index.rows[i]), word, before, after))
    return found


def same_word(found: Sequence[Neighbour], word: str) -> int:
    """How many of the neighbours ``found`` are uses of ``word`` itself (case aside): a layer
    whose nearest occurrences are other words groups by something other than the word."""
    return sum(n.word.casefold() == word.casefold() for n in found)


@dataclass(frozen=True)
class UseMap:
    """Every use of one word in the corpus at one layer, and the two selected uses (A's and
    B's), placed in the plane of their first two principal components; the sense of each
    use where its sentence is WordNet's example of a sense of the word."""

    word: str
    layer_name: str
    points: np.ndarray  # (U, 2): the corpus's uses
    sentences: list[int]  # (U,): the corpus sentence of each use
    words: list[int]  # (U,): its word index in that sentence
    yours: np.ndarray  # (2, 2): A's use, then B's (A's on the left of the first axis)
    explained: np.ndarray  # (2,): the share of the variance along each axis
    senses: UseSenses  # the legend of the uses' senses, and each use's entry (U,)

    @property
    def title(self) -> str:
        return f"The {len(self.sentences)} uses of “{self.word}” at {self.layer_name}"

    def contexts(self, sentences: Sequence[str]) -> list[tuple[str, str, str]]:
        """Each use in its sentence (``sentences``: the corpus's): text before, word, text after."""
        return [in_context(sentences[s], w) for s, w in zip(self.sentences, self.words)]


def use_map(index, corpus, word: str, vector_a: np.ndarray, vector_b: np.ndarray,
            fewest: int = MIN_OCCURRENCES) -> UseMap | None:
    """The uses of ``word`` (case-blind) among the rows of ``index`` (a
    ``lab.reference.LayerIndex`` built from ``corpus``, a ``lab.reference_corpus.Corpus``) and the
    two selected uses (their vectors at the index's layer), on their principal plane (of
    the unit vectors: the geometry of cosines), each with its sense (``lab.senses.sense_legend``
    of its sentence's synset and headword); None with fewer than ``fewest`` uses."""
    folded = word.casefold()
    candidates = np.flatnonzero(np.isin(index.rows, corpus.containing(word)))
    uses = [int(i) for i in candidates if corpus.words[index.rows[i]][index.words[i]].casefold() == folded]
    if len(uses) < fewest:
        return None
    units = np.asarray(index.unit[uses], np.float64)
    yours = analysis.unit(np.stack([vector_a, vector_b]))
    coords, explained = analysis.principal_plane(np.vstack([units, yours]), orient=len(units), least=STORAGE_NOISE)
    rows = [int(index.rows[i]) for i in uses]
    return UseMap(word, index.layer_name, coords[:-2], rows, [int(index.words[i]) for i in uses], coords[-2:],
                  explained, sense_legend(word, [corpus.synsets[r] for r in rows], [corpus.headwords[r] for r in rows]))


def in_context(sentence: str, word: int, room: int | None = 40) -> tuple[str, str, str]:
    """Word ``word`` of ``sentence`` (a ``split_words`` index) with the text before and after
    it, each cut to about ``room`` characters at a space (an ellipsis where cut; None: whole)."""
    text, s, e = word_spans(sentence)[word]
    before, after = sentence[:s], sentence[e:]
    if room is None:
        return before, text, after
    if len(before) > room:
        cut = before.find(" ", len(before) - room)
        before = "…" + before[cut if cut >= 0 else len(before) - room:]
    if len(after) > room:
        cut = after.rfind(" ", 0, room)
        after = after[:cut if cut > 0 else room] + " …"
    return before, text, after


# --- 4. the sense test ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SenseTest:
    """How well one model's layers tell same-sense pairs from different-sense pairs."""

    model_label: str
    short_label: str
    layer_names: list[str]
    depth: np.ndarray  # (N,)
    auc: np.ndarray  # (N,): ROC AUC of the pair cosine per layer (0.5 = chance)
    cosines: np.ndarray  # (P, N): each pair's cosine per layer
    labels: np.ndarray  # (P,): 1 = same sense
    pairs: list[tuple[str, str, str, int]]  # (word, sentence_a, sentence_b, same_sense)
    best: int  # the layer with the highest AUC (the first on ties)
    wrong: list[int]  # pairs ranked most wrong at ``best`` first (at most 5)


def pair_cosines(out: LayerVectors, sentences: Sequence[str], pairs: Sequence[tuple[str, str, str, int]],
                 pool: str = "first") -> np.ndarray:
    """Each pair's cosine per layer: (P, N). ``out`` is an aligned run of ``sentences`` (row r
    is sentences[r]), which hold every sentence of ``pairs``; a word the model cannot place
    gives NaN."""
    return _cosines(_word_vectors(out, sentences, pairs, pool), pairs, len(out.layer_names))


def _word_vectors(out: LayerVectors, sentences: Sequence[str], pairs: Sequence[tuple[str, str, str, int]],
                  pool: str) -> dict[tuple[str, str], np.ndarray]:
    """{(sentence, word): its (N, C) vectors} for the pairs' words in ``out``'s rows that the
    model can place (``find_word``, at least one token)."""
    row = {s: r for r, s in enumerate(sentences)}
    found = {}
    for word, *texts, _ in pairs:
        for text in texts:
            r = row.get(text)
            if r is None or (text, word) in found:
                continue
            w = find_word(out.words[r], word)
            if w >= 0 and out.positions(r, w):
                found[(text, word)] = analysis.pool_pieces(out.layers[:, r], out.positions(r, w), pool)
    return found


def _cosines(vectors: dict[tuple[str, str], np.ndarray], pairs: Sequence[tuple[str, str, str, int]],
             n_layers: int) -> np.ndarray:
    result = np.full((len(pairs), n_layers), np.nan)
    for p, (word, a, b, _) in enumerate(pairs):
        if (a, word) in vectors and (b, word) in vectors:
            result[p] = analysis.layerwise_cosine(vectors[(a, word)], vectors[(b, word)])
    return result


def wrongness(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """How wrong a ranking by ``scores`` is about each pair: for a same-sense pair, the share
    of different-sense pairs scoring at least as high; for a different-sense pair, the share
    of same-sense pairs scoring at most as high. (P,), (P,) -> (P,) in [0, 1]."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    return np.where(labels == 1, (neg[None, :] >= scores[:, None]).mean(axis=1),
                    (pos[None, :] <= scores[:, None]).mean(axis=1))


def sense_test(out: LayerVectors, sentences: Sequence[str], pairs: Sequence[tuple[str, str, str, int]], roc_auc,
               pool: str = "first", n_wrong: int = 5) -> SenseTest:
    """Score every layer of an aligned run of ``sentences`` on the sense pairs
    (``roc_auc(scores, labels)``: ``lab.senses.roc_auc``); pairs it cannot place are left out."""
    return _score(pair_cosines(out, sentences, pairs, pool), pairs, roc_auc, out, n_wrong)


# Sentences per model call in ``run_sense_test``: only the pairs' word vectors are kept
# between calls, since the runs of all 48 of the sense pairs' sentences hold 12 MB of BERT
# vectors alone.
SENSE_BATCH = 8


def run_sense_test(model, pairs: Sequence[tuple[str, str, str, int]], roc_auc, pool: str = "first",
                   batch: int = SENSE_BATCH, n_wrong: int = 5) -> SenseTest:
    """``sense_test`` of ``model`` (either family, ``lab.models.embed``) on the pairs' sentences,
    run ``batch`` sentences at a time; only the pairs' word vectors are kept between calls.
    Padding does not change a sentence's vectors, so this equals one run of them all (up to
    float32 rounding between batch shapes)."""
    from lab.models import embed

    sentences = list(dict.fromkeys(s for p in pairs for s in p[1:3]))
    vectors, out = {}, None
    for start in range(0, len(sentences), batch):
        part = sentences[start : start + batch]
        out = align(embed(model, part))
        vectors |= _word_vectors(out, part, pairs, pool)
    if out is None:
        raise ValueError("no sense pairs to score")
    return _score(_cosines(vectors, pairs, len(out.layer_names)), pairs, roc_auc, out, n_wrong)


def _score(cos: np.ndarray, pairs: Sequence[tuple[str, str, str, int]], roc_auc, out: LayerVectors,
           n_wrong: int) -> SenseTest:
    ok = ~np.isnan(cos).any(axis=1)
    cos, pairs = cos[ok], [p for p, keep in zip(pairs, ok) if keep]
    labels = np.array([p[3] for p in pairs], np.int64)
    if len(set(labels.tolist())) < 2:
        raise ValueError(f"{out.short_label} could place too few sense pairs to score them")
    auc = np.array([roc_auc(cos[:, n], labels) for n in range(cos.shape[1])])
    best = int(np.argmax(auc))
    wrong = wrongness(cos[:, best], labels)
    ranked = [int(i) for i in np.argsort(-wrong, kind="stable")[:n_wrong] if wrong[i] > 0]
    return SenseTest(out.model_label, out.short_label, list(out.layer_names), depth(len(out.layer_names)), auc,
                     cos, labels, pairs, best, ranked)


SENSE_GROUPS = {"same sense": 1, "different sense": 0}


def at_best(test: SenseTest) -> dict[str, tuple[np.ndarray, list[str]]]:
    """The pairs' cosines at the best layer and their words, by group ("same sense", ...)."""
    at = test.cosines[:, test.best]
    return {name: (at[test.labels == v], [p[0] for p, lab in zip(test.pairs, test.labels) if lab == v])
            for name, v in SENSE_GROUPS.items()}


@dataclass(frozen=True)
class Placed:
    """A person's pair among the sense pairs, at the model's best layer."""

    cosine: float
    above_same: float  # share of same-sense pairs with a lower cosine
    above_different: float  # share of different-sense pairs with a lower cosine


def placed(test: SenseTest, curve: ModelCurve) -> Placed:
    """Where the curve's pair falls among the sense pairs at the test's best layer."""
    cosine = float(curve.cosine[test.best])
    at = test.cosines[:, test.best]
    return Placed(cosine, float((at[test.labels == 1] < cosine).mean()), float((at[test.labels == 0] < cosine).mean()))


@dataclass(frozen=True)
class WrongPair:
    """One of the pairs a model gets most wrong at its best layer, and by how much."""

    word: str
    sentence_1: str
    sentence_2: str
    same_sense: bool
    cosine: float  # at the test's best layer
    against: float  # ``wrongness``: the share of the other group's pairs it is ranked wrongly against

    @property
    def why(self) -> str:
        """The mistake in words: a same-sense pair scored as low as different-sense pairs, or
        a different-sense pair as high as same-sense pairs."""
        if self.same_sense:
            return f"at or below {self.against:.0%} of different-sense pairs"
        return f"at or above {self.against:.0%} of same-sense pairs"


def most_wrong(test: SenseTest) -> list[WrongPair]:
    """``test.wrong``'s pairs, most wrong first, with their cosine and wrongness at the best layer."""
    at = test.cosines[:, test.best]
    wrong = wrongness(at, test.labels)
    return [WrongPair(*test.pairs[i][:3], bool(test.labels[i]), float(at[i]), float(wrong[i])) for i in test.wrong]
