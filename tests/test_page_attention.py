"""The Transformer attention page under AppTest: every plotted matrix is the one lab returns."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from lab import analysis, figures, views
from lab.models.transformer import run_block
from tests.conftest import ROOT
from tests.specs import chart_keyed, tables as shown_tables, use_source, values

A = "The central bank raised interest rates yesterday."
B = "A fisherman rested on the river bank at sunset."
TABLE_PANELS = ("att_block_tbl", "att_head_tbl", "att_row_tbl")


def page(tables: bool = True) -> AppTest:
    """The page, with its tables' panels open (as a link with ``att_head_tbl=1``... opens them)."""
    at = AppTest.from_file(str(ROOT / "app_pages/attention.py"), default_timeout=120)
    if tables:
        for key in TABLE_PANELS:
            at.query_params[key] = "1"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def table(at: AppTest, key: str) -> np.ndarray:
    """The values of the page's table ``key`` (a keyed container holding one dataframe)."""
    return at.get_by_key(key).dataframe[0].value.to_numpy(dtype=float)


def columns(at: AppTest, key: str) -> list[str]:
    return [str(c) for c in at.get_by_key(key).dataframe[0].value.columns]


def tile(spec: dict, layer: int, head: int) -> np.ndarray:
    """One head of the model view's grid (layer and head 0-based)."""
    return figures.model_view_tile(values(spec["data"][0]["z"]), layer, head)


def set_widget(at: AppTest, key: str, value) -> AppTest:
    at.get_by_key(f"_w_{key}").set_value(value)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(at: AppTest) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success", "subheader")
             for e in at.get(kind)]
    return "\n".join(str(p) for p in parts)


# --- the minimal block -------------------------------------------------------------------


def test_the_batch_table_downloads_as_csv(downloads):
    """Every table of the app has its CSV, the token/padding table too."""
    at = page(tables=False)
    box = at.get_by_key("att_batch")
    assert [b.proto.label for b in box.get("download_button")] == ["CSV"]
    rows = list(csv.reader(io.StringIO(downloads(at, "att_batch_table_csv").decode("utf-8"))))
    (batch,) = shown_tables(box)
    assert rows[0] == [""] + [str(c) for c in batch.columns]
    assert rows[1:] == [[name, *batch.loc[name].tolist()] for name in batch.index]
    assert rows[1][-2:] == ["[PAD]", "[PAD]"]


def test_a_typed_formula_stays_text_in_a_tables_csv(downloads):
    """A token a spreadsheet would read as a formula ("=", "@", "+") is written with a leading
    ' in the CSV; numbers, negative ones included, stay numbers."""
    at = AppTest.from_file(str(ROOT / "app_pages/attention.py"), default_timeout=120)
    at.query_params["a"] = "=cmd @sum +bank"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    rows = list(csv.reader(io.StringIO(downloads(at, "att_batch_table_csv").decode("utf-8"))))
    tokens = next(r for r in rows if r[0] == "A token")[1:]
    assert {"'=", "'@", "'+"} <= set(tokens) and not any(t[:1] in "=@+-" for t in tokens if t)
    frame = pd.DataFrame({"=word": ["=1+1", "bank", "-cmd"], "cosine": [-0.25, 0.5, 1.0]}, index=["@a", "b", "c"])
    back = list(csv.reader(io.StringIO(views.table_csv(frame).decode("utf-8"))))
    assert back == [["", "'=word", "cosine"], ["'@a", "'=1+1", "-0.25"], ["b", "bank", "0.5"], ["c", "'-cmd", "1.0"]]


def test_block_matrix_follows_head_and_row_and_padded_keys_are_zero():
    at = page()
    ref = run_block([A, B], seed=0)
    np.testing.assert_allclose(table(at, "att_block_matrix"), ref.attentions[0, 0], atol=1e-6)
    block = chart_keyed(at, "att_block_fig")
    np.testing.assert_allclose(values(block["data"][0]["z"]), ref.attentions[0, 0], atol=1e-6)
    # nothing to click here: one trace, the heatmap, which carries its own hover
    assert len(block["data"]) == 1 and "attention %{z:.3f}" in block["data"][0]["hovertemplate"]
    padded = ref.batch.padding_mask[0] == 0
    assert padded.sum() == 2 and (table(at, "att_block_matrix")[:, padded] == 0.0).all()
    assert "exactly zero" in texts(at) and "random" in texts(at)
    (batch,) = shown_tables(at.get_by_key("att_batch"))
    assert batch.loc["A token"].tolist()[-2:] == ["[PAD]", "[PAD]"]
    assert batch.loc["A token_ids"].tolist()[-2:] == ["0", "0"]
    assert batch.loc["A padding_mask"].tolist() == ["1"] * 8 + ["0"] * 2

    set_widget(at, "att_block_head", 2)
    np.testing.assert_allclose(table(at, "att_block_matrix"), ref.attentions[0, 2], atol=1e-6)
    set_widget(at, "att_block_row", 1)
    np.testing.assert_allclose(table(at, "att_block_matrix"), ref.attentions[1, 2], atol=1e-6)
    assert "no padding" in texts(at)


