"""The class board's numbers: every submitted use of the board's word, at every layer of a
model, placed on a map and scored for how well each layer sorts the uses by the class's senses.

A use is one sentence and the index of the board's word among ``lab.tokenize.split_words``
of it. Its vector at a layer is the word's vector as the ELMo vs BERT page reads it
(``lab.elmo_vs_bert.align``, pieces pooled by ``lab.analysis.pool_pieces``), so a dot on
the board is the same vector as that word on the other pages.

The map is the plane of the first two principal components of the uses' unit vectors (the
geometry of cosines), the same map the ELMo vs BERT page draws for a word's uses. PCA is
linear and deterministic: the same sentences give the same picture, and a distance on it is
a share of the distance between the vectors. t-SNE and UMAP are stochastic, need dozens of
points before their neighbourhoods mean anything (a class submits a handful to start with),
and would move dots between two redraws for reasons that are not the model's. A
component's sign, and which of two near-equal components comes first, are arbitrary: each
new frame is turned onto the one shown before it (``align_to``), so that a dot moves only
where the vectors do.

Vectors are computed from the stored sentences and kept in ``UseVectors``, a cache: never
the board's source of truth.

Shape letters: N layers, U uses, C width.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from lab import analysis
from lab.elmo_vs_bert import STORAGE_NOISE, _why_unplaced, align
from lab.senses import roc_auc
from lab.tokenize import split_words
from lab.vectors import LayerVectors

# --- vectors ---------------------------------------------------------------------------------


def use_vectors(out: LayerVectors, uses: Sequence[int], pool: str = "first") -> np.ndarray:
    """The vector of word ``uses[r]`` of row r at every layer: (N, U, C) float32.

    ``out`` is a run of one sentence per row (either family; a BERT run is aligned to words
    here, ``lab.elmo_vs_bert.align``), ``uses[r]`` an index into ``split_words`` of row r's
    sentence, ``pool`` how a BERT word's pieces make its vector (``analysis.POOLINGS``).

    Raises:
        ValueError: a use is not a word of its sentence, or the model has no token for it
            (cut off at its length limit), naming the sentence.
    """
    out = align(out)
    if len(uses) != len(out.words):
        raise ValueError(f"{len(uses)} uses for {len(out.words)} sentences")
    N, C = out.layers.shape[0], out.layers.shape[-1]
    result = np.zeros((N, len(uses), C), np.float32)
    for r, w in enumerate(uses):
        words, sentence = out.words[r], out.sentences[r]
        if not 0 <= w < len(words):
            raise ValueError(f"“{sentence}” has {len(words)} words, no word {w}")
        positions = out.positions(r, w)
        if not positions:
            raise ValueError(f"{out.short_label} cannot place “{words[w]}” in “{sentence}”: "
                             f"{_why_unplaced(out, r, w)}")
        result[:, r] = analysis.pool_pieces(out.layers[:, r], positions, pool)  # (N, T, C) -> (N, C)
    return result


# Uses kept per ``UseVectors``: a class's board for a lesson is some dozens of sentences per
# model; 2000 uses of a 7-layer, 384-wide BERT take 21 MB.
USES_KEPT = 2000


class UseVectors:
    """Use vectors by (family, source, pool, sentence, use), computed only for the sentences
    not seen before: a board that polls redraws with every new sentence, and runs the model
    on the new ones alone.

    An in-process LRU cache bounded in entries (``max_entries`` uses), safe to share between
    threads (the app's sessions): a lock guards the entries, the model runs outside it (two
    threads missing the same sentence both compute it; the result is the same).
    """

    def __init__(self, max_entries: int = USES_KEPT):
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple, np.ndarray] = OrderedDict()  # key -> (N, C)
        self._models: dict[tuple[str, str], tuple[list[str], int]] = {}  # (family, source) -> layer names, C
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def layer_names(self, family: str, source: str) -> list[str]:
        """The layer names of the model ``(family, source)`` (``out.layer_names``), once it has run here."""
        with self._lock:
            if (family, source) not in self._models:
                raise KeyError(f"no {family} model from {source} has run here yet")
            return list(self._models[(family, source)][0])

    def vectors(self, model, family: str, source: str, pool: str, texts: Sequence[str], uses: Sequence[int],
                batch: int = 32) -> np.ndarray:
        """``use_vectors`` of ``texts`` (one use each: ``uses``) under ``model``: (N, U, C) float32.

        ``family`` is "bert" (``model.run(texts)``) or "elmo" (``model.run`` of each text's
        ``split_words``); ``source`` names the model in the key. Only the texts not cached are
        run, ``batch`` at a time. With no texts: (N, 0, C) for a model that has run here,
        else (0, 0, 0).
        """
        if len(texts) != len(uses):
            raise ValueError(f"{len(uses)} uses for {len(texts)} sentences")
        keys = [(family, source, pool, str(t), int(u)) for t, u in zip(texts, uses)]
        found: dict[tuple, np.ndarray] = {}
        with self._lock:
            for key in keys:
                if key in self._entries:
                    self._entries.move_to_end(key)
                    found[key] = self._entries[key]
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        for start in range(0, len(missing), batch):
            part = missing[start : start + batch]
            out = _run(model, family, [k[3] for k in part])
            computed = use_vectors(out, [k[4] for k in part], pool)  # (N, b, C)
            with self._lock:
                self._models[(family, source)] = (list(out.layer_names), computed.shape[-1])
                for i, key in enumerate(part):
                    found[key] = self._entries[key] = computed[:, i].copy()  # (N, C), not a view of the run
                    self._entries.move_to_end(key)
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
        if not keys:
            with self._lock:
                names, C = self._models.get((family, source), ([], 0))
            return np.zeros((len(names), 0, C), np.float32)
        return np.stack([found[k] for k in keys], axis=1)  # U x (N, C) -> (N, U, C)


def _run(model, family: str, texts: list[str]) -> LayerVectors:
    if family == "elmo":
        return model.run([split_words(t) for t in texts])  # ELMo reads word tokens
    if family == "bert":
        return model.run(texts)
    raise ValueError(f"unknown model family {family!r}: 'bert' or 'elmo'")


# --- the map ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """The board's uses at one layer, placed in 2-D: ``coords[i]`` is the use ``ids[i]``."""

    ids: tuple[int, ...]
    coords: np.ndarray  # (U, 2)
    layer_name: str


