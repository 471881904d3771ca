"""Training pieces on tiny data: the WordNet parser, batches, a few steps, the metrics."""

import numpy as np
import pytest
import tensorflow as tf

from lab.elmo_training.corpus import DATA_FILES, is_held_out, load_corpus, parse_synset_line, synset_sentences
from lab.elmo_training.stages import heldout_perplexity, unigram_perplexity
from lab.elmo_training.train import (
    UNK,
    Batcher,
    Trained,
    build_vocab,
    embed_types,
    fit_char_encoder,
    hide_words,
    static_word_table,
    train_bilm,
    word_level_runner,
)
from lab.models.elmo import BOS_IDS, EOS_IDS, ElmoConfig, ElmoModel, token_char_ids
from lab.models.elmo_io import ElmoRunner

LINE = (
    "09213565 17 n 02 bank 0 river_bank 0 002 @ 09409512 n 0000 | sloping land (especially the slope "
    'beside a body of water); "they pulled the canoe up on the bank"; "he sat on the bank of the river"  \n'
)

TOY = [s.split() for s in [
    "the cat sat on the mat .",
    "the dog sat on the log .",
    "a cat and a dog sat together .",
    "the river bank was muddy .",
    "the bank lends money to people .",
    "people sat on the bank of the river .",
    "the dog saw the cat on the mat .",
    "money in the bank is safe .",
]] * 6


def test_parse_a_wordnet_line():
    key, lemmas, definition, examples, lexname = parse_synset_line(LINE)
    assert key == "09213565n" and lexname == "noun.object"
    assert lemmas == ["bank", "river bank"]
    assert definition == "sloping land (especially the slope beside a body of water)"
    assert examples == ["they pulled the canoe up on the bank", "he sat on the bank of the river"]
    separate = synset_sentences(lemmas, definition, examples, joined=False)
    assert separate[0] == "they pulled the canoe up on the bank".split()
    assert separate[2][:5] == ["bank", ",", "river", "bank", ":"]
    (joined,) = synset_sentences(lemmas, definition, examples)
    assert joined == separate[0] + [";"] + separate[1] + [";"] + separate[2]
    (last,) = synset_sentences(lemmas, definition, examples, tag=lexname)
    (first,) = synset_sentences(lemmas, definition, examples, tag=lexname, tag_first=True)
    ex1, ex2 = separate[0], separate[1]
    body = separate[2][5:]  # the definition's words
    tag = ["noun.object"]
    # class last: after each "bank" of the examples, and after the lemmas read after the definition
    assert last == (ex1 + tag + [";"] + ex2[:5] + tag + ex2[5:] + [";"] + body
                    + ["=", "bank", ",", "river", "bank"] + tag)
    # class first: before the lemmas read before the definition, and before each "bank"
    assert first == tag + separate[2] + [";"] + ex1[:7] + tag + ex1[7:] + [";"] + ex2[:4] + tag + ex2[4:]
    assert parse_synset_line("  1 This software and database is being provided\n") is None


def test_corpus_counts_its_class_names(tmp_path):
    for name in DATA_FILES:
        (tmp_path / name).write_text(LINE if name == "data.noun" else "")
    plain, tagged = load_corpus(tmp_path), load_corpus(tmp_path, tags=True)
    assert plain.stats()["tag_tokens"] == 0
    # three class names: by each of the two "bank"s of the examples and by the lemmas
    assert sum(len(s) for s in tagged.train + tagged.held_out) == sum(len(s) for s in plain.train + plain.held_out) + 3
    assert not is_held_out("09213565n")
    assert tagged.stats()["tag_tokens"] == 3 and plain.stats()["train_tokens"] == tagged.stats()["train_tokens"] - 3


def test_held_out_split_is_deterministic():
    keys = [f"{i:08d}n" for i in range(5000)]
    held = [k for k in keys if is_held_out(k)]
    assert held == [k for k in keys if is_held_out(k)]
    assert 0.01 < len(held) / len(keys) < 0.03


def test_vocab_and_batches():
    vocab = build_vocab(TOY, min_count=7)
    assert vocab[:3] == ["<S>", "</S>", UNK] and vocab[3] == "the"
    batcher = Batcher(vocab, TOY)
    batches = list(batcher.batches(TOY[:8], max_tokens=40))
    assert sum(len(t) for t, _, _ in batches) == 8
    for types, targets, lengths in batches:
        assert types.shape[0] * types.shape[1] <= 40 or types.shape[0] == 1
        assert (lengths == (types > 0).sum(1)).all()
    types, targets, lengths = batches[0]
    first = batcher.char_table[types[0]]
    assert (first[0] == BOS_IDS).all() and (first[lengths[0] - 1] == EOS_IDS).all()
    assert (first[1] == token_char_ids(TOY[[len(s) for s in TOY[:8]].index(lengths[0] - 2)][0])).all()
    assert targets[0, 0] == 0 and targets[0, lengths[0] - 1] == 1  # <S> and </S> ids


