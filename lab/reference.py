"""The reference corpus and what each model makes of it: baselines, self-similarity, neighbours.

A cosine of 0.72 says little alone: contextual embedding spaces are anisotropic, so two
random words already have a high cosine in upper layers, differently in each model
(Ethayarajh, "How Contextual are Contextualized Word Representations?", EMNLP 2019). The
corpus (``lab/data/reference_corpus.tsv``, WordNet 3.0 examples, each with the synset it is
an example of; ``LAB_REFERENCE_CORPUS`` points elsewhere) gives each model
and layer:

- the anisotropy baseline: the mean cosine of random words from different sentences
  (``BASELINE_PAIRS`` pairs among the words of ``BASELINE_SENTENCES`` sentences, fixed seed);
- a word's self-similarity: the mean cosine between its vectors in the corpus's sentences
  that contain it (up to ``SELF_SIM_CONTEXTS``; fewer than ``MIN_OCCURRENCES`` is too rare);
- a neighbour index: every content word of the corpus at one layer, for nearest-neighbour
  queries. It is built for one layer at a time, on first use, in a pass over the whole
  corpus that also sums what the self-similarity of every word frequent enough needs: after
  it, a word's self-similarity is a lookup in that table, not a model run over up to
  ``SELF_SIM_CONTEXTS`` sentences for both models on each new word.

The corpus file itself is ``lab.reference_corpus``. The rest is one unit, a little over 500
lines: the stores of the three measures share one cache key, one memory budget and one
pass over the corpus, and splitting them would spread that one protocol over modules.

``ReferenceStore`` keeps them on disk (``LAB_CACHE_DIR``, default ``~/.cache/context-lab``)
under a key made of the model's source, label and weight files (size and modification
time: retrained weights get a new key) and the corpus's SHA-256, and in memory within a
byte budget. On disk the index is float16 (half the space); in memory float32 unit rows
(rounded through float16, so a fresh index and a cached one agree), because NumPy
multiplies float16 without BLAS, several times slower. One layer of the default corpus
(17,110 content words) takes 25 MB for the embedded BERT (width 384), 17 MB for ELMo-mini
(width 256) and would take 67 MB for ELMo v3 (width 1024); the default budget, 300 MB for
both models together, holds several layers and drops the least recently used.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from lab import analysis, sources
from lab.elmo_vs_bert import MIN_OCCURRENCES, align, is_word, word_matrix
from lab.locks import entry_lock
from lab.reference_corpus import Corpus, load_corpus  # noqa: F401 - read through this module too
from lab.vectors import LayerVectors

CACHE_VERSION = 3  # bump when what is cached changes meaning or names (the baselines store their layers' names)
BASELINE_SENTENCES = 400
BASELINE_PAIRS = 2000
SELF_SIM_CONTEXTS = 40
BATCH = 32
MEMORY_BUDGET = 300 * 2**20  # bytes, both models together

Progress = Callable[[float, str], None]


def _quiet(fraction: float, text: str) -> None:
    """The default progress report: none."""


# --- cache keys -------------------------------------------------------------------------------


def cache_dir() -> Path:
    return Path(os.environ.get("LAB_CACHE_DIR") or Path.home() / ".cache" / "context-lab")


def model_key(model) -> str:
    """A name for the model's cached vectors: its family, source, label and weight files."""
    return family_key(model.family, model.source, model.label)


# The files of one model's folder (``ReferenceStore``): its baselines (the mix's products
# beside them), a layer's neighbour index and the self-similarity table of a pooling
BASELINE_FILE = "baseline.json"
GRAMS_FILE = "baseline-grams.npz"


def index_file(layer: int, pool: str) -> str:
    return f"layer{layer}-{pool}.npz"


def table_file(pool: str) -> str:
    return f"self-similarity-{pool}.npz"


def family_key(family: str, source: str, label: str) -> str:
    """``model_key`` of the model of ``family`` from ``source`` named ``label``, without the model."""
    h = hashlib.sha256(f"{CACHE_VERSION}|{family}|{source}|{label}".encode())
    folder = sources.weights_folder(family, source)
    if folder is not None:
        for name, size, mtime_ns in sources.file_stats(folder):
            h.update(f"|{name}:{size}:{mtime_ns}".encode())
    return f"{family}-{h.hexdigest()[:16]}"


