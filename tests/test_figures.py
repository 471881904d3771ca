"""Figure builders: labels escaped, shapes checked, the model named, values carried."""

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io
import pytest

from lab import figures


def test_heatmap_values_labels_and_model_caption():
    z = np.array([[1.0, 0.5], [0.2, -0.3], [0.0, 0.9]])
    fig = figures.heatmap(z, ["the", "the"], ["<script>", "b", "c"], "T", "Model X")
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), z)
    assert list(fig.layout.yaxis.ticktext) == ["&lt;script&gt;", "b", "c"]  # escaped, never HTML
    assert list(fig.layout.xaxis.tickvals) == [0, 1]  # repeated tokens keep their own column
    assert "Model: Model X" in fig.layout.title.text
    assert len(fig.data) == 2 and len(fig.data[1].x) == 6  # click targets on every cell
    assert not fig.layout.shapes  # a selection is outlined over the drawn chart (outline_box)


def test_outline_box_lies_on_the_row_of_the_drawn_heatmap():
    z = np.random.default_rng(1).random((5, 3))
    fig = figures.attention_heatmap(z, ["q1", "q2", "q3", "q4", "q5"], "T", "M", key_tokens=["a", "b", "c"])
    assert list(fig.layout.yaxis.range) == [4.5, -0.5] and list(fig.layout.xaxis.range) == [-0.5, 2.5]
    assert not fig.layout.shapes  # the figure does not change with the selected row
    m, h = fig.layout.margin, fig.layout.height
    plot = h - m.t - m.b
    box = figures.outline_box(fig, 2)
    assert box["top"] == pytest.approx(m.t + 2 * plot / 5) and box["height"] == pytest.approx(plot / 5)
    assert (box["left"], box["right"]) == (m.l, m.r)  # the plot area's sides, whatever the chart's width
    assert (box["x0"], box["x1"]) == (0.0, 1.0)  # a whole row
    assert figures.outline_box(fig, 4)["top"] + box["height"] == pytest.approx(h - m.b)  # the last row ends the plot
    assert box["color"] == figures.OUTLINE and figures.outline_box(fig, 0, projector=True)["width"] > box["width"]
    for bad in (-1, 5):
        with pytest.raises(ValueError, match="not a row"):
            figures.outline_box(fig, bad)


def test_outline_box_of_one_cell_spans_its_column():
    fig = figures.heatmap(np.zeros((3, 4)), list("abcd"), list("xyz"), "T", "M")
    m = fig.layout.margin
    plot = fig.layout.height - m.t - m.b
    box = figures.outline_box(fig, 1, 2)
    assert box["top"] == pytest.approx(m.t + plot / 3) and box["height"] == pytest.approx(plot / 3)
    assert (box["x0"], box["x1"]) == (0.5, 0.75)  # the third of four columns
    assert figures.outline_box(fig, 0, 3)["x1"] == 1.0 and figures.outline_box(fig, 0, 0)["x0"] == 0.0
    for bad in (-1, 4):
        with pytest.raises(ValueError, match="not a column"):
            figures.outline_box(fig, 0, bad)


@pytest.mark.parametrize("projector", [False, True])
def test_heatmap_values_fit_their_cells_or_are_left_out(projector):
    # a laptop's chart (figures.CHART_WIDTH) split into more and more columns: the values
    # keep the look's size while they fit, then get smaller, then one decimal, then none
    z = np.linspace(-1, 1, 7 * 40).reshape(7, 40)
    s = figures.style(projector)
    seen = []
    for cols in range(4, 41):
        fig = figures.heatmap(z[:, :cols], [f"t{i}" for i in range(cols)], [f"layer {i}" for i in range(7)],
                              "T", "M", projector=projector, y_title="layer", show_values=True)
        trace = fig.data[0]
        if trace.texttemplate is None:
            seen.append("none")
            continue
        decimals = int(trace.texttemplate[-3])
        cell = (figures.CHART_WIDTH - fig.layout.margin.l - fig.layout.margin.r) / cols
        assert figures.number_width(f"{-0.5:.{decimals}f}") * trace.textfont.size <= cell
        assert s["cell_text_min"] <= trace.textfont.size <= s["cell_text"]
        seen.append((decimals, trace.textfont.size == s["cell_text"]))
    kinds = list(dict.fromkeys(seen))
    assert kinds[0] == (2, True) and kinds[-1] == "none"  # full size at first, nothing at 40 columns
    assert (2, False) in kinds and kinds.index((2, True)) < kinds.index((2, False)) < kinds.index("none")
    assert seen[seen.index("none"):] == ["none"] * (len(seen) - seen.index("none"))  # never back


@pytest.mark.parametrize("projector, row", [(False, 24), (True, 36)])
def test_heatmap_rows_hold_their_values_under_a_long_title(projector, row):
    # a two-line title and model caption take 190 px of a projector figure's 560: the figure
    # grows so that the rows keep their height (20 px of plot per row before, for 18-px values)
    long = "all-MiniLM-L6-v2 (embedded; a distilled BERT fine-tuned for sentence embeddings, 6 layers x 12 heads)"
    for rows in (3, 10, 25):
        fig = figures.heatmap(np.zeros((rows, 12)), [f"t{i}" for i in range(12)], [f"w{i}" for i in range(rows)],
                              "Every token of A against every token of B at layer 6", long, projector=projector,
                              x_title="sentence B", y_title="sentence A")
        layout = fig.layout
        assert (layout.height - layout.margin.t - layout.margin.b) / rows >= row
        assert layout.height <= figures.MAX_HEIGHT


