"""One attention weight, step by step: the steps are the model's own numbers, for the seeded
block and for BERT (every head of one layer, two sentences of different lengths in one
padded batch, as the attention page's batch mode runs them)."""

import numpy as np
import pytest

from lab import figures, quiz, views
from lab.models import layers as nn
from lab.models.bert import BertConfig, BertEncoder
from lab.models.transformer import TransformerConfig, run_block

A = "The central bank raised interest rates yesterday."
B = "A fisherman rested on the river bank at sunset, tired and happy."


def check_every_query(steps, attentions, tokens, mask, masked: bool) -> None:
    """For every row, head and real query: the view's weights are the model's attention
    within 1e-6, its output the head's context vector and sum_j w_j v_j, padded keys get
    exactly 0 (mask on), and the weights sum to 1."""
    B_, H, T, _ = attentions.shape
    for row in range(B_):
        for head in range(H):
            for query in np.flatnonzero(mask[row]):
                w = views.weight_steps(steps, tokens[row], mask[row], row, head, int(query))
                np.testing.assert_allclose(w.weights, attentions[row, head, query], rtol=0, atol=1e-6)
                np.testing.assert_array_equal(w.output, steps.context[row, head, query])
                np.testing.assert_allclose(w.output, w.weights @ w.values, rtol=0, atol=1e-5)
                assert abs(w.weight_sum - 1.0) < 1e-6
                np.testing.assert_allclose(w.scores, w.dots * w.scale, rtol=1e-5, atol=1e-6)
                if masked:
                    assert (w.weights[w.padded] == 0.0).all()
                    assert (w.bias[w.padded] == nn.MASK_BIAS).all() and (w.bias[~w.padded] == 0).all()
                # the mask step's bars: real scores, and the bare score under each cross
                np.testing.assert_array_equal(w.crossed, w.padded & masked)
                np.testing.assert_array_equal(w.score_plus_mask, np.where(w.crossed, w.scores, w.scores + w.bias))


# --- the seeded block --------------------------------------------------------------------


@pytest.mark.parametrize("use_mask", [True, False])
def test_block_steps_are_its_attention_and_context(use_mask):
    run = run_block([A, B], seed=3, use_mask=use_mask)
    steps, batch = run.steps, run.batch
    assert batch.padding_mask[0].sum() < batch.padding_mask[1].sum()  # row 0 is padded
    np.testing.assert_array_equal(steps.weights, run.attentions)  # the same array the page's heatmap draws
    assert (steps.bias is not None) == use_mask
    check_every_query(steps, run.attentions, batch.tokens, batch.padding_mask, use_mask)
    padded = batch.padding_mask[0] == 0
    real = np.flatnonzero(batch.padding_mask[0])
    on_padding = run.attentions[0][:, real][..., padded]  # (H, real queries, padded keys)
    assert (on_padding == 0).all() if use_mask else (on_padding > 0).all()


def test_block_q_k_v_are_its_projections_of_x():
    c = TransformerConfig()
    run = run_block([A, B], seed=1, config=c)
    from lab.models.transformer import random_weights

    w = random_weights(c, len(run.vocabulary), seed=1)
    x = run.steps.x  # (B, T, C): embeddings + positions
    for name, part in (("q", run.steps.q), ("k", run.steps.k), ("v", run.steps.v)):
        proj = (x @ w[name] + w[name + "_bias"]).reshape(*x.shape[:2], c.num_heads, c.head_size)
        np.testing.assert_allclose(part, proj.transpose(0, 2, 1, 3), atol=1e-5)


# --- BERT --------------------------------------------------------------------------------


def test_bert_steps_equal_its_attention_for_every_head_of_a_layer(embedded_bert):
    layer = 2
    normal = embedded_bert.run([A, B])  # the page's batch mode
    out, steps = embedded_bert.attention_steps([A, B], layer)
    mask = out.mask
    assert mask[0].sum() < mask[1].sum() and steps.weights.shape == normal.attentions[layer].shape
    T = mask.shape[1]
    tokens = [list(r) + ["[PAD]"] * (T - len(r)) for r in out.tokens]
    # the normal pass's attention, unchanged by asking for the steps
    np.testing.assert_array_equal(out.attentions, normal.attentions)
    check_every_query(steps, normal.attentions[layer], tokens, mask, masked=True)
    # x is the layer's input: the previous layer's output
    np.testing.assert_array_equal(steps.x, normal.layers[layer])
    # K is x W_K + b of the model's own weights, per head
    kernel, bias = (t.numpy() for t in embedded_bert.encoder.layer_weights[layer]["k"])
    k = (steps.x @ kernel + bias).reshape(*steps.x.shape[:2], 12, 32).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(steps.k, k, atol=1e-4)


