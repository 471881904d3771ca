"""Pure NumPy analyses: cosine matrices, per-layer similarity, pooling, the scalar mix,
attention masks. Page sections built from these live in ``lab.views``.

Nothing here imports TensorFlow, Streamlit or Plotly: arrays in, arrays out. Shapes use
N layers, T / S tokens, C width, H heads.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

SPECIAL = ("[CLS]", "[SEP]", "[PAD]")

# Words too common to make a good default comparison ("the" is in both default sentences;
# "bank" is the interesting one).
STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been
    it its this that these those i you he she we they me him her us them my your his our
    their not no so do does did have has had will would can could should may might must
    there here then than too very just also into onto over under about up down out""".split()
)

_EPS = 1e-12


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors (C,) -> float; 0.0 if either is all zeros."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"cosine needs two (C,) vectors, got {a.shape} and {b.shape}")
    denom = np.linalg.norm(a) * np.linalg.norm(b)
    return float(a @ b / denom) if denom > _EPS else 0.0


def cosine_matrix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Cosine of every row of x against every row of y: (T, C), (S, C) -> (T, S)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[1]:
        raise ValueError(f"cosine_matrix needs (T, C) and (S, C), got {x.shape} and {y.shape}")
    return unit(x) @ unit(y).T  # (T, C) @ (C, S) -> (T, S)


def unit(x: np.ndarray) -> np.ndarray:
    """Each vector (the last axis) divided by its norm, in float64; a zero vector stays zero."""
    x = np.asarray(x, np.float64)
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), _EPS)


def layerwise_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of two tokens at each layer: (N, C), (N, C) -> (N,)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"layerwise_cosine needs two (N, C) arrays, got {a.shape} and {b.shape}")
    return np.array([cosine(x, y) for x, y in zip(a, b)])


