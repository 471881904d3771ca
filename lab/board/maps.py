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
frame is turned onto a frame before it (``align_to``), so that a dot moves only where the
vectors do. Which frame is a property of the board, not of whoever looks at it: the turns
are replayed from the board's visible sentences in arrival order (``board_frames``), so two
projectors, a reload and a server that took over after another died draw the same map.

Vectors are computed from the stored sentences and kept in ``UseVectors``, a cache: never
the board's source of truth.

Shape letters: N layers, U uses, C width.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np

from lab import analysis
from lab.elmo_vs_bert import STORAGE_NOISE, _why_unplaced, align
from lab.senses import roc_auc
from lab.tokenize import split_words
from lab.vectors import INPUT_LAYER, LayerVectors

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


def turn_stack(stack: Sequence[Frame], previous: Sequence[Frame]) -> list[Frame]:
    """Every layer's frame of ``stack`` turned by one rotation or mirror image, fitted on
    all layers' uses that ``previous`` (the same layers, fewer uses) holds too: (N,) frames.

    The fit (orthogonal Procrustes, as ``align_to``) sums every layer's shared uses, each
    layer centred on its own: a layer whose uses sit on one point adds nothing. One turn
    for all layers keeps the turns between the layers of ``stack``; each layer then moves
    so that its shared uses' centre stays where it was. Where the shared uses give nothing
    to turn by (one use, or all on one point), only that move; where they lie on one line
    in every layer, the rotation is kept over the mirror image that fits as well.
    """
    if len(stack) != len(previous):
        raise ValueError(f"{len(stack)} layers to turn onto {len(previous)}")
    m = np.zeros((2, 2))
    centres = []
    for now, before in zip(stack, previous):
        where = {i: k for k, i in enumerate(before.ids)}
        shared = [(k, where[i]) for k, i in enumerate(now.ids) if i in where]
        if not shared:
            centres.append(None)
            continue
        a = now.coords[[k for k, _ in shared]]  # (S, 2)
        b = before.coords[[j for _, j in shared]]  # (S, 2)
        a_mean, b_mean = a.mean(axis=0), b.mean(axis=0)
        m += (a - a_mean).T @ (b - b_mean)  # (2, S) @ (S, 2) -> (2, 2)
        centres.append((a_mean, b_mean))
    u, singular, vt = np.linalg.svd(m)
    r = np.eye(2)
    if singular[0] > 1e-12:
        r = u @ vt  # (2, 2) orthogonal
        if singular[1] <= 1e-9 * singular[0] and np.linalg.det(r) < 0:
            r = u @ np.diag([1.0, -1.0]) @ vt
    turned = []
    for now, centre in zip(stack, centres):
        a_mean, b_mean = centre if centre is not None else (np.zeros(2), np.zeros(2))
        turned.append(Frame(now.ids, (now.coords - a_mean) @ r + b_mean, now.layer_name))
    return turned


def board_frames(vectors: np.ndarray, ids: Sequence[int], layer_names: Sequence[str],
                 start: tuple[int, Sequence[Frame]] | None = None) -> list[Frame]:
    """The board's map at every layer: (N, U, C) vectors of the uses ``ids``, in the order
    they arrived, -> (N,) frames of all U uses.

    Replayed one arrival at a time: the first k uses make a stack of frames, layer 0 as
    ``project`` places it and each next layer turned onto the one below (``frames``); that
    stack is turned as one onto the stack of the first k - 1 uses (``turn_stack``). So the
    map at any layer stays put as sentences arrive, a slider over the layers moves a dot only
    as far as its vector moves, and the whole map is a function of the vectors and their
    order alone: anyone who replays it draws the same picture. ``start`` = (k, the stack of
    the first k uses, as this function returned it) resumes the replay there, with the same
    result as replaying from the first use.
    """
    v = np.asarray(vectors)
    ids = tuple(int(i) for i in ids)
    if v.ndim != 3 or v.shape[:2] != (len(layer_names), len(ids)):
        raise ValueError(f"board_frames needs (N, U, C) vectors for {len(layer_names)} layers and {len(ids)} "
                         f"uses, got shape {v.shape}")
    done, stack = start if start is not None else (0, [])
    stack = list(stack)
    if not 0 <= done <= len(ids) or (done and [f.ids for f in stack] != [ids[:done]] * len(layer_names)):
        raise ValueError(f"a replay cannot resume at {done} uses from frames of other uses")
    if not ids:
        return frames(v, ids, layer_names)
    for k in range(done + 1, len(ids) + 1):
        now = frames(v[:, :k], ids[:k], layer_names)  # (N,) frames of the first k uses
        stack = turn_stack(now, stack) if stack else now
    return stack


# Stacks kept per ``FrameChains``: one per model and sentence list seen lately (a board's
# revisions); a 7-layer stack of 60 uses is 7 KB.
STACKS_KEPT = 512


