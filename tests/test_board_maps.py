"""The class board's numbers (lab.board.maps): use vectors, their cache, the aligned map,
the separation of senses per layer, and the board's quiz question."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from lab import elmo_vs_bert, quiz
from lab.board import maps as board
from lab.vectors import LayerVectors

RIVER = "We sat on the river bank."
BANK = 5  # "bank" in split_words(RIVER): We sat on the river bank .


def _rotation(angle: float, mirror: bool = False) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    r = np.array([[c, -s], [s, c]])
    return r @ np.diag([1.0, -1.0]) if mirror else r


# --- the map ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mirror", [False, True])
def test_a_turned_mirrored_moved_copy_aligns_back_exactly(mirror):
    coords = np.random.default_rng(0).normal(size=(6, 2))
    ids = [3, 7, 1, 9, 4, 2]
    moved = coords @ _rotation(1.1, mirror) + [5.0, -2.0]
    order = [5, 0, 3, 1, 4, 2]  # the same uses listed in another order
    back = board.align_to(moved[order], [ids[k] for k in order], coords, ids)
    np.testing.assert_allclose(back, coords[order], atol=1e-12)


def test_alignment_never_scales():
    coords = np.random.default_rng(1).normal(size=(5, 2))
    back = board.align_to(coords * 2, range(5), coords, range(5))
    spread = lambda x: np.linalg.norm(x - x.mean(axis=0))  # noqa: E731
    assert spread(back) == pytest.approx(2 * spread(coords))  # the model's change of spread shows


def test_fewer_than_two_shared_uses_only_move_or_mirror_the_frame():
    coords = np.array([[1.0, 2.0], [-1.0, 0.0], [0.0, -2.0]])
    np.testing.assert_array_equal(board.align_to(coords, [1, 2, 3], np.zeros((1, 2)), [9]), coords)
    # one shared use (id 1) stays where it was; the y axis flips, as the use lay below the centre before
    before = np.array([[4.0, -1.0], [2.0, 1.0]])
    got = board.align_to(coords, [1, 2, 3], before, [1, 8])
    np.testing.assert_allclose(got[0], [4.0, -1.0])
    np.testing.assert_allclose(got - got[0], (coords - coords[0]) * [1.0, -1.0])


def test_two_shared_uses_on_one_line_keep_the_frame_s_handedness():
    coords = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 1.0]])
    before = np.array([[0.0, 0.0], [0.0, 2.0]])  # the shared uses turned by 90 degrees
    got = board.align_to(coords, [1, 2, 3], before, [1, 2])
    np.testing.assert_allclose(got, coords @ _rotation(np.pi / 2).T, atol=1e-12)


def _near(offsets) -> np.ndarray:
    """(U, 5) vectors near one direction, apart along two others by ``offsets`` (U, 2)."""
    offsets = np.asarray(offsets, float)
    v = np.zeros((len(offsets), 5))
    v[:, 0] = 1.0
    v[:, 1:3] = 0.2 * offsets
    return v


def test_a_new_use_does_not_flip_or_swap_the_dots_already_there():
    old = [[1.0, 0.0], [-1.0, 0.1], [0.0, 0.8], [0.1, -0.8]]  # most spread along the first offset
    first = board.frame(_near(old), [0, 1, 2, 3], "layer 1")
    new = _near(old + [[0.0, 3.0]])  # a use far along the second: the components swap
    plain = board.frame(new, [0, 1, 2, 3, 4], "layer 1")
    aligned = board.frame(new, [0, 1, 2, 3, 4], "layer 1", previous=first)
    spread = np.abs(first.coords).max()
    assert np.abs(plain.coords[:4] - first.coords).max() > 0.5 * spread  # PCA alone moves them
    assert np.abs(aligned.coords[:4] - first.coords).max() < 0.15 * spread
    assert aligned.ids == (0, 1, 2, 3, 4) and aligned.coords.shape == (5, 2)


def test_each_layer_is_turned_onto_the_layer_below():
    rng = np.random.default_rng(2)
    below = rng.normal(size=(6, 8))
    q, _ = np.linalg.qr(rng.normal(size=(8, 8)))  # an orthogonal map: the same cosines, other directions
    vectors = np.stack([below, below @ q, -below])  # (3, 6, 8)
    fs = board.frames(vectors, range(6), ["input", "layer 1", "layer 2"])
    assert [f.layer_name for f in fs] == ["input", "layer 1", "layer 2"]
    for f in fs[1:]:
        np.testing.assert_allclose(f.coords, fs[0].coords, atol=1e-9)


def test_a_frame_checks_its_ids():
    with pytest.raises(ValueError, match="id of its own"):
        board.frame(np.eye(3), [1, 1, 2], "x")
    with pytest.raises(ValueError, match="3 vectors for 2 ids"):
        board.frame(np.eye(3), [1, 2], "x")
    assert board.frame(np.zeros((0, 4)), [], "x").coords.shape == (0, 2)


# --- the board's map: replayed from its sentences in arrival order ---------------------------


def _arrivals(seed: int = 3, uses: int = 9, layers: int = 4) -> np.ndarray:
    """(N, U, 12) vectors: near one direction, and from layer to layer a little more apart."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(uses, 12))
    return np.stack([np.eye(12)[0] * 3 + (0.2 + 0.3 * n) * base + 0.05 * rng.normal(size=(uses, 12))
                     for n in range(layers)])