def test_a_few_training_steps_lower_the_loss():
    config = ElmoConfig.tiny()
    trained = train_bilm(TOY, config, steps=40, max_tokens=200, num_sampled=1000,
                         lr=1e-2, min_count=1, warmup=2, dropout=0.0, log=lambda s: None)
    history = trained.history
    assert len(history) == 40 and trained.steps == 40 and all(np.isfinite(history))
    assert np.mean(history[-5:]) < 0.7 * np.mean(history[:5])
    fwd, bwd, n = heldout_perplexity(trained, TOY[:8])
    uni, m = unigram_perplexity(TOY, TOY[:8], trained.batcher.vocab)
    assert n == m == sum(len(s) + 1 for s in TOY[:8])
    assert fwd < uni and bwd < uni  # it learned something beyond word frequencies


def test_unigram_perplexity_of_a_uniform_text_is_the_vocab_size():
    sents = [["a", "b", "c"]] * 10
    vocab = ["<S>", "</S>", UNK, "a", "b", "c"]
    ppl, n = unigram_perplexity(sents, sents, vocab)
    # counts with add-one: a, b, c, </S> = 11 each, <S> and <UNK> 1 each, of 46
    assert n == 40 and np.isclose(ppl, 46 / 11)


def test_trimmed_character_windows_give_the_full_width_vectors():
    """Training runs the char CNN on as few character slots as the batch needs."""
    model = ElmoModel(ElmoConfig.tiny(), seed=1)
    words = ["a", "bank", "café", "international", "x" * 48]
    table = np.zeros((len(words) + 1, 50), np.int32)
    for i, w in enumerate(words):
        table[i + 1] = token_char_ids(w)
    for types in (np.array([[1, 2, 3, 4, 0], [4, 4, 1, 0, 0]]), np.array([[1, 5, 2]])):
        full = model.char_cnn(table[types]).numpy()
        trimmed = embed_types(model, table, types.astype(np.int32)).numpy()
        real = types > 0
        np.testing.assert_array_equal(full[real], trimmed[real])


def test_word_dropout_hides_words_but_never_the_markers():
    batcher = Batcher(build_vocab(TOY, 1), TOY)
    unk = batcher.type_id[UNK]  # the input row that hidden words are read as
    assert (batcher.char_table[unk] == token_char_ids(UNK)).all()
    types, _, _ = next(batcher.batches(TOY * 20, max_tokens=20_000))
    types = tf.constant(types)
    words = (types > 2).numpy()
    assert (hide_words(types, 0.0, unk).numpy() == types.numpy()).all()
    everything = hide_words(types, 1.0, unk).numpy()
    assert (everything[words] == unk).all() and (everything[~words] == types.numpy()[~words]).all()
    some = hide_words(types, 0.25, unk).numpy()
    share = (some[words] == unk).mean()
    assert 0.2 < share < 0.3 and (some[~words] == types.numpy()[~words]).all()


def test_training_with_word_dropout_still_lowers_the_loss():
    history = train_bilm(TOY, ElmoConfig.tiny(), steps=40, max_tokens=200, num_sampled=1000, lr=1e-2,
                         min_count=1, warmup=2, dropout=0.0, log=lambda s: None, word_dropout=0.25).history
    assert np.mean(history[-5:]) < 0.8 * np.mean(history[:5])


# --- the staged design: word-level biLM -> char CNN fitted to its word vectors -> joint ------------

FAST = dict(max_tokens=200, num_sampled=1000, min_count=1, warmup=2, dropout=0.0, log=lambda s: None)


@pytest.fixture(scope="module")
def stage1():
    return train_bilm(TOY, ElmoConfig.tiny(), steps=40, lr=1e-2, words=True, lowercase=True, **FAST)


def test_lowercased_targets_keep_cased_inputs():
    batcher = Batcher(build_vocab([["the", "bank"]], 1), [["The", "bank"]], lowercase=True)
    types, targets = batcher.encode(["The", "bank"])
    assert targets[1] == batcher.word_id["the"] and targets[2] == batcher.word_id["bank"]
    assert types[1] == batcher.type_id["The"] and "the" not in batcher.type_id  # inputs keep their case


def test_stage1_word_level_biLM_learns_and_runs_as_elmo(stage1):
    assert stage1.words is not None and stage1.words.w.shape == (len(stage1.batcher.vocab), 16)
    assert np.mean(stage1.history[-5:]) < 0.7 * np.mean(stage1.history[:5])
    fwd, bwd, _ = heldout_perplexity(stage1, TOY[:8])
    uni, _ = unigram_perplexity(TOY, TOY[:8], stage1.batcher.vocab)
    assert fwd < uni and bwd < uni
    runner = word_level_runner(stage1)
    out = runner.run([["The", "bank", "zzzunseen"]])
    row = stage1.batcher.word_id
    table = stage1.words.w.numpy()
    np.testing.assert_allclose(out.elmo.word_emb[0, 0], table[row["the"]], atol=1e-6)  # lowercased lookup
    np.testing.assert_allclose(out.elmo.word_emb[0, 2], table[row[UNK]], atol=1e-6)