def test_bert_has_no_mask_off_path_and_checks_the_layer():
    enc = BertEncoder(BertConfig.tiny())
    ids = np.array([[1, 5, 6, 2], [1, 7, 2, 0]], np.int32)
    mask = (ids > 0).astype(np.int32)
    out, steps = enc.attention_steps(ids, mask, layer=1)
    np.testing.assert_allclose(steps.weights, out.attentions[1], atol=1e-6)
    assert steps.bias is not None and (steps.weights[1, :, :, 3] == 0).all()
    with pytest.raises(ValueError, match="layer 2 is not one of this BERT's 2 layers"):
        enc.attention_steps(ids, mask, layer=2)


# --- the view, the figures, the quiz -----------------------------------------------------


@pytest.fixture(scope="module")
def block():
    return run_block([A, B], seed=0, use_mask=True)


def test_a_temperature_is_a_what_if_not_the_model(block):
    args = (block.steps, block.batch.tokens[0], block.batch.padding_mask[0], 0, 1, 2)
    model, hot, cold = (views.weight_steps(*args, temperature=t) for t in (1.0, 4.0, 0.25))
    assert model.model_numbers and not hot.model_numbers
    assert hot.weights.max() < model.weights.max() < cold.weights.max()  # flatter, sharper
    for w in (hot, cold):
        assert abs(w.weight_sum - 1) < 1e-6 and (w.weights[w.padded] == 0).all()
        np.testing.assert_allclose(w.output, w.weights @ w.values, atol=1e-6)


def test_the_neuron_view_and_the_top_keys(block):
    w = views.weight_steps(block.steps, block.batch.tokens[1], block.batch.padding_mask[1], 1, 0, 3)
    n = w.neuron(4)
    np.testing.assert_array_equal(n[0], w.q)
    np.testing.assert_array_equal(n[1], w.keys[4])
    assert n[2].sum() == pytest.approx(w.dots[4], abs=1e-5)
    top = w.top(3)
    assert len(top) == 3 and list(w.contributions[top]) == sorted(w.contributions, reverse=True)[:3]
    assert w.largest == int(np.argmax(w.weights))
    with pytest.raises(ValueError, match="key 99"):
        w.neuron(99)


@pytest.mark.parametrize("row, head, query, temperature, message", [
    (2, 0, 0, 1.0, "row 2"), (0, 5, 0, 1.0, "head 5"), (0, 0, 99, 1.0, "query 99"),
    (0, 0, 0, 0.0, "positive number"), (0, 0, 0, float("nan"), "positive number"),
])
def test_weight_steps_rejects_bad_choices(block, row, head, query, temperature, message):
    with pytest.raises(ValueError, match=message):
        views.weight_steps(block.steps, block.batch.tokens[0], block.batch.padding_mask[0], row, head, query,
                           temperature)
    with pytest.raises(ValueError, match="tokens"):
        views.weight_steps(block.steps, ["a"], [1], 0, 0, 0)


def test_key_bars_draw_the_mask_as_crosses_and_strips_write_their_shape(block):
    w = views.weight_steps(block.steps, block.batch.tokens[0], block.batch.padding_mask[0], 0, 0, 0)
    fig = figures.key_bars(w.scores, w.tokens, "scores", "m", crossed=w.padded, cross_text="-1e+09", selected=1)
    bars, crosses = fig.data
    assert list(bars.x) == list(np.flatnonzero(~w.padded)) and list(crosses.x) == list(np.flatnonzero(w.padded))
    n = int(w.padded.sum())
    assert list(crosses.text) == ["-1e+09"] + [""] * (n - 1) and list(crosses.y) == [0.0] * n
    np.testing.assert_allclose(bars.y, w.scores[~w.padded])
    strip = figures.vector_strip(w.keys, w.tokens, "K", "TD", "m", projector=True)
    assert f"(T, D) = ({len(w.tokens)}, {len(w.q)})" in strip.layout.title.text
    np.testing.assert_array_equal(np.asarray(strip.data[0].z), w.keys.astype(float))
    with pytest.raises(ValueError, match="keys"):
        figures.key_bars(w.scores[:3], w.tokens, "t", "m")
    with pytest.raises(ValueError, match="labels"):
        figures.vector_strip(w.keys, ["a"], "K", "TD", "m")


