"""Heatmaps: token x token or layer x token matrices with token tick labels on numeric
axes (a repeated token keeps its own row and column; a clicked cell maps back to a
position), printed values fitted to their cells, and the outline of a selected cell."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from lab.figures.theme import OUTLINE, label, outline_width, style, tick_label
from lab.figures.layout import CHART_WIDTH, _figure, _left_margin, number_width, text_width


CELL_PAD = 6  # px of a heatmap's cell kept clear of its printed value


def _cell_text(z: np.ndarray, plot_width: float, s: dict) -> tuple[str | None, float, float]:
    """How a heatmap prints its values in its cells (``plot_width`` px over the columns):
    two decimals at the look's size; smaller where the cells are too narrow for that, then
    one decimal; none where even that would be under the smallest legible size (the colours
    and the hover still give every value). Plotly does not fit the text to its cell: text
    wider than the cell runs into its neighbours' (18 columns in projector mode did).
    Returns the text template, its size and the widest value's width in ems."""
    finite = z[np.isfinite(z)]
    if not finite.size:
        return None, s["cell_text"], 0.0
    cell = plot_width / z.shape[1] - CELL_PAD
    for decimals in (2, 1):
        widest = max(number_width(f"{v:.{decimals}f}") for v in (finite.min(), finite.max()))
        size = min(s["cell_text"], cell / widest)
        if size >= s["cell_text_min"]:
            return f"%{{z:.{decimals}f}}", round(size, 1), widest
    return None, s["cell_text"], 0.0


def cell_text_fit(fig: go.Figure) -> dict | None:
    """What a browser needs to keep a ``heatmap``'s printed values inside their cells at any
    chart width (``ui.charts.show`` writes it as a style rule): the size chosen for a chart
    ``CHART_WIDTH`` wide is kept where there is room, smaller where the chart is narrower
    (a 1024-px projector with the sidebar open, a phone), and no values below the look's
    smallest legible size. None for a figure that prints none.

    ``size``, ``min``: px; ``margins``: px of the chart's width beside the plot (the margins,
    the colour bar's included); ``columns``; ``widest``: the widest value's width in ems.
    The largest size that fits a chart W px wide is ((W - margins) / columns - ``pad``) / widest.

    Kept on the figure object, not in its JSON: with any ``layout.meta``, ``Plotly.react``
    drew a new heatmap a second time when Streamlit handed it the figure's copy (a browser
    test counts the drawings). A copy of the figure (``go.Figure(fig)``) goes without it."""
    return getattr(fig, _CELL_TEXT_FIT, None)


_CELL_TEXT_FIT = "_lab_cell_text_fit"  # the figure object's attribute that cell_text_fit reads


def _check_labels(z: np.ndarray, x_labels: Sequence[str], y_labels: Sequence[str]) -> None:
    if z.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D matrix, got shape {z.shape}")
    if z.shape != (len(y_labels), len(x_labels)):
        raise ValueError(
            f"matrix is {z.shape} but there are {len(y_labels)} row and {len(x_labels)} column labels"
        )