def test_mask_off_leaks_into_padding_and_the_seed_changes_the_weights():
    at = page()
    set_widget(at, "att_mask", False)
    leaky = run_block([A, B], seed=0, use_mask=False)
    m = table(at, "att_block_matrix")
    np.testing.assert_allclose(m, leaky.attentions[0, 0], atol=1e-6)
    assert (m[:, 8:] > 0).all()
    assert "Mask off" in texts(at)

    set_widget(at, "att_mask", True)
    set_widget(at, "att_seed", 5)
    np.testing.assert_allclose(table(at, "att_block_matrix"), run_block([A, B], seed=5).attentions[0, 0],
                               atol=1e-6)
    assert "seed 5" in chart_keyed(at, "att_block_fig")["layout"]["title"]["text"]
    assert at.query_params["att_seed"] in ("5", ["5"])


# --- real BERT heads ---------------------------------------------------------------------


def test_head_view_follows_layer_head_and_batch_row(embedded_bert):
    at = page()
    out = embedded_bert.run([A, B])
    n = [int(m.sum()) for m in out.mask]
    np.testing.assert_allclose(table(at, "att_head_matrix"), out.attentions[0, 0, 0, :n[0], :n[0]], atol=1e-5)
    model_view = chart_keyed(at, "att_model_view")
    tiling = figures.model_view_tiling(values(model_view["data"][0]["z"]))
    assert (tiling["layers"], tiling["heads"], tiling["queries"], tiling["keys"]) == (6, 12, n[0], n[0])
    assert "meta" not in model_view["layout"]  # with one, Plotly drew the grid twice
    np.testing.assert_allclose(tile(model_view, 2, 3), out.attentions[2, 0, 3, :n[0], :n[0]], atol=1e-5)
    assert "all-MiniLM-L6-v2" in model_view["layout"]["title"]["text"]

    set_widget(at, "att_layer", 3)
    set_widget(at, "att_bert_head", 5)
    np.testing.assert_allclose(table(at, "att_head_matrix"), out.attentions[3, 0, 5, :n[0], :n[0]], atol=1e-5)
    set_widget(at, "att_bert_row", 1)
    m = table(at, "att_head_matrix")
    np.testing.assert_allclose(m, out.attentions[3, 1, 5, :n[1], :n[1]], atol=1e-5)
    np.testing.assert_allclose(values(chart_keyed(at, "att_head_view")["data"][0]["z"]), m, atol=1e-5)
    assert columns(at, "att_head_matrix")[0] == "0·[CLS]" and columns(at, "att_head_matrix")[7] == "7·bank"


def test_another_query_moves_the_outline_and_leaves_the_head_view_as_it_was(embedded_bert):
    at = page(tables=False)
    n_charts = len(at.get("plotly_chart"))
    spec = chart_keyed(at, "att_head_view")

    def outline() -> str:
        return at.get_by_key("att_head_view_outline").markdown[0].value

    fig = go.Figure(spec)
    assert f"top: {figures.outline_box(fig, 1)['top']:.2f}px" in outline()  # the first word's row
    set_widget(at, "att_query", 3)  # "bank"
    assert chart_keyed(at, "att_head_view") == spec  # the same figure: the browser keeps the drawn chart
    assert f"top: {figures.outline_box(fig, 3)['top']:.2f}px" in outline()
    assert ".st-key-att_head_view::after" in outline() and len(at.get("plotly_chart")) == n_charts


def test_a_table_is_built_only_while_its_panel_is_open(embedded_bert):
    at = page(tables=False)
    assert [e.label for e in at.expander].count("The values as a table") == 3
    assert not at.dataframe  # closed: no table sent, none drawn by a click
    at.session_state["att_head_tbl"] = True  # what opening the panel does
    at.run()
    out = embedded_bert.run([A, B])
    n = int(out.mask[0].sum())
    np.testing.assert_allclose(table(at, "att_head_matrix"), out.attentions[0, 0, 0, :n, :n], atol=1e-5)
    assert len(at.dataframe) == 1  # the other two stay closed
    state = dict(at.query_params)
    assert state.get("att_head_tbl") in ("1", ["1"]) and "att_row_tbl" not in state  # a link reopens it
    assert [b.proto.label for b in at.get_by_key("att_head_matrix").get("download_button")] == ["CSV"]


