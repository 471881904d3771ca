"""How one attention weight is computed, figure by figure: heat strips of vectors (the
input row, q, K, V, the output, the neuron view) and bars over the keys (the scores, the
mask, the weights). Each figure writes its shape in the page's letters (T keys, D head
size, C width)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from lab.figures.heatmaps import heatmap
from lab.figures.layout import _figure, _title
from lab.figures.theme import OKABE_ITO, label, style, tick_label


STRIP_TICKS = {False: 32, True: 16}  # the most dimension ticks under a strip (normal, projector look)


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
