"""Layers shared by every Transformer in the lab: the padding mask, attention, norms.

One padding-mask convention for the whole package (as keras-hub's
``merge_padding_and_attention_mask``): a mask ``(B, T)`` with 1 for a real token and 0
for padding, turned into an additive bias ``(B, 1, 1, T)`` by ``padding_bias``. After
the softmax a masked key gets exactly zero probability: ``exp(-1e9 - max)`` underflows
to 0.0 in float32.

Shape letters: B batch, T tokens, H heads, D head size, C = H * D model width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Callable

import numpy as np
import tensorflow as tf

# Large enough that exp(score + MASK_BIAS - max) is exactly 0.0 in float32, small enough
# that adding it to a score stays finite.
MASK_BIAS = -1e9


def padding_bias(mask: tf.Tensor | np.ndarray) -> tf.Tensor:
    """Turn a padding mask into an additive attention bias.

    Args:
        mask: (B, T), 1 (or True) = real token, 0 = padding. Any other value is an error.

    Returns:
        float32 (B, 1, 1, T): 0.0 where the key is real, ``MASK_BIAS`` where it is padding,
        ready to add to scores (B, H, T_query, T_key).
    """
    return padding_bias_tf(tf.constant(check_padding_mask(mask)))


def check_padding_mask(mask: tf.Tensor | np.ndarray) -> np.ndarray:
    """``mask`` as a NumPy (B, T) array; a ValueError unless it holds only 0 and 1."""
    m = np.asarray(mask) if not isinstance(mask, tf.Tensor) else mask.numpy()
    if m.ndim != 2:
        raise ValueError(f"padding mask must be (batch, tokens), got shape {m.shape}")
    if not np.isin(m, (0, 1)).all():
        raise ValueError("padding mask must hold only 0 (padding) and 1 (real token)")
    return m


def padding_bias_tf(mask: tf.Tensor) -> tf.Tensor:
    """Graph-friendly ``padding_bias`` without the value check (for use inside tf.function)."""
    m = tf.cast(mask, tf.float32)[:, tf.newaxis, tf.newaxis, :]  # (B, 1, 1, T)
    return (1.0 - m) * MASK_BIAS


def split_heads(x: tf.Tensor, num_heads: int) -> tf.Tensor:
    """(B, T, C) -> (B, H, T, D)."""
    B, T = tf.shape(x)[0], tf.shape(x)[1]
    C = x.shape[-1]
    x = tf.reshape(x, (B, T, num_heads, C // num_heads))  # (B, T, H, D)
    return tf.transpose(x, (0, 2, 1, 3))  # (B, H, T, D)


def merge_heads(x: tf.Tensor) -> tf.Tensor:
    """(B, H, T, D) -> (B, T, C)."""
    B, H, T, D = tf.shape(x)[0], x.shape[1], tf.shape(x)[2], x.shape[3]
    x = tf.transpose(x, (0, 2, 1, 3))  # (B, T, H, D)
    return tf.reshape(x, (B, T, H * D))


def scaled_dot_product_attention(
    q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, bias: tf.Tensor | None
) -> tuple[tf.Tensor, tf.Tensor]:
    """Softmax(q k^T / sqrt(D) + bias) v.

    Args:
        q, k, v: (B, H, T, D).
        bias: (B, 1, 1, T) from ``padding_bias``, or None for no mask.

    Returns:
        (context (B, H, T, D), probabilities (B, H, T, T)); each probability row sums to 1
        over the real keys, and padded keys get exactly 0.
    """
    _, probs, context = _attend(q, k, v, bias)
    return context, probs


def _attend(q, k, v, bias):
    """(scaled scores, probabilities, context): the one place attention is computed."""
    scale = 1.0 / math.sqrt(q.shape[-1])  # 1/sqrt(head size): 1/sqrt(32) for MiniLM
    scores = tf.matmul(q, k, transpose_b=True) * scale  # (B, H, T, T)
    probs = tf.nn.softmax(scores if bias is None else scores + bias, axis=-1)  # (B, H, T, T)
    return scores, probs, tf.matmul(probs, v)  # context (B, H, T, D)


@dataclass(frozen=True)
class AttentionSteps:
    """One self-attention layer, every intermediate kept, per head (tensors inside a model,
    NumPy after ``numpy()``).

    ``x`` (B, T, C) the layer's input rows; ``q``, ``k``, ``v`` (B, H, T, D) the projections
    split into heads; ``scores`` (B, H, T, T) q k^T / sqrt(D), before the mask; ``bias``
    (B, 1, 1, T) the additive padding bias (0 or ``MASK_BIAS``), None when the mask is off;
    ``weights`` (B, H, T, T) softmax(scores + bias), query x key; ``context`` (B, H, T, D)
    weights @ v, each head's output before the heads are merged.
    """

    x: tf.Tensor | np.ndarray
    q: tf.Tensor | np.ndarray
    k: tf.Tensor | np.ndarray
    v: tf.Tensor | np.ndarray
    scores: tf.Tensor | np.ndarray
    bias: tf.Tensor | np.ndarray | None
    weights: tf.Tensor | np.ndarray
    context: tf.Tensor | np.ndarray

    @property
    def scale(self) -> float:
        """The factor the dot products are multiplied by: 1 / sqrt(D)."""
        return 1.0 / math.sqrt(self.q.shape[-1])

    def numpy(self) -> "AttentionSteps":
        """The same steps as NumPy arrays."""
        def arr(t):
            return t.numpy() if isinstance(t, tf.Tensor) else t
        return AttentionSteps(**{f.name: arr(getattr(self, f.name)) for f in fields(self)})


def self_attention(x: tf.Tensor, dense: Callable[[tf.Tensor, str], tf.Tensor], num_heads: int,
                   bias: tf.Tensor | None) -> AttentionSteps:
    """Multi-head self-attention of ``x`` (B, T, C), every step kept: the function both the
    seeded block and BERT run in their layers, so the steps a page shows are the model's own.

    Args:
        x: (B, T, C) the layer's input.
        dense: ``dense(x, name)`` projects (B, T, C) with the model's weights ``name`` in
            "q", "k", "v" (kernel and bias).
        num_heads: H.
        bias: (B, 1, 1, T) from ``padding_bias``, or None for no mask.
    """
    q = split_heads(dense(x, "q"), num_heads)  # (B, H, T, D)
    k = split_heads(dense(x, "k"), num_heads)
    v = split_heads(dense(x, "v"), num_heads)
    scores, probs, context = _attend(q, k, v, bias)
    return AttentionSteps(x, q, k, v, scores, bias, probs, context)


def layer_norm(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor, eps: float) -> tf.Tensor:
    """LayerNorm over the last axis, with the biased variance as BERT uses."""
    mean, var = tf.nn.moments(x, axes=[-1], keepdims=True)
    return (x - mean) * tf.math.rsqrt(var + eps) * gamma + beta


def gelu(x: tf.Tensor) -> tf.Tensor:
    """GELU, erf form (BERT's ``hidden_act='gelu'``), not the tanh approximation."""
    return tf.nn.gelu(x, approximate=False)
