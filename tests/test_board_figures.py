"""The class board's figures (lab.figures.board): the map of the class's uses and the
separation chart."""

from __future__ import annotations

import numpy as np
import plotly.io
import pytest

from lab import figures
from lab.board.maps import Frame
from lab.figures.layout import EXPORT_WIDTH, text_width

TEXTS = ["We sat on the river <b>bank</b>.", "The bank <script>alert(1)</script> closed.", "A bank & a loan.",
         "Fish by the bank " + "and then some more words " * 6, "I bank on it."]
SENSES = ["river", "money", "money", None, ""]


def _frame() -> Frame:
    return Frame((10, 11, 12, 13, 14), np.array([[0.1, 0.2], [0.3, -0.1], [-0.2, 0.0], [0.0, 0.4], [0.2, 0.2]]),
                 "layer 3")


def test_each_sense_is_a_trace_with_its_uses_ids_and_not_sure_is_grey():
    fig = figures.board_map(_frame(), TEXTS, SENSES, ["money", "river"], "The uses of “bank” at layer 3")
    by_name = {t.name: t for t in fig.data}
    assert set(by_name) == {"money", "river", figures.NOT_SAID}
    assert list(by_name["money"].customdata) == [11, 12] and list(by_name["river"].customdata) == [10]
    assert list(by_name[figures.NOT_SAID].customdata) == [13, 14]
    assert by_name["money"].marker.color == figures.SENSE_COLOURS[0]
    assert by_name["river"].marker.color == figures.SENSE_COLOURS[1]
    assert by_name[figures.NOT_SAID].marker.color == figures.USES
    # the legend in the board's sense order, "not sure" (as the join page names it) last
    assert figures.NOT_SAID == "not sure"
    assert [t.name for t in sorted(fig.data, key=lambda t: t.legendrank)] == ["money", "river", figures.NOT_SAID]
    np.testing.assert_array_equal(by_name["money"].x, [0.3, -0.2])


def test_a_sense_nobody_used_yet_keeps_its_legend_entry_and_colour():
    fig = figures.board_map(_frame(), TEXTS, SENSES, ["money", "river", "rely"], "T")
    rely = next(t for t in fig.data if t.name == "rely")
    assert len(rely.x) == 0 and rely.marker.color == figures.SENSE_COLOURS[2]


def test_hover_shows_the_sentence_as_typed_and_wrapped():
    fig = figures.board_map(_frame(), TEXTS, SENSES, ["money", "river"], "T")
    hovers = [h for t in fig.data for h in t.text]
    assert not any("<script>" in h or "<b>" in h for h in hovers)
    assert "The bank &lt;script&gt;alert(1)&lt;/script&gt; closed." in hovers
    assert "A bank &amp; a loan." in hovers
    long = next(h for h in hovers if h.startswith("Fish"))
    assert all(len(line) <= figures.board.HOVER_CHARS for line in long.split("<br>")) and long.count("<br>") >= 2
    assert "<script>" not in plotly.io.to_json(fig)


def test_the_map_keeps_zoom_one_scale_and_ticks():
    fig = figures.board_map(_frame(), TEXTS, SENSES, ["money", "river"], "T")
    layout = fig.layout
    assert layout.uirevision == "board"
    assert layout.yaxis.scaleanchor == "x" and layout.yaxis.scaleratio == 1
    assert layout.xaxis.showticklabels and layout.yaxis.showticklabels  # distances, read across layers
    assert (layout.xaxis.title.text, layout.yaxis.title.text) == ("direction 1", "direction 2")
    x0, x1 = layout.xaxis.range
    y0, y1 = layout.yaxis.range
    assert x1 - x0 == pytest.approx(y1 - y0) and x0 < -0.2 and x1 > 0.3 and y0 < -0.1 and y1 > 0.4


def test_an_extent_gives_every_layer_one_box_and_a_note_is_written_over_the_plot():
    fig = figures.board_map(_frame(), TEXTS, SENSES, ["money", "river"], "T", extent=([0.1, -0.2], 0.8),
                            note="At the input layer every “bank” is the same vector <b>")
    assert list(fig.layout.xaxis.range) == pytest.approx([-0.7, 0.9])
    assert list(fig.layout.yaxis.range) == pytest.approx([-1.0, 0.6])
    (note,) = fig.layout.annotations
    shown = figures.plain_text(note.text.replace("<br>", " "))
    assert shown == "At the input layer every “bank” is the same vector <b>"
    assert "<b>" not in note.text and (note.xref, note.yref, note.y) == ("paper", "paper", 1.0)


def test_the_projector_map_fits_its_height_with_its_legend():
    fig = figures.board_map(_frame(), TEXTS, SENSES, ["money", "river"], "BERT layer 3", projector=True)
    assert fig.layout.height == figures.board.PROJECTOR_MAP_HEIGHT
    assert not fig.layout.xaxis.title.text and not fig.layout.yaxis.title.text  # the height goes to the plot
    entry = fig.layout.legend.entrywidth + 45
    assert 3 * entry <= figures.board.MAP_PLOT_WIDTH  # money, river, not sure: one row in a 1024-px column


def test_an_empty_board_says_so():
    fig = figures.board_map(Frame((), np.zeros((0, 2)), "layer 3"), [], [], ["money", "river"], "T")
    assert [a.text for a in fig.layout.annotations] == ["No sentences yet"]
    assert fig.layout.annotations[0].x == 0.5 and fig.layout.annotations[0].y == 0.5
    with pytest.raises(ValueError, match="5 ids, 5 points, 4 texts"):
        figures.board_map(_frame(), TEXTS[:4], SENSES, [], "T")


