"""The class board's figures: the class's uses of a word as dots coloured by the writer's
sense (``board_map``, one per model, side by side), and how well each layer of each model
sorts them by sense (``separation_chart``)."""

from __future__ import annotations

import math
import textwrap
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from lab.figures.layout import PLOT_WIDTH, WIDER_FONT, _figure, _tick_angle, text_width
from lab.figures.theme import (BACKGROUND, CHANCE_COLOUR, HEADING_COLOUR, MODEL_COLOURS, OKABE_ITO, SENSE_CHARS,
                               SENSE_COLOURS, USES, USE_MAP_SPAN, label, style)

# the legend entry of the uses whose writer gave no sense: named as the join page offers it
NOT_SAID = "not sure"


HOVER_CHARS = 60  # the most characters of a hover line: a long sentence wraps in the hover box


def hover_text(text: str, width: int = HOVER_CHARS) -> str:
    """A person's sentence for a hover box: wrapped to ``width`` characters a line and shown
    as typed (``<b>``, ``<a>``, ``<script>`` are text, not tags)."""
    return "<br>".join(label(line) for line in textwrap.wrap(str(text), width) or [""])


# px: the plot of one map in its column on a 1024-px projector (half the page, the sidebar
# closed, less the margins; where narrower, Plotly may wrap the legend to a row more).
MAP_PLOT_WIDTH = 440


# px: a map's whole height in projector mode (its legend's rows beyond one more), so that at
# 1024x768 and 1280x720 the word, the join code and both maps with their legend fit the
# first screen
PROJECTOR_MAP_HEIGHT = 410