@pytest.mark.parametrize("projector", [False, True])
def test_a_stack_keeps_each_step_its_title_its_own_axes_and_its_numbers(block, projector):
    w = views.weight_steps(block.steps, block.batch.tokens[0], block.batch.padding_mask[0], 0, 0, 2)
    steps = [figures.key_bars(w.dots, w.tokens, "3 · q · k_j (T) = (10)", "", projector),
             figures.key_bars(w.score_plus_mask, w.tokens, "4 · the mask", "", projector, crossed=w.padded,
                              cross_text="−10⁹"),
             figures.vector_strip(w.neuron(1), ["q", "k", "q * k"], "7 · neuron view", "3D", "", projector)]
    fig = figures.stacked(steps, "3-7 · steps", "the block", projector, names=("dots", "mask", "neuron"))
    titles = [figures.plain_text(a.text.replace("<br>", " ")) for a in fig.layout.annotations]
    assert titles == ["3 · q · k_j (T) = (10)", "4 · the mask",
                      f"7 · neuron view · (3, D) = (3, {len(w.q)})"]
    assert "the block" in fig.layout.title.text and [t.name for t in fig.data] == ["dots", "mask", "mask", "neuron"]
    # each step on its own axes, top to bottom, none overlapping, its title above it
    assert [(t.xaxis, t.yaxis) for t in fig.data] == [("x", "y"), ("x2", "y2"), ("x2", "y2"), ("x3", "y3")]
    domains = [fig.layout[f"yaxis{s}"].domain for s in ("", "2", "3")]
    assert all(lo < hi for lo, hi in domains) and all(a[0] > b[1] for a, b in zip(domains, domains[1:]))
    assert all(d[1] <= a.y < (above[0] if above else 1.2) for a, d, above in
               zip(fig.layout.annotations, domains, [None] + domains[:-1]))
    # the numbers are the steps' own; the strip's colour bar beside its own strip
    np.testing.assert_allclose(fig.data[0].y, w.dots)
    np.testing.assert_array_equal(np.asarray(fig.data[3].z), w.neuron(1).astype(float))
    bar = fig.data[3].colorbar
    assert domains[2][0] - 1e-9 <= bar.y - bar.len / 2 and bar.y + bar.len / 2 <= domains[2][1] + 1e-9
    # one key axis: its labels written once, under the last step that has it
    assert fig.layout.xaxis.showticklabels is False and fig.layout.xaxis3.showticklabels is not False
    with pytest.raises(ValueError, match="names"):
        figures.stacked(steps, "t", "m", names=("one",))
    # strips over the same dimensions share their labels too; over other widths, not
    out = figures.vector_strip(w.output[None], ["x"], "6 · output", "1D", "", projector)
    pair = figures.stacked([out, steps[2]], "6-7", "m", projector)
    assert pair.layout.xaxis.showticklabels is False and pair.layout.xaxis2.showticklabels is not False
    x = figures.vector_strip(w.x[None], ["x"], "1 · x", "1C", "", projector)
    assert figures.stacked([x, out], "1-2", "m", projector).layout.xaxis.showticklabels is not False


def test_powers_of_ten_are_written_as_prose_writes_them():
    assert [figures.power_of_ten(v) for v in (nn.MASK_BIAS, 1e3, 0.01, -2.5, 0.0)] == ["−10⁹", "10³", "10⁻²",
                                                                                      "-2.5", "0"]


def test_the_quiz_asks_for_the_largest_weight():
    q = quiz.most_weight("bank", ["the", "bank", "bank"], [0.2, 0.4, 0.4])
    assert q.choices == ("0 · the", "1 · bank", "2 · bank") and q.answer == 1 and "bank" in q.text
    with pytest.raises(ValueError):
        quiz.most_weight("x", ["a"], [])
