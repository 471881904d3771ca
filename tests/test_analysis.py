"""Pure NumPy analyses, checked against hand-computed values."""

import numpy as np
import pytest

from lab import analysis, views


def test_cosine_and_matrix():
    assert analysis.cosine(np.array([1.0, 0]), np.array([1.0, 1])) == pytest.approx(1 / np.sqrt(2))
    assert analysis.cosine(np.zeros(3), np.ones(3)) == 0.0
    x = np.array([[1.0, 0], [0, 2]])
    y = np.array([[3.0, 0], [1, 1], [0, -1]])
    np.testing.assert_allclose(analysis.cosine_matrix(x, y),
                               [[1, 1 / np.sqrt(2), 0], [0, 1 / np.sqrt(2), -1]], atol=1e-12)
    with pytest.raises(ValueError):
        analysis.cosine_matrix(x, np.ones((2, 3)))


def test_layerwise_and_token_vs_tokens():
    a = np.array([[1.0, 0], [0, 1]])
    b = np.array([[1.0, 0], [1, 0]])
    np.testing.assert_allclose(analysis.layerwise_cosine(a, b), [1.0, 0.0])
    tokens = np.stack([np.array([[1.0, 0], [0, 1]]), np.array([[1.0, 0], [0, 1]])])  # (N=2, T=2, C=2)
    np.testing.assert_allclose(analysis.token_vs_tokens(a, tokens), [[1, 0], [0, 1]])


def test_pooling():
    v = np.arange(12, dtype=float).reshape(1, 4, 3)  # (N, T, C)
    np.testing.assert_array_equal(analysis.pool_pieces(v, [1, 2], "first"), [[3, 4, 5]])
    np.testing.assert_array_equal(analysis.pool_pieces(v, [1, 2], "mean"), [[4.5, 5.5, 6.5]])
    with pytest.raises(ValueError):
        analysis.pool_pieces(v, [], "first")
    keep = analysis.content_mask(["[CLS]", "a", "b", "[SEP]"], 4)
    assert keep.tolist() == [False, True, True, False]
    np.testing.assert_array_equal(analysis.mean_pool(v[0], keep), [4.5, 5.5, 6.5])


def test_default_pair_skips_stopwords():
    a = "The central bank raised interest rates yesterday .".split()
    b = "A fisherman rested on the river bank at sunset .".split()
    assert analysis.default_pair(a, b) == (2, 6)
    assert analysis.default_pair(["the", "x"], ["y", "The"]) == (0, 1)  # only a stopword shared
    assert analysis.default_pair(["x"], ["y"]) == (0, 0)
    # BERT's words of "I don't know the well-known café." / "She doesn't like the well-known CAFÉ":
    # not the "t" of the contractions, the first shared word of two letters or more
    a = ["I", "don", "'", "t", "know", "the", "well", "-", "known", "café", "."]
    b = ["She", "doesn", "'", "t", "like", "the", "well", "-", "known", "CAFÉ"]
    assert analysis.default_pair(a, b) == (6, 6)
    assert analysis.default_pair(["a", "t"], ["t"]) == (1, 0)  # a one-letter word when nothing else is shared


def test_part_contributions_add_up():
    parts = {"word": np.array([2.0, 0]), "position": np.array([0.0, 1]), "type": np.array([1.0, 0])}
    c = analysis.part_contributions(parts)
    assert sum(p["share"] for p in c.values()) == pytest.approx(1.0)
    assert c["word"]["share"] == pytest.approx(6 / 10) and c["word"]["norm"] == 2.0