class FrameChains:
    """``board_frames`` remembered by their uses, so that a board's next revision (a sentence
    more) replays only the new arrival, and a poll that changed nothing replays nothing.

    ``frames(model, uses, ids, vectors, layer_names)``: ``model`` names the model and its
    pooling, ``uses[i]`` what makes use i's vector (its sentence and the word's index): the
    stack of the first k uses is kept under (model, uses[:k], ids[:k]) and resumed from the
    longest such prefix found. An in-process LRU of ``max_stacks`` stacks, safe to share
    between threads; the replay runs outside the lock.
    """

    def __init__(self, max_stacks: int = STACKS_KEPT):
        self.max_stacks = max_stacks
        self._stacks: OrderedDict[tuple, list[Frame]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._stacks)

    def frames(self, model: Hashable, uses: Sequence[Hashable], ids: Sequence[int], vectors: np.ndarray,
               layer_names: Sequence[str]) -> list[Frame]:
        ids = tuple(int(i) for i in ids)
        if len(uses) != len(ids):
            raise ValueError(f"{len(uses)} uses for {len(ids)} ids")
        keys = [(model, tuple(layer_names), tuple(zip(uses[:k], ids[:k]))) for k in range(len(ids) + 1)]
        start = None
        with self._lock:
            for k in range(len(ids), 0, -1):
                if keys[k] in self._stacks:
                    self._stacks.move_to_end(keys[k])
                    start = (k, self._stacks[keys[k]])
                    break
        if start is not None and start[0] == len(ids):
            return list(start[1])
        result = board_frames(vectors, ids, layer_names, start)
        with self._lock:
            self._stacks[keys[-1]] = result
            self._stacks.move_to_end(keys[-1])
            while len(self._stacks) > self.max_stacks:
                self._stacks.popitem(last=False)
        return list(result)


def map_range(stack: Sequence[Frame], least: float = 0.5, room: float = 1.1) -> tuple[np.ndarray, float]:
    """One box for a model's maps at every layer: (centre (2,), half its side), from the
    extent of all layers' dots together, ``room`` times that and at least ``least`` wide.
    Drawn at this range at every layer, a map shows a spread that grows or shrinks from one
    layer to the next ("bunched at the input layer") as it is."""
    points = [np.asarray(f.coords, float).reshape(-1, 2) for f in stack]
    points = np.vstack(points) if points else np.zeros((0, 2))
    if not len(points):
        return np.zeros(2), least / 2
    centre = (points.max(axis=0) + points.min(axis=0)) / 2
    return centre, max(least / 2, room * float(np.abs(points - centre).max()))


def coincide(frame: Frame, tolerance: float = 1e-9) -> bool:
    """Whether the frame's dots (two or more) all sit on one point: ``project`` puts uses
    whose vectors differ by ``STORAGE_NOISE`` or less on one point."""
    points = np.asarray(frame.coords, float).reshape(-1, 2)
    return len(points) >= 2 and float(np.abs(points - points.mean(axis=0)).max()) <= tolerance


_ELMO_LAYERS = {"lstm_outputs1": "layer 1 (first LSTM)", "lstm_outputs2": "layer 2 (second LSTM)"}


def layer_label(model: str, name: str) -> str:
    """A layer's name as a class reads it on the projector: "ELMo layer 1 (first LSTM)",
    "BERT layer 3", "BERT input layer" ("input layer" with no ``model``). ``model``: the
    model's name as people write it ("BERT", "ELMo"); ``name``: the layer's name in the
    model's output (``layer_names``, which the downloads keep)."""
    return " ".join(filter(None, [model, "input layer" if name == INPUT_LAYER else _ELMO_LAYERS.get(name, name)]))


def layer_tick(name: str) -> str:
    """A layer's short name on an axis that says "layer" in its title: "input", "3",
    "1 (first LSTM)"."""
    if name == INPUT_LAYER:
        return "input"
    shown = _ELMO_LAYERS.get(name, name)
    return shown[len("layer "):] if shown.startswith("layer ") else shown


def map_note(model: str, name: str, word: str, frame: Frame) -> str:
    """What a map needs said beside it: where all its dots sit on one point, that every use
    of the word is one vector there (at the input layer, because the layer reads the word
    alone); else nothing ("")."""
    if not coincide(frame):
        return ""
    if name == INPUT_LAYER:
        return (f"At the input layer every “{word}” is the same vector: {model} has not read the sentence yet, "
                "so all the dots sit on one point.")
    return f"At {layer_label(model, name)} every “{word}” is the same vector: all the dots sit on one point."


@dataclass(frozen=True)
class Counts:
    """What the projector counts: sentences shown, those with a sense, those held."""

    sentences: int
    with_sense: int
    waiting: int


def counts(senses: Sequence[str | None], waiting: int) -> Counts:
    """The counts of a board's shown uses (``senses``: each one's sense, None or "": not
    said) and of the sentences held for the teacher's approval."""
    return Counts(len(senses), sum(bool(s) for s in senses), int(waiting))


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


def told_apart(sense_names: Sequence[str]) -> tuple[str, str]:
    """The separation in plain words, for the board's senses: (the measure's name on the
    chart, one sentence that says how it is worked out and what its ends mean)."""
    names = [str(s) for s in sense_names]
    if len(names) == 2:
        measure = f"How often a {names[0]} sentence and a {names[1]} sentence are told apart"
    else:
        measure = "How often two sentences of different senses are told apart"
    how = ("For every two pairs of sentences, one pair of the same sense and one of different senses, the model "
           "is right when the same-sense pair is the closer one (by cosine, at that layer). 100 % is right "
           "every time; 50 % is no better than a coin (chance). Statisticians call this the ROC AUC.")
    return measure, how
