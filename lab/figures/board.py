"""The class board's figures: the class's uses of a word as dots coloured by the writer's
sense (``board_map``, one per model, side by side), and how well each layer of each model
sorts them by sense (``separation_chart``)."""

from __future__ import annotations

import textwrap
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from lab.figures.comparison import DepthLine, depth_chart
from lab.figures.layout import _figure
from lab.figures.theme import (BACKGROUND, CHANCE_COLOUR, MODEL_COLOURS, SENSE_CHARS, SENSE_COLOURS, USES,
                               USE_MAP_SPAN, label, style)

NOT_SAID = "not said"  # the legend entry of the uses whose writer gave no sense


HOVER_CHARS = 60  # the most characters of a hover line: a long sentence wraps in the hover box


def hover_text(text: str, width: int = HOVER_CHARS) -> str:
    """A person's sentence for a hover box: wrapped to ``width`` characters a line and shown
    as typed (``<b>``, ``<a>``, ``<script>`` are text, not tags)."""
    return "<br>".join(label(line) for line in textwrap.wrap(str(text), width) or [""])


def board_map(frame, texts: Sequence[str], senses: Sequence[str | None], sense_names: Sequence[str], title: str,
              projector: bool = False, model_label: str = "", width: float = 1.0) -> go.Figure:
    """A ``lab.board.analysis.Frame``: each use a dot, coloured by its writer's sense.

    ``texts[i]`` and ``senses[i]`` (None or "": not said) belong to the use ``frame.ids[i]``.
    One trace per sense in the board's order (``sense_names``; a sense outside it after
    them), in ``SENSE_COLOURS``, then grey "not said"; each dot's ``customdata`` is its id,
    its hover its sentence. Both axes at one scale (a distance on the screen is a distance
    between vectors) and without numbers (the directions are the map's, their values mean
    nothing); ``uirevision`` is constant, so a redraw with new sentences keeps a person's
    zoom. ``width``: the share of the page's chart width the figure gets (``_figure``).
    """
    s = style(projector)
    points = np.asarray(frame.coords, float).reshape(-1, 2)
    if not len(frame.ids) == len(texts) == len(senses) == len(points):
        raise ValueError(f"{len(frame.ids)} ids, {len(points)} points, {len(texts)} texts and {len(senses)} senses")
    names = list(dict.fromkeys([*sense_names, *(x for x in senses if x)]))
    said = np.array([x or "" for x in senses], dtype=object)
    traces = []
    # "not said" drawn first, under the senses; the legend lists it last (legendrank)
    groups = [(NOT_SAID, USES, np.flatnonzero(said == ""))] if (said == "").any() else []
    groups += [(name, SENSE_COLOURS[k % len(SENSE_COLOURS)], np.flatnonzero(said == name))
               for k, name in enumerate(names)]
    for name, colour, at in groups:
        traces.append(go.Scatter(
            x=points[at, 0], y=points[at, 1], mode="markers",
            legendrank=100 + (len(names) if name == NOT_SAID else names.index(name)),
            name=label(textwrap.shorten(name, SENSE_CHARS, placeholder=" …")),
            text=[hover_text(texts[i]) for i in at], customdata=[frame.ids[i] for i in at],
            hovertemplate=f"%{{text}}<br><i>{label(name)}</i><extra></extra>",
            marker={"size": round(s["marker"] * 1.5), "color": colour, "opacity": 0.9,
                    "line": {"width": 1, "color": BACKGROUND}}))
    axes = {f"{a}axis": {"title": {"text": f"PCA {k + 1}"}, "showticklabels": False, "showgrid": False,
                         "zeroline": False}
            for k, a in enumerate("xy")}
    extra = {}
    if len(points):
        # one scale on both axes (scaleanchor), each at least USE_MAP_SPAN wide: uses that do
        # not differ (a character layer's) stay one blob instead of their rounding filling the chart
        centre = (points.max(axis=0) + points.min(axis=0)) / 2
        half = max(USE_MAP_SPAN / 2, 1.15 * float(np.abs(points - centre).max()))
        for k, a in enumerate("xy"):
            axes[f"{a}axis"]["range"] = [centre[k] - half, centre[k] + half]
        axes["yaxis"] |= {"scaleanchor": "x", "scaleratio": 1}
        axes["xaxis"]["constrain"] = axes["yaxis"]["constrain"] = "domain"
    else:
        for a in "xy":
            axes[f"{a}axis"] |= {"visible": False}
        extra["annotations"] = [{"text": "No sentences yet", "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5,
                                 "showarrow": False, "font": {"size": s["title"]}}]
    # the legend, one entry a line in a column's width, below the plot: the figure grows by it
    legend_room = round(1.5 * s["font"]) * max(len(traces) - 1, 0)
    return _figure(traces, title, model_label, projector, showlegend=bool(traces),
                   legend={"orientation": "h", "itemsizing": "constant"}, uirevision="board",
                   height=s["height"] + 40 + legend_room, width=width, **axes, **extra)


SEPARATION_TITLE = "At which layer does each model sort our sentences the way we did?"


def _model_colour(name: str, k: int) -> int:
    """The model's colour (``MODEL_COLOURS``: the family its name starts with, else its place)."""
    return next((c for family, c in MODEL_COLOURS.items() if name.casefold().startswith(family)), k)


def separation_chart(by_model: dict[str, tuple[Sequence[str], np.ndarray]], projector: bool = False,
                     model_label: str = "") -> go.Figure:
    """The ROC AUC of the class's sense pairs at every layer of each model (``by_model``:
    name -> (layer names, ``lab.board.analysis.Separation.auc``)), in its model's colour, and
    chance (0.5, dashed), on one relative-depth axis: 0 = the input layer, 1 = the top.
    ``model_label``: the caption line (default: the models' names)."""
    from lab.elmo_vs_bert import depth

    if not by_model:
        raise ValueError("a separation chart needs at least one model's ROC AUCs")
    lines = []
    for k, (name, (layers, auc)) in enumerate(by_model.items()):
        if auc is None:
            raise ValueError(f"{name} has no ROC AUC yet: the board needs more sentences with a sense")
        lines.append(DepthLine(name, list(layers), depth(len(layers)), np.asarray(auc, float),
                               _model_colour(name, k), hover=f"{label(name)} %{{text}}: AUC %{{y:.2f}}<extra></extra>"))
    first = list(next(iter(by_model.values()))[0])
    lines.append(DepthLine("chance", [first[0], first[-1]], [0.0, 1.0], [0.5, 0.5], CHANCE_COLOUR, dashed=True,
                           hover="chance: AUC 0.50<extra></extra>"))
    return depth_chart(lines, SEPARATION_TITLE, model_label or " · ".join(by_model), projector,
                       y_title="ROC AUC", y_range=(0.0, 1.05))