def test_the_projector_look_is_bigger_and_everything_fits_the_export():
    small = figures.board_map(_frame(), TEXTS, SENSES, ["money", "river"], "The uses of “bank” at layer 3")
    big = figures.board_map(_frame(), TEXTS, SENSES, ["money", "river"], "The uses of “bank” at layer 3",
                            projector=True)
    assert big.data[0].marker.size > small.data[0].marker.size and big.layout.font.size > small.layout.font.size
    for fig in (small, big):
        assert figures.title_of(fig) == "The uses of “bank” at layer 3"
        assert figures.export_config(fig)["toImageButtonOptions"]["filename"] == "the-uses-of-bank-at-layer-3"
        width = fig.layout.legend.entrywidth + 45
        assert width < EXPORT_WIDTH and text_width(fig.layout.title.text, fig.layout.title.font.size) < EXPORT_WIDTH


def test_a_model_label_is_the_caption_line_and_none_leaves_the_title_alone():
    fig = figures.board_map(_frame(), TEXTS, SENSES, ["money", "river"], "T", model_label="BERT-mini")
    assert fig.layout.title.text == "T<br><sup>Model: BERT-mini</sup>"
    assert figures.board_map(_frame(), TEXTS, SENSES, [], "T").layout.title.text == "T"


BERT_LAYERS = ["input (layer 0)"] + [f"layer {i}" for i in range(1, 7)]
ELMO_LAYERS = ["input (layer 0)", "lstm_outputs1", "lstm_outputs2"]


def _separation(**kwargs):
    return figures.separation_chart({"BERT": (BERT_LAYERS, np.linspace(0.5, 0.9, 7)),
                                     "ELMo": (ELMO_LAYERS, np.array([0.5, 0.8, 0.7]))}, **kwargs)


def test_the_separation_chart_draws_each_model_on_its_own_depth_axis_and_chance():
    fig = _separation(measure="How often a money sentence and a river sentence are told apart",
                      tick_names={"BERT": ["input", *map(str, range(1, 7))],
                                  "ELMo": ["input", "1 (first LSTM)", "2 (second LSTM)"]})
    bert, elmo, chance = fig.data
    assert (bert.name, elmo.name, chance.name) == ("BERT", "ELMo", "chance (a coin)")
    assert fig.layout.showlegend and all(t.showlegend is not False for t in fig.data)  # a legend for the lines
    assert bert.line.color == figures.OKABE_ITO[figures.MODEL_COLOURS["bert"]]
    assert elmo.line.color == figures.OKABE_ITO[figures.MODEL_COLOURS["elmo"]]
    assert chance.line.dash == "dash" and list(chance.y) == [0.5, 0.5]
    assert (bert.xaxis, elmo.xaxis) == ("x", "x2")
    np.testing.assert_allclose(elmo.x, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(bert.x, np.linspace(0, 1, 7))
    assert list(fig.layout.xaxis.ticktext) == ["input", "1", "2", "3", "4", "5", "6"]
    assert list(fig.layout.xaxis2.ticktext) == ["input", "1 (first LSTM)", "2 (second LSTM)"]
    assert fig.layout.xaxis2.side == "top" and fig.layout.xaxis2.overlaying == "x"
    assert (fig.layout.xaxis.title.text, fig.layout.xaxis2.title.text) == ("BERT layer", "ELMo layer")
    assert fig.layout.xaxis2.tickfont.color == elmo.line.color  # each axis in its model's colour
    assert bert.hovertemplate == "BERT %{text}: %{y:.0%}<extra></extra>" and bert.text[3] == "layer 3"
    assert list(fig.layout.yaxis.range) == [0.0, 1.05]
    assert list(fig.layout.yaxis.ticktext) == ["0%", "25%", "50%", "75%", "100%"]
    assert figures.plain_text(fig.layout.yaxis.title.text.replace("<br>", " ")) == (
        "How often a money sentence and a river sentence are told apart")
    assert figures.title_of(fig) == figures.SEPARATION_TITLE  # one title, the chart's


def test_the_separation_chart_keeps_every_label_inside_the_export():
    fig = _separation(tick_names={"ELMo": ["input", "1 (first LSTM)", "2 (second LSTM)"]})
    export = figures.export_config(fig)["toImageButtonOptions"]
    assert export["width"] == EXPORT_WIDTH and export["height"] == fig.layout.height
    tick = fig.layout.xaxis2.tickfont.size
    last = text_width("2 (second LSTM)", tick)
    assert fig.layout.margin.r >= last / 2  # the top axis's last label, centred on its tick, stays in
    assert fig.layout.margin.t >= 3 * tick  # the top axis's labels and title sit under the chart's title
    measure = "How often a money sentence and a river sentence are told apart"
    for projector in (False, True):
        two_lines, one_line = _separation(projector=projector, measure=measure), _separation(projector=projector)
        assert two_lines.layout.yaxis.title.text.count("<br>") == 1
        size = two_lines.layout.yaxis.title.font.size
        # the y title's second line has its room, beside labels measured as drawn ("100%")
        assert two_lines.layout.margin.l >= one_line.layout.margin.l + size
        assert one_line.layout.margin.l >= text_width("100%", two_lines.layout.yaxis.tickfont.size) + 2 * size


def test_the_separation_chart_refuses_what_it_cannot_draw():
    with pytest.raises(ValueError, match="ELMo has no ROC AUC yet"):
        figures.separation_chart({"ELMo": (["a", "b"], None)})
    with pytest.raises(ValueError, match="1 tick names for 2 layers"):
        figures.separation_chart({"ELMo": (["a", "b"], np.array([0.5, 0.6]))}, tick_names={"ELMo": ["a"]})
    with pytest.raises(ValueError, match="not 3"):
        figures.separation_chart({k: (["a", "b"], np.array([0.5, 0.6])) for k in ("A", "B", "C")})
