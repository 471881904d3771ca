"""The ELMo vs BERT figures: curves on a shared depth axis (``DepthLine``), the sense test,
the map of a word's uses coloured by sense, and the strip of sense pairs."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import plotly.graph_objects as go

from lab.figures.theme import (BACKGROUND, CHANCE_COLOUR, OKABE_ITO, PAIR_COLOURS, SENSE_CHARS, SENSE_COLOURS, USES,
                               USE_MAP_SPAN, label, style)
from lab.figures.layout import _figure
from lab.figures.layers import BASELINE_NAME


@dataclass(frozen=True)
class DepthLine:
    """One line of a ``depth_chart``: values at layers placed by relative depth."""

    name: str
    layer_names: Sequence[str]
    depth: Sequence[float]  # 0 = input layer, 1 = top layer
    values: Sequence[float]
    colour: int = 0  # index into OKABE_ITO: one colour per model
    dashed: bool = False  # a baseline
    hover: str = ""  # the points' hovertemplate (%{text}: the layer's name); default: layer, depth, value
    interval: tuple[Sequence[float], Sequence[float]] | None = None  # (low, high) per layer: error bars
    dotted: bool = False  # a second measure of the same model (drawn dotted, full width)


def depth_chart(lines: Sequence[DepthLine], title: str, model_label: str, projector: bool = False,
                y_title: str = "cosine similarity", y_range: tuple[float, float] | None = None) -> go.Figure:
    """Lines of models with different layer counts on one relative-depth axis (0 = input, 1 = top).

    Each tick names the layers at that depth; the hover names the layer of each point.
    """
    s = style(projector)
    traces = []
    ticks: dict[float, list[str]] = {}
    for line in lines:
        x, y = np.asarray(line.depth, float), np.asarray(line.values, float)
        if not (x.shape == y.shape == (len(line.layer_names),)):
            raise ValueError(f"line {line.name!r}: {y.shape} values, {x.shape} depths, "
                             f"{len(line.layer_names)} layer names")
        names = [label(n) for n in line.layer_names]
        for d, n in zip(np.round(x, 3), names):
            ticks.setdefault(float(d), [])
            if n not in ticks[float(d)]:
                ticks[float(d)].append(n)
        bars = {}
        if line.interval is not None:
            low, high = (np.asarray(v, float) for v in line.interval)
            bars = {"error_y": {"type": "data", "symmetric": False, "array": high - y, "arrayminus": y - low,
                                "color": OKABE_ITO[line.colour % 8], "thickness": s["line"] * 0.6}}
        traces.append(go.Scatter(
            x=x, y=y, name=label(line.name), mode="lines+markers", text=names, **bars,
            line={"width": s["line"] * (0.7 if line.dashed else 1), "color": OKABE_ITO[line.colour % 8],
                  "dash": "dash" if line.dashed else "dot" if line.dotted else "solid"},
            marker={"size": s["marker"] * (0.6 if line.dashed else 1)},
            hovertemplate=line.hover or "%{text} (depth %{x:.2f}): %{y:.3f}<extra>" + label(line.name) + "</extra>",
        ))
    yaxis = {"title": {"text": y_title}, "tickfont": {"size": s["tick"]}}
    if y_range:
        yaxis["range"] = list(y_range)
    return _figure(traces, title, model_label, projector, numeric_axes=("y",), showlegend=True,
                   legend={"orientation": "h"}, height=s["height"] + 60, yaxis=yaxis,
                   xaxis={"tickvals": sorted(ticks), "ticktext": ["<br>".join(ticks[d]) for d in sorted(ticks)],
                          "tickfont": {"size": s["tick"]}, "range": [-0.05, 1.05],
                          "title": {"text": "relative depth (0 = input layer, 1 = top layer)"}})


def word_curves_chart(curves: Sequence[tuple[int, Any]], adjusted: bool, model_label: str,
                      projector: bool = False) -> go.Figure:
    """The cosine of one word's two uses at every layer of several models, each beside its
    layers' anisotropy baseline (dashed), on the relative-depth axis; or both
    baseline-adjusted. ``curves``: (colour, ``lab.elmo_vs_bert.ModelCurve``) per model."""
    lines = []
    for colour, c in curves:
        values, base = c.lines(adjusted)
        lines += [DepthLine(f"{c.short_label}: “{c.texts[0]}” vs “{c.texts[1]}”", c.layer_names, c.depth, values,
                            colour),
                  DepthLine(f"{c.short_label}: {BASELINE_NAME}", c.layer_names, c.depth, base, colour,
                            dashed=True)]
    what = "Baseline-adjusted similarity" if adjusted else "Cosine similarity"
    return depth_chart(lines, f"{what} at every layer of both models", model_label, projector,
                       y_title="adjusted similarity" if adjusted else "cosine")


def sense_chart(tests: Sequence[tuple[int, Any]], model_label: str, projector: bool = False) -> go.Figure:
    """ROC AUC of the sense pairs at every layer of several models, and chance (0.5), on the
    relative-depth axis. ``tests``: (colour, ``lab.elmo_vs_bert.SenseTest``) per model."""
    lines = [DepthLine(f"{t.short_label}: ROC AUC", t.layer_names, t.depth, t.auc, colour) for colour, t in tests]
    ends = [tests[0][1].layer_names[0], tests[0][1].layer_names[-1]]  # named as the layers there: no tick of its own
    lines.append(DepthLine("chance", ends, [0.0, 1.0], [0.5, 0.5], CHANCE_COLOUR, dashed=True))
    n = len(tests[0][1].labels)
    return depth_chart(lines, f"Same or different sense? ROC AUC per layer over {n} sentence pairs", model_label,
                       projector, y_title="ROC AUC", y_range=(0.0, 1.05))


def use_map_chart(m, hover: Sequence[tuple[str, str, str]], texts: tuple[str, str], title: str, model_label: str,
                  projector: bool = False, width: float = 1.0, colour: int = 0) -> go.Figure:
    """A ``lab.elmo_vs_bert.UseMap``: the corpus's uses of a word as dots coloured by their sense
    (``m.senses``: one legend entry each, its gloss shortened, then "other sense", then grey
    "sense not known"; ``hover``: each use's text before, word, text after, the word in bold;
    each dot's ``customdata`` its corpus sentence) and the two selected uses as stars in the
    model's ``colour`` (an index into ``OKABE_ITO``), each marked with its sentence's letter
    (``texts``: A's word and B's), on the first two principal components; the axis titles
    give the share of the variance along each (an axis along which nothing varies says
    so). ``width``: the share of the page's chart width it gets (``_figure``)."""
    s = style(projector)
    legend, of_use = m.senses.legend, np.asarray(m.senses.of_use, np.int64)
    if not len(hover) == len(of_use) == len(m.points):
        raise ValueError(f"{len(m.points)} uses, {len(hover)} hover texts and {len(of_use)} senses")
    if sum(e.named for e in legend) >= len(SENSE_COLOURS):
        raise ValueError(f"{sum(e.named for e in legend)} named senses; a use map has colours for "
                         f"{len(SENSE_COLOURS) - 1}")
    shown = [f"{label(before)}<b>{label(word)}</b>{label(after)}" for before, word, after in hover]
    traces = []
    # the unknown uses drawn first, under the senses; the legend lists the senses first (legendrank)
    for k in sorted(range(len(legend)), key=lambda k: (legend[k].known, -k)):
        e, at = legend[k], np.flatnonzero(of_use == k)
        dot = SENSE_COLOURS[k] if e.named else SENSE_COLOURS[-1] if e.known else USES
        sense = f"{label(e.label)}: {label(e.gloss)}" if e.named else label(e.label)
        traces.append(go.Scatter(
            x=m.points[at, 0], y=m.points[at, 1], mode="markers", legendrank=100 + k,
            name=label(textwrap.shorten(e.gloss, SENSE_CHARS, placeholder=" …") if e.named else e.label),
            text=[shown[i] for i in at], customdata=[m.sentences[i] for i in at],
            hovertemplate=f"%{{text}}<br><i>{sense}</i><extra></extra>",
            marker={"size": s["marker"], "color": dot, "opacity": 0.9 if e.known else 0.6}))
    for side, name in enumerate("AB"):
        traces.append(go.Scatter(
            x=[m.yours[side, 0]], y=[m.yours[side, 1]], mode="markers+text", name=f"{name}: “{label(texts[side])}”",
            text=[name], textposition="top right", textfont={"size": s["tick"]},
            marker={"size": s["marker"] * 2.4, "symbol": "star", "color": OKABE_ITO[colour % len(OKABE_ITO)],
                    "line": {"width": 1, "color": BACKGROUND}},
            hovertemplate=f"sentence {name}'s “{label(texts[side])}”<extra></extra>"))
    # both axes alike and at least USE_MAP_SPAN wide (distances between unit vectors run to
    # 2): uses that do not differ (a character layer's, stored to float16) stay one blob
    # instead of their rounding being stretched over the chart
    half = max(USE_MAP_SPAN / 2, 1.1 * float(np.abs(np.vstack([m.points, m.yours])).max(initial=0.0)))
    shares = [f"{share:.0%}" if share > 0 else "no spread" for share in m.explained]
    axes = {f"{a}axis": {"title": {"text": f"component {k + 1} ({shares[k]})"}, "showticklabels": False,
                         "showgrid": False, "zeroline": False, "range": [-half, half]}  # places, not values
            for k, a in enumerate("xy")}
    # the legend, one entry a line in a column's width, below the plot: the figure grows by it
    legend_room = round(1.5 * s["font"]) * (len(traces) - 1)
    return _figure(traces, title, model_label, projector, showlegend=True,
                   legend={"orientation": "h", "itemsizing": "constant"},  # the stars' symbols at the dots' size
                   height=s["height"] + 40 + legend_room, width=width, **axes)


def pair_strip(groups: dict[str, dict[str, tuple[Sequence[float], Sequence[str]]]], marks: dict[str, float | None],
               title: str, model_label: str, projector: bool = False,
               colours: dict[str, int] | None = None) -> go.Figure:
    """Cosines of labelled pairs as dots, one row per model, plus one marked value per row.

    ``groups``: model -> {"same sense": (cosines, a hover text per dot), "different sense":
    (...)}, dotted in ``PAIR_COLOURS``; ``marks``: model -> the person's pair (None: not
    placed), a star in the model's colour (``colours``: model -> an index into
    ``OKABE_ITO``; default: the row's number).
    """
    s = style(projector)
    traces = []
    rows = list(groups)
    for g, kind in enumerate(PAIR_COLOURS):
        for r, model in enumerate(rows):
            cosines, hover = groups[model].get(kind, ([], []))
            values, texts = np.asarray(cosines, float), [label(t) for t in hover]
            traces.append(go.Scatter(
                x=values, y=np.full(len(values), r) + (0.12 if g else -0.12), mode="markers",
                name=kind, legendgroup=kind, showlegend=r == 0, text=texts,
                marker={"size": s["marker"], "color": OKABE_ITO[PAIR_COLOURS[kind]], "opacity": 0.75},
                hovertemplate="%{text}<br>cosine %{x:.3f}<extra>" + kind + "</extra>",
            ))
    for r, model in enumerate(rows):
        if marks.get(model) is None:
            continue
        colour = OKABE_ITO[(colours or {}).get(model, r) % len(OKABE_ITO)]
        traces.append(go.Scatter(
            x=[marks[model]], y=[r], mode="markers", name=f"{label(model)}: your pair", showlegend=True,
            marker={"size": s["marker"] * 2.2, "symbol": "star", "color": colour,
                    "line": {"width": 1, "color": BACKGROUND}},
            hovertemplate="your pair: cosine %{x:.3f}<extra>" + label(model) + "</extra>",
        ))
    # each model's row at least ``strip_row`` px high (the y range spans 0.2 of a row more
    # than the rows): the figure grows with its title and legend instead of squeezing them
    return _figure(traces, title, model_label, projector, numeric_axes=("x",), showlegend=True,
                   legend={"orientation": "h"}, height=300, plot_height=math.ceil(s["strip_row"] * (len(rows) + 0.2)),
                   yaxis={"tickvals": list(range(len(rows))), "ticktext": [label(m) for m in rows],
                          "tickfont": {"size": s["tick"]}, "range": [len(rows) - 0.4, -0.6]},  # the first on top
                   xaxis={"title": {"text": "cosine of the word in the two sentences"},
                          "tickfont": {"size": s["tick"]}})