def test_in_projector_mode_a_table_is_an_html_table_of_the_same_values(embedded_bert):
    at = AppTest.from_file(str(ROOT / "app_pages/attention.py"), default_timeout=120)
    at.query_params["att_head_tbl"], at.query_params["proj"] = "1", "1"
    at.run()
    box = at.get_by_key("att_head_matrix")
    assert not box.dataframe and len(box.table) == 1  # whose cells wrap, and whose type projector mode enlarges
    out = embedded_bert.run([A, B])
    n = int(out.mask[0].sum())
    np.testing.assert_allclose(box.table[0].value.to_numpy(dtype=float), out.attentions[0, 0, 0, :n, :n], atol=1e-5)
    assert [b.proto.label for b in box.get("download_button")] == ["CSV"]


def test_clicking_a_token_shows_its_row_in_every_head(embedded_bert):
    at = page()
    out = embedded_bert.run([A, B])
    n = int(out.mask[0].sum())
    # the default query is the first real word; rows are heads, columns keys
    np.testing.assert_allclose(table(at, "att_row_matrix"), out.attentions[0, 0, :, 1, :n], atol=1e-5)
    set_widget(at, "att_layer", 4)
    set_widget(at, "att_query", 3)  # "bank"
    rows = table(at, "att_row_matrix")
    assert rows.shape == (12, n)
    np.testing.assert_allclose(rows, out.attentions[4, 0, :, 3, :n], atol=1e-5)
    np.testing.assert_allclose(values(chart_keyed(at, "att_row_view")["data"][0]["z"]), rows, atol=1e-5)
    assert '"bank" in every head of layer 5' in texts(at)

    set_widget(at, "att_lines", True)
    lines = chart_keyed(at, "att_lines_view")
    assert "bank" in lines["layout"]["title"]["text"]
    weights = [float(t.rsplit(" ", 1)[1]) for t in lines["data"][-1]["text"]]
    np.testing.assert_allclose(weights, out.attentions[4, 0, 0, 3, :n], atol=5e-3)


@pytest.mark.parametrize("filt, q_seg, k_seg", [("ab", 0, 1), ("ba", 1, 0)])
def test_pair_filters_give_the_right_quadrant(embedded_bert, filt, q_seg, k_seg):
    at = page()
    set_widget(at, "att_mode", "pair")
    set_widget(at, "att_filter", filt)
    set_widget(at, "att_layer", 2)
    pair = embedded_bert.run([A, B], pair=True)
    types = pair.bert.input_type_ids[0]
    assert pair.mask[0].all()  # one row, no padding
    want = analysis.quadrant(pair.attentions[2, 0, 0], types == q_seg, types == k_seg)
    np.testing.assert_allclose(table(at, "att_head_matrix"), want, atol=1e-5)
    np.testing.assert_allclose(tile(chart_keyed(at, "att_model_view"), 0, 0),
                               analysis.quadrant(pair.attentions[0, 0, 0], types == q_seg, types == k_seg),
                               atol=1e-5)
    keys = columns(at, "att_head_matrix")
    assert all(pair.bert.input_type_ids[0, int(c.split("·")[0])] == k_seg for c in keys)


def test_hiding_special_tokens_renormalizes_rows_in_every_view(embedded_bert):
    at = page()
    set_widget(at, "att_layer", 1)
    set_widget(at, "att_special", "hide")
    out = embedded_bert.run([A, B])
    n = int(out.mask[0].sum())
    keep = analysis.content_mask(out.tokens[0], n)
    want = analysis.drop_tokens(out.attentions[1, 0, :, :n, :n], keep)  # (H, n', n')
    m = table(at, "att_head_matrix")
    np.testing.assert_allclose(m, want[0], atol=1e-5)
    np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-5)
    assert not any("[CLS]" in c or "[SEP]" in c for c in columns(at, "att_head_matrix"))
    np.testing.assert_allclose(table(at, "att_row_matrix"), want[:, 0], atol=1e-5)  # first word, every head
    np.testing.assert_allclose(tile(chart_keyed(at, "att_model_view"), 1, 0),
                               analysis.drop_tokens(out.attentions[1, 0, 0, :n, :n], keep), atol=1e-5)

    # the policy applies before the pair filter: A -> B of the renormalized matrix
    set_widget(at, "att_mode", "pair")
    set_widget(at, "att_filter", "ab")
    pair = embedded_bert.run([A, B], pair=True)
    keep = analysis.content_mask(pair.tokens[0], len(pair.tokens[0]))
    dropped = analysis.drop_tokens(pair.attentions[1, 0, 0], keep)
    types = pair.bert.input_type_ids[0][keep]
    np.testing.assert_allclose(table(at, "att_head_matrix"),
                               analysis.quadrant(dropped, types == 0, types == 1), atol=1e-5)