def test_pair_strip_lists_the_models_top_down_and_always_names_your_pair():
    groups = {m: {"same sense": ([0.9], ["s"]), "different sense": ([0.4], ["d"])} for m in ("BERT", "ELMo")}
    fig = figures.pair_strip(groups, {"BERT": None, "ELMo": 0.7}, "T", "M")
    first, last = fig.layout.yaxis.range
    assert list(fig.layout.yaxis.ticktext) == ["BERT", "ELMo"] and first > last  # row 0 (BERT) at the top
    yours = [t for t in fig.data if t.name.endswith("your pair")]
    assert [(t.name, t.y[0]) for t in yours] == [("ELMo: your pair", 1)] and yours[0].showlegend  # only ELMo placed


def test_pair_strip_colours_the_senses_apart_and_each_pair_in_its_model_s_colour():
    groups = {m: {"same sense": ([0.9], ["s"]), "different sense": ([0.4], ["d"])} for m in ("BERT", "ELMo")}
    fig = figures.pair_strip(groups, {"BERT": 0.5, "ELMo": 0.7}, "T", "M", colours={"BERT": 4, "ELMo": 5})
    colour = {t.name: t.marker.color for t in fig.data}
    assert colour["same sense"] == figures.OKABE_ITO[figures.PAIR_COLOURS["same sense"]]
    assert colour["different sense"] == figures.OKABE_ITO[figures.PAIR_COLOURS["different sense"]]
    assert colour["BERT: your pair"] == figures.OKABE_ITO[4] and colour["ELMo: your pair"] == figures.OKABE_ITO[5]
    # the page's model colours are none of the senses' nor chance's
    senses = {*figures.PAIR_COLOURS.values(), figures.CHANCE_COLOUR}
    assert len(set(figures.MODEL_COLOURS.values())) == 2 and not senses & set(figures.MODEL_COLOURS.values())


def test_a_use_map_marks_a_and_b_by_letter_in_the_model_s_colour():
    fig = figures.use_map_chart(_use_map(), [("a ", "bank", " b")] * 3, ("bank", "bank"), "T", "M", colour=1)
    stars = [t for t in fig.data if t.marker.symbol == "star"]
    assert [tuple(t.text) for t in stars] == [("A",), ("B",)]
    assert {t.marker.color for t in stars} == {figures.OKABE_ITO[1]} and fig.data[0].marker.color == figures.USES


@pytest.mark.parametrize("projector", [False, True])
def test_pair_strip_gives_each_model_row_its_height(projector):
    # in a figure of a fixed height, a three-line projector title, the axis title and the
    # legend leave a model row too little room for 14-px dots and a 31-px star
    title = "Your pair (sentences A and B, the selected words) among the sense pairs, at each model's best layer"
    for n in (1, 2, 3):
        models = [f"model {i}" for i in range(n)]
        groups = {m: {"same sense": ([0.9, 0.8], ["s", "t"]), "different sense": ([0.4], ["d"])} for m in models}
        fig = figures.pair_strip(groups, {m: 0.5 for m in models}, title, "BERT · ELMo", projector)
        layout = fig.layout
        first, last = layout.yaxis.range
        per_row = (layout.height - layout.margin.t - layout.margin.b) / (first - last)  # px per unit: per row
        assert per_row >= figures.style(projector)["strip_row"] - 1e-9 and figures.style(projector)["strip_row"] >= 90


def test_heatmap_rejects_mismatched_labels():
    with pytest.raises(ValueError, match="labels"):
        figures.heatmap(np.zeros((2, 3)), ["a", "b"], ["x", "y"], "T", "M")


def test_projector_style_is_bigger():
    normal = figures.layer_curve(["e", "1"], {"s": [1.0, 0.5]}, "T", "M", projector=False)
    big = figures.layer_curve(["e", "1"], {"s": [1.0, 0.5]}, "T", "M", projector=True)
    assert big.layout.font.size > normal.layout.font.size
    assert big.data[0].line.width > normal.data[0].line.width
    with pytest.raises(ValueError):
        figures.layer_curve(["e", "1"], {"s": [1.0]}, "T", "M")


def test_projector_hover_labels_are_larger():
    def hover(projector):
        return figures.layer_curve(["e", "1"], {"s": [1.0, 0.5]}, "T", "M", projector=projector).layout.hoverlabel

    normal, big = hover(False), hover(True)
    assert big.font.size > normal.font.size >= 12
    assert big.font.family == normal.font.family == figures.FONT_FAMILY  # the look's font, only larger
    assert big.bgcolor == figures.BACKGROUND  # the look's box kept