# --- running a model over sentences ------------------------------------------------------------


def embed_words(model, sentences: Sequence[str], layer: int | None = None, pool: str = "first",
                keep=is_word, progress: Progress = _quiet,
                each_batch: Callable[[LayerVectors, np.ndarray], None] | None = None,
                view: Callable[[LayerVectors], LayerVectors] | None = None,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """The model's vector of every kept word of ``sentences``, in batches of ``BATCH``.

    Returns vectors ((N, M, C), or (M, C) at ``layer``) float32, the sentence index and the
    word index of each (M,), and the layer names. Sentences are run shortest first (less
    padding); the output keeps the given sentence order. ``each_batch`` also gets each
    batch's aligned run (every layer) and the index in ``sentences`` of each of its rows.
    ``view`` turns each batch's aligned run into the one whose words are kept (layers added:
    ``lab.views.with_context_only``, say).
    """
    from lab.models import embed

    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    parts, names = [], []
    for start in range(0, len(order), BATCH):
        batch = order[start : start + BATCH]
        out = align(embed(model, [sentences[i] for i in batch]))
        if each_batch is not None:
            each_batch(out, np.asarray(batch))
        if view is not None:
            out = view(out)
        vecs, rows, words = word_matrix(out, layer, pool, keep)
        parts.append((vecs, np.asarray(batch)[rows], words))
        names = out.layer_names
        progress(min(1.0, (start + len(batch)) / len(order)), f"{start + len(batch):,} of {len(order):,} sentences")
    return *_in_order(parts, 0 if layer is not None else 1), list(names)


def _in_order(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], axis: int
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batches' (vectors, sentence, word) joined in the order of the sentences given, then of
    their words: the order ``embed_words`` returns whatever order the batches ran in."""
    vecs = np.concatenate([p[0] for p in parts], axis=axis)
    rows, words = np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts])
    at = np.lexsort((words, rows))
    return np.take(vecs, at, axis=axis), rows[at], words[at]


class PooledWords:
    """Every kept word's vectors at every layer with another pooling of its pieces, gathered
    from the aligned runs of an ``embed_words`` pass (``each_batch=pooled.add``) in the order
    it returns its own: one model run gives a BERT's words pooled both ways."""

    def __init__(self, pool: str, keep=is_word):
        self.pool, self.keep = pool, keep
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, out: LayerVectors, sentences: np.ndarray) -> None:
        vecs, rows, words = word_matrix(out, None, self.pool, self.keep)
        self.parts.append((vecs, sentences[rows], words))

    def gathered(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(N, M, C) vectors, the sentence (M,) and word (M,) of each, as ``embed_words``'s."""
        return _in_order(self.parts, 1)


def content_word(word: str) -> bool:
    """Words a neighbour list is about: letters or digits, not a stopword."""
    return is_word(word) and word.casefold() not in analysis.STOPWORDS


# --- what is cached ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Baseline:
    """A model's anisotropy baseline per layer (mean cosine of random words, different
    sentences), and of the views a page adds to its layers: ELMo's context-only views (by
    name, from the same pairs) and any scalar mix of the layers (from ``grams``).

    A BERT word cut into pieces is one vector only once they are pooled, so a BERT has a
    baseline per pooling, from the same word pairs: ``values`` with each word's first
    piece, ``mean`` with the mean of its pieces (``layers(pool)`` picks). An ELMo's words
    are single tokens: every pooling gives ``values`` (``mean`` is None)."""

    layer_names: list[str]
    values: np.ndarray  # (N,) first-piece pooling
    pairs: int
    sentences: int
    views: dict[str, float]  # a view's name (lab.views.CONTEXT_LAYERS) -> its baseline; {} for BERT
    grams: np.ndarray  # (P, 3, N, N) the pairs' dot products between layers (analysis.pair_grams)
    mean: np.ndarray | None = None  # (N,) a BERT's, with each word's pieces averaged

    def layers(self, pool: str = "first") -> np.ndarray:
        """Each layer's baseline for words pooled by ``pool`` ("first" or "mean"). (N,)"""
        return self.mean if analysis.check_pooling(pool) == "mean" and self.mean is not None else self.values

    def at(self, names: Sequence[str], mix_weights=None, pool: str = "first") -> np.ndarray:
        """The baseline of each of ``names``: a layer's (its words pooled by ``pool``), a
        view's, and the scalar mix's (``lab.views.MIX_LAYER``) for ``mix_weights``; NaN for
        a name it does not know. (len(names),)"""
        from lab.views import MIX_LAYER

        values = self.layers(pool)

        def one(name: str) -> float:
            if name in self.layer_names:
                return float(values[self.layer_names.index(name)])
            if name == MIX_LAYER and mix_weights is not None:
                return analysis.mix_baseline(self.grams, mix_weights)
            return float(self.views.get(name, np.nan))

        return np.array([one(n) for n in names], np.float64)


@dataclass(frozen=True)
class SelfSimilarity:
    """A word's mean cosine across its contexts in the corpus, per layer; None when too rare."""

    word: str
    contexts: int  # sentences of the corpus that hold it (all of them, not only those used)
    used: int  # the sentences its vectors came from (at most SELF_SIM_CONTEXTS)
    values: np.ndarray | None  # (N,)

    @property
    def too_rare(self) -> bool:
        return self.values is None


@dataclass(frozen=True)
class SelfSimilarityTable:
    """The self-similarity of every word the corpus holds often enough (``MIN_OCCURRENCES``
    sentences or more), per layer, from one pass over the corpus (``SelfSimilaritySums``):
    the same numbers as ``ReferenceStore._compute_self_similarity`` (up to float32 rounding:
    the sentences were batched differently), without a model run."""

    rows: dict[str, int]  # a casefolded word -> its row
    contexts: np.ndarray  # (W,) the corpus's sentences holding it
    used: np.ndarray  # (W,) the sentences its vectors came from (a word the model cannot place is left out)
    values: np.ndarray  # (W, N); NaN where fewer than MIN_OCCURRENCES were used

    def get(self, word: str) -> SelfSimilarity | None:
        """The word's self-similarity; None for a word the table does not hold (one in fewer
        than ``MIN_OCCURRENCES`` sentences of the corpus)."""
        i = self.rows.get(word.casefold())
        if i is None:
            return None
        used = int(self.used[i])
        return SelfSimilarity(word, int(self.contexts[i]), used,
                              self.values[i].copy() if used >= MIN_OCCURRENCES else None)

    def to_npz(self) -> bytes:
        return _npz(words=np.array(list(self.rows), dtype=str), contexts=self.contexts, used=self.used,
                    values=self.values)

    @classmethod
    def from_npz(cls, path: Path) -> SelfSimilarityTable:
        with np.load(path) as z:
            return cls({str(w): i for i, w in enumerate(z["words"])}, z["contexts"], z["used"], z["values"])


class SelfSimilaritySums:
    """What ``SelfSimilarityTable`` needs, summed batch by batch over a pass of the whole
    corpus (``embed_words(..., each_batch=sums.add)``): for each frequent word, the sum of
    its unit vectors (N, C) and of their squared norms in the first ``SELF_SIM_CONTEXTS``
    sentences that hold it, one occurrence (the first the model places) per sentence, as
    ``ReferenceStore._compute_self_similarity`` takes them. 16 MB of float64 for the
    embedded BERT on the default corpus (750 words x 7 layers x 384); the vectors themselves
    are never kept."""

    def __init__(self, corpus: Corpus, pool: str):
        hits = corpus.sentences_with
        frequent = [w for w, h in hits.items() if len(h) >= MIN_OCCURRENCES]
        self.pool = pool
        self.rows = {w: r for r, w in enumerate(frequent)}
        self.contexts = np.array([len(hits[w]) for w in frequent], np.int64)
        self.chosen = {w: frozenset(hits[w][:SELF_SIM_CONTEXTS]) for w in frequent}
        self.used = np.zeros(len(frequent), np.int64)
        self.sums: np.ndarray | None = None  # (W, N, C), once the layer count is known
        self.squares: np.ndarray | None = None  # (W, N)

    def add(self, out: LayerVectors, sentences: np.ndarray) -> None:
        """One aligned batch; ``sentences``: the corpus index of each of its rows."""
        if self.sums is None:
            N, C = out.layers.shape[0], out.layers.shape[-1]
            self.sums, self.squares = np.zeros((len(self.rows), N, C)), np.zeros((len(self.rows), N))
        for r, row_words in enumerate(out.words):
            s, seen = int(sentences[r]), set()
            for w, word in enumerate(row_words):
                key, pos = word.casefold(), out.word_positions[r][w]
                if not pos or key in seen or s not in self.chosen.get(key, ()):
                    continue
                seen.add(key)
                u = analysis.unit(analysis.pool_pieces(out.layers[:, r], pos, self.pool))  # (N, C)
                i = self.rows[key]
                self.sums[i] += u
                self.squares[i] += np.einsum("nc,nc->n", u, u)
                self.used[i] += 1

    def table(self) -> SelfSimilarityTable:
        values = np.full(self.squares.shape if self.squares is not None else (len(self.rows), 0), np.nan)
        for i, k in enumerate(self.used):
            if k >= MIN_OCCURRENCES:
                values[i] = analysis.self_similarity_from_sums(self.sums[i], self.squares[i], int(k))
        return SelfSimilarityTable(dict(self.rows), self.contexts, self.used.copy(), values)


@dataclass(frozen=True)
class LayerIndex:
    """Every content word of the corpus at one layer, as unit rows for cosine queries."""

    layer_name: str
    unit: np.ndarray  # (M, C) float32, each row divided by its norm
    rows: np.ndarray  # (M,) the sentence of each word
    words: np.ndarray  # (M,) its word index in that sentence

    @property
    def nbytes(self) -> int:
        return self.unit.nbytes + self.rows.nbytes + self.words.nbytes


class ReferenceStore:
    """Baselines, self-similarities and layer indices of a corpus, cached on disk and in memory.

    One store serves every model (keys include ``model_key``); the app keeps one per corpus
    for the whole process. Its caches change as it is used (a lock guards them), but a
    value it has handed out never changes. Processes may share its folder (several servers
    on one host): a baseline or index missing there is computed by one of them while the
    others wait, then read it (``lab.locks``).
    """

    def __init__(self, corpus: Corpus, folder: str | Path | None = None, budget: int = MEMORY_BUDGET):
        self.corpus, self.budget = corpus, budget
        self.folder = Path(folder) if folder else cache_dir()
        self._indices: OrderedDict[tuple, LayerIndex] = OrderedDict()
        self._small: dict[tuple, object] = {}
        self._lock = threading.RLock()

    def _dir(self, model) -> Path:
        return self._dir_of(model_key(model))

    def _dir_of(self, key: str) -> Path:
        return self.folder / key / self.corpus.digest[:16]

    # -- what the ELMo vs BERT page's first view reads --
    def prepare(self, model, progress: Progress = _quiet) -> None:
        """Compute (or read) what ``prepared`` looks for: the model's baselines, the neighbour
        index of its top layer (the layer the page opens on, first-piece pooling) and with it
        every frequent word's self-similarity."""
        self.index(model, len(self.baseline(model, progress).layer_names) - 1, "first", progress)

    def prepared(self, family: str, source: str, label: str) -> bool:
        """Whether ``prepare`` has left all of it on disk for the model of ``family`` from
        ``source`` named ``label`` (checked without the model)."""
        folder = self._dir_of(family_key(family, source, label))
        try:
            stored = json.loads((folder / BASELINE_FILE).read_text())
            top = len(stored["layer_names"]) - 1
        except (OSError, ValueError, KeyError, TypeError):
            return False
        return {"views", "mean"} <= stored.keys() and all((folder / name).is_file() for name in
                                         (GRAMS_FILE, index_file(top, "first"), table_file("first")))

    @property
    def memory_bytes(self) -> int:
        return sum(ix.nbytes for ix in self._indices.values())

    # -- baseline --
    def baseline(self, model, progress: Progress = _quiet) -> Baseline:
        key = ("baseline", model_key(model))
        with self._lock:
            if key in self._small:
                return self._small[key]
            folder = self._dir(model)
            result = _read_baseline(folder)
            if result is None:  # none yet, or one without the views' and mixes' baselines
                with entry_lock(folder / BASELINE_FILE):  # its grams too: they are written together
                    result = _read_baseline(folder)  # another process's, written while this one waited
                    if result is None:
                        result = self._compute_baseline(model, progress)
                        _write(folder / GRAMS_FILE, _npz(grams=result.grams.astype(np.float32)))
                        _write(folder / BASELINE_FILE, json.dumps({
                            "layer_names": result.layer_names, "values": result.values.tolist(),
                            "views": result.views, "mean": None if result.mean is None else result.mean.tolist(),
                            "pairs": result.pairs, "sentences": result.sentences}).encode())
            self._small[key] = result
            return result

    def _compute_baseline(self, model, progress: Progress) -> Baseline:
        from lab.views import CONTEXT_LAYERS, with_context_layers

        n = len(self.corpus.sentences)
        picked = np.sort(np.random.default_rng(0).choice(n, min(BASELINE_SENTENCES, n), replace=False))
        mean = PooledWords("mean") if model.family == "bert" else None  # the same words, pieces averaged
        vecs, rows, _, names = embed_words(model, [self.corpus.sentences[i] for i in picked], progress=progress,
                                           each_batch=None if mean is None else mean.add,
                                           # an ELMo's context-only views, from the same words
                                           view=with_context_layers)
        pairs = analysis.random_pairs(rows, BASELINE_PAIRS, seed=0)
        values = analysis.mean_pair_cosine(vecs, pairs)
        layers = names.index(CONTEXT_LAYERS[0]) if CONTEXT_LAYERS[0] in names else len(names)  # the model's own
        return Baseline(names[:layers], values[:layers], len(pairs), len(picked),
                        {name: float(v) for name, v in zip(names[layers:], values[layers:])},
                        analysis.pair_grams(vecs[:layers], pairs),
                        None if mean is None else analysis.mean_pair_cosine(mean.gathered()[0], pairs))

    # -- self-similarity --
    def self_similarity(self, model, word: str, pool: str = "first") -> SelfSimilarity:
        """From the table a neighbour index's pass left (``self_similarities``), else computed
        from the word's sentences (and kept)."""
        pool = _pool(model, pool)
        table = self.self_similarities(model, pool)
        if table is not None and (found := table.get(word)) is not None:
            return found
        key = ("self", model_key(model), word.casefold(), pool)
        with self._lock:
            if key not in self._small:
                self._small[key] = self._compute_self_similarity(model, word, pool)
            return self._small[key]

    def self_similarities(self, model, pool: str = "first") -> SelfSimilarityTable | None:
        """Every frequent word's self-similarity, from memory or disk; None until a neighbour
        index of ``pool`` has been built (its pass over the corpus makes the table)."""
        pool = _pool(model, pool)
        key = ("self-table", model_key(model), pool)
        with self._lock:
            if key not in self._small:
                path = self._table_path(model, pool)
                if not path.exists():
                    return None
                self._small[key] = SelfSimilarityTable.from_npz(path)
            return self._small[key]

    def _table_path(self, model, pool: str) -> Path:
        return self._dir(model) / table_file(pool)

    def _compute_self_similarity(self, model, word: str, pool: str) -> SelfSimilarity:
        hits = self.corpus.containing(word)
        used = hits[:SELF_SIM_CONTEXTS]
        if len(used) < MIN_OCCURRENCES:
            return SelfSimilarity(word, len(hits), len(used), None)
        sentences = [self.corpus.sentences[i] for i in used]
        vecs, rows, words, _ = embed_words(model, sentences, pool=pool,
                                           keep=lambda w: w.casefold() == word.casefold())
        first = np.unique(rows, return_index=True)[1]  # the first occurrence in each sentence
        if len(first) < MIN_OCCURRENCES:  # the model could not place enough of them
            return SelfSimilarity(word, len(hits), len(first), None)
        return SelfSimilarity(word, len(hits), len(first), analysis.self_similarity(vecs[:, first]))

    # -- neighbour index --
    def index(self, model, layer: int, pool: str = "first", progress: Progress = _quiet) -> LayerIndex:
        """The index of ``layer``: from memory, else from disk, else built (with ``progress``),
        and with it the self-similarity table of ``pool`` when there is none yet."""
        pool = _pool(model, pool)
        key = (model_key(model), layer, pool)
        with self._lock:
            if key in self._indices:
                self._indices.move_to_end(key)
                return self._indices[key]
            path = self._dir(model) / index_file(layer, pool)
            ix = _read_index(path)
            if ix is None:
                with entry_lock(path):  # and the table its pass makes, when there is none
                    ix = _read_index(path)  # another process's, written while this one waited
                    if ix is None:
                        ix = self._build_index(model, layer, pool, path, progress)
            self._indices[key] = ix
            while len(self._indices) > 1 and self.memory_bytes > self.budget:
                self._indices.popitem(last=False)  # the least recently used layer
            return ix

    def _build_index(self, model, layer: int, pool: str, path: Path, progress: Progress) -> LayerIndex:
        """Run the model over the corpus for the index of ``layer``, written to ``path``, and
        the self-similarity table of ``pool`` when there is none yet (from the same pass)."""
        table = self._table_path(model, pool)
        sums = None if table.exists() else SelfSimilaritySums(self.corpus, pool)
        vecs, rows, words, names = embed_words(model, self.corpus.sentences, layer, pool, content_word,
                                               progress, each_batch=None if sums is None else sums.add)
        # rounded through float16 here, so a fresh index and one read from disk agree
        ix = LayerIndex(names[layer], analysis.unit(vecs).astype(np.float16).astype(np.float32), rows, words)
        _write(path, _npz(layer_name=np.array(ix.layer_name), unit=ix.unit.astype(np.float16),
                          rows=ix.rows.astype(np.int32), words=ix.words.astype(np.int32)))
        if sums is not None:
            _write(table, sums.table().to_npz())
        return ix


def _pool(model, pool: str) -> str:
    """The pooling that matters for ``model``: ELMo's words are single tokens, so always "first"."""
    return pool if model.family == "bert" else "first"


def _npz(**arrays) -> bytes:
    import io

    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _read_index(path: Path) -> LayerIndex | None:
    """The neighbour index stored at ``path``; None if there is none."""
    if not path.exists():
        return None
    with np.load(path) as z:
        return LayerIndex(str(z["layer_name"]), z["unit"].astype(np.float32), z["rows"].astype(np.int64),
                          z["words"].astype(np.int64))


def _read_baseline(folder: Path) -> Baseline | None:
    """The baseline stored in ``folder``; None if there is none, or only one without the
    baselines of views, mixes and poolings (no "views", no "mean"): it is computed again."""
    try:
        d = json.loads((folder / BASELINE_FILE).read_text())
        with np.load(folder / GRAMS_FILE) as z:
            grams = z["grams"].astype(np.float64)
        return Baseline(d["layer_names"], np.array(d["values"]), d["pairs"], d["sentences"], d["views"], grams,
                        None if d["mean"] is None else np.array(d["mean"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write(path: Path, data: bytes) -> None:
    """Write a cache file whole or not at all (a killed build leaves no half file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# --- python -m lab baseline ----------------------------------------------------------------------

DEMO_WORDS = ("bank", "river", "money", "interest", "rate")


def baseline_table(store: ReferenceStore, model, words: Sequence[str]) -> list[str]:
    """Lines of a plain-text table: per layer, depth, baseline and each word's self-similarity."""
    from lab.elmo_vs_bert import depth

    base = store.baseline(model)
    sims = [store.self_similarity(model, w) for w in words]
    width = max(len(n) for n in base.layer_names) + 2
    lines = [f"{model.label}  (cache key {model_key(model)})",
             f"{'layer':{width}s}depth  baseline" + "".join(f"  {w[:12]:>12s}" for w in words)]
    for n, (name, d, b) in enumerate(zip(base.layer_names, depth(len(base.layer_names)), base.values)):
        cells = "".join(f"  {'too rare' if s.too_rare else f'{s.values[n]:.3f}':>12s}" for s in sims)
        lines.append(f"{name:{width}s}{d:5.2f}  {b:8.3f}{cells}")
    if base.views:  # an ELMo's context-only views: not layers (no depth, no self-similarity)
        lines.append("baselines of views: " + ", ".join(f"{name} {v:.3f}" for name, v in base.views.items()))
    if base.mean is not None:  # a BERT's, with each word's pieces averaged (the column is first-piece)
        lines.append("baselines, pieces averaged: " + ", ".join(f"{name} {v:.3f}"
                                                                for name, v in zip(base.layer_names, base.mean)))
    lines.append("self-similarity contexts: " + ", ".join(f"{s.word} {s.used} of {s.contexts}" for s in sims))
    return lines
