"""WordPiece via tensorflow-text: exact ids, packing as the TF Hub preprocessor, alignment."""

import numpy as np
import pytest

from lab.tokenize import NUMBERS_ONLY, prepare_text, split_words
from lab.wordpiece import WordPieceTokenizer, round_robin
from tests.conftest import ROOT, TOY_VOCAB


@pytest.fixture(scope="module")
def toy(toy_vocab_file):
    return WordPieceTokenizer.from_file(toy_vocab_file)


def ids_of(*tokens):
    return [TOY_VOCAB.index(t) for t in tokens]


def test_toy_vocab_exact_ids_and_continuations(toy):
    enc = toy.encode(["The central bank raised interest rates yesterday."])[0]
    assert enc.pieces == ["the", "central", "bank", "raised", "interest", "rate", "##s", "yesterday", "."]
    assert enc.ids == ids_of("the", "central", "bank", "raised", "interest", "rate", "##s", "yesterday", ".")
    assert enc.words == ["The", "central", "bank", "raised", "interest", "rates", "yesterday", "."]
    assert enc.pieces_of_word(5) == [5, 6]  # "rates" -> rate ##s


def test_toy_vocab_unknown_accents_and_case(toy):
    enc = toy.encode(["Café NAÏVE fisherman zebra"])[0]
    assert enc.pieces == ["cafe", "naive", "fish", "##er", "##man", "[UNK]"]
    assert enc.words == ["Café", "NAÏVE", "fisherman", "zebra"]
    assert enc.spans[0] == (0, 4) and enc.spans[-1] == (21, 26)  # characters, not bytes


def test_pack_single_and_pair_like_the_hub_preprocessor(toy):
    a, b = toy.encode(["the bank", "we sat on the river bank"])
    single = toy.pack([a, b])
    cls, sep = TOY_VOCAB.index("[CLS]"), TOY_VOCAB.index("[SEP]")
    assert single["input_word_ids"].tolist() == [
        [cls] + a.ids + [sep] + [0] * 4,
        [cls] + b.ids + [sep],
    ]
    assert single["input_mask"].tolist() == [[1] * 4 + [0] * 4, [1] * 8]
    assert not single["input_type_ids"].any()
    pair = toy.pack([a], [b])
    assert pair["input_word_ids"][0].tolist() == [cls] + a.ids + [sep] + b.ids + [sep]
    assert pair["input_type_ids"][0].tolist() == [0] * 4 + [1] * 7
    trimmed = toy.pack([a], [b], seq_length=7)  # round-robin: 2 from each segment
    assert trimmed["input_word_ids"][0].tolist() == [cls] + a.ids + [sep] + b.ids[:2] + [sep]


def test_ascii_text_gets_tensorflow_text_s_pieces_and_offsets(embedded_bert):
    """Text of printable ASCII is tokenized in Python (``WordPieceTokenizer._tokenize_ascii``):
    the same ids and byte offsets as tensorflow-text's graph, uncased and cased, on random
    characters, vocabulary words with suffixes, and words around the 100-character limit."""
    import random
    import string

    import tensorflow as tf

    rng = random.Random(0)
    chars = string.ascii_letters + string.digits + string.punctuation + " \t\n\r"
    words = [w for w in embedded_bert.vocab if w.isascii() and w.isalpha()][:5000]
    texts = ["".join(rng.choice(chars) for _ in range(rng.randint(1, 60))) for _ in range(200)]
    texts += [" ".join(rng.choice(words) + rng.choice(["", "s", "ing", ".", "'s", "xq"])
                       for _ in range(rng.randint(1, 15))) for _ in range(200)]
    texts += ["a" * 99, "a" * 100, "a" * 101 + " bank", "Unaffable ##ing [CLS] x##y!", "The BANK."]
    for lower_case in (True, False):
        tok = WordPieceTokenizer(embedded_bert.vocab, lower_case)
        for text in texts:
            ours = tok._tokenize_ascii([text])
            graph = [x.numpy() for x in tok._tokenize(tf.constant([text]))]
            for got, want in zip(ours, graph):
                np.testing.assert_array_equal(got, want, err_msg=repr(text))


def test_round_robin_keeps_what_tensorflow_text_s_trimmer_keeps():
    import tensorflow as tf
    import tensorflow_text as tf_text

    def segment(n):
        return tf.RaggedTensor.from_row_lengths(tf.ones([n], tf.int64), [n])

    for budget in range(14):
        for a in range(12):
            for b in range(12):
                trimmed = tf_text.RoundRobinTrimmer(max_seq_length=budget).trim([segment(a), segment(b)])
                want = [int(t.row_lengths()[0]) for t in trimmed]
                assert round_robin(np.array([[a, b]]), budget).tolist() == [want], (a, b, budget)
                assert round_robin(np.array([[a]]), budget).tolist() == [[min(a, budget)]]