def test_model_view_and_lines():
    attn = np.random.default_rng(0).dirichlet(np.ones(3), size=(2, 4, 3))  # (L, H, T, T)
    fig = figures.model_view(attn, ["a", "b", "c"], "T", "M")
    assert np.asarray(fig.data[0].z).shape == (2 * 4 - 1, 4 * 4 - 1)
    for layer in range(2):
        for head in range(4):
            np.testing.assert_array_equal(figures.model_view_tile(fig.data[0].z, layer, head),
                                          attn[layer, head].astype(np.float32))  # sent as float32
    assert np.isnan(np.asarray(fig.data[0].z, float)[3]).all()  # the blank row between layers
    assert isinstance(json.loads(plotly.io.to_json(fig))["data"][0]["z"], list)  # a small grid: plain lists
    # the grid of a page's default sentences (6 x 12 heads of 14 tokens) stays compact to
    # send: 4 bytes a cell, no hover data (the tiles' markers carry the hover)
    page_size = np.random.default_rng(1).dirichlet(np.ones(14), size=(6, 12, 14))
    spec = json.loads(plotly.io.to_json(figures.model_view(page_size, list("abcdefghijklmn"), "T", "M")))["data"][0]
    assert spec["z"]["dtype"] == "f4" and "customdata" not in spec and spec["hoverinfo"] == "skip"
    with pytest.raises(ValueError):
        figures.model_view(attn, ["a", "b"], "T", "M")
    lines = figures.attention_lines(np.array([0.5, 0.5, 0.0]), ["a", "b", "c"], 0, "T", "M")
    assert sum(1 for d in lines.data if d.mode == "lines") == 2  # zero weight draws no line


def test_a_model_view_s_tiling_is_read_back_from_its_grid():
    """The tiling comes from the grid's blank rows and columns (no ``layout.meta``: with
    one, Plotly drew the grid a second time), from the figure or from its JSON."""
    rng = np.random.default_rng(4)
    for L, H, T, S in [(3, 4, 5, 2), (1, 1, 3, 3), (1, 5, 2, 4), (6, 12, 14, 14)]:
        attn = rng.dirichlet(np.ones(S), size=(L, H, T))
        fig = figures.model_view(attn, list("abcdefghijklmn"[:T]), "T", "M", key_tokens=list("vwxyzopqrstuab"[:S]))
        want = {"layers": L, "heads": H, "queries": T, "keys": S, "gap": 1}
        assert figures.model_view_tiling(fig.data[0].z) == want
        sent = json.loads(plotly.io.to_json(fig))
        assert "meta" not in sent["layout"]
        if isinstance(sent["data"][0]["z"], list):  # a small grid: lists, None for the gaps
            assert figures.model_view_tiling(sent["data"][0]["z"]) == want
            np.testing.assert_array_equal(figures.model_view_tile(sent["data"][0]["z"], L - 1, H - 1),
                                          attn[L - 1, H - 1].astype(np.float32))
    with pytest.raises(ValueError, match="not a model view"):
        figures.model_view_tiling(np.ones((4, 4)) * np.array([1, 1, np.nan, 1]))  # a 2-wide tile, then 1
    attn[0, 0, 0, 0] = np.nan  # a blank row inside a tile would misread the tiling
    with pytest.raises(ValueError, match="finite"):
        figures.model_view(attn, list("abcdefghijklmn"), "T", "M")


def test_a_click_on_a_model_view_tile_opens_its_layer_and_head():
    # 3 layers x 4 heads of 5 queries x 2 keys: a marker on each tile, whose grid cell
    # maps back to the tile's layer and head
    attn = np.random.default_rng(2).dirichlet(np.ones(2), size=(3, 4, 5))
    fig = figures.model_view(attn, list("abcde"), "T", "M", key_tokens=["x", "y"])
    grid, tiles = fig.data
    tiling = figures.model_view_tiling(fig.data[0].z)
    heads, layers = figures.model_view_heads(tiling), figures.model_view_layers(tiling)
    assert heads == [0, 0, -1, 1, 1, -1, 2, 2, -1, 3, 3] and len(layers) == 3 * 6 - 1
    assert [layers[y] for y in tiles.y] == [0] * 4 + [1] * 4 + [2] * 4
    assert [heads[x] for x in tiles.x] == [0, 1, 2, 3] * 3
    assert np.isfinite(np.asarray(grid.z, float)[tiles.y, tiles.x]).all()  # each marker on its tile, not in a gap
    assert [list(c) for c in tiles.customdata[:5]] == [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1]]  # hover: from 1
    assert fig.layout.clickmode == "event+select" and fig.layout.dragmode is False


def test_model_view_box_outlines_one_tile():
    attn = np.random.default_rng(3).dirichlet(np.ones(2), size=(3, 4, 5))
    fig = figures.model_view(attn, list("abcde"), "T", "M", key_tokens=["x", "y"])
    m, h = fig.layout.margin, fig.layout.height
    plot = h - m.t - m.b
    rows, cols = 3 * 6 - 1, 4 * 3 - 1  # the grid: tiles and the blank row or column after each
    grid = figures.model_view_grid(fig)
    assert grid["top"] == m.t and grid["height"] == pytest.approx(plot) and (grid["x0"], grid["x1"]) == (0.0, 1.0)
    box = figures.model_view_box(grid, 1, 2)
    assert box["top"] == pytest.approx(m.t + plot * 6 / rows) and box["height"] == pytest.approx(plot * 5 / rows)
    assert (box["x0"], box["x1"]) == (pytest.approx(6 / cols), pytest.approx(8 / cols))
    last = figures.model_view_box(grid, 2, 3)
    assert last["top"] + last["height"] == pytest.approx(h - m.b) and last["x1"] == pytest.approx(1.0)
    for bad in ((3, 0), (0, 4), (-1, 0)):
        with pytest.raises(ValueError, match="not a tile"):
            figures.model_view_box(grid, *bad)


