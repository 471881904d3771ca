"""Character ids as bilm-tf / AllenNLP make them: 50 per token, markers, +1 shift."""

import numpy as np
import pytest
import tensorflow as tf

from lab.models.elmo import BOS_IDS, EOS_IDS, add_sentence_boundaries, char_ids, char_ids_tf, token_char_ids


def test_ascii_token_has_markers_bytes_and_padding_all_shifted():
    ids = token_char_ids("bank")
    assert ids.shape == (50,) and ids.dtype == np.int32
    # begin-of-word 258, b a n k, end-of-word 259, then padding 260; all +1
    expected = [259, ord("b") + 1, ord("a") + 1, ord("n") + 1, ord("k") + 1, 260] + [261] * 44
    assert ids.tolist() == expected


def test_sentence_markers():
    assert token_char_ids("<S>").tolist()[:4] == [259, 257, 260, 261]
    assert token_char_ids("</S>").tolist()[:4] == [259, 258, 260, 261]
    assert (BOS_IDS[3:] == 261).all() and (EOS_IDS[3:] == 261).all()


def test_non_ascii_is_utf8_bytes():
    ids = token_char_ids("café")  # é is two UTF-8 bytes: 0xC3 0xA9
    assert ids[1:7].tolist() == [ord("c") + 1, ord("a") + 1, ord("f") + 1, 0xC3 + 1, 0xA9 + 1, 260]
    assert token_char_ids("日")[1:5].tolist() == [0xE6 + 1, 0x97 + 1, 0xA5 + 1, 260]


def test_long_tokens_truncate_to_48_bytes():
    ids = token_char_ids("x" * 60)
    assert ids[0] == 259
    assert (ids[1:49] == ord("x") + 1).all()
    assert ids[49] == 260  # end-of-word fills the last slot; no padding left
    assert (token_char_ids("x" * 48) == ids).all() and (token_char_ids("x" * 47) != ids).any()


def test_batch_pads_with_zero_rows():
    ids = char_ids([["a", "b", "c"], ["d"], []])
    assert ids.shape == (3, 3, 50)
    assert (ids[1, 1:] == 0).all() and (ids[2] == 0).all()
    assert (ids[0, 0] == token_char_ids("a")).all()
    assert ids.min() == 0 and (ids[0] > 0).all()  # real tokens never hold 0 (the +1 shift)


def test_graph_char_ids_match_numpy():
    tokens = [["The", "café", "x" * 60, "</S>"], ["日本", "", "", ""]]
    got = char_ids_tf(tf.constant(tokens), tf.constant([4, 1])).numpy()
    assert (got == char_ids([tokens[0], tokens[1][:1]])).all()


def test_sentence_boundaries_wrap_each_row_at_its_length():
    ids = char_ids([["a", "b"], ["c"]])
    wrapped, lengths = add_sentence_boundaries(tf.constant(ids), tf.constant([2, 1]))
    wrapped = wrapped.numpy()
    assert lengths.numpy().tolist() == [4, 3]
    assert wrapped.shape == (2, 4, 50)
    assert (wrapped[0, 0] == BOS_IDS).all() and (wrapped[0, 3] == EOS_IDS).all()
    assert (wrapped[1, 1] == token_char_ids("c")).all() and (wrapped[1, 2] == EOS_IDS).all()
    assert (wrapped[1, 3] == 0).all()


@pytest.mark.parametrize("bad", ["a sentence", [["ok"], "not a list"]])
def test_runner_rejects_untokenized_input(bad):
    from lab.models.elmo_io import _check_tokens

    with pytest.raises(TypeError):
        _check_tokens(bad)
