"""The minimal Transformer block: vocabulary and padding, shapes, masking, seeded weights."""

import numpy as np
import pytest

from lab.models.transformer import (
    TransformerBlock,
    TransformerConfig,
    Vocabulary,
    random_weights,
    run_block,
    sinusoidal_positions,
)

SENTENCES = ["The bank rested.", "A fisherman sat on the river bank at sunset!"]
TINY = TransformerConfig.tiny()


def test_vocabulary_from_sentences_has_padding_first_and_no_duplicates():
    vocab = Vocabulary.from_sentences(SENTENCES)
    assert vocab.words[:2] == ("[PAD]", "[UNK]") and vocab.pad_id == 0
    assert vocab.words[2:6] == ("the", "bank", "rested", ".")
    assert len(set(vocab.words)) == len(vocab)
    assert vocab.ids("THE Bank ??") == [2, 3, 1, 1]  # case-insensitive, unknown -> [UNK]


def test_encode_pads_the_shorter_sentence_with_id_zero():
    vocab = Vocabulary.from_sentences(SENTENCES)
    batch = vocab.encode(SENTENCES, max_tokens=64)
    assert batch.token_ids.shape == batch.padding_mask.shape == (2, 10)
    assert batch.token_ids.dtype == np.int32
    assert batch.tokens[0] == ["the", "bank", "rested", "."] + ["[PAD]"] * 6
    assert batch.token_ids[0, 4:].tolist() == [0] * 6
    assert batch.padding_mask.tolist() == [[1] * 4 + [0] * 6, [1] * 10]
    assert batch.truncated == [False, False]


def test_encode_cuts_long_sentences_and_rejects_empty_ones():
    vocab = Vocabulary.from_sentences(SENTENCES)
    batch = vocab.encode(SENTENCES, max_tokens=6)
    assert batch.token_ids.shape == (2, 6) and batch.truncated == [False, True]
    with pytest.raises(ValueError, match="Sentence 2 has no tokens"):
        vocab.encode(["bank", "   "], max_tokens=6)


def test_shapes_on_the_tiny_config():
    out = run_block(SENTENCES, config=TINY)
    assert out.batch.token_ids.shape == (2, TINY.max_tokens)
    assert out.output.shape == (2, TINY.max_tokens, TINY.width)
    assert out.attentions.shape == (2, TINY.num_heads, TINY.max_tokens, TINY.max_tokens)
    assert out.batch.truncated == [False, True]


def test_rows_sum_to_one_over_real_keys_and_masked_keys_are_exactly_zero():
    out = run_block(SENTENCES, config=TINY)
    attn, mask = out.attentions, out.batch.padding_mask.astype(bool)
    np.testing.assert_allclose(attn.sum(-1), 1.0, atol=1e-5)
    padded = attn[0][..., ~mask[0]]  # (H, T, padded keys) of the short sentence
    assert padded.size and (padded == 0.0).all()  # exactly zero, not merely small
    assert (attn[0][..., mask[0]] > 0).all()


def test_without_the_mask_attention_leaks_into_padding():
    out = run_block(SENTENCES, use_mask=False, config=TINY)
    mask = out.batch.padding_mask.astype(bool)
    np.testing.assert_allclose(out.attentions.sum(-1), 1.0, atol=1e-5)
    assert (out.attentions[0][..., ~mask[0]] > 0).all()


def test_padding_does_not_change_real_tokens_when_masked():
    vocab = Vocabulary.from_sentences(SENTENCES)
    batch = vocab.encode(SENTENCES, max_tokens=64)
    block = TransformerBlock(TINY, len(vocab), seed=3)
    n = int(batch.padding_mask[0].sum())
    alone = block(batch.token_ids[:1, :n], batch.padding_mask[:1, :n])
    padded = block(batch.token_ids, batch.padding_mask)
    np.testing.assert_allclose(alone.output[0], padded.output[0, :n], atol=1e-5)
    leaky = block(batch.token_ids, batch.padding_mask, use_mask=False)
    assert not np.allclose(alone.output[0], leaky.output[0, :n], atol=1e-3)


def test_the_seeded_block_is_identical_across_runs_and_differs_for_another_seed():
    a, b = run_block(SENTENCES, seed=7), run_block(SENTENCES, seed=7)
    np.testing.assert_array_equal(a.attentions, b.attentions)
    np.testing.assert_array_equal(a.output, b.output)
    c = run_block(SENTENCES, seed=8)
    assert not np.allclose(a.attentions, c.attentions)
    assert "seed 7" in a.label and "untrained" in a.label


def test_weights_depend_on_the_seed_only_and_a_bigger_vocabulary_adds_rows():
    small, big = random_weights(TINY, 5, seed=1), random_weights(TINY, 9, seed=1)
    np.testing.assert_array_equal(small["embedding"], big["embedding"][:5])
    np.testing.assert_array_equal(small["q"], big["q"])
    assert small["q"].shape == (TINY.width, TINY.width) and small["ff1"].shape == (TINY.width, TINY.ff_width)


def test_sinusoidal_positions():
    table = sinusoidal_positions(4, 6)
    assert table.shape == (4, 6)
    np.testing.assert_allclose(table[0], [0, 1, 0, 1, 0, 1])
    np.testing.assert_allclose(table[1, 0], np.sin(1.0), rtol=1e-6)


@pytest.mark.parametrize("bad_ids, bad_mask, message", [
    ([[1, 2]], [[1, 2]], "only 0"),
    ([[1, 2]], [[1, 1, 1]], r"\(B, T\)"),
    ([[1, 99]], [[1, 1]], "token ids"),
])
def test_bad_inputs_raise_clear_errors(bad_ids, bad_mask, message):
    block = TransformerBlock(TINY, 10)
    with pytest.raises(ValueError, match=message):
        block(bad_ids, bad_mask)


def test_config_checks_its_sizes():
    with pytest.raises(ValueError, match="multiple"):
        TransformerConfig(width=10, num_heads=4)