def test_a_hub_source_without_attentions_says_so_and_offers_the_embedded_model(hub_bert_dirs, monkeypatch):
    enc_dir, pre_dir, _ = hub_bert_dirs
    monkeypatch.setenv("LAB_BERT_PREPROCESS", str(pre_dir))
    at = page()
    use_source(at, "bert", enc_dir)
    assert not at.exception, [e.value for e in at.exception]
    info = texts(at)
    assert "TF Hub BERT" in info and "cannot show attention" in info
    assert "att_head_view" not in [c.key for c in at.get("plotly_chart")]
    assert "att_block_fig" in [c.key for c in at.get("plotly_chart")]  # the minimal block still works

    set_widget(at, "att_embedded", True)
    assert "all-MiniLM-L6-v2" in chart_keyed(at, "att_head_view")["layout"]["title"]["text"]


@pytest.mark.parametrize("a, b, message", [
    ("   ", B, "Sentence A: it is empty"),
    (A, "🙂🙂", "Sentence B: it has no letters"),
])
def test_bad_input_gives_messages_not_exceptions(a, b, message):
    at = page()
    at.sidebar.text_area(key="_w_a").input(a)
    at.sidebar.text_area(key="_w_b").input(b)
    at.run()
    assert not at.exception
    assert any(message in w.value for w in at.warning)
    assert not at.get("plotly_chart")


def test_long_odd_and_hostile_input_is_drawn_without_exceptions():
    at = page()
    at.sidebar.text_area(key="_w_a").input("<script>alert('x')</script> 银行 bank 🙂 café")
    at.sidebar.text_area(key="_w_b").input("bank river " * 350)  # 700 words, 700+ pieces
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    warnings = " ".join(w.value for w in at.warning)
    assert "first 64" in warnings and "512 positions" in warnings
    set_widget(at, "att_bert_row", 1)
    assert table(at, "att_head_matrix").shape == (48, 48)
    assert any("first 48" in w.value for w in at.warning)
    picker = at.selectbox(key="_w_att_query")  # 48 queries: a select box, not pills
    assert picker.label == "Query token"
    assert picker.options[:4] == ["0 · [CLS]", "1 · bank", "2 · river", "3 · bank"]
    assert picker.value == 1 and '"bank" in every head' in texts(at)
    set_widget(at, "att_query", 4)
    assert '"river" in every head' in texts(at)
    set_widget(at, "att_bert_row", 0)
    head_cols = columns(at, "att_head_matrix")
    assert any("script" in c for c in head_cols) and any("行" in c for c in head_cols)
    assert "&lt;" in json.dumps(chart_keyed(at, "att_head_view")["layout"]["xaxis"]["ticktext"])
    (block,) = shown_tables(at.get_by_key("att_batch"))
    assert "<" in block.loc["A token"].tolist()


# --- the figure builder addition ---------------------------------------------------------


def test_model_view_takes_separate_key_tokens():
    attn = np.random.default_rng(0).random((2, 3, 4, 5))
    fig = figures.model_view(attn, list("abcd"), "t", "m", key_tokens=list("vwxyz"))
    # the grid and its tiles' markers
    assert len(fig.data) == 2 and figures.model_view_tiling(fig.data[0].z)["keys"] == 5
    np.testing.assert_array_equal(figures.model_view_tile(fig.data[0].z, 1, 2),
                                  attn[1, 2].astype(np.float32))
    with pytest.raises(ValueError, match="S = 4 keys"):
        figures.model_view(attn, list("abcd"), "t", "m")


def test_a_seed_off_the_inputs_scale_in_a_link_is_the_default():
    at = AppTest.from_file(str(ROOT / "app_pages/attention.py"), default_timeout=120)
    at.query_params["att_seed"] = "-5"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="_w_att_seed").value == 0
    assert "seed 0" in chart_keyed(at, "att_block_fig")["layout"]["title"]["text"]
    assert "att_seed" not in at.query_params  # the link now says what is shown