def test_attention_helpers():
    attn = np.array([[[0.5, 0.25, 0.25, 0.0], [0.1, 0.2, 0.7, 0.0], [0.3, 0.3, 0.4, 0.0], [0.25, 0.25, 0.5, 0.0]]])
    mask = np.array([1, 1, 1, 0], bool)
    assert analysis.check_attention_rows(attn, mask)
    leaky = attn.copy()
    leaky[0, 1] = [0.1, 0.2, 0.6, 0.1]
    assert not analysis.check_attention_rows(leaky, mask)
    kept = analysis.drop_tokens(attn, np.array([False, True, True, False]))
    np.testing.assert_allclose(kept[0], [[0.2 / 0.9, 0.7 / 0.9], [0.3 / 0.7, 0.4 / 0.7]])
    np.testing.assert_allclose(kept.sum(-1), 1.0)
    q = analysis.quadrant(attn, np.array([1, 0, 0, 0], bool), np.array([0, 1, 1, 0], bool))
    np.testing.assert_allclose(q, [[[0.25, 0.25]]])


def test_attention_view_hides_specials_then_filters_a_quadrant():
    from types import SimpleNamespace

    tokens = ["[CLS]", "a", "[SEP]", "b", "c", "[SEP]"]
    rng = np.random.default_rng(0)
    attn = rng.dirichlet(np.ones(6), size=(1, 1, 1, 6)).transpose(0, 1, 2, 3, 4)  # (L, B, H, T, T)
    attn = attn.reshape(1, 1, 1, 6, 6)
    out = SimpleNamespace(tokens=[tokens], attentions=attn, lengths=np.array([6]),
                          bert=SimpleNamespace(input_type_ids=np.array([[0, 0, 0, 1, 1, 1]])))
    full = views.attention_view(out, 0, hide_special=False, filt="all")
    np.testing.assert_array_equal(full.attn, attn[:, 0])
    hidden = views.attention_view(out, 0, hide_special=True, filt="all")
    assert hidden.query_tokens == ["a", "b", "c"]
    np.testing.assert_allclose(hidden.attn.sum(-1), 1.0)
    ab = views.attention_view(out, 0, hide_special=True, filt="ab")
    assert ab.query_tokens == ["a"] and ab.key_tokens == ["b", "c"]
    np.testing.assert_allclose(ab.attn, hidden.attn[..., :1, 1:])  # a quadrant, not renormalized
    short = views.attention_view(out, 0, hide_special=False, filt="all", limit=4)
    assert short.cropped and short.attn.shape[-2:] == (4, 4)


def test_window_keeps_the_centre_inside_and_the_ends_in_range():
    assert views.window(10, 5, 20) == range(0, 10)  # short: everything
    assert views.window(100, 50, 8) == range(46, 54)
    assert views.window(100, 1, 8) == range(0, 8) and views.window(100, 99, 8) == range(92, 100)
    for n, centre in ((100, 0), (100, 57), (9, 8)):
        w = views.window(n, centre, 8)
        assert centre in w and len(w) == min(n, 8) and w.start >= 0 and w.stop <= n


def test_cross_window_is_the_cross_map_around_the_selection():
    from types import SimpleNamespace

    rng = np.random.default_rng(2)
    layers = rng.normal(size=(2, 2, 30, 4))  # (N, B, T, C)
    out = SimpleNamespace(layers=layers, lengths=np.array([30, 12]))
    whole = views.cross_map(out, 1)  # (30, 12)
    m = views.cross_window(out, 1, (20, 3), 8)
    assert m.cropped and (m.rows, m.cols) == (range(16, 24), range(0, 8))
    np.testing.assert_array_equal(m.cosine, whole[16:24, 0:8])
    small = views.cross_window(out, 1, (20, 3), 40)
    assert not small.cropped and small.cosine.shape == (30, 12)


def test_shares_give_a_short_row_all_it_needs_and_the_rest_to_the_others():
    assert views.shares([150, 150], 48) == [24, 24]
    assert views.shares([150, 10], 48) == [38, 10]
    assert views.shares([5, 7], 48) == [5, 7]  # room for everything
    assert views.shares([30], 8) == [8]
    assert sum(views.shares([100, 100], 49)) == 49