def test_real_vocab_matches_reference_tokenizer(embedded_bert):
    ref = np.load(ROOT / "tests/fixtures/bert_parity.npz")
    tok = embedded_bert.tokenizer
    packed = tok.pack(tok.encode([str(s) for s in ref["sentences"]]))
    np.testing.assert_array_equal(packed["input_word_ids"], ref["input_ids"])
    np.testing.assert_array_equal(packed["input_mask"], ref["attention_mask"])
    a, b = tok.encode([str(s) for s in ref["sentences"][:2]])
    pair = tok.pack([a], [b])
    np.testing.assert_array_equal(pair["input_word_ids"], ref["pair_input_ids"])
    np.testing.assert_array_equal(pair["input_type_ids"], ref["pair_token_type_ids"])


def test_default_sentences_exact_ids(embedded_bert):
    a, b = embedded_bert.tokenizer.encode(["The central bank raised interest rates yesterday.",
                                           "A fisherman rested on the river bank at sunset."])
    assert a.ids == [1996, 2430, 2924, 2992, 3037, 6165, 7483, 1012]
    assert b.ids == [1037, 19949, 8614, 2006, 1996, 2314, 2924, 2012, 10434, 1012]


def test_truncation_to_510_pieces_is_flagged(embedded_bert):
    enc = embedded_bert.tokenizer.encode(["bank " * 600])[0]
    assert len(enc.ids) == 510 and enc.truncated


def test_emoji_cjk_rtl_and_zero_width(embedded_bert):
    enc = embedded_bert.tokenizer.encode(["ban\u200bk 🏦 東京 שלום"])[0]
    assert enc.words[0] == "bank"  # the zero-width space is removed before tokenizing
    assert enc.pieces == ["bank", "[UNK]", "東", "京", "ש", "##ל", "##ו", "##ם"]
    assert enc.words == ["bank", "🏦", "東", "京", "שלום"]  # the Hebrew word stays one word


def test_prepare_text_messages():
    for bad in ("", "   \n\t", "\u200b\u200b", "🏦 🏦 !!"):
        with pytest.raises(ValueError):
            prepare_text(bad)
    text, notes = prepare_text("a\u200bb  c")
    assert text == "ab c" and "invisible" in notes[0]
    long, notes = prepare_text("word " * 3000, max_chars=100)
    assert len(long) <= 100 and "longer than 100" in notes[0]
    assert prepare_text("<script>alert(1)</script>")[0] == "<script>alert(1)</script>"


def test_numbers_without_letters_are_kept_with_a_notice():
    assert prepare_text("1234 5678 90") == ("1234 5678 90", [NUMBERS_ONLY])
    assert prepare_text("3.14 + 2 = 5.14")[1] == [NUMBERS_ONLY]
    assert "no word senses" in NUMBERS_ONLY
    for fine in ("bank 12", "東京 2024", "x"):  # a letter in any script: no notice
        assert prepare_text(fine)[1] == []
    with pytest.raises(ValueError, match="no letters or digits"):
        prepare_text("___ ---")  # an underscore is a word character but neither letter nor digit


def test_split_words_separates_punctuation():
    assert split_words("We sat on the river bank.") == ["We", "sat", "on", "the", "river", "bank", "."]
    assert split_words("Don't stop, well-known!") == ["Don't", "stop", ",", "well-known", "!"]


def test_eager_until_traced_gives_the_graphs_results_then_uses_the_graph(toy_vocab_file):
    """A server's tokenizer answers eagerly until a background thread has traced its graphs
    (``lab.serving.EagerUntilTraced``): the same ids, spans and packed inputs either way."""
    texts = ["Café NAÏVE fisherman zebra", "the bank", "we sat on the river bank"]
    graph = WordPieceTokenizer.from_file(toy_vocab_file)
    served = WordPieceTokenizer.from_file(toy_vocab_file)
    for g in served.graphs:
        g.eager()

    def both(tok):
        enc = tok.encode(texts)
        return enc, tok.pack(enc), tok.pack(enc[1:2], enc[2:3], seq_length=9)

    eager = both(served)
    assert not any(g.traced for g in served.graphs)  # answered without building a graph
    for g in served.graphs:
        g.trace()
    for result in (eager, both(served)):
        assert result[0] == both(graph)[0]
        for got, want in zip(result[1:], both(graph)[1:]):
            assert got.keys() == want.keys()
            for k in got:
                np.testing.assert_array_equal(got[k], want[k])
                assert got[k].dtype == want[k].dtype
    assert all(g.fn.experimental_get_tracing_count() == 1 for g in served.graphs)  # one trace each