def heatmap(
    z: np.ndarray,
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    title: str,
    model_label: str,
    projector: bool = False,
    x_title: str = "",
    y_title: str = "",
    zrange: tuple[float, float] | None = (-1.0, 1.0),
    colorscale: str | None = None,
    show_values: bool | None = None,
    value_name: str = "cosine",
    clickable: bool = True,
) -> go.Figure:
    """A labelled matrix, rows = y_labels, columns = x_labels (numeric axes, token ticks).

    The current selection (a cell, or a query's whole row) is outlined over the drawn
    chart (``outline_box``), not in the figure. The axes span the cells exactly.
    ``clickable`` lays a transparent marker on every cell centre: Streamlit's chart
    selection reports clicks on markers but not on heatmap cells, so the markers carry
    the click (x = column, y = row) and the hover text.
    """
    z = np.asarray(z, float)
    _check_labels(z, x_labels, y_labels)
    s = style(projector)
    if show_values is None:
        show_values = z.size <= (150 if projector else 300)
    xs, ys = list(range(z.shape[1])), list(range(z.shape[0]))
    whole_x, whole_y = [label(t) for t in x_labels], [label(t) for t in y_labels]
    hover = [[f"{whole_y[r]} → {whole_x[c]}" for c in xs] for r in ys]  # the whole tokens
    xt, yt = [label(tick_label(t)) for t in x_labels], [label(tick_label(t)) for t in y_labels]
    # the colour bar sits right of the plot: room for it, so Plotly need not widen the margin
    colorbar_room = math.ceil(s["colorbar"] + text_width("-0.25", s["tick"]) + 50)
    values, text_size, widest = (_cell_text(z, CHART_WIDTH - _left_margin(yt, s, bool(y_title)) - colorbar_room, s)
                                 if show_values else (None, s["cell_text"], 0.0))
    traces = [go.Heatmap(
        z=z, x=xs, y=ys,
        zmin=zrange[0] if zrange else None, zmax=zrange[1] if zrange else None,
        colorscale=colorscale or s["scale"],
        customdata=hover,
        hovertemplate="%{customdata}<br>" + value_name + " %{z:.3f}<extra></extra>",
        texttemplate=values,
        textfont={"size": text_size},
        colorbar={"thickness": s["colorbar"], "tickfont": {"size": s["tick"]}, "outlinewidth": 0, "ticks": ""},
        xgap=1, ygap=1,
        hoverinfo="skip" if clickable else None,
    )]
    layout = {}
    if clickable:
        cols, rows = np.meshgrid(xs, ys)
        traces.append(go.Scatter(
            x=cols.ravel(), y=rows.ravel(), mode="markers", showlegend=False,
            marker={"symbol": "square", "size": s["click_marker"], "color": "rgba(0,0,0,0)"},
            customdata=np.stack([np.array(hover).ravel(), z.ravel()], axis=-1),
            hovertemplate="%{customdata[0]}<br>" + value_name + " %{customdata[1]:.3f}<extra></extra>",
        ))
        layout = {"clickmode": "event+select", "dragmode": False}
    rows = (36 if projector else 24) * len(ys)  # room for a value in every cell
    fig = _figure(
        traces, title, model_label, projector, plot_height=rows, margin_right=colorbar_room, **layout,
        xaxis={"tickvals": xs, "ticktext": xt, "title": {"text": x_title}, "tickfont": {"size": s["tick"]},
               "side": "bottom", "range": [-0.5, len(xs) - 0.5]},
        yaxis={"tickvals": ys, "ticktext": yt, "title": {"text": y_title}, "tickfont": {"size": s["tick"]},
               "range": [len(ys) - 0.5, -0.5]})  # the cells exactly, row 0 at the top
    if values is not None:  # for the browser, which alone knows the chart's width (cell_text_fit)
        setattr(fig, _CELL_TEXT_FIT, {"size": text_size, "min": s["cell_text_min"], "columns": len(xs),
                                      "widest": round(widest, 4), "pad": CELL_PAD,
                                      "margins": fig.layout.margin.l + fig.layout.margin.r})
    return fig


def attention_heatmap(
    attn: np.ndarray, tokens: Sequence[str], title: str, model_label: str,
    projector: bool = False, key_tokens: Sequence[str] | None = None, clickable: bool = True,
) -> go.Figure:
    """Attention probabilities (queries x keys), 0..1; outline a query's row with ``outline_box``.
    ``clickable`` as for ``heatmap`` (a chart the page reads no clicks from goes without)."""
    attn = np.asarray(attn, float)
    return heatmap(attn, key_tokens if key_tokens is not None else tokens, tokens, title, model_label,
                   projector, x_title="key (attended to)", y_title="query (attending)", zrange=(0.0, 1.0),
                   colorscale=style(projector)["attention"], value_name="attention", clickable=clickable)


def outline_box(fig: go.Figure, row: int, col: int | None = None, projector: bool = False,
                rows_down: int = 1, cols_across: int = 1) -> dict:
    """Where cell (``row``, ``col``) of a ``heatmap`` figure lies once drawn, or the whole
    row when ``col`` is None (with ``rows_down`` and ``cols_across``: the block of that many
    rows and columns from it), for an outline the page lays over the chart
    (``ui.charts.outline``): ``top`` and ``height`` in pixels from the chart's top edge;
    ``left`` and ``right``, the plot area's margins in pixels, and ``x0`` and ``x1``, the
    box's sides as fractions of the plot area's width (the chart's width is the page's,
    known only in the browser); and the outline's ``color`` and ``width``.

    Drawn by the page rather than as a shape in the figure, the outline moves with the
    selection while the figure stays the same, so the browser keeps the drawn chart
    (Streamlit draws a chart again from scratch whenever its figure changes). Exact
    because ``heatmap`` fixes the figure's height, margins and axis ranges."""
    layout = fig.layout
    y0, y1 = layout.yaxis.range  # bottom, top: (rows - 0.5, -0.5)
    x0, x1 = layout.xaxis.range  # (-0.5, cols - 0.5)
    rows, cols = round(y0 - y1), round(x1 - x0)
    if layout.height is None or rows <= 0 or not 0 <= row <= rows - rows_down or rows_down < 1:
        raise ValueError(f"row {row} is not a row of this heatmap, or the block ends past its last row")
    if col is not None and (not 0 <= col <= cols - cols_across or cols_across < 1):
        raise ValueError(f"column {col} is not a column of this heatmap, or the block ends past its last column")
    plot = layout.height - layout.margin.t - layout.margin.b
    left, right = (0.0, 1.0) if col is None else (col / cols, (col + cols_across) / cols)
    return {"top": layout.margin.t + plot * row / rows, "height": plot * rows_down / rows, "left": layout.margin.l,
            "right": layout.margin.r, "x0": left, "x1": right, "color": OUTLINE, "width": outline_width(projector)}