def test_stage1_resumes_from_its_checkpoint(tmp_path):
    kw = dict(lr=1e-2, words=True, lowercase=True, checkpoint_dir=tmp_path, checkpoint_every=10, **FAST)
    first = train_bilm(TOY, ElmoConfig.tiny(), steps=10, **kw)
    again = train_bilm(TOY, ElmoConfig.tiny(), steps=15, **kw)
    assert first.steps == 10 and again.steps == 15 and len(again.history) == 5
    np.testing.assert_array_equal(train_bilm(TOY, ElmoConfig.tiny(), steps=15, **kw).words.w.numpy(),
                                  again.words.w.numpy())  # done already: nothing more trained


def test_stage2_char_cnn_reproduces_the_word_table_in_any_case(stage1):
    model = ElmoModel(ElmoConfig.tiny(), seed=5)
    vocab, table = stage1.batcher.vocab, stage1.words.w.numpy()
    history = fit_char_encoder(model, vocab, {w: 3 for w in vocab}, table, 300, batch=64, lr=1e-2, log=lambda s: None)
    assert np.mean(history[-20:]) < 0.2 * np.mean(history[:20])
    words = [w for w in vocab if w.isalpha()][:5]
    runner = ElmoRunner(model, "t", "t")
    for spelt in (str.lower, str.capitalize):
        got = runner.run([[spelt(w)] for w in words]).elmo.word_emb[:, 0]
        want = table[[vocab.index(w) for w in words]]
        cos = (got * want).sum(-1) / np.linalg.norm(got, axis=-1) / np.linalg.norm(want, axis=-1)
        assert (cos > 0.8).all(), (spelt, cos)


def test_stage3_joint_fine_tuning_starts_from_both_and_keeps_learning(stage1):
    model = ElmoModel(ElmoConfig.tiny(), seed=5)
    vocab = stage1.batcher.vocab
    fit_char_encoder(model, vocab, {w: 3 for w in vocab}, stage1.words.w.numpy(), 100, batch=64, lr=1e-2,
                     log=lambda s: None)
    model.lstm = stage1.model.lstm  # the stage-1 LSTMs behind the stage-2 char CNN
    init = Trained(model, stage1.head, stage1.batcher, [], stage1.words)
    joint = train_bilm(TOY, ElmoConfig.tiny(), steps=20, lr=3e-3, lowercase=True, init=init, anchor=1.0, **FAST)
    assert joint.model is model and joint.words is None
    assert all(np.isfinite(joint.history)) and np.mean(joint.history[-5:]) < np.mean(joint.history[:5])


def test_stage1_can_read_a_frozen_table_of_given_rows():
    vocab = build_vocab([[w.lower() for w in s] for s in TOY], 1)
    rows = np.random.default_rng(3).normal(size=(len(vocab), 16)).astype(np.float32)
    frozen = train_bilm(TOY, ElmoConfig.tiny(), steps=15, lr=1e-2, words=True, lowercase=True, table_init=rows,
                        freeze_table=True, **FAST)
    np.testing.assert_array_equal(frozen.words.w.numpy(), rows)  # only the LSTMs learned
    assert np.mean(frozen.history[-5:]) < np.mean(frozen.history[:5])
    free = train_bilm(TOY, ElmoConfig.tiny(), steps=5, lr=1e-2, words=True, lowercase=True, table_init=rows, **FAST)
    assert not np.array_equal(free.words.w.numpy(), rows)


def test_static_word_table_reads_the_embedded_berts_input_embeddings():
    vocab = ["<S>", "</S>", "<UNK>", "river", "stream", "money", "cash", "unaffable", "dog", "cat", "music", "song"]
    table = static_word_table(vocab, 8)
    assert table.shape == (len(vocab), 8) and table.dtype == np.float32
    assert table.std() == pytest.approx(0.3, rel=1e-4)
    np.testing.assert_array_equal(static_word_table(vocab, 8), table)  # deterministic
    cos = lambda a, b: float(table[vocab.index(a)] @ table[vocab.index(b)]  # noqa: E731 - a one-line helper
                             / np.linalg.norm(table[vocab.index(a)]) / np.linalg.norm(table[vocab.index(b)]))
    assert cos("river", "stream") > cos("river", "money") and cos("money", "cash") > cos("money", "song")
    assert cos("dog", "cat") > cos("dog", "music") and cos("music", "song") > cos("music", "river")
    # A word of several pieces is their mean: "unaffable" is not one row of MiniLM's vocabulary.
    assert len(set(map(tuple, table.round(6)))) == len(vocab)