def project(vectors: np.ndarray) -> np.ndarray:
    """(U, C) vectors -> (U, 2): their unit vectors on their first two principal components
    (``analysis.principal_plane``), the first use on the negative side of each. Spreads of
    ``STORAGE_NOISE`` or less are no spread: a character layer gives every use of a word
    one vector, up to float rounding between batch shapes."""
    x = np.asarray(vectors)
    if x.ndim != 2:
        raise ValueError(f"project needs (U, C) vectors, got shape {x.shape}")
    if not len(x):
        return np.zeros((0, 2))
    coords, _ = analysis.principal_plane(analysis.unit(x), orient=0, least=STORAGE_NOISE)
    return coords


def align_to(coords: np.ndarray, ids: Sequence[int], previous_coords: np.ndarray,
             previous_ids: Sequence[int]) -> np.ndarray:
    """``coords`` (U, 2) of uses ``ids`` turned, and moved, onto ``previous_coords`` of uses
    ``previous_ids``, fitted on the uses both hold: (U, 2).

    Two or more shared uses: orthogonal Procrustes with translation. The map may turn or be
    mirrored (a component's sign flip is a mirror image), never scaled: a change of spread
    between two frames is the model's doing, and shows. Where the shared uses lie on one
    line, a mirror image across it fits as well; the fit then keeps the frame's own
    handedness (a rotation). One shared use: that use stays where it was, each axis flipped
    where the use lay on the other side of the centre before (nothing to turn by). None: the
    frame as it is.
    """
    x = np.asarray(coords, np.float64)
    prev = np.asarray(previous_coords, np.float64)
    if x.shape != (len(ids), 2) or prev.shape != (len(previous_ids), 2):
        raise ValueError(f"align_to needs (U, 2) coordinates for each id: {x.shape} for {len(ids)} ids, "
                         f"{prev.shape} for {len(previous_ids)}")
    where = {i: k for k, i in enumerate(previous_ids)}
    shared = [(k, where[i]) for k, i in enumerate(ids) if i in where]
    if not shared:
        return x.copy()
    a = x[[k for k, _ in shared]]  # (S, 2): the shared uses now
    b = prev[[j for _, j in shared]]  # (S, 2): and before
    if len(shared) == 1:
        before = b[0] - prev.mean(axis=0)
        now = a[0] - x.mean(axis=0)
        flip = np.where(before * now < 0, -1.0, 1.0)  # (2,)
        return (x - a[0]) * flip + b[0]
    a_mean, b_mean = a.mean(axis=0), b.mean(axis=0)
    m = (a - a_mean).T @ (b - b_mean)  # (2, S) @ (S, 2) -> (2, 2)
    u, singular, vt = np.linalg.svd(m)
    if singular[0] <= 1e-12:  # the shared uses sit on one point, in one frame or both: nothing to turn by
        return x - a_mean + b_mean
    r = u @ vt  # (2, 2) orthogonal: argmin ||(a - a_mean) r - (b - b_mean)||
    if singular[1] <= 1e-9 * singular[0] and np.linalg.det(r) < 0:
        r = u @ np.diag([1.0, -1.0]) @ vt  # one line: the rotation that fits as well as the mirror image
    return (x - a_mean) @ r + b_mean  # (U, 2) @ (2, 2) -> (U, 2)


