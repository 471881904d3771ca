"""Attention figures: the model view (every layer x head tile in one grid, and how a click
on it maps back to a layer and head) and a query token's attention drawn as lines."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from lab.figures.theme import OKABE_ITO, label, style
from lab.figures.layout import _figure
from lab.figures.heatmaps import outline_box


_MODEL_VIEW_GAP = 1  # blank rows and columns between a model view's tiles


def model_view(
    attn: np.ndarray, tokens: Sequence[str], title: str, model_label: str, projector: bool = False,
    key_tokens: Sequence[str] | None = None,
) -> go.Figure:
    """Small multiples of every layer x head: attn (L, H, T, S) -> an L x H grid of maps.

    Queries are ``tokens`` (T); keys are ``key_tokens`` (S), the same tokens when omitted.
    The grid is one heatmap whose tiles are separated by a blank row and column (NaN), not
    L * H subplots: it builds in milliseconds instead of about half a second, and the
    browser draws one trace. The blank rows and columns are the tiling
    (``model_view_tiling`` reads it back from the grid: no ``layout.meta``, with which
    ``Plotly.react`` drew the grid a second time); ``model_view_tile`` cuts one head back
    out, ``model_view_grid`` and ``model_view_box`` outline one. A
    transparent marker on each tile carries its hover (its layer and head) and the click
    that opens it (x, y: a column and a row of the grid, read back with
    ``model_view_heads`` and ``model_view_layers``): the tiles' cells are a few pixels
    wide, too small to point at one by one.
    """
    attn = np.asarray(attn, float)
    keys = tokens if key_tokens is None else key_tokens
    if attn.ndim != 4 or attn.shape[2:] != (len(tokens), len(keys)):
        raise ValueError(f"model view needs (L, H, T, S) with T = {len(tokens)} queries and "
                         f"S = {len(keys)} keys, got {attn.shape}")
    if not np.isfinite(attn).all():
        raise ValueError("model view needs finite attention weights (its blank rows and columns are NaN)")
    L, H, T, S = attn.shape
    gap = _MODEL_VIEW_GAP
    # float32 (the models' own precision): half the bytes to send
    z = np.full((L * (T + gap) - gap, H * (S + gap) - gap), np.nan, np.float32)
    for i in range(L):
        for j in range(H):
            r, c = i * (T + gap), j * (S + gap)
            z[r : r + T, c : c + S] = attn[i, j]
    s = style(projector)
    grid = go.Heatmap(z=z, zmin=0.0, zmax=1.0, showscale=False, colorscale=s["attention"], hoverinfo="skip")
    layer, head = (a.ravel() for a in np.meshgrid(np.arange(L), np.arange(H), indexing="ij"))
    tiles = go.Scatter(  # a grid cell near each tile's centre
        x=head * (S + gap) + (S - 1) // 2, y=layer * (T + gap) + (T - 1) // 2, mode="markers", showlegend=False,
        marker={"symbol": "square", "size": 2 * s["click_marker"], "color": "rgba(0,0,0,0)"},
        customdata=np.stack([layer + 1, head + 1], axis=-1),
        hovertemplate="layer %{customdata[0]}, head %{customdata[1]}: click to read it below<extra></extra>",
    )
    notes = [{"x": j * (S + gap) + (S - 1) / 2, "y": 1.0, "xref": "x", "yref": "paper", "yanchor": "bottom",
              "text": f"H{j + 1}", "showarrow": False, "font": {"size": s["tick"]}} for j in range(H)]
    notes += [{"x": 1.0, "y": i * (T + gap) + (T - 1) / 2, "xref": "paper", "yref": "y", "xanchor": "left",
               "text": f"L{i + 1}", "showarrow": False, "font": {"size": s["tick"]}} for i in range(L)]
    cell = 64 if projector else 52
    return _figure([grid, tiles], title, model_label, projector, height=120 + cell * L,
                   annotations=notes,
                   clickmode="event+select", dragmode=False,
                   # the grid exactly (fixed, for model_view_box), row 0 at the top
                   xaxis={"visible": False, "range": [-0.5, z.shape[1] - 0.5]},
                   yaxis={"visible": False, "range": [z.shape[0] - 0.5, -0.5]},
                   # room for the column titles (H1, H2, ...) under the title, and the row titles at the right
                   margin_top=36 if projector else 25, margin_right=40)


def model_view_tiling(z) -> dict:
    """The tiling of a ``model_view`` grid ``z`` (the figure's, or its JSON's lists with
    None for NaN), read from its blank rows and columns: ``layers``, ``heads``, ``queries``
    and ``keys`` per tile, and the ``gap`` between tiles (1)."""
    z = np.asarray(z, float)  # None (JSON's NaN) -> nan
    blank_rows, blank_cols = np.isnan(z).all(axis=1), np.isnan(z).all(axis=0)
    T = int(np.argmax(blank_rows)) if blank_rows.any() else z.shape[0]
    S = int(np.argmax(blank_cols)) if blank_cols.any() else z.shape[1]
    gap = _MODEL_VIEW_GAP
    tiling = {"layers": (z.shape[0] + gap) // (T + gap), "heads": (z.shape[1] + gap) // (S + gap),
              "queries": T, "keys": S, "gap": gap}
    if (tiling["layers"] * (T + gap) - gap, tiling["heads"] * (S + gap) - gap) != z.shape:
        raise ValueError(f"a {z.shape} grid is not a model view's tiling of {T} x {S} tiles")
    return tiling


def model_view_heads(tiling: dict) -> list[int]:
    """The head of each column of a ``model_view`` grid (-1 in the gaps between tiles)."""
    S, gap = tiling["keys"], tiling["gap"]
    return [c // (S + gap) if c % (S + gap) < S else -1 for c in range(tiling["heads"] * (S + gap) - gap)]


def model_view_layers(tiling: dict) -> list[int]:
    """The layer of each row of a ``model_view`` grid (-1 in the gaps between tiles)."""
    T, gap = tiling["queries"], tiling["gap"]
    return [r // (T + gap) if r % (T + gap) < T else -1 for r in range(tiling["layers"] * (T + gap) - gap)]


def model_view_grid(fig: go.Figure, projector: bool = False) -> dict:
    """``outline_box`` of a ``model_view``'s whole grid, with its tiling under ``tiles``:
    all that ``model_view_box`` needs (a few numbers, for a page to keep)."""
    z = fig.data[0].z
    rows, cols = np.shape(z)
    return outline_box(fig, 0, 0, projector, rows_down=rows, cols_across=cols) | {"tiles": model_view_tiling(z)}


def model_view_box(grid: dict, layer: int, head: int) -> dict:
    """Where one tile of a ``model_view`` lies once drawn (layer and head 0-based), for
    ``ui.charts.outline``; ``grid`` is the view's ``model_view_grid``."""
    tiling = grid["tiles"]
    L, H, T, S, gap = tiling["layers"], tiling["heads"], tiling["queries"], tiling["keys"], tiling["gap"]
    if not (0 <= layer < L and 0 <= head < H):
        raise ValueError(f"layer {layer}, head {head} is not a tile of this model view")
    rows, cols = L * (T + gap) - gap, H * (S + gap) - gap
    first_row, first_col = layer * (T + gap), head * (S + gap)
    x0, x1 = grid["x0"], grid["x1"]
    return {k: v for k, v in grid.items() if k != "tiles"} | {
        "top": grid["top"] + grid["height"] * first_row / rows, "height": grid["height"] * T / rows,
        "x0": x0 + (x1 - x0) * first_col / cols, "x1": x0 + (x1 - x0) * (first_col + S) / cols}