def test_bar_by_layer():
    fig = figures.bar_by_layer(["input", "lstm1"], [0.9, 0.4], "T", "M")
    bars, printed = fig.data
    assert bars.type == "bar" and list(bars.y) == [0.9, 0.4] and not fig.layout.showlegend
    assert list(printed.text) == ["0.900", "0.400"] and list(printed.y) == [0.9, 0.4]  # on each bar's end
    assert printed.hoverinfo == "skip" and printed.showlegend is False and printed.cliponaxis is False
    assert list(fig.layout.xaxis.ticktext) == ["input", "lstm1"]


@pytest.mark.parametrize("projector", [False, True])
def test_a_printed_value_stays_clear_of_its_baseline_line(projector):
    # ELMo's "context-only 2": 0.177 under a baseline of 0.2 would hide under the line on
    # the bar's end; a value is printed beyond its bar's end or its line, whichever lies further out
    values, base = [1.0, 0.177, 0.62, -0.3, -0.2], [np.nan, 0.2, 0.35, -0.1, -0.35]
    fig = figures.bar_by_layer(["input", "context-only 2", "lstm_outputs1", "a", "b"], values, "T", "M",
                               projector, baseline=base)
    bars, line, printed = fig.data
    assert list(printed.text) == ["1.000", "0.177", "0.620", "-0.300", "-0.200"]
    assert list(printed.y) == [1.0, 0.2, 0.62, -0.3, -0.35]
    assert list(printed.textposition) == ["top center"] * 3 + ["bottom center"] * 2
    # in px, on the drawn plot: Plotly stands text off its point by the invisible marker's
    # radius / 0.8 + 1; the text's edge then lies at least 3 px past the line's
    layout = fig.layout
    low, high = layout.yaxis.range
    px = (layout.height - layout.margin.t - layout.margin.b) / (high - low)
    standoff = printed.marker.size / 2 / 0.8 + 1
    for y, b, where in zip(printed.y, base, printed.textposition):
        if not np.isnan(b):
            past = (y - b if where.startswith("top") else b - y) * px  # the point beyond the line, px
            assert past >= 0 and past + standoff >= line.line.width / 2 + 3


def test_each_kind_of_bar_is_a_trace_named_in_the_legend():
    fig = figures.bar_by_layer(["input", "lstm1", "view"], [0.9, 0.4, 0.2], "T", "M", groups=[0, 0, 1],
                               group_names=["outputs", "views"])
    outputs, views, printed = fig.data
    assert [(t.name, list(t.x), list(t.y)) for t in (outputs, views)] == [("outputs", [0, 1], [0.9, 0.4]),
                                                                        ("views", [2], [0.2])]
    assert list(printed.text) == ["0.900", "0.400", "0.200"] and printed.showlegend is False
    assert fig.layout.showlegend and fig.layout.barmode == "overlay"  # each bar on its own tick, not side by side
    assert outputs.marker.color != views.marker.color
    with pytest.raises(ValueError, match="group names"):
        figures.bar_by_layer(["a", "b"], [0.1, 0.2], "T", "M", groups=[0, 1], group_names=["one"])


def test_a_baseline_across_each_bar_that_has_one():
    fig = figures.bar_by_layer(["input", "mix", "lstm1"], [0.9, 0.6, -0.3], "T", "M", baseline=[0.2, np.nan, -0.35])
    bars, base, _ = fig.data
    assert base.name == figures.BASELINE_NAME and fig.layout.showlegend
    # a segment across bars 0 and 2 (each 0.8 wide, centred on its tick), none on the NaN
    assert list(base.x) == [-0.4, 0.4, None, 1.6, 2.4, None] and list(base.y) == [0.2, 0.2, None, -0.35, -0.35, None]
    assert bars.width == 0.8 and list(bars.x) == [0, 1, 2]
    assert fig.layout.yaxis.range[0] == pytest.approx(-0.45)  # room below the lowest baseline
    with pytest.raises(ValueError, match="baselines for 3 bars"):
        figures.bar_by_layer(["a", "b", "c"], [0.1, 0.2, 0.3], "T", "M", baseline=[0.1])


def test_a_layer_curve_draws_its_baseline_dashed_in_the_curve_colour():
    fig = figures.layer_curve(["e", "1", "2"], {"A vs B": [1.0, 0.7, 0.5]}, "T", "M", baseline=[0.1, 0.3, 0.4])
    curve, base = fig.data
    assert base.name == figures.BASELINE_NAME and list(base.y) == [0.1, 0.3, 0.4]
    assert base.line.dash == "dash" and curve.line.dash == "solid" and base.line.color == curve.line.color