NAMES = ["input (layer 0)", "layer 1", "layer 2", "layer 3"]


def test_the_board_s_map_is_the_same_for_whoever_replays_it():
    v, ids = _arrivals(), [4, 8, 15, 16, 23, 42, 50, 51, 60]
    first = board.board_frames(v, ids, NAMES)
    again = board.board_frames(v.copy(), list(ids), list(NAMES))  # another session, another server
    assert [f.ids for f in first] == [tuple(ids)] * 4 and [f.layer_name for f in first] == NAMES
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a.coords, b.coords)
    # resumed from the stack of the first five uses: the same map as replaying them all
    resumed = board.board_frames(v, ids, NAMES, (5, board.board_frames(v[:, :5], ids[:5], NAMES)))
    for a, b in zip(first, resumed):
        np.testing.assert_array_equal(a.coords, b.coords)
    with pytest.raises(ValueError, match="cannot resume at 5 uses"):
        board.board_frames(v, ids, NAMES, (5, board.board_frames(v[:, :5], [1, 2, 3, 4, 5], NAMES)))
    with pytest.raises(ValueError, match="for 4 layers and 9 uses"):
        board.board_frames(v[:, :3], ids, NAMES)


def test_the_map_stays_put_as_sentences_arrive_at_every_layer():
    old = [[1.0, 0.0], [-1.0, 0.1], [0.0, 0.8], [0.1, -0.8]]  # most spread along the first offset
    v = np.stack([_near(old + [[0.0, 3.0]]) * [1, 1, 1 + n, 1, 1] for n in range(3)])  # (3, 5, 5)
    names = NAMES[:3]
    before = board.board_frames(v[:, :4], range(4), names)
    after = board.board_frames(v, range(5), names)  # the new use swaps the components of a plain PCA
    for n in range(3):
        spread = np.abs(before[n].coords).max()
        plain = board.project(v[n])
        assert np.abs(plain[:4] - before[n].coords).max() > 0.5 * spread  # PCA alone moves them
        assert np.abs(after[n].coords[:4] - before[n].coords).max() < 0.15 * spread, n


def test_a_layer_that_only_turns_the_vectors_draws_the_same_map():
    rng = np.random.default_rng(2)
    below = rng.normal(size=(6, 8))
    q, _ = np.linalg.qr(rng.normal(size=(8, 8)))  # an orthogonal map: the same cosines, other directions
    stack = board.board_frames(np.stack([below, below @ q, -below]), range(6), NAMES[:3])
    for f in stack[1:]:
        np.testing.assert_allclose(f.coords, stack[0].coords, atol=1e-9)


