"""Per-layer charts: a word pair's cosine at every layer (``layer_curve``) and one bar per
layer (``bar_by_layer``), each beside its layer's anisotropy baseline where given."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from lab.figures.theme import BACKGROUND, OKABE_ITO, label, style
from lab.figures.layout import _figure


BASELINE_NAME = "baseline (random words)"


def layer_curve(
    layer_names: Sequence[str],
    series: dict[str, Sequence[float]],
    title: str,
    model_label: str,
    projector: bool = False,
    y_title: str = "cosine similarity",
    y_range: tuple[float, float] | None = (-0.2, 1.05),
    x_title: str = "layer",
    baseline: Sequence[float] | None = None,
) -> go.Figure:
    """One line per series over the layers (x = layer names; ``x_title`` names the axis when
    its steps are something else, such as runs); ``baseline``, one value per layer, is
    drawn dashed in the first series' colour (``BASELINE_NAME``)."""
    s = style(projector)
    traces = []
    lines = list(series.items()) + ([(BASELINE_NAME, baseline)] if baseline is not None else [])
    for i, (name, values) in enumerate(lines):
        values = np.asarray(values, float)
        if values.shape != (len(layer_names),):
            raise ValueError(f"series {name!r} has {values.shape} values for {len(layer_names)} layers")
        dashed = baseline is not None and i == len(series)
        traces.append(go.Scatter(
            x=list(range(len(layer_names))), y=values, name=label(name), mode="lines+markers",
            line={"width": s["line"] * (0.7 if dashed else 1), "color": OKABE_ITO[0 if dashed else i % len(OKABE_ITO)],
                  "dash": "dash" if dashed else "solid"},
            marker={"size": s["marker"] * (0.6 if dashed else 1)},
            hovertemplate="%{text}: %{y:.3f}<extra>" + label(name) + "</extra>",
            text=[label(n) for n in layer_names],
        ))
    yaxis = {"title": {"text": y_title}, "tickfont": {"size": s["tick"]}}
    if y_range:
        yaxis["range"] = list(y_range)
    return _figure(traces, title, model_label, projector, numeric_axes=("y",), showlegend=True,
                   legend={"orientation": "h"}, yaxis=yaxis,
                   xaxis={"tickvals": list(range(len(layer_names))), "ticktext": [label(n) for n in layer_names],
                          "tickfont": {"size": s["tick"]}, "title": {"text": x_title}})


def bar_by_layer(
    layer_names: Sequence[str], values: Sequence[float], title: str, model_label: str,
    projector: bool = False, y_title: str = "cosine similarity", groups: Sequence[int] | None = None,
    baseline: Sequence[float] | None = None, group_names: Sequence[str] | None = None,
) -> go.Figure:
    """One bar per layer, value printed beyond its end; ``groups`` (one int per bar) colours
    kinds of layers apart (e.g. 1 for views that are not model outputs), one trace per kind,
    each in the legend under its ``group_names[g]`` (default: ``y_title``); ``baseline``, one
    value per bar (NaN: none), draws each bar's baseline as a dark line across the bar, and
    a value whose baseline lies beyond its bar's end is printed beyond the line instead
    (``_value_labels``)."""
    s = style(projector)
    values = np.asarray(values, float)
    if values.shape != (len(layer_names),):
        raise ValueError(f"{values.shape} values for {len(layer_names)} layers")
    groups = list(groups) if groups is not None else [0] * len(values)
    if len(groups) != len(values):
        raise ValueError(f"{len(groups)} groups for {len(values)} bars")
    kinds = sorted(set(groups))
    if group_names is not None and len(group_names) <= max(kinds):
        raise ValueError(f"{len(group_names)} group names for group {max(kinds)}")
    names = [label(n) for n in layer_names]
    x = list(range(len(values)))  # numbers, so that a baseline can span its bar (width 0.8)
    traces = []
    for g in kinds:
        at = [i for i in x if groups[i] == g]
        traces.append(go.Bar(
            x=at, y=values[at], width=0.8, marker_color=OKABE_ITO[g % len(OKABE_ITO)],
            marker_line={"color": BACKGROUND, "width": 0.5},
            name=label(group_names[g]) if group_names is not None else y_title, customdata=[names[i] for i in at],
            hovertemplate="%{customdata}: %{y:.3f}<extra></extra>",
        ))
    low = values.min()
    base = np.full(values.shape, np.nan) if baseline is None else np.asarray(baseline, float)
    if base.shape != values.shape:
        raise ValueError(f"{base.shape} baselines for {len(values)} bars")
    if baseline is not None:
        at = [i for i in x if not np.isnan(base[i])]
        # one trace, a segment across each bar with a baseline (None between segments)
        traces.append(go.Scatter(
            x=[v for i in at for v in (i - 0.4, i + 0.4, None)], y=[v for i in at for v in (base[i], base[i], None)],
            text=[v for i in at for v in (names[i], names[i], None)], mode="lines", name=BASELINE_NAME,
            line={"color": "#222222", "width": s["line"] + 1},
            hovertemplate="%{text}: baseline %{y:.3f}<extra></extra>"))
        low = min(low, float(np.nanmin(base)) if at else low)
    y, positions = _value_labels(values, base)
    # printed values as text beside points, not as the bars' own text: Plotly puts that
    # at the bar's end, where a baseline line across the bar can run through it
    traces.append(go.Scatter(
        x=x, y=y, text=[f"{v:.3f}" for v in values], textposition=positions, mode="markers+text",
        marker={"size": _value_offset(projector), "color": "rgba(0,0,0,0)"}, textfont={"size": s["cell_text"]},
        cliponaxis=False, name="printed values", showlegend=False, hoverinfo="skip"))
    return _figure(traces, title, model_label, projector, numeric_axes=("y",), barmode="overlay",
                   showlegend=baseline is not None or len(kinds) > 1, legend={"orientation": "h"},
                   xaxis={"tickvals": x, "ticktext": names, "tickfont": {"size": s["tick"]},
                          "range": [-0.6, len(values) - 0.4]},
                   yaxis={"title": {"text": y_title}, "range": [min(0.0, low - 0.1), 1.1],
                          "tickfont": {"size": s["tick"]}})


def _value_labels(values: np.ndarray, baseline: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Where ``bar_by_layer`` prints each bar's value: the y it stands off from, and Plotly's
    text position. Beyond the bar's end (above a bar up, below one down), or beyond its
    baseline's line (NaN: none) where that lies further out."""
    up = values >= 0
    y = np.where(up, np.fmax(values, baseline), np.fmin(values, baseline))
    return y, ["top center" if u else "bottom center" for u in up]


def _value_offset(projector: bool = False) -> float:
    """The size of the invisible marker a ``bar_by_layer`` value is printed beside: Plotly
    stands text off by more than a marker's radius (radius / 0.8 + 1 px), and this radius
    is 3 px more than half the baseline line's width."""
    return style(projector)["line"] + 1 + 6