def _every_kind_of_figure() -> list[go.Figure]:
    attn = np.random.default_rng(0).dirichlet(np.ones(3), size=(2, 4, 3))
    return [
        figures.heatmap(np.eye(2), ["a", "b"], ["c", "d"], "T", "M"),
        figures.attention_heatmap(attn[0, 0], ["a", "b", "c"], "T", "M", projector=True),
        figures.layer_curve(["e", "1"], {"s": [1.0, 0.5]}, "T", "M", baseline=[0.1, 0.3]),
        figures.bar_by_layer(["input", "lstm1"], [0.9, 0.4], "T", "M", groups=[0, 1], baseline=[0.2, np.nan],
                             group_names=["outputs", "views"]),
        figures.model_view(attn, ["a", "b", "c"], "T", "M"),
        figures.attention_lines(np.array([0.5, 0.5, 0.0]), ["a", "b", "c"], 0, "T", "M"),
        figures.depth_chart([figures.DepthLine("m", ["e", "1"], [0.0, 1.0], [1.0, 0.5])], "T", "M"),
        figures.pair_strip({"m": {"same sense": ([0.5], ["x"]), "different sense": ([0.2], ["y"])}}, {"m": 0.4},
                           "T", "M"),
        figures.use_map_chart(_use_map(), [("a ", "bank", " b")] * 3, ("bank", "bank"), "T", "M"),
    ]


def _use_map():
    from lab.elmo_vs_bert import UseMap
    from lab.senses import UseSenses

    return UseMap("bank", "layer 6", np.array([[0.1, 0.2], [0.3, -0.1], [-0.2, 0.0]]), [0, 4, 9], [1, 2, 0],
                  np.array([[-0.3, 0.1], [0.4, 0.2]]), np.array([0.6, 0.25]), UseSenses(_unknown(3), (0, 0, 0)))


def _unknown(uses: int) -> tuple:
    from lab.senses import UNKNOWN_SENSE, Sense

    return (Sense(UNKNOWN_SENSE, "", 0, uses),)


def test_use_map_chart_shows_the_uses_and_yours_as_text():
    hover = [("we sat <b>by</b> the ", "bank", " <script>x</script>"), ("", "Bank", " rates"), ("a ", "bank", "")]
    fig = figures.use_map_chart(_use_map(), hover, ("bank", "<i>bank</i>"), "The 3 uses", "M")
    uses, a, b = fig.data  # three uses of no known sense
    np.testing.assert_array_equal(uses.x, [0.1, 0.3, -0.2])
    np.testing.assert_array_equal(uses.y, [0.2, -0.1, 0.0])
    assert uses.name == "sense not known" and uses.marker.color == figures.USES
    assert uses.text[0] == "we sat &lt;b&gt;by&lt;/b&gt; the <b>bank</b> &lt;script&gt;x&lt;/script&gt;"  # as typed
    assert (a.x[0], a.y[0], b.x[0], b.y[0]) == (-0.3, 0.1, 0.4, 0.2) and a.marker.symbol == b.marker.symbol == "star"
    assert b.name == "B: “&lt;i&gt;bank&lt;/i&gt;”"
    assert fig.layout.xaxis.title.text == "component 1 (60%)" and fig.layout.yaxis.title.text == "component 2 (25%)"
    assert fig.layout.xaxis.showticklabels is False  # the axes are directions, their numbers mean nothing
    # alike, holding all
    assert list(fig.layout.xaxis.range) == list(fig.layout.yaxis.range) == pytest.approx([-0.44, 0.44])
    # uses that do not differ (float16 rounding apart) stay one blob, not stretched over the chart
    tiny = _use_map()
    tiny = type(tiny)(**{**tiny.__dict__, "points": tiny.points * 1e-4, "yours": tiny.yours * 1e-4})
    blob = figures.use_map_chart(tiny, hover, ("bank", "bank"), "T", "M")
    assert list(blob.layout.xaxis.range) == [-figures.USE_MAP_SPAN / 2, figures.USE_MAP_SPAN / 2]