def test_vectors_read_in_other_batches_draw_the_same_map(embedded_bert):
    """A server that restarted reads the board's sentences again, all in one batch, where the
    first read them as they arrived: its map is the same within 1e-6."""
    from lab.tokenize import split_words

    texts = ["The bank raised interest rates again.", "We sat on the river bank at dusk.",
             "I paid the cheque into my bank account.", "Fish rest near the muddy bank of the stream.",
             "The bank lends money to small firms.", "Reeds grew thick along the bank."]
    uses = [split_words(t).index("bank") for t in texts]
    live = board.UseVectors()
    arrived = np.concatenate([live.vectors(embedded_bert, "bert", "embedded", "first", [t], [u])
                              for t, u in zip(texts, uses)], axis=1)
    restarted = board.UseVectors().vectors(embedded_bert, "bert", "embedded", "first", texts, uses)
    names = live.layer_names("bert", "embedded")
    chains = board.FrameChains()
    for k in range(1, len(texts) + 1):  # the projector that watched them arrive
        watched = chains.frames(("bert", "embedded", "first"), list(zip(texts, uses))[:k], range(k),
                                arrived[:, :k], names)
    fresh = board.FrameChains().frames(("bert", "embedded", "first"), list(zip(texts, uses)), range(len(texts)),
                                       restarted, names)
    for a, b in zip(watched, fresh):
        np.testing.assert_allclose(a.coords, b.coords, atol=1e-6, rtol=0)


def test_the_chains_replay_only_the_new_arrivals(monkeypatch):
    v, ids = _arrivals(), list(range(9))
    uses = [(f"sentence {i}", 1) for i in ids]
    chains = board.FrameChains(max_stacks=3)
    replayed = board.board_frames(v, ids, NAMES)
    steps = []
    real = board.frames
    monkeypatch.setattr(board, "frames", lambda *a, **k: steps.append(1) or real(*a, **k))
    chains.frames("m", uses[:7], ids[:7], v[:, :7], NAMES)
    assert len(steps) == 7
    got = chains.frames("m", uses, ids, v, NAMES)
    assert len(steps) == 9  # two more arrivals, two more steps
    chains.frames("m", uses, ids, v, NAMES)
    assert len(steps) == 9  # a poll that changed nothing replays nothing
    for a, b in zip(got, replayed):
        np.testing.assert_array_equal(a.coords, b.coords)
    chains.frames("m", [("other", 1)] + uses[1:], ids, v, NAMES)  # other sentences: replayed from the first
    assert len(steps) == 18 and len(chains) == 3
    chains.frames("other model", uses[:2], ids[:2], v[:, :2], NAMES)
    assert len(chains) == 3  # the least recently used stack went


def test_one_box_holds_every_layer_and_dots_on_one_point_are_named():
    v = _arrivals()
    v[0] = v[0, :1]  # the input layer: every use the same vector
    stack = board.board_frames(v, range(9), NAMES)
    centre, half = board.map_range(stack, least=0.5)
    for f in stack:
        assert np.all(np.abs(f.coords - centre) <= half)
    assert half == pytest.approx(1.1 * max(np.abs(f.coords - centre).max() for f in stack))
    assert board.map_range(stack[:1], least=0.5)[1] == 0.25  # one point: the least box
    assert board.coincide(stack[0]) and not any(board.coincide(f) for f in stack[1:])
    assert board.map_note("ELMo", NAMES[0], "bank", stack[0]).startswith(
        "At the input layer every “bank” is the same vector")
    assert board.map_note("ELMo", NAMES[1], "bank", stack[1]) == ""
    assert not board.coincide(board.Frame((1,), np.zeros((1, 2)), "x"))  # one dot is no crowd