def model_view_tile(z, layer: int, head: int) -> np.ndarray:
    """Head ``head`` of layer ``layer`` (0-based) cut out of a ``model_view`` grid ``z``
    (as ``model_view_tiling`` takes it): (T, S), in float32."""
    tiling = model_view_tiling(z)
    T, S, gap = tiling["queries"], tiling["keys"], tiling["gap"]
    r, c = layer * (T + gap), head * (S + gap)
    return np.asarray(z, float).astype(np.float32)[r : r + T, c : c + S]


def attention_lines(
    weights: np.ndarray, tokens: Sequence[str], query: int, title: str, model_label: str,
    projector: bool = False, key_tokens: Sequence[str] | None = None,
) -> go.Figure:
    """The clicked token's attention row as lines from it (left) to every key (right).

    Line width and opacity grow with the weight (bertviz's head view, one query).
    """
    weights = np.asarray(weights, float)
    keys = list(key_tokens if key_tokens is not None else tokens)
    if weights.shape != (len(keys),):
        raise ValueError(f"{weights.shape} weights for {len(keys)} keys")
    s = style(projector)
    traces = []
    top = max(float(weights.max()), 1e-9)
    for k, w in enumerate(weights):
        if w <= 0:
            continue
        traces.append(go.Scatter(
            x=[0, 1], y=[query, k], mode="lines", showlegend=False, hoverinfo="skip",
            line={"width": 0.5 + (s["line"] * 3) * w / top, "color": OKABE_ITO[0]}, opacity=0.25 + 0.75 * w / top,
        ))
    n = max(len(tokens), len(keys))
    traces.append(go.Scatter(x=[0] * len(tokens), y=list(range(len(tokens))), mode="text",
                             text=[label(t) for t in tokens], textposition="middle left",
                             textfont={"size": s["tick"]}, showlegend=False, hoverinfo="skip"))
    traces.append(go.Scatter(x=[1] * len(keys), y=list(range(len(keys))), mode="text",
                             text=[f"{label(t)} {w:.2f}" for t, w in zip(keys, weights)],
                             textposition="middle right", textfont={"size": s["tick"]},
                             showlegend=False, hoverinfo="skip"))
    return _figure(traces, title, model_label, projector, height=max(300, 60 + (34 if projector else 24) * n),
                   xaxis={"visible": False, "range": [-0.6, 1.6]}, yaxis={"visible": False, "autorange": "reversed"})