def test_use_map_chart_colours_each_use_by_its_sense():
    from lab.senses import OTHER_SENSE, UNKNOWN_SENSE, Sense, Synset, UseSenses

    glosses = ["sloping land (especially the slope beside a body of water)", "a financial institution",
               "a long ridge or pile", "tip <laterally>"]
    named = [Sense(f"bank.x.0{k}", g, 4 - k, 1, Synset(f"bank.x.0{k}", ("bank",), (4 - k,), g))
             for k, g in enumerate(glosses)]
    legend = (*named, Sense(OTHER_SENSE, "", 0, 2), Sense(UNKNOWN_SENSE, "", 0, 2))
    of_use = (5, 0, 4, 1, 2, 3, 4, 5)
    base = _use_map()
    m = type(base)(**{**base.__dict__, "points": np.arange(16.0).reshape(8, 2) / 40, "sentences": list(range(10, 18)),
                      "words": [0] * 8, "senses": UseSenses(legend, of_use)})
    fig = figures.use_map_chart(m, [("a ", "bank", "")] * 8, ("bank", "bank"), "T", "M")
    *dots, a, b = fig.data
    assert dots[0].name == UNKNOWN_SENSE  # drawn first, under the senses
    by_name = {d.name: d for d in dots}
    assert [d.name for d in sorted(dots, key=lambda d: d.legendrank)] == [
        "sloping land (especially the slope …", "a financial institution", "a long ridge or pile",
        "tip &lt;laterally&gt;", OTHER_SENSE, UNKNOWN_SENSE]  # the legend: most frequent first, glosses shortened
    for d in dots:
        k = next(k for k, e in enumerate(legend) if d.name in (e.label, figures.label(e.gloss)) or
                 e.gloss.startswith(d.name.removesuffix(" …")) and e.gloss)
        at = [i for i, e in enumerate(of_use) if e == k]
        assert list(d.customdata) == [m.sentences[i] for i in at]  # each dot's sentence
        np.testing.assert_array_equal(d.x, m.points[at, 0])
        want = figures.SENSE_COLOURS[k] if k < 4 else figures.SENSE_COLOURS[-1] if k == 4 else figures.USES
        assert d.marker.color == want
    assert "bank.x.00: sloping land (especially the slope beside a body of water)" in by_name[
        "sloping land (especially the slope …"].hovertemplate
    assert not set(figures.SENSE_COLOURS) & set(figures.OKABE_ITO) and figures.USES not in figures.SENSE_COLOURS
    # the legend's 8 entries, one a line in a column, below the plot: 5 lines more than a map of 3 entries
    one_sense = figures.use_map_chart(_use_map(), [("a ", "bank", "")] * 3, ("bank", "bank"), "T", "M")
    assert fig.layout.height - one_sense.layout.height == 5 * round(1.5 * figures.style(False)["font"])
    too_many = UseSenses((*named, *named[:1], Sense(UNKNOWN_SENSE, "", 0, 2)), (0, 1, 2, 3, 4, 5, 5, 5))
    with pytest.raises(ValueError, match="5 named senses; a use map has colours for 4"):
        figures.use_map_chart(type(base)(**{**m.__dict__, "senses": too_many}), [("", "bank", "")] * 8,
                              ("bank", "bank"), "T", "M")
    with pytest.raises(ValueError, match="8 uses, 3 hover texts and 8 senses"):
        figures.use_map_chart(m, [("", "bank", "")] * 3, ("bank", "bank"), "T", "M")


def test_figures_carry_their_look_and_no_template():
    """Shown with ``theme=None`` and no template (a template in the JSON copy that
    Streamlit's chart element hands Plotly after drawing makes Plotly draw it again), the
    figures carry the look themselves."""
    for fig in _every_kind_of_figure():
        layout = json.loads(plotly.io.to_json(fig, validate=False))["layout"]  # as st.plotly_chart writes it
        assert "template" not in layout
        assert layout["font"]["family"] == figures.FONT_FAMILY and layout["paper_bgcolor"] == figures.BACKGROUND
        assert layout["title"]["font"]["color"] == figures.HEADING_COLOUR
        assert layout["title"]["font"]["weight"] == "bold"
        assert layout["autotypenumbers"] == "strict"  # a token or layer named "1" stays a category
    fig = figures.layer_curve(["e", "1"], {"s": [1.0, 0.5]}, "T", "M", y_title="cos")
    # the figure's own title, and the look's standoff (with room for a wider font: _fit_margins)
    assert fig.layout.yaxis.title.text == "cos" and fig.layout.yaxis.title.standoff >= figures.TITLE_STANDOFF["y"]
    assert fig.layout.yaxis.gridcolor == figures.GRID_COLOUR and fig.layout.xaxis.showgrid is False


def test_traces_put_in_unvalidated_are_what_plotly_validates():
    """The traces go into the figure as JSON without a second validation: Plotly's validated
    path makes the same figure of them."""
    for fig in _every_kind_of_figure():
        validated = go.Figure(fig.to_plotly_json())  # every property checked against Plotly's schema
        validated.layout.template = None
        assert (json.loads(plotly.io.to_json(fig, validate=False))
                == json.loads(plotly.io.to_json(validated, validate=False)))


def test_small_arrays_go_as_lists_and_the_data_revision_follows_the_data():
    """Plain lists under a ``layout.datarevision``: Plotly then finds an unchanged figure
    unchanged (typed arrays count as new on every ``Plotly.react``), and draws it once."""
    z = np.array([[1.0, np.nan], [0.25, -0.5]], np.float32)
    spec = json.loads(plotly.io.to_json(figures.heatmap(z, ["a", "b"], ["c", "d"], "T", "M"), validate=False))
    heat, clicks = spec["data"]
    assert heat["z"] == [[1.0, None], [0.25, -0.5]]  # exact, NaN as null
    assert all(isinstance(v, list) for v in (clicks["x"], clicks["y"], clicks["customdata"]))
    again = figures.heatmap(z.copy(), ["a", "b"], ["c", "d"], "T", "M")
    other = figures.heatmap(z * 2, ["a", "b"], ["c", "d"], "T", "M")
    relabelled = figures.heatmap(z, ["a", "x"], ["c", "d"], "T", "M")  # the hover text is data too
    assert spec["layout"]["datarevision"] == again.layout.datarevision
    assert len({spec["layout"]["datarevision"], other.layout.datarevision, relabelled.layout.datarevision}) == 3
    texts = np.array([str(i) for i in range(3000)], dtype=object)  # a long array's middle counts too
    changed = texts.copy()
    changed[1500] = "x"
    assert figures.layout._data_revision([{"text": texts}]) != figures.layout._data_revision([{"text": changed}])


