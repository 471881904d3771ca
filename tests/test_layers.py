"""The shared attention pieces: one padding-mask convention, exact zeros for padded keys."""

import numpy as np
import pytest
import tensorflow as tf

from lab.models import layers as nn


def test_padding_bias_shape_and_values():
    bias = nn.padding_bias(np.array([[1, 1, 0], [1, 0, 0]])).numpy()
    assert bias.shape == (2, 1, 1, 3)
    assert bias[0, 0, 0].tolist() == [0.0, 0.0, nn.MASK_BIAS]
    assert bias[1, 0, 0].tolist() == [0.0, nn.MASK_BIAS, nn.MASK_BIAS]


@pytest.mark.parametrize("bad", [np.array([1, 0]), np.array([[1, 2]]), np.array([[0.5, 1]])])
def test_padding_bias_rejects_bad_masks(bad):
    with pytest.raises(ValueError):
        nn.padding_bias(bad)


def test_attention_rows_sum_to_one_and_masked_keys_are_exactly_zero():
    rng = np.random.default_rng(0)
    q, k, v = (tf.constant(rng.normal(size=(2, 3, 5, 4)).astype(np.float32) * 4) for _ in range(3))
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    _, probs = nn.scaled_dot_product_attention(q, k, v, nn.padding_bias(mask))
    probs = probs.numpy()
    np.testing.assert_allclose(probs.sum(-1), 1.0, atol=1e-6)
    assert (probs[0, :, :, 3:] == 0.0).all()  # exactly zero, not merely small
    assert (probs[1] > 0).all()
    _, unmasked = nn.scaled_dot_product_attention(q, k, v, None)
    assert (unmasked.numpy()[0, :, :, 3:] > 0).all()


def test_split_and_merge_heads_round_trip():
    x = tf.constant(np.arange(2 * 3 * 8, dtype=np.float32).reshape(2, 3, 8))
    heads = nn.split_heads(x, 2)
    assert heads.shape == (2, 2, 3, 4)
    np.testing.assert_array_equal(nn.merge_heads(heads).numpy(), x.numpy())
