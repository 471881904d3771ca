"""The TF BERT encoder: parity with Hugging Face, invariants, the TF Hub path, loaders."""

import time

import numpy as np
import pytest

from lab import sources
from lab.models.bert import BertConfig, BertEncoder, random_weights
from lab.models.bert_io import load_bert
from tests.conftest import ROOT, TOY_VOCAB

DEFAULTS = ["The central bank raised interest rates yesterday.",
            "A fisherman rested on the river bank at sunset."]


@pytest.fixture(scope="module")
def tiny():
    return BertEncoder(BertConfig.tiny(), random_weights(BertConfig.tiny(), seed=1))


def tiny_batch():
    ids = np.array([[2, 10, 11, 12, 3, 0, 0], [2, 13, 14, 15, 16, 17, 3]], np.int32)
    return ids, (ids > 0).astype(np.int32)


def test_tiny_shapes(tiny):
    ids, mask = tiny_batch()
    out = tiny(ids, mask)
    c = tiny.config
    assert out.hidden_states.shape == (c.num_layers + 1, 2, 7, c.hidden_size)
    assert out.attentions.shape == (c.num_layers, 2, c.num_heads, 7, 7)
    assert out.word.shape == out.position.shape == out.token_type.shape == (2, 7, c.hidden_size)
    assert out.pooled.shape == (2, c.hidden_size)


def test_attention_rows_sum_to_one_and_padded_keys_are_zero(tiny):
    ids, mask = tiny_batch()
    attn = tiny(ids, mask).attentions
    np.testing.assert_allclose(attn.sum(-1), 1.0, atol=1e-5)
    assert (attn[:, 0, :, :, 5:] == 0.0).all()
    assert (attn[:, 1] > 0).all()


def test_padding_does_not_change_a_sentence(tiny, embedded_bert):
    ids, mask = tiny_batch()
    alone = tiny(ids[:1, :5], mask[:1, :5]).hidden_states[:, 0]
    batched = tiny(ids, mask).hidden_states[:, 0, :5]
    np.testing.assert_allclose(alone, batched, atol=1e-5)
    one = embedded_bert.run(DEFAULTS[:1])
    two = embedded_bert.run(DEFAULTS)
    n = len(one.tokens[0])
    assert np.abs(one.layers[:, 0, :n] - two.layers[:, 0, :n]).max() <= 1e-5
    assert np.abs(one.attentions[:, 0, :, :n, :n] - two.attentions[:, 0, :, :n, :n]).max() <= 1e-5


def test_repeated_runs_are_identical(embedded_bert):
    a, b = embedded_bert.run(DEFAULTS), embedded_bert.run(DEFAULTS)
    np.testing.assert_array_equal(a.layers, b.layers)
    np.testing.assert_array_equal(a.attentions, b.attentions)


def test_a_run_without_attentions_keeps_everything_else(embedded_bert):
    out = embedded_bert.run(["The bank.", "A river bank at dusk."])
    light = out.without_attentions()
    assert light.attentions is None and out.attentions is not None  # the cached run is left whole
    assert light.layers is out.layers and light.tokens == out.tokens and light.bert is out.bert


def test_parity_with_hugging_face_bert(embedded_bert):
    ref = np.load(ROOT / "tests/fixtures/bert_parity.npz")
    out = embedded_bert.encoder(ref["input_ids"], ref["attention_mask"], np.zeros_like(ref["input_ids"]))
    assert ref["input_ids"].shape[0] >= 4 and (ref["attention_mask"] == 0).any()  # padding included
    hidden_diff = np.abs(out.hidden_states - ref["hidden_states"]).max()
    attn_diff = np.abs(out.attentions - ref["attentions"]).max()
    print(f"max |diff| hidden {hidden_diff:.2e}, attentions {attn_diff:.2e}")
    assert hidden_diff <= 1e-4 and attn_diff <= 1e-4
    assert np.abs(out.pooled - ref["pooled"]).max() <= 1e-4
    pair = embedded_bert.run([str(s) for s in ref["sentences"][:2]], pair=True)
    assert np.abs(pair.layers[-1] - ref["pair_last_hidden"]).max() <= 1e-4


def test_embedding_parts_sum_before_layer_norm(embedded_bert):
    out = embedded_bert.run(DEFAULTS)
    parts = out.bert.embedding_parts
    # "bank" is position 3 in A and 7 in B: same word part, different position part
    np.testing.assert_array_equal(parts["word"][0, 3], parts["word"][1, 7])
    assert not np.allclose(parts["position"][0, 3], parts["position"][1, 7])
    x = parts["word"] + parts["position"] + parts["token type"]
    mean, std = x.mean(-1, keepdims=True), x.std(-1, keepdims=True)
    ln_w, ln_b = (embedded_bert.encoder.emb_ln[i].numpy() for i in range(2))
    np.testing.assert_allclose((x - mean) / np.sqrt(std**2 + 1e-12) * ln_w + ln_b, out.layers[0], atol=1e-4)