def test_margins_fit_the_labels_so_plotly_need_not_measure_them():
    short = figures.heatmap(np.eye(2), ["a", "b"], ["c", "d"], "T", "M", x_title="x", y_title="y")
    long = figures.heatmap(np.eye(2), ["a", "b"], ["embedding", "WWWWWWWW"], "T", "M", x_title="x", y_title="y")
    for fig in (short, long):
        assert fig.layout.xaxis.automargin is False and fig.layout.yaxis.automargin is False
    # the left margin holds the widest row label plus the axis title, and grows with it
    assert long.layout.margin.l > short.layout.margin.l
    assert long.layout.margin.l >= figures.text_width("WWWWWWWW", figures.style(False)["tick"]) + 20
    big = figures.heatmap(np.eye(2), ["a", "b"], ["embedding", "WWWWWWWW"], "T", "M", projector=True, y_title="y")
    assert big.layout.margin.l > long.layout.margin.l  # larger type, wider labels
    # the colour bar has room at the right; a legend below a line chart has room at the bottom
    assert short.layout.margin.r > figures.style(False)["colorbar"] + 20
    curve = figures.layer_curve(["e", "1"], {"one": [1.0, 0.5], "two": [0.2, 0.1]}, "T", "M")
    assert curve.layout.legend.yref == "container" and curve.layout.legend.y == 0
    assert curve.layout.margin.b > figures.style(False)["tick"] + figures.style(False)["font"]


@pytest.mark.parametrize("projector", [False, True])
def test_x_labels_are_turned_by_a_fixed_angle_that_keeps_them_apart(projector):
    # left to Plotly (autotickangles), the angle follows the chart's width and the page's
    # font: flat in a wide export, whose wider font runs "embeddings" and "layer 1" into
    # each other. The angle is the figure's own, chosen for the narrowest plot
    # (figures.PLOT_WIDTH), and holds on any wider one
    tick = figures.style(projector)["tick"]
    for n, want in ((7, 30 if projector else 0), (13, 45 if projector else 30)):
        names = ["embeddings"] + [f"layer {i}" for i in range(1, n)]
        fig = figures.layer_curve(names, {"s": np.linspace(1, 0.5, n)}, "T", "M", projector)
        xaxis = fig.layout.xaxis
        assert xaxis.tickangle == -want and xaxis.autotickangles is None
        gap = figures.PLOT_WIDTH / n  # px between ticks, at most
        widths = [figures.text_width(t, tick) for t in names]
        if want == 0:  # side by side: each pair's halves apart
            assert all((a + b) / 2 + figures.TICK_GAP <= gap for a, b in zip(widths, widths[1:]))
        else:  # turned: parallel strips, a label's height apart
            assert gap * np.sin(np.radians(want)) >= tick * 1.3
            assert fig.layout.margin.b >= max(widths) * np.sin(np.radians(want))


def test_legend_entries_and_axis_titles_keep_room_for_a_wider_font():
    # the PNG's font (DejaVu Sans, where the page's Source Sans is a web font) is up to a
    # quarter wider: a legend as Plotly measures it on the page cuts "baseline (random wor"
    # and draws it over the next entry; an axis title placed by the measured labels meets them
    s = figures.style(True)
    names = ["all-MiniLM-L6-v2 (embedded): “bank” vs “bank”", "all-MiniLM-L6-v2 (embedded): baseline (random words)"]
    fig = figures.depth_chart([figures.DepthLine(n, ["embeddings", "layer 1"], [0.0, 1.0], [1.0, 0.5]) for n in names],
                              "T", "M", projector=True)
    assert fig.layout.legend.entrywidth >= max(figures.text_width(n, s["font"]) for n in names)
    rows = ["lstm_outputs1", "word_emb"]
    heat = figures.heatmap(np.eye(2), ["a", "b"], rows, "T", "M", projector=True, y_title="layer")
    widest = figures.text_width("lstm_outputs1", s["tick"])
    assert heat.layout.yaxis.title.standoff >= figures.TITLE_STANDOFF["y"] + figures.WIDER_FONT * widest
    assert heat.layout.margin.l >= (1 + figures.WIDER_FONT) * widest + figures.TITLE_STANDOFF["y"] + s["font"]


def test_every_figure_exports_one_png_size_named_after_its_title():
    for fig in _every_kind_of_figure():
        config = figures.export_config(fig, "key")
        assert config == {"displaylogo": False,
                          "toImageButtonOptions": {"format": "png", "filename": "t", "width": figures.EXPORT_WIDTH,
                                                   "height": fig.layout.height, "scale": figures.EXPORT_SCALE}}
    fig = figures.layer_curve(["e", "1"], {"s": [1.0, 0.5]}, 'Cosine of A "bank" and B "bank"', "M")
    assert figures.export_config(fig)["toImageButtonOptions"]["filename"] == "cosine-of-a-bank-and-b-bank"
    untitled = go.Figure(layout={"height": 300})
    assert figures.export_config(untitled, "bert_curve")["toImageButtonOptions"]["filename"] == "bert_curve"


def _two_charts():
    import numpy as np

    from lab import figures
    from ui import charts

    charts.show(figures.layer_curve(["e", "1"], {"s": [1.0, 0.5]}, 'Cosine of A "bank"', "M"), key="titled")
    charts.show(figures.heatmap(np.eye(2), ["a", "b"], ["c", "d"], "", "M", projector=True), key="bert_ab")