def test_a_windowed_token_map_is_the_whole_map_s_columns_around_each_selection():
    from types import SimpleNamespace

    rng = np.random.default_rng(3)
    lengths = [60, 10]
    layers = rng.normal(size=(3, 2, 60, 4))  # (N, B, T, C)
    tokens = [[f"a{i}" for i in range(60)], [f"b{i}" for i in range(10)]]
    out = SimpleNamespace(layers=layers, lengths=np.array(lengths), tokens=tokens,
                          word_at=lambda r: list(range(lengths[r])))
    vector = rng.normal(size=(3, 4))
    whole = views.token_map(out, vector, (0, 1), prefix=True)
    assert whole.cosine.shape == (3, 70) and not whole.cropped and whole.spans == (range(60), range(10))
    m = views.token_map(out, vector, (0, 1), prefix=True, around=(30, 4), size=24)
    assert m.cropped and m.spans == (range(23, 37), range(0, 10))  # B whole, A the other 14 around word 30
    keep = list(range(23, 37)) + list(range(60, 70))
    np.testing.assert_array_equal(m.cosine, whole.cosine[:, keep])
    assert m.labels == [whole.labels[k] for k in keep] and m.labels[0] == "A·a23"
    assert m.rows == [0] * 14 + [1] * 10 and m.words == list(range(23, 37)) + list(range(10))
    roomy = views.token_map(out, vector, (0, 1), around=(30, 4), size=100)
    assert not roomy.cropped and roomy.cosine.shape == (3, 70)


def test_context_only_moves_each_half_one_word_away():
    # B=2 sentences, T=3 slots, C=4 (forward = first 2, backward = last 2); row 1 has 2 words
    layer = np.array([
        [[1, 2, 10, 20], [3, 4, 30, 40], [5, 6, 50, 60]],
        [[7, 8, 70, 80], [9, 9, 90, 90], [0, 0, 0, 0]],
    ], float)
    got = analysis.context_only(layer, np.array([3, 2]))
    want = np.array([
        [[0, 0, 30, 40], [1, 2, 50, 60], [3, 4, 0, 0]],  # ends: no forward before 0, no backward after 2
        [[0, 0, 90, 90], [7, 8, 0, 0], [0, 0, 0, 0]],  # padding stays 0
    ], float)
    np.testing.assert_array_equal(got, want)


def test_context_only_ignores_whatever_sits_in_padding():
    layer = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4)  # nonzero padding in row 1
    got = analysis.context_only(layer, np.array([3, 1]))
    assert (got[1] == 0).all()  # one word: no neighbour on either side, and padding is 0
    with pytest.raises(ValueError):
        analysis.context_only(np.zeros((1, 2, 3)), np.array([2]))


def test_a_mix_baseline_from_the_pairs_products_is_the_mixed_vectors_mean_cosine():
    rng = np.random.default_rng(3)
    vecs = rng.normal(size=(3, 40, 16)) + np.array([0.0, 1.0, 2.0])[:, None, None]  # layers of rising anisotropy
    groups = np.repeat(np.arange(8), 5)
    pairs = analysis.random_pairs(groups, 300, seed=0)
    grams = analysis.pair_grams(vecs, pairs)
    assert grams.shape == (300, 3, 3, 3)
    for weights, gamma in (([0.0, 0.0, 0.0], 1.0), ([1.5, -2.0, 0.3], 0.7), ([-10.0, -10.0, 10.0], 2.0)):
        mixed = analysis.scalar_mix(vecs, weights, gamma)[None]  # (1, M, C)
        direct = analysis.mean_pair_cosine(mixed.astype(np.float64), pairs)[0]
        assert analysis.mix_baseline(grams, weights) == pytest.approx(direct, abs=1e-6)
    # all the weight on one layer: that layer's own baseline
    layer = analysis.mean_pair_cosine(vecs, pairs)
    assert analysis.mix_baseline(grams, [-30.0, 30.0, -30.0]) == pytest.approx(layer[1], abs=1e-9)
    assert layer[0] < layer[1] < layer[2]