def board_map(frame, texts: Sequence[str], senses: Sequence[str | None], sense_names: Sequence[str], title: str,
              projector: bool = False, model_label: str = "", width: float = 1.0,
              extent: tuple[Sequence[float], float] | None = None, note: str = "") -> go.Figure:
    """A ``lab.board.maps.Frame``: each use a dot, coloured by its writer's sense.

    ``texts[i]`` and ``senses[i]`` (None or "": not said) belong to the use ``frame.ids[i]``.
    One trace per sense in the board's order (``sense_names``; a sense outside it after
    them), in ``SENSE_COLOURS``, then grey ``NOT_SAID``; each dot's ``customdata`` is its id,
    its hover its sentence. Both axes at one scale (a distance on the screen is a distance
    between unit vectors), over ``extent`` = (centre, half the side) where given (one box
    for every layer of a model, ``lab.board.maps.map_range``: a spread that grows from
    layer to layer shows), else around the dots; ``note`` is written over the plot's top
    (``lab.board.maps.map_note``). ``uirevision`` is constant, so a redraw with new
    sentences keeps a person's zoom. ``width``: the share of the page's chart width the
    figure gets (``_figure``). In projector mode the figure is ``PROJECTOR_MAP_HEIGHT`` high.
    """
    s = style(projector)
    points = np.asarray(frame.coords, float).reshape(-1, 2)
    if not len(frame.ids) == len(texts) == len(senses) == len(points):
        raise ValueError(f"{len(frame.ids)} ids, {len(points)} points, {len(texts)} texts and {len(senses)} senses")
    names = list(dict.fromkeys([*sense_names, *(x for x in senses if x)]))
    said = np.array([x or "" for x in senses], dtype=object)
    traces = []
    # NOT_SAID drawn first, under the senses; the legend lists it last (legendrank)
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
    # the numbers are distances between unit vectors (a chord of 2 joins opposite ones):
    # read across layers on one scale, their values say how bunched the dots are
    # (no axis titles on the projector: the height goes to the plot; the page explains the axes)
    axes = {f"{a}axis": {"title": {"text": "" if projector else f"direction {k + 1}"}, "showticklabels": True,
                         "nticks": 5,
                         "showgrid": True, "zeroline": False, "tickfont": {"size": s["tick"]}}
            for k, a in enumerate("xy")}
    extra = {}
    if len(points):
        if extent is None:
            # at least USE_MAP_SPAN wide: uses that do not differ (a character layer's) stay
            # one blob instead of their rounding filling the chart
            centre = (points.max(axis=0) + points.min(axis=0)) / 2
            half = max(USE_MAP_SPAN / 2, 1.15 * float(np.abs(points - centre).max()))
        else:
            centre, half = np.asarray(extent[0], float), float(extent[1])
        for k, a in enumerate("xy"):
            axes[f"{a}axis"]["range"] = [float(centre[k] - half), float(centre[k] + half)]
        axes["yaxis"] |= {"scaleanchor": "x", "scaleratio": 1}
        axes["xaxis"]["constrain"] = axes["yaxis"]["constrain"] = "domain"
    else:
        for a in "xy":
            axes[f"{a}axis"] |= {"visible": False}
        extra["annotations"] = [{"text": "No sentences yet", "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5,
                                 "showarrow": False, "font": {"size": s["title"]}}]
    if note and len(points):
        lines = textwrap.wrap(note, max(20, int(MAP_PLOT_WIDTH / (0.55 * s["font"]))))
        extra["annotations"] = [{"text": "<br>".join(label(line) for line in lines), "xref": "paper",
                                 "yref": "paper", "x": 0.5, "y": 1.0, "xanchor": "center", "yanchor": "top",
                                 "showarrow": False, "align": "left", "bgcolor": "rgba(255,255,255,0.85)",
                                 "font": {"size": s["font"], "color": HEADING_COLOUR}}]
    height = PROJECTOR_MAP_HEIGHT if projector else s["height"] + 40
    fig = _figure(traces, title, model_label, projector, showlegend=bool(traces), margin_top=-40 if projector else 0,
                  legend={"orientation": "h", "itemsizing": "constant"}, uirevision="board",
                  height=height, width=width, **axes, **extra)
    if traces:
        # the legend, laid out for a plot PLOT_WIDTH wide, wraps in a column's narrower one:
        # the bottom margin grows by the rows it takes there
        legend = fig.layout.legend
        entry = legend.entrywidth + 45  # Plotly: 40 px for the symbol, 5 between entries
        shown = sum(1 for t in traces if t.showlegend is not False)
        rows = math.ceil(shown / max(1, int(MAP_PLOT_WIDTH // entry)))
        reserved = math.ceil(shown / max(1, int(PLOT_WIDTH // entry)))
        if rows > reserved:
            fig.layout.margin.b += math.ceil((rows - reserved) * s["font"] * 1.6)
            fig.layout.height += math.ceil((rows - reserved) * s["font"] * 1.6)
    return fig


SEPARATION_TITLE = "At which layer does each model sort our sentences the way we did?"


def _model_colour(name: str, k: int) -> int:
    """The model's colour (``MODEL_COLOURS``: the family its name starts with, else its place)."""
    return next((c for family, c in MODEL_COLOURS.items() if name.casefold().startswith(family)), k)


def separation_chart(by_model: dict[str, tuple[Sequence[str], np.ndarray]], projector: bool = False,
                     model_label: str = "", measure: str = "ROC AUC",
                     tick_names: dict[str, Sequence[str]] | None = None) -> go.Figure:
    """The ROC AUC of the class's sense pairs at every layer of each model (``by_model``:
    name -> (layer names, ``lab.board.maps.Separation.auc``)), in its model's colour,
    and chance (0.5, dashed), as a share: 0 % ... 100 %.

    Each model has a depth axis of its own, 0 = its input layer, 1 = its top: the first
    model's below the plot, the second's above it, each labelled with its own layers
    (``tick_names``: model -> a short name per layer, default the layer names) in its
    colour, so that no two models' labels meet. ``measure``: the y axis's title, in plain
    words (``lab.board.maps.told_apart``); the hover gives the value of each point.
    ``model_label``: the caption line (default: the models' names).
    """
    from lab.elmo_vs_bert import depth

    if not by_model:
        raise ValueError("a separation chart needs at least one model's ROC AUCs")
    if len(by_model) > 2:
        raise ValueError(f"a separation chart has a depth axis for two models, not {len(by_model)}")
    s = style(projector)
    traces, axes, ticks = [], {}, {}
    for k, (name, (layers, auc)) in enumerate(by_model.items()):
        if auc is None:
            raise ValueError(f"{name} has no ROC AUC yet: the board needs more sentences with a sense")
        y = np.asarray(auc, float)
        if y.shape != (len(layers),):
            raise ValueError(f"{name}: {y.shape} ROC AUCs for {len(layers)} layers")
        x = depth(len(layers))
        shown = list((tick_names or {}).get(name) or layers)
        if len(shown) != len(layers):
            raise ValueError(f"{name}: {len(shown)} tick names for {len(layers)} layers")
        colour = OKABE_ITO[_model_colour(name, k) % len(OKABE_ITO)]
        axis = "x" if k == 0 else "x2"
        traces.append(go.Scatter(
            x=x, y=y, name=label(name), mode="lines+markers", text=[label(n) for n in layers], xaxis=axis,
            line={"width": s["line"], "color": colour}, marker={"size": s["marker"]},
            hovertemplate=f"{label(name)} %{{text}}: %{{y:.0%}}<extra></extra>"))
        ticks[axis] = [label(n) for n in shown]
        axes["xaxis" if k == 0 else "xaxis2"] = {
            "tickvals": list(map(float, x)), "ticktext": ticks[axis], "range": [-0.06, 1.06], "showgrid": k == 0,
            "tickfont": {"size": s["tick"], "color": colour}, "title": {"text": f"{label(name)} layer",
                                                                       "font": {"color": colour}},
            "fixedrange": True}
        if k:
            axes["xaxis2"] |= {"overlaying": "x", "side": "top", "automargin": False, "zeroline": False}
    traces.append(go.Scatter(x=[0.0, 1.0], y=[0.5, 0.5], name="chance (a coin)", mode="lines",
                             line={"width": s["line"] * 0.7, "color": OKABE_ITO[CHANCE_COLOUR], "dash": "dash"},
                             hovertemplate="chance: 50 %<extra></extra>"))
    top, right = 0, 0
    if "x2" in ticks:
        # the second model's labels and axis title above the plot, under the title, turned
        # as the first's are (``_tick_angle``) where they would meet, in a wider font too
        widths = [text_width(t, s["tick"]) * (1 + WIDER_FONT) for t in ticks["x2"]]
        gaps = [PLOT_WIDTH / max(len(widths) - 1, 1)] * (len(widths) - 1)
        angle = _tick_angle(widths, s["tick"] * 1.3, gaps)
        axes["xaxis2"]["tickangle"] = -angle
        turn = math.radians(angle)
        label_height = s["tick"] * 1.4 + math.sin(turn) * max(widths)
        axes["xaxis2"]["title"]["standoff"] = 8
        top = math.ceil(label_height + s["font"] * 1.6 + 16)
        # the last label is centred on the top layer's tick (flat) or starts there (turned)
        right = math.ceil((widths[-1] / 2 if not angle else widths[-1] * math.cos(turn)) + 8)
    shares = [0, 0.25, 0.5, 0.75, 1]  # labelled as text, so that the margin is fitted to them
    yaxis = {"title": {"text": measure}, "range": [0.0, 1.05], "tickvals": shares,
             "ticktext": [f"{v:.0%}" for v in shares], "tickfont": {"size": s["tick"]}, "fixedrange": True}
    measure_lines = textwrap.wrap(measure, 34 if projector else 44)
    yaxis["title"]["text"] = "<br>".join(label(line) for line in measure_lines)
    fig = _figure(traces, SEPARATION_TITLE, model_label or " · ".join(by_model), projector, margin_top=top,
                  numeric_axes=("y",), showlegend=True, legend={"orientation": "h"}, height=s["height"] + 60,
                  yaxis=yaxis, **axes)
    # the margins hold one line of the y axis's title and the first axis's labels: room for
    # the title's other lines, and for the second axis's last label
    fig.layout.margin.l += math.ceil((len(measure_lines) - 1) * s["font"] * 1.4)
    fig.layout.margin.r = max(fig.layout.margin.r, right)
    return fig