def test_output_alignment_and_truncation(embedded_bert):
    out = embedded_bert.run(["Unaffable bankers.", "bank " * 700])
    assert out.tokens[0] == ["[CLS]", "una", "##ffa", "##ble", "bankers", ".", "[SEP]"]
    assert out.positions(0, 0) == [1, 2, 3]
    assert out.truncated == [False, True]
    assert out.bert.input_word_ids.shape == (2, 512)


def test_bad_sentences_raise_clear_errors(embedded_bert):
    with pytest.raises(ValueError, match="empty"):
        embedded_bert.run(["fine", "   "])
    with pytest.raises(ValueError, match="two sentences"):
        embedded_bert.run(["only one"], pair=True)


def test_hub_path_loads_a_local_savedmodel_and_matches_the_same_weights(hub_bert_dirs):
    enc_dir, pre_dir, weights = hub_bert_dirs
    hub = load_bert(str(enc_dir), str(pre_dir))
    assert hub.label.startswith("TF Hub BERT") and not hub.has_attentions
    out = hub.run(["The central bank raised interest rates.", "We sat on the river bank"])
    assert out.tokens[1] == ["[CLS]", "we", "sat", "on", "the", "river", "bank", "[SEP]"]
    assert out.attentions is None and out.layer_names == ["layer 1", "layer 2"]
    direct = BertEncoder(BertConfig.tiny(len(TOY_VOCAB)), weights)(
        out.bert.input_word_ids, out.mask, out.bert.input_type_ids)
    np.testing.assert_allclose(out.layers, direct.hidden_states[1:], atol=1e-5)
    pair = hub.run(["the bank", "the river bank"], pair=True)
    assert pair.bert.input_type_ids[0].tolist() == [0, 0, 0, 0, 1, 1, 1, 1]


def test_a_hub_bert_s_pieces_know_their_characters_so_words_can_be_placed(hub_bert_dirs):
    """The Hub preprocessor gives no offsets; without them the ELMo vs BERT page and the
    baselines could place no word of a TF Hub BERT (lab.elmo_vs_bert.align)."""
    from lab import elmo_vs_bert

    enc_dir, pre_dir, _ = hub_bert_dirs
    text = "Don't stop, the river-bank's café!"
    out = load_bert(str(enc_dir), str(pre_dir)).run([text, "Unaffable"])
    enc = out.bert.encodings[0]
    assert [text[s:e].lower() for s, e in enc.spans] == [
        "don", "'", "t", "stop", ",", "the", "river", "-", "bank", "'", "s", "café", "!"]
    assert enc.pieces[-2:] == ["cafe", "!"]  # accents stripped in the piece, not in the text
    aligned = elmo_vs_bert.align(out)
    assert aligned.words[0] == ["Don't", "stop", ",", "the", "river-bank's", "café", "!"]
    assert aligned.word_positions[0] == [[1, 2, 3], [4], [5], [6], [7, 8, 9, 10, 11], [12], [13]]
    assert aligned.word_positions[1] == [[1, 2, 3]]  # un ##aff ##able


def test_hub_encoder_without_preprocessor_says_what_to_set(hub_bert_dirs, monkeypatch):
    monkeypatch.delenv("LAB_BERT_PREPROCESS", raising=False)
    with pytest.raises(sources.SourceError, match="LAB_BERT_PREPROCESS"):
        load_bert(str(hub_bert_dirs[0]))


@pytest.mark.parametrize("source, message", [
    ("/no/such/folder", "not found"),
    (str(ROOT / "Makefile"), "is a file"),
    (str(ROOT / "tests"), "saved_model.pb"),
])
def test_bad_local_sources_give_messages(source, message):
    with pytest.raises(sources.SourceError, match=message):
        load_bert(source, "/also/missing")


def test_archive_source_says_extract_first(tmp_path):
    archive = tmp_path / "bert.tar.gz"
    archive.write_bytes(b"\x1f\x8b")
    with pytest.raises(sources.SourceError, match="Extract it first"):
        sources.check_local_dir(str(archive))


def test_unreachable_handle_fails_within_the_timeout(monkeypatch):
    monkeypatch.setenv("LAB_LOAD_TIMEOUT", "3")
    start = time.monotonic()
    with pytest.raises(sources.SourceError):
        load_bert("https://tfhub.dev/tensorflow/small_bert/bert_en_uncased_L-2_H-128_A-2/2",
                  "https://tfhub.dev/tensorflow/bert_en_uncased_preprocess/3")
    assert time.monotonic() - start < 30  # bounded: the limit plus start-up, not minutes


def test_call_with_timeout_gives_up_on_a_hanging_loader():
    with pytest.raises(sources.SourceError, match="Could not load the model from x: no answer within 0.2 s"):
        sources.call_with_timeout(lambda: time.sleep(5), 0.2, "x")
