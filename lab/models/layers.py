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
    scale = 1.0 / math.sqrt(q.shape[-1])  # 1/sqrt(head size): 1/sqrt(32) for MiniLM
    scores = tf.matmul(q, k, transpose_b=True) * scale  # (B, H, T, T)
    if bias is not None:
        scores = scores + bias
    probs = tf.nn.softmax(scores, axis=-1)  # (B, H, T, T)
    return tf.matmul(probs, v), probs  # (B, H, T, D)


def layer_norm(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor, eps: float) -> tf.Tensor:
    """LayerNorm over the last axis, with the biased variance as BERT uses."""
    mean, var = tf.nn.moments(x, axes=[-1], keepdims=True)
    return (x - mean) * tf.math.rsqrt(var + eps) * gamma + beta


def gelu(x: tf.Tensor) -> tf.Tensor:
    """GELU, erf form (BERT's ``hidden_act='gelu'``), not the tanh approximation."""
    return tf.nn.gelu(x, approximate=False)