def token_vs_tokens(token: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """One token against every token, per layer: (N, C), (N, T, C) -> (N, T)."""
    token, tokens = np.asarray(token), np.asarray(tokens)
    if token.ndim != 2 or tokens.ndim != 3 or tokens.shape[0] != token.shape[0]:
        raise ValueError(f"token_vs_tokens needs (N, C) and (N, T, C), got {token.shape}, {tokens.shape}")
    return np.stack([cosine_matrix(t[None], ts)[0] for t, ts in zip(token, tokens)])


POOLINGS = ("first", "mean")  # how a word's vector comes from its pieces (pool_pieces)


def check_pooling(how: str) -> str:
    """``how`` if it is one of ``POOLINGS``, else a ValueError saying which are."""
    if how not in POOLINGS:
        raise ValueError(f"pooling must be 'first' or 'mean', got {how!r}")
    return how


def pool_pieces(vectors: np.ndarray, positions: Sequence[int], how: str = "first") -> np.ndarray:
    """A word's vector from its word pieces: (..., T, C) at ``positions`` -> (..., C).

    ``how="first"`` takes the first piece (as BERT's token classifiers do); ``"mean"``
    averages the word's pieces.
    """
    if not len(positions):
        raise ValueError("the word has no pieces to pool")
    if check_pooling(how) == "first":
        return np.asarray(vectors)[..., positions[0], :]
    return np.asarray(vectors)[..., list(positions), :].mean(axis=-2)


def mean_pool(vectors: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Mean of the kept tokens: (T, C), keep (T,) bool -> (C,)."""
    keep = np.asarray(keep, bool)
    if not keep.any():
        raise ValueError("no tokens to pool")
    return np.asarray(vectors)[keep].mean(axis=0)


def content_mask(tokens: Sequence[str], length: int) -> np.ndarray:
    """(length,) bool: True for real content tokens, False for [CLS]/[SEP] and padding."""
    keep = np.zeros(length, bool)
    for i, tok in enumerate(tokens[:length]):
        keep[i] = tok not in SPECIAL
    return keep


def default_pair(words_a: Sequence[str], words_b: Sequence[str]) -> tuple[int, int]:
    """Word indices of the first content word both sentences share (case-insensitive).

    "The central bank ..." / "... on the river bank ..." -> the two "bank"s. A content word
    has two letters or more and is not a stop word. Falls back to the first shared word of
    any kind, then to (0, 0).
    """

    def norm(w: str) -> str:
        return w.casefold()

    def is_content(w: str) -> bool:  # two letters or more: not the "t" BERT splits off "don't" and "doesn't"
        return len(re.findall(r"\w", w)) >= 2 and norm(w) not in STOPWORDS

    for strict in (True, False):
        for i, w in enumerate(words_a):
            if strict and not is_content(w):
                continue
            for j, v in enumerate(words_b):
                if norm(w) == norm(v):
                    return i, j
    return 0, 0


def softmax(weights) -> np.ndarray:
    """softmax over a (K,) vector, computed stably: (K,) -> (K,) float64 summing to 1."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or not len(w):
        raise ValueError(f"softmax needs a non-empty (K,) vector, got shape {w.shape}")
    e = np.exp(w - w.max())
    return e / e.sum()


def scalar_mix(layers: np.ndarray, weights, gamma: float = 1.0) -> np.ndarray:
    """ELMo's scalar mix, gamma * sum_j softmax(weights)_j * layers[j]: (K, B, T, C), (K,) -> (B, T, C).

    The NumPy twin of the mix inside ``lab.models.elmo.ElmoModel.embed`` (Peters et al.,
    2018, eq. 1), for recomputing ``elmo`` from the page's sliders.
    """
    layers = np.asarray(layers, dtype=np.float32)
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or layers.shape[0] != w.shape[0]:
        raise ValueError(f"need one weight per layer: layers {layers.shape}, weights {w.shape}")
    return (gamma * np.tensordot(softmax(w), layers, axes=(0, 0))).astype(np.float32)


def part_contributions(parts: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """How much each embedding part adds to their sum: {name: (C,)} -> per-part figures.

    For each part: its norm, and its share of the sum, measured as the projection of the
    part on the summed vector divided by the squared norm of the sum (the shares add up
    to 1).
    """
    total = np.sum([np.asarray(v, np.float64) for v in parts.values()], axis=0)
    total_sq = float(total @ total)
    return {
        name: {
            "norm": float(np.linalg.norm(v)),
            "share": float(np.asarray(v, np.float64) @ total / total_sq) if total_sq > _EPS else 0.0,
        }
        for name, v in parts.items()
    }


# --- attention ---------------------------------------------------------------------------


def check_attention_rows(attn: np.ndarray, mask: np.ndarray, atol: float = 1e-5) -> bool:
    """True when every real query row of attn (..., T, T) sums to 1 and padded keys are 0."""
    attn, mask = np.asarray(attn), np.asarray(mask, bool)
    rows_ok = np.allclose(attn[..., mask, :].sum(-1), 1.0, atol=atol)
    return bool(rows_ok and (attn[..., ~mask] == 0).all())


def drop_tokens(attn: np.ndarray, keep: np.ndarray, renormalize: bool = True) -> np.ndarray:
    """Keep only the ``keep`` tokens as queries and keys: (..., T, T) -> (..., T', T').

    With ``renormalize`` each remaining row is divided by its new sum, so it again sums
    to 1 over the kept keys ("hide [CLS]/[SEP]" in the attention view).
    """
    keep = np.asarray(keep, bool)
    out = np.asarray(attn)[..., keep, :][..., keep]
    if renormalize:
        sums = out.sum(axis=-1, keepdims=True)
        out = np.divide(out, sums, out=np.zeros_like(out), where=sums > 0)
    return out


def quadrant(attn: np.ndarray, query_keep: np.ndarray, key_keep: np.ndarray) -> np.ndarray:
    """The block of attn (..., T, T) with queries ``query_keep`` and keys ``key_keep``.

    With a pair packed as ``[CLS] A [SEP] B [SEP]``, A->B is queries in A, keys in B.
    """
    q, k = np.asarray(query_keep, bool), np.asarray(key_keep, bool)
    return np.asarray(attn)[..., q, :][..., k]


def context_only(layer: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A biLM layer's context-only view: what it uses to predict each word.

    ``layer`` (B, T, C) is forward || backward (the first C/2 are the forward LM, as in
    ELMo's ``lstm_outputs1/2``); ``lengths`` (B,) the real lengths. Returns (B, T, C)
    where position k holds the forward half at k-1 (the words before k) and the backward
    half at k+1 (the words after k), so the word's own identity is left out. At the
    sentence ends (forward at k = 0, backward at k = len-1) the half is 0: the <S> / </S>
    boundary states are not among ELMo v3's outputs. Padding stays 0. Not an ELMo output:
    a view for comparing what the context alone says.
    """
    layer = np.asarray(layer)
    B, T, C = layer.shape
    if C % 2:
        raise ValueError(f"a biLM layer is forward || backward, so its width must be even, got {C}")
    h = C // 2
    keep = (np.arange(T)[None, :] < np.asarray(lengths)[:, None])[..., None]  # (B, T, 1)
    x = np.where(keep, layer, 0)  # padding past each length reads as 0
    out = np.zeros_like(x)
    out[:, 1:, :h] = x[:, :-1, :h]  # forward state at k-1
    out[:, :-1, h:] = x[:, 1:, h:]  # backward state at k+1 (0 past the last word)
    return np.where(keep, out, 0)


# --- anisotropy (Ethayarajh, EMNLP 2019) ---------------------------------------------------


def adjusted(cos, baseline):
    """A similarity read against the layer's anisotropy baseline: (cos - base) / (1 - base).

    0 means "as alike as two random words", 1 means identical; (N,), (N,) -> (N,).
    """
    cos, baseline = np.asarray(cos, np.float64), np.asarray(baseline, np.float64)
    return (cos - baseline) / np.maximum(1.0 - baseline, _EPS)


def random_pairs(groups: np.ndarray, n_pairs: int, seed: int = 0) -> np.ndarray:
    """``n_pairs`` index pairs (i, j) whose ``groups`` (e.g. sentence ids) differ: (M,) -> (P, 2).

    Drawn with a fixed seed, so a baseline is the same number on every run.
    """
    groups = np.asarray(groups)
    if len(np.unique(groups)) < 2:
        raise ValueError("random pairs need words from at least two different sentences")
    rng = np.random.default_rng(seed)
    pairs = np.empty((0, 2), np.int64)
    while len(pairs) < n_pairs:
        draw = rng.integers(0, len(groups), size=(2 * n_pairs, 2))
        pairs = np.concatenate([pairs, draw[groups[draw[:, 0]] != groups[draw[:, 1]]]])
    return pairs[:n_pairs]


def mean_pair_cosine(vectors: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Mean cosine of the given pairs at each layer: (N, M, C), (P, 2) -> (N,)."""
    v = np.asarray(vectors, np.float64)
    unit = v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), _EPS)  # (N, M, C)
    return (unit[:, pairs[:, 0]] * unit[:, pairs[:, 1]]).sum(-1).mean(axis=1)  # (N, P) -> (N,)


def pair_grams(vectors: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """What the baseline of any scalar mix of the layers needs: for each pair's words a and
    b, the dot products a_j·b_k, a_j·a_k and b_j·b_k between layers j and k.
    (N, M, C), (P, 2) -> (P, 3, N, N) float64 (``mix_baseline``)."""
    v = np.asarray(vectors, np.float64)
    a, b = v[:, pairs[:, 0]], v[:, pairs[:, 1]]  # (N, P, C) each
    return np.stack([np.einsum("jpc,kpc->pjk", x, y) for x, y in ((a, b), (a, a), (b, b))], axis=1)


def mix_baseline(grams: np.ndarray, weights) -> float:
    """The anisotropy baseline of ELMo's scalar mix with ``weights``: the mean over the pairs
    of cos(sum_j s_j a_j, sum_j s_j b_j), s = softmax(weights), from ``pair_grams`` (exact:
    a cosine of sums is a ratio of sums of those products; gamma scales both vectors and cancels).
    (P, 3, N, N), (N,) -> float."""
    s = softmax(weights)
    q = np.einsum("j,pijk,k->pi", s, np.asarray(grams, np.float64), s)  # (P, 3): a·b, |a|², |b|²
    return float((q[:, 0] / np.maximum(np.sqrt(np.maximum(q[:, 1] * q[:, 2], 0.0)), _EPS)).mean())


def self_similarity(vectors: np.ndarray) -> np.ndarray:
    """Mean cosine between a word's K vectors (one per context) at each layer: (N, K, C) -> (N,).

    The off-diagonal mean of each layer's (K, K) cosine matrix; needs K >= 2.
    """
    v = np.asarray(vectors, np.float64)
    if v.ndim != 3 or v.shape[1] < 2:
        raise ValueError(f"self-similarity needs (N, K >= 2, C) vectors, got shape {v.shape}")
    K = v.shape[1]
    sims = np.stack([cosine_matrix(layer, layer) for layer in v])  # (N, K, K)
    return (sims.sum(axis=(1, 2)) - np.trace(sims, axis1=1, axis2=2)) / (K * (K - 1))


def self_similarity_from_sums(unit_sum: np.ndarray, square_sum: np.ndarray, k: int) -> np.ndarray:
    """``self_similarity`` from running sums, for one pass over a corpus that never holds a
    word's K vectors at once: the sum of its K unit vectors (N, C) and of their squared
    norms (N,) -> (N,). The sum of a cosine matrix's off-diagonal cells is
    ||sum u_i||^2 - sum ||u_i||^2 (a zero vector's unit row is zero, as in ``cosine_matrix``)."""
    if k < 2:
        raise ValueError(f"self-similarity needs K >= 2 vectors, got {k}")
    total = np.asarray(unit_sum, np.float64)
    return (np.einsum("nc,nc->n", total, total) - np.asarray(square_sum, np.float64)) / (k * (k - 1))


def principal_plane(rows: np.ndarray, orient: int = -1, least: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(K, C) vectors -> their coordinates (K, 2) on their first two principal components
    (centred, float64), and the share of the total variance along each.

    A component's sign is arbitrary; each is turned so that row ``orient`` (default: the
    last) lies on its negative side (or at 0), so that a view stays the same way round
    from one layer to the next. Fewer than two components (one row, rows that vary along
    one direction only, or whose spread along a direction, its root mean square, is
    ``least`` or less: rounding) give 0 on the missing axis and a share of 0.
    """
    x = np.asarray(rows, np.float64)
    if x.ndim != 2 or len(x) < 1:
        raise ValueError(f"principal_plane needs (K, C) rows, got shape {x.shape}")
    centred = x - x.mean(axis=0)
    _, singular, axes = np.linalg.svd(centred, full_matrices=False)
    coords = np.zeros((len(x), 2))
    explained = np.zeros(2)
    total = float(np.sum(singular ** 2))
    for k in range(min(2, len(singular))):
        if singular[k] <= max(_EPS * max(1.0, singular[0]), least * np.sqrt(len(x))):
            break
        coords[:, k] = centred @ axes[k]
        if coords[orient, k] > 0:
            coords[:, k] *= -1
        explained[k] = singular[k] ** 2 / total
    return coords, explained


def top_k(unit_rows: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` rows most similar to ``query`` by cosine: (M, C) unit rows, (C,) -> indices, cosines.

    ``unit_rows`` are already divided by their norms (keep them float32: NumPy has no fast
    float16 product); ties keep the lower index first.
    """
    q = np.asarray(query, np.float32)
    q = q / max(float(np.linalg.norm(q)), _EPS)
    cos = np.asarray(unit_rows @ q.astype(unit_rows.dtype), np.float32)  # (M, C) @ (C,) -> (M,)
    k = min(k, len(cos))
    best = np.argpartition(-cos, k - 1)[:k] if k else np.array([], np.int64)
    best = best[np.lexsort((best, -cos[best]))]
    return best, cos[best]
