"""How one attention weight is computed, figure by figure: heat strips of vectors (the
input row, q, K, V, the output, the neuron view) and bars over the keys (the scores, the
mask, the weights). Each figure writes its shape in the page's letters (T keys, D head
size, C width)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from lab.figures.heatmaps import heatmap
from lab.figures.layout import _assembled, _figure, _title
from lab.figures.theme import HEADING_COLOUR, OKABE_ITO, label, style, tick_label


STRIP_TICKS = {False: 8, True: 8}  # the most dimension ticks under a strip (normal, projector look)


def power_of_ten(value: float) -> str:
    """-1e9 as "−10⁹" (a mask's bias as prose writes it); any other number as ``:g`` writes it."""
    exponent = int(round(np.log10(abs(value)))) if value else 0
    if value and 10.0 ** exponent == abs(value):
        sign = "−" if value < 0 else ""
        return sign + "10" + str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{value:g}"


def shape_note(letters: str, shape: Sequence[int]) -> str:
    """'(T, D) = (10, 16)': a figure's shape in letters and in numbers."""
    return f"({', '.join(letters)}) = ({', '.join(str(n) for n in shape)})"


def vector_strip(rows: np.ndarray, row_labels: Sequence[str], title: str, letters: str, model_label: str,
                 projector: bool = False, clickable: bool = False, width: float = 1.0) -> go.Figure:
    """A heat strip: one row per vector (N, D), one column per dimension, coloured on a
    scale symmetric about 0; its shape (``letters``, e.g. "TD") written in the title.
    ``clickable`` lets a click on a row pick it (as ``heatmap``); ``width``: the share of
    the page's chart width it gets (its title wraps to it)."""
    z = np.asarray(rows, float)
    if z.ndim != 2 or z.shape[0] != len(row_labels) or len(letters) != 2:
        raise ValueError(f"a strip needs (N, D) rows with N = {len(row_labels)} labels and two shape "
                         f"letters, got {z.shape} and {letters!r}")
    if not np.isfinite(z).all():
        raise ValueError("a strip needs finite values")
    top = max(float(np.abs(z).max()), 1e-12)
    fig = heatmap(z, [str(d) for d in range(z.shape[1])], row_labels, f"{title} · {shape_note(letters, z.shape)}",
                  model_label, projector, x_title="dimension", zrange=(-top, top),
                  colorscale=style(projector)["diverging"], show_values=False, value_name="value",
                  clickable=clickable)
    # a tick every ``step`` dimensions: 64 or 384 numbers do not fit under a strip side by side
    step = next(k for k in (1, 2, 4, 8, 16, 32, 64, 128) if z.shape[1] / k <= STRIP_TICKS[projector])
    ticks = list(range(0, z.shape[1], step))
    fig.layout.xaxis.tickvals, fig.layout.xaxis.ticktext = ticks, [str(d) for d in ticks]
    if width != 1.0:  # the title wrapped to the narrower chart, the top margin grown by its extra lines
        full = f"{title} · {shape_note(letters, z.shape)}"
        before = fig.layout.title.text.count("<br>")
        fig.layout.title.text = _title(full, model_label, projector, width)["text"]
        lines = fig.layout.title.text.count("<br>")
        # a line more of room for each line past three: the two type sizes' lines add up taller
        fig.layout.margin.t += style(projector)["title_line"] * (lines - before + max(lines - 3, 0))
    row_px = 40 if projector else 26
    m = fig.layout.margin
    fig.layout.height = int(m.t + m.b + row_px * z.shape[0] + (70 if projector else 50))  # the x axis's title
    return fig


def key_bars(values: np.ndarray, tokens: Sequence[str], title: str, model_label: str, projector: bool = False,
             crossed: np.ndarray | None = None, cross_text: str = "", y_title: str = "",
             selected: int | None = None, width: float = 1.0) -> go.Figure:
    """One bar per key (T,), positions on the x axis under the key tokens. ``crossed`` (T,)
    keys get no bar but a cross at 0 labelled ``cross_text`` (the mask's bias: a bar of
    -10^9 would flatten every other). ``selected`` is drawn in the outline colour. A click
    on a bar or a cross picks its key (x = position). ``width`` as for ``vector_strip``."""
    v = np.asarray(values, float)
    T = len(tokens)
    crossed = np.zeros(T, bool) if crossed is None else np.asarray(crossed, bool)
    if v.shape != (T,) or crossed.shape != (T,):
        raise ValueError(f"{v.shape} values and {crossed.shape} crosses for {T} keys")
    if not np.isfinite(v[~crossed]).all():
        raise ValueError("bars need finite values")
    s = style(projector)
    xs = np.arange(T)
    shown = ~crossed
    colours = [OKABE_ITO[1] if i == selected else OKABE_ITO[0] for i in xs[shown]]
    names = [label(t) for t in tokens]
    traces = [go.Bar(x=xs[shown], y=v[shown], marker={"color": colours}, showlegend=False,
                     customdata=[names[i] for i in xs[shown]],
                     hovertemplate="%{customdata}: %{y:.4f}<extra></extra>")]
    if crossed.any():
        traces.append(go.Scatter(
            x=xs[crossed], y=np.zeros(int(crossed.sum())), mode="markers+text", showlegend=False,
            marker={"symbol": "x-thin-open", "size": s["marker"] * 2,
                    "line": {"width": s["line"], "color": OKABE_ITO[7]}},
            # written once, over the first cross: side by side the labels would run into each other
            text=[cross_text] + [""] * (int(crossed.sum()) - 1), textposition="top center",
            textfont={"size": s["tick"]},
            customdata=[names[i] for i in xs[crossed]],
            hovertemplate="%{customdata}: masked, " + label(cross_text) + "<extra></extra>"))
    return _figure(traces, title, model_label, projector, numeric_axes=("y",), width=width, clickmode="event+select",
                   dragmode=False,
                   xaxis={"tickvals": list(xs), "ticktext": [label(tick_label(t)) for t in tokens],
                          "title": {"text": "key j"}, "tickfont": {"size": s["tick"]}, "range": [-0.6, T - 0.4]},
                   yaxis={"title": {"text": y_title}, "tickfont": {"size": s["tick"]}})


# The plot height of a bar step in a stack (normal, projector look): the bars of one key
# row stay comparable from step to step, and four steps fit a screen and a half.
STACK_BAR_PLOT = {False: 130, True: 180}


def stacked(panels: Sequence[go.Figure], title: str, model_label: str, projector: bool = False,
            width: float = 1.0, names: Sequence[str] = ()) -> go.Figure:
    """Step figures (``vector_strip``, ``key_bars``) as one figure, one above the other, each
    under its own title (its shape included), with ``title`` and the model line on top.

    One chart for the steps that change together, with each axis's labels written once: the
    browser draws a changed chart anew, and most of a drawing's time goes to measuring its
    labels. ``names`` name each panel's traces (a trace's
    ``name``, for a reader of the figure's data). Bar steps one after another are over the
    same keys, and strips one after another with the same ticks over the same dimensions:
    their axis labels are written once, under the last of them. A bar step gets a
    plot ``STACK_BAR_PLOT`` high; a strip keeps its own."""
    if not panels or (names and len(names) != len(panels)):
        raise ValueError(f"{len(panels)} panels and {len(names)} names")
    s = style(projector)
    head = _title(title, model_label, projector, width)
    head["font"] = {"size": s["title"]}
    # the top margin holds the title as ``_figure``'s does; the steps' titles are in the plot area
    top = y = s["top"] + s["title_line"] * (max(head["text"].count("<br>"), 1) - 1)  # px from the top
    line = round(s["font"] * 1.35)
    data, layout, spans, heads = [], {}, [], []
    bars = [any(t.type == "bar" for t in panel.data) for panel in panels] + [False]
    axes = [(bars[i], tuple(panel.layout.xaxis.ticktext or ())) for i, panel in enumerate(panels)] + [None]
    for i, panel in enumerate(panels):
        # the next panel has the same x axis (bars over the same keys, strips over the same
        # dimensions): this one's tick labels and axis title would say it again
        m, labelled = panel.layout.margin, axes[i] != axes[i + 1]
        plot = STACK_BAR_PLOT[projector] if bars[i] else panel.layout.height - m.t - m.b
        below = m.b if labelled else round(s["tick"] * 0.8)
        heading = [ln for ln in (panel.layout.title.text or "").split("<br>") if not ln.startswith("<sup>")]
        y += line * len(heading) + 6
        heads.append(("<br>".join(heading), y))
        spans.append((y, y + plot))
        y += plot + below
        suffix = "" if i == 0 else str(i + 1)
        for trace in panel.data:
            t = trace.to_plotly_json() | {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}
            if names:
                t["name"] = names[i]
            data.append(t)
        xaxis = panel.layout.xaxis.to_plotly_json() | {"anchor": f"y{suffix}"}
        if not labelled:
            xaxis |= {"showticklabels": False, "title": {"text": ""}}
        # the margins are the panels' own, fitted to their labels: no automargin, whose
        # second layout pass would draw the whole stack twice
        layout[f"xaxis{suffix}"] = xaxis | {"automargin": False}
        layout[f"yaxis{suffix}"] = panel.layout.yaxis.to_plotly_json() | {"anchor": f"x{suffix}", "automargin": False}
    height, bottom = y, y - spans[-1][1]
    area = height - top - bottom

    def paper(px: float) -> float:  # px from the figure's top -> the plot area's fraction from its bottom
        return (height - bottom - px) / area

    for i, (y0, y1) in enumerate(spans):
        layout[f"yaxis{'' if i == 0 else i + 1}"]["domain"] = [paper(y1), paper(y0)]
    for t in data:  # a strip's colour bar beside its own strip, with the ticks that fit it
        if t.get("type") == "heatmap":
            y0, y1 = spans[0 if t["yaxis"] == "y" else int(t["yaxis"][1:]) - 1]
            # a one-row strip is too low for a scale to be read off it: its hover gives the values
            t["showscale"] = len(t["z"]) > 1
            t["colorbar"] = dict(t.get("colorbar") or {}) | {
                "y": paper((y0 + y1) / 2), "yanchor": "middle", "ypad": 0, "lenmode": "fraction",
                "len": max(y1 - y0 - s["tick"], 1) / area, "nticks": 3}
    layout |= {
        "title": head, "font": {"size": s["font"]}, "height": int(height),
        "margin": {"l": max(p.layout.margin.l for p in panels), "r": max(p.layout.margin.r for p in panels),
                   "t": int(top), "b": int(bottom)},
        "hoverlabel": {"font": {"size": s["hover"]}},
        "annotations": [{"text": text, "xref": "paper", "yref": "paper", "x": 0, "xanchor": "left",
                         "y": paper(y0 - 4), "yanchor": "bottom", "showarrow": False, "align": "left",
                         "font": {"size": s["font"], "weight": "bold", "color": HEADING_COLOUR}} for text, y0 in heads],
        "clickmode": panels[-1].layout.clickmode or "event", "dragmode": False,
    }
    return _assembled(data, layout)