@pytest.mark.parametrize("model, name, label, tick", [
    ("ELMo", "input (layer 0)", "ELMo input layer", "input"),
    ("ELMo", "lstm_outputs1", "ELMo layer 1 (first LSTM)", "1 (first LSTM)"),
    ("ELMo", "lstm_outputs2", "ELMo layer 2 (second LSTM)", "2 (second LSTM)"),
    ("BERT", "layer 3", "BERT layer 3", "3"),
    ("", "layer 3", "layer 3", "3"),
    ("BERT", "pooled", "BERT pooled", "pooled"),
])
def test_layer_names_a_class_can_follow(model, name, label, tick):
    assert board.layer_label(model, name) == label
    assert board.layer_tick(name) == tick


def test_the_separation_in_plain_words_and_the_counts():
    measure, how = board.told_apart(["money", "river"])
    assert measure == "How often a money sentence and a river sentence are told apart"
    assert "50 % is no better than a coin" in how and "ROC AUC" in how
    assert board.told_apart(["a", "b", "c"])[0] == "How often two sentences of different senses are told apart"
    assert board.counts(["money", None, "", "river"], 2) == board.Counts(4, 2, 2)


# --- separation --------------------------------------------------------------------------------


def _clusters(per_sense: int, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """(2, U, 16): layer 0 noise, layer 1 two tight clusters; each use's sense."""
    rng = np.random.default_rng(seed)
    senses = ["money"] * per_sense + ["river"] * per_sense
    centres = {"money": rng.normal(size=16), "river": rng.normal(size=16)}
    noise = rng.normal(size=(2 * per_sense, 16))
    sorted_ = np.stack([centres[s] for s in senses]) + 0.05 * noise
    return np.stack([rng.normal(size=(2 * per_sense, 16)), sorted_]), senses


def test_separated_senses_score_one_and_noise_about_chance():
    vectors, senses = _clusters(30)
    sep = board.separation(vectors, senses + [], ["input", "top"])
    assert sep.needed == 0 and sep.labelled == {"money": 30, "river": 30}
    assert sep.auc[1] == 1.0 and abs(sep.auc[0] - 0.5) < 0.1
    shuffled = list(np.random.default_rng(3).permutation(senses))
    assert abs(board.separation(vectors, shuffled, ["input", "top"]).auc[1] - 0.5) < 0.1
    # uses without a sense are left out of the pairs
    with_unsaid = np.concatenate([vectors, vectors[:, :3] * -1], axis=1)
    again = board.separation(with_unsaid, senses + [None, "", None], ["input", "top"])
    np.testing.assert_array_equal(again.auc, sep.auc)
    assert "1770 pairs of 60 sentences" in sep.message


@pytest.mark.parametrize("senses, needed", [
    ([], 6), ([None, None], 6), (["a"] * 5, 3), (["a", "a", "b"], 3), (["a"] * 3 + ["b"] * 2, 1),
    (["a", "a", "b", "b", "c", "c"], 2), (["a"] * 3 + ["b"] * 3, 0), (["a"] * 4 + ["b"] * 3 + ["c"], 0),
])
def test_needed_counts_the_sentences_missing_for_two_senses(senses, needed):
    sep = board.separation(np.ones((2, len(senses), 3)), senses, ["l0", "l1"])
    assert sep.needed == needed and (sep.auc is None) == (needed > 0)


def test_the_message_says_what_is_missing():
    sep = board.separation(np.ones((1, 4, 3)), ["money", None, "money", "river"], ["l0"])
    assert sep.message == ("3 more sentences with a sense are needed: at least 3 for each of two senses "
                           "(now: money 2, river 1).")
    assert sep.labelled == {"money": 2, "river": 1}
    one = board.separation(np.ones((1, 5, 3)), ["a", "a", "a", "b", "b"], ["l0"])
    assert one.message.startswith("1 more sentence with a sense is needed")
    assert "(now: none yet)" in board.separation(np.ones((1, 0, 3)), [], ["l0"]).message


def test_separation_checks_its_shapes():
    with pytest.raises(ValueError, match="2 layers and 3 uses"):
        board.separation(np.ones((2, 4, 3)), ["a", "b", "c"], ["l0", "l1"])


# --- use vectors -------------------------------------------------------------------------------


def _word_run(tokens: list[list[str]], positions=None) -> LayerVectors:
    """A word-level run (as ELMo's) of ``tokens``: each word's vector at layer n is n + a number
    of the word's own (the same in any row of any batch)."""
    B, T = len(tokens), max(len(t) for t in tokens)
    layers = np.zeros((2, B, T, 3), np.float32)
    for b, sent in enumerate(tokens):
        for t in range(len(sent)):
            layers[:, b, t] = np.arange(2)[:, None] + zlib.crc32(sent[t].encode()) % 1000
    return LayerVectors("Words", "Words", "test", [" ".join(t) for t in tokens], tokens, tokens,
                        positions or [[[i] for i in range(len(t))] for t in tokens], layers, ["l0", "l1"],
                        np.ones((B, T), np.int32))


def test_use_vectors_reads_each_sentence_s_use():
    out = _word_run([["a", "bank"], ["the", "river", "bank"]])
    v = board.use_vectors(out, [1, 2])
    assert v.shape == (2, 2, 3) and v.dtype == np.float32
    np.testing.assert_array_equal(v[:, 0], out.layers[:, 0, 1])
    np.testing.assert_array_equal(v[:, 1], out.layers[:, 1, 2])


def test_a_use_the_model_cannot_place_names_its_sentence():
    out = _word_run([["a", "bank"], ["the", "river", "bank"]], positions=[[[0], [1]], [[0], [1], []]])
    with pytest.raises(ValueError, match="cannot place “bank” in “the river bank”: .*length limit"):
        board.use_vectors(out, [1, 2])
    with pytest.raises(ValueError, match="“a bank” has 2 words, no word 4"):
        board.use_vectors(out, [4, 0])
    with pytest.raises(ValueError, match="1 uses for 2 sentences"):
        board.use_vectors(out, [1])


class Counting:
    """A model that counts the sentences it is run on."""

    def __init__(self, model):
        self.model, self.sentences, self.calls = model, [], 0

    def run(self, sentences):
        self.calls += 1
        self.sentences += list(sentences)
        return self.model.run(sentences)


@pytest.fixture(scope="module")
def embedded_elmo():
    from lab.models.elmo_io import load_elmo

    return load_elmo("embedded")


@pytest.mark.parametrize("family", ["bert", "elmo"])
@pytest.mark.parametrize("pool", ["first", "mean"])
def test_use_vectors_equal_the_word_the_pages_read(family, pool, request):
    model = request.getfixturevalue(f"embedded_{family}")
    from lab.models import embed

    texts = ["The bank raised its rates.", RIVER]
    out = embed(model, texts)
    got = board.use_vectors(out, [1, BANK], pool)
    aligned = elmo_vs_bert.align(out)
    vectors, rows, words = elmo_vs_bert.word_matrix(aligned, pool=pool)
    at = int(np.flatnonzero((rows == 1) & (words == BANK))[0])
    assert aligned.words[1][BANK] == "bank"
    np.testing.assert_array_equal(got[:, 1], vectors[:, at])  # every layer
    for n, name in enumerate(out.layer_names):
        np.testing.assert_array_equal(got[n, 1], elmo_vs_bert.word_matrix(aligned, n, pool)[0][at])
        if family == "elmo" or pool == "first":
            np.testing.assert_array_equal(got[n, 1], out.layer(name)[1, aligned.positions(1, BANK)[0]])


@pytest.mark.parametrize("family", ["bert", "elmo"])
def test_the_cache_runs_the_model_on_new_sentences_only(family, request):
    from lab.models import embed

    model = Counting(request.getfixturevalue(f"embedded_{family}"))
    cache = board.UseVectors()
    texts, uses = ["The bank raised its rates.", RIVER, "A bank of fog."], [1, BANK, 1]
    first = cache.vectors(model, family, "embedded", "first", texts[:2], uses[:2])
    assert model.calls == 1 and len(cache) == 2
    everything = cache.vectors(model, family, "embedded", "first", texts, uses, batch=1)
    assert model.calls == 2 and [" ".join(s) if isinstance(s, list) else s for s in model.sentences[-1:]] in (
        [texts[2]], ["A bank of fog ."])  # BERT reads the text, ELMo its words
    np.testing.assert_array_equal(everything[:, :2], first)
    np.testing.assert_allclose(everything, board.use_vectors(embed(model.model, texts), uses), atol=1e-5)
    assert cache.layer_names(family, "embedded") == embed(model.model, texts[:1]).layer_names
    cache.vectors(model, family, "embedded", "first", texts[::-1], uses[::-1])
    assert model.calls == 2  # all cached
    cache.vectors(model, family, "embedded", "mean", texts[:1], uses[:1])
    assert model.calls == 3  # another pooling is another vector
    assert cache.vectors(model, family, "embedded", "first", [], []).shape == (len(first), 0, first.shape[-1])


def test_the_cache_keeps_the_most_recent_uses():
    class Words:
        def run(self, tokens):
            return _word_run(tokens)

    cache = board.UseVectors(max_entries=3)
    m = Counting(Words())
    for text in ["a b", "c d", "e f", "g h"]:
        cache.vectors(m, "elmo", "words", "first", [text], [1])
    assert len(cache) == 3 and m.calls == 4
    cache.vectors(m, "elmo", "words", "first", ["c d", "e f", "g h"], [1, 1, 1])
    assert m.calls == 4
    cache.vectors(m, "elmo", "words", "first", ["a b"], [1])
    assert m.calls == 5
    big = cache.vectors(m, "elmo", "words", "first", ["p q", "r s", "t u", "v w"], [0, 0, 0, 0])
    assert big.shape == (2, 4, 3) and len(cache) == 3  # a board larger than the cache still gets its vectors
    with pytest.raises(KeyError):
        cache.layer_names("bert", "words")
    with pytest.raises(ValueError, match="unknown model family"):
        cache.vectors(m, "gpt", "words", "first", ["a"], [0])


# --- the quiz ----------------------------------------------------------------------------------


def test_the_board_question_asks_for_the_highest_auc():
    q = quiz.best_separating({"BERT": (["input", "layer 1", "layer 2"], [0.5, 0.9, 0.9]),
                              "ELMo": (["input", "top"], [0.6, 0.8])})
    assert q.right == "BERT · layer 1" and len(q.choices) == 5  # the first on ties
    assert q.text == "At which layer of either model are our sentences sorted most like our senses (highest ROC AUC)?"
    one = quiz.best_separating({"ELMo": (["input", "top"], [0.6, 0.8])})
    assert one.right == "top" and one.choices == ("input", "top") and "ELMo layer" in one.text
    with pytest.raises(ValueError):
        quiz.best_separating({})
    with pytest.raises(ValueError, match="2 ROC AUCs for 1 layers"):
        quiz.best_separating({"M": (["x"], [0.1, 0.2])})


def test_the_cache_can_be_shared_between_threads():
    from concurrent.futures import ThreadPoolExecutor

    class Words:
        def run(self, tokens):
            return _word_run(tokens)

    cache = board.UseVectors(max_entries=50)
    texts = [f"w{i} bank x{i}" for i in range(40)]

    def board_of(k: int) -> np.ndarray:
        part = texts[k % 10 : k % 10 + 20]
        return cache.vectors(Words(), "elmo", "words", "first", part, [1] * len(part), batch=3)

    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(board_of, range(40)))
    for k, v in enumerate(got):
        part = texts[k % 10 : k % 10 + 20]
        np.testing.assert_array_equal(v, board.use_vectors(_word_run([t.split() for t in part]), [1] * len(part)))
    assert len(cache) <= 50