def frame(vectors_at_layer: np.ndarray, ids: Sequence[int], layer_name: str, previous: Frame | None = None) -> Frame:
    """The uses ``ids`` at one layer ((U, C) vectors) on their map (``project``), turned onto
    ``previous`` (``align_to``) when given: the frame shown before (an earlier board, another
    layer), so that the dots that stay keep their places."""
    ids = tuple(int(i) for i in ids)
    if len(set(ids)) != len(ids):
        raise ValueError("each use needs an id of its own")
    if len(vectors_at_layer) != len(ids):
        raise ValueError(f"{len(vectors_at_layer)} vectors for {len(ids)} ids")
    coords = project(vectors_at_layer)
    if previous is not None:
        coords = align_to(coords, ids, previous.coords, previous.ids)
    return Frame(ids, coords, layer_name)


def frames(vectors: np.ndarray, ids: Sequence[int], layer_names: Sequence[str],
           previous: Frame | None = None) -> list[Frame]:
    """Every layer's ``frame`` of (N, U, C) vectors: layer 0 turned onto ``previous``, each
    next layer onto the one below it, so that a slider over the layers moves a dot only as
    far as its vector moves from one layer to the next."""
    if len(vectors) != len(layer_names):
        raise ValueError(f"{len(vectors)} layers of vectors for {len(layer_names)} layer names")
    result: list[Frame] = []
    for at, name in zip(vectors, layer_names):
        result.append(frame(at, ids, name, result[-1] if result else previous))
    return result


# --- how well each layer sorts the senses ----------------------------------------------------


# Labelled sentences per sense, for two senses, before the board shows a separation: with
# fewer, one sentence swings the ROC AUC by a lot, and the swing reads as a finding. With
# 2 + 2 sentences there are 2 same-sense pairs and 4 across, 8 comparisons, each worth an
# eighth of the AUC; with 3 + 3, 6 and 9 pairs, 54 comparisons.
MIN_PER_SENSE = 3


@dataclass(frozen=True)
class Separation:
    """How well each layer tells the class's same-sense pairs of uses from different-sense pairs."""

    layer_names: list[str]
    auc: np.ndarray | None  # (N,): ROC AUC of the pairs' cosine per layer (0.5 = chance); None until enough
    labelled: dict[str, int]  # sentences per sense, in the order the senses first appear
    needed: int  # labelled sentences still needed before the measure is shown (0: shown)
    message: str


def separation(vectors: np.ndarray, senses: Sequence[str | None], layer_names: Sequence[str]) -> Separation:
    """ROC AUC (``lab.senses.roc_auc``) per layer over every pair of uses with a sense (None
    or "": not said): score = the pair's cosine at that layer, positive = the same sense.

    Shown once two senses have ``MIN_PER_SENSE`` labelled uses each; until then ``auc`` is
    None and ``needed`` counts the sentences missing: the two senses with the most uses
    topped up to ``MIN_PER_SENSE``.
    """
    v = np.asarray(vectors)
    if v.ndim != 3 or v.shape[:2] != (len(layer_names), len(senses)):
        raise ValueError(f"separation needs (N, U, C) vectors for {len(layer_names)} layers and {len(senses)} "
                         f"uses, got shape {v.shape}")
    labelled: dict[str, int] = {}
    for s in senses:
        if s:
            labelled[s] = labelled.get(s, 0) + 1
    top = sorted(labelled.values(), reverse=True)[:2] + [0, 0]
    needed = sum(max(0, MIN_PER_SENSE - c) for c in top[:2])
    if needed:
        now = ", ".join(f"{s} {c}" for s, c in labelled.items()) or "none yet"
        many = "sentence with a sense is" if needed == 1 else "sentences with a sense are"
        return Separation(list(layer_names), None, labelled, needed,
                          f"{needed} more {many} needed: at least {MIN_PER_SENSE} for each of two senses "
                          f"(now: {now}).")
    keep = [i for i, s in enumerate(senses) if s]
    names = np.array([senses[i] for i in keep])
    i, j = np.triu_indices(len(keep), k=1)  # every pair once
    same = (names[i] == names[j]).astype(np.int64)  # (P,)
    units = analysis.unit(v[:, keep])  # (N, K, C)
    cos = (units @ units.transpose(0, 2, 1))[:, i, j]  # (N, K, C) @ (N, C, K) -> (N, K, K) -> (N, P)
    auc = np.array([roc_auc(c, same) for c in cos])
    return Separation(list(layer_names), auc, labelled, 0,
                      f"ROC AUC over {len(same)} pairs of {len(keep)} sentences with a sense: {int(same.sum())} "
                      f"same-sense pairs, {int(len(same) - same.sum())} different-sense.")