def test_a_page_s_charts_carry_the_export_config():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_two_charts).run()
    shown = {el.key: (json.loads(el.proto.spec)["layout"]["height"], json.loads(el.proto.config))
             for el in at.get("plotly_chart")}
    assert {key: config["toImageButtonOptions"]["filename"] for key, (_, config) in shown.items()} == {
        "titled": "cosine-of-a-bank", "bert_ab": "bert_ab"}  # the title, or the chart's key
    for height, config in shown.values():
        assert config["toImageButtonOptions"] | {"filename": ""} == {
            "format": "png", "filename": "", "width": figures.EXPORT_WIDTH, "height": height,
            "scale": figures.EXPORT_SCALE}
        assert config["displaylogo"] is False


def test_text_width_estimates():
    w = figures.text_width
    assert w("WWW", 12) > w("iii", 12)  # wide and narrow letters
    assert w("銀行", 12) >= 2 * 12  # CJK: about one em a character
    assert w("a<br>bbbb", 10) == w("bbbb", 10)  # the widest line
    assert w("&lt;b&gt;", 10) == w("xbx", 10)  # an entity is one character, a tag none
    assert w("<sup>b</sup>", 10) == w("b", 10)


def test_long_tokens_are_cut_on_the_axis_but_whole_in_the_hover():
    word = "Antidisestablishmentarianism"
    fig = figures.heatmap(np.eye(2), [word, "b"], ["c", "d"], "T", "M")
    tick = fig.layout.xaxis.ticktext[0]
    assert len(tick) == figures.TICK_CHARS and tick.endswith("…") and word.startswith(tick[:-1])
    assert word in fig.data[1].customdata[0][0]  # the click marker's hover text


def test_long_titles_wrap_and_keep_their_words():
    title = "Your pair (sentences A and B, the selected words) among the sense pairs, at each model's best layer"
    fig = figures.layer_curve(["e", "1"], {"s": [1.0, 0.5]}, title, "M", projector=True)
    heading = [line for line in fig.layout.title.text.split("<br>") if not line.startswith("<sup>")]
    assert len(heading) > 1 and all(len(line) <= 0.65 * figures.style(True)["title_chars"] for line in heading)
    assert figures.title_of(fig) == title  # the PNG's file name still comes from the whole title
    one_line = figures.layer_curve(["e", "1"], {"s": [1.0, 0.5]}, title, "M", projector=False)
    assert one_line.layout.margin.t < fig.layout.margin.t


def test_a_heatmap_is_built_once_for_each_input():
    from ui import charts

    z = np.random.default_rng(3).random((2, 3))
    fig = charts.cached_heatmap(z, ["a", "b", "c"], ["x", "y"], "T", "M")
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), z)
    assert charts.cached_heatmap(z.copy(), ["a", "b", "c"], ["x", "y"], "T", "M") is fig  # equal input: the same figure
    other = charts.cached_heatmap(z + 0.1, ["a", "b", "c"], ["x", "y"], "T", "M")
    assert other is not fig and np.allclose(np.asarray(other.data[0].z), z + 0.1)
    assert charts.cached_heatmap(z, ["a", "b", "c"], ["x", "y"], "T", "M", projector=True) is not fig
    big = np.zeros((1, charts.MEMO_CELLS + 1))  # a large map is not kept
    labels = [str(i) for i in range(big.shape[1])]
    assert (charts.cached_heatmap(big, labels, ["x"], "T", "M")
            is not charts.cached_heatmap(big, labels, ["x"], "T", "M"))


@pytest.mark.parametrize("projector", [False, True])
def test_a_heatmap_tells_the_browser_how_to_fit_its_printed_values(projector):
    """``cell_text_fit``: what ``ui.charts.fit_cell_text`` turns into a size for any chart width."""
    z = np.random.default_rng(3).uniform(-1, 1, (7, 12))
    fig = figures.heatmap(z, [f"t{i}" for i in range(12)], [f"layer {i}" for i in range(7)], "T", "M",
                          projector=projector, y_title="layer", show_values=True)
    fit, s = figures.cell_text_fit(fig), figures.style(projector)
    decimals = int(fig.data[0].texttemplate[-3])
    assert fit["size"] == fig.data[0].textfont.size and fit["min"] == s["cell_text_min"] and fit["columns"] == 12
    assert fit["margins"] == fig.layout.margin.l + fig.layout.margin.r
    assert "meta" not in fig.to_plotly_json()["layout"]  # not sent: a layout.meta had Plotly draw the map twice
    assert fit["widest"] == pytest.approx(max(figures.number_width(f"{v:.{decimals}f}") for v in (z.min(), z.max())))

    def largest(width: float) -> float:  # the size that fills a cell of a chart ``width`` px wide
        return ((width - fit["margins"]) / fit["columns"] - fit["pad"]) / fit["widest"]

    # the size was chosen for a chart CHART_WIDTH wide, where it fits; half as wide, it would not
    assert largest(figures.CHART_WIDTH) >= fit["size"] > largest(figures.CHART_WIDTH / 2)
    assert figures.cell_text_fit(figures.heatmap(z, [f"t{i}" for i in range(12)], [f"layer {i}" for i in range(7)],
                                                 "T", "M", projector=projector, show_values=False)) is None
    assert figures.cell_text_fit(figures.layer_curve(["a", "b"], {"x": np.array([1.0, 0.5])}, "T", "M")) is None
