"""The figures of "What each layer knows": a task's probe accuracy at every layer of several
models (``probe_chart``), and one sentence's word x layer grid of guesses (``guess_grid``)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from lab.figures.comparison import DepthLine, depth_chart
from lab.figures.layout import PLOT_WIDTH, _figure, text_width
from lab.figures.theme import CHANCE_COLOUR, HEADING_COLOUR, label, style

# Mid-tone colours, one per class (a task with more classes reuses them: each cell also
# names its class), blended towards white as the probe's confidence falls
CLASS_COLOURS = tuple(qualitative.Light24)
OUTSIDE = "#E6E6E6"  # a word outside the task's classes


def _depth(n: int) -> np.ndarray:
    return np.linspace(0.0, 1.0, n) if n > 1 else np.zeros(n)


def probe_lines(models: Sequence[tuple[int, Any]], task: str, selectivity: bool = False) -> list[DepthLine]:
    """The lines of ``probe_chart``: per model (colour, ``lab.probes.ModelProbes``) its
    accuracy, its control task's and (a lexical task) on unseen words, each with its 95 %
    interval; or its selectivity. Then the majority class (or zero, for the selectivity)."""
    lines = []
    for colour, p in models:
        t = p.tasks[task]
        names, depth = p.layer_names, _depth(len(p.layer_names))

        def line(name, scores, **kw):
            return DepthLine(f"{p.short_label}: {name}", names, depth, [s.value for s in scores], colour,
                             interval=([s.low for s in scores], [s.high for s in scores]), **kw)

        if selectivity:
            lines.append(line("selectivity (task − control)", [s.selectivity for s in t.scores]))
            continue
        lines += [line("accuracy", [s.accuracy for s in t.scores]),
                  line("control task", [s.control for s in t.scores], dashed=True)]
        if not np.isnan(t.scores[0].unseen.value):
            lines.append(line("on unseen words", [s.unseen for s in t.scores], dotted=True))
    first = models[0][1]
    ends = [first.layer_names[0], first.layer_names[-1]]
    level = 0.0 if selectivity else first.tasks[task].majority
    lines.append(DepthLine("zero: no better than the control" if selectivity else
                           f"majority class ({first.tasks[task].majority_class})", ends, [0.0, 1.0], [level, level],
                           CHANCE_COLOUR, dashed=True))
    return lines


def probe_chart(models: Sequence[tuple[int, Any]], task: str, task_name: str, selectivity: bool, model_label: str,
                projector: bool = False) -> go.Figure:
    """A task's held-out accuracy (or selectivity) at every layer of each model, with 95 %
    intervals as error bars, on the relative-depth axis (``probe_lines``)."""
    if not models:
        raise ValueError("a probe chart needs at least one model's probes")
    what = "selectivity (accuracy − control task)" if selectivity else "held-out accuracy"
    return depth_chart(probe_lines(models, task, selectivity), f"{task_name.capitalize()}: {what} at every layer",
                       model_label, projector, y_title="selectivity" if selectivity else "accuracy",
                       y_range=None if selectivity else (0.0, 1.02))


def short_class(name: str) -> str:
    """A class as a grid cell shows it: ``noun.group`` -> ``n.group``; the rest as they are."""
    kind, _, rest = name.partition(".")
    return f"{kind[0]}.{rest}" if rest and kind in ("noun", "verb", "adj", "adv") else name


def cell_colour(k: int, p: float) -> str:
    """Class ``k``'s colour blended towards white as the confidence ``p`` falls."""
    h = CLASS_COLOURS[k % len(CLASS_COLOURS)].lstrip("#")
    rgb = np.array([int(h[i : i + 2], 16) for i in (0, 2, 4)], float)
    a = 0.2 + 0.8 * float(np.clip(p, 0.0, 1.0))
    r, g, b = (np.round(255 * (1 - a) + rgb * a)).astype(int)
    return f"#{r:02X}{g:02X}{b:02X}"


def _fit(text: str, room: float, size: float) -> str:
    """``text`` cut (with "…") to fit ``room`` px at type ``size``."""
    if text_width(text, size) <= room:
        return text
    while len(text) > 1 and text_width(text + "…", size) > room:
        text = text[:-1]
    return text + "…"


def guess_grid(g: Any, title: str, model_label: str, projector: bool = False) -> go.Figure:
    """A ``lab.probes.Guesses`` as a word x layer grid: each cell the probe's guess at that
    layer, coloured by the class and shaded by its probability; grey for a word outside the
    task's classes. Rows are words (the first on top), columns layers."""
    labels, conf = g.labels, g.confidence  # (T, N)
    T, N = len(g.words), len(g.layer_names)
    if not T:
        raise ValueError("a guess grid needs at least one word")
    index = {c: k for k, c in enumerate(g.classes)}
    colours = [OUTSIDE if lab is None else cell_colour(index[lab], conf[t, n])
               for t, row in enumerate(labels) for n, lab in enumerate(row)]
    z = np.arange(T * N, dtype=float).reshape(T, N)  # each cell its own colour stop
    scale = [[i / max(1, T * N - 1), c] for i, c in enumerate(colours)] if T * N > 1 else [[0, colours[0]],
                                                                                            [1, colours[0]]]
    text = [["–" if lab is None else short_class(lab) for lab in row] for row in labels]
    hover = [[f"{label(g.words[t])} at {label(g.layer_names[n])}: " +
              ("outside the task's classes" if lab is None else f"{label(lab)} (p = {conf[t, n]:.2f})")
              for n, lab in enumerate(row)] for t, row in enumerate(labels)]
    s = style(projector)
    # the longest label fits its cell where the plot is PLOT_WIDTH wide (a laptop, a 1024-px
    # projector with the sidebar closed): smaller type rather than labels spilling over
    room = 0.9 * PLOT_WIDTH / N  # px of a cell's width
    longest = max((text_width(c, 1.0) for row in text for c in row), default=1.0)
    size = max(s["cell_text_min"], min(s["cell_text"], room / longest))
    text = [[_fit(c, room, size) for c in row] for row in text]  # the hover keeps the whole label
    trace = go.Heatmap(z=z, x=list(range(N)), y=list(range(T)), colorscale=scale, showscale=False, zmin=0,
                       zmax=max(1, T * N - 1), text=text, texttemplate="%{text}", customdata=hover,
                       textfont={"size": size, "color": HEADING_COLOUR}, xgap=2, ygap=2,
                       hovertemplate="%{customdata}<extra></extra>")
    row = round(max(size, s["tick"]) * 2.4)
    return _figure([trace], title, model_label, projector, plot_height=row * T,
                   xaxis={"tickvals": list(range(N)), "ticktext": [label(n) for n in g.layer_names],
                          "tickfont": {"size": s["tick"]}, "showgrid": False, "zeroline": False},
                   yaxis={"tickvals": list(range(T)), "ticktext": [label(w) for w in g.words], "autorange": "reversed",
                          "tickfont": {"size": s["tick"]}, "showgrid": False, "zeroline": False})


def board_probe_chart(results: Sequence[tuple[int, Any]], word: str, model_label: str,
                      projector: bool = False) -> go.Figure:
    """The supersense probe's accuracy on a board's labelled sentences at every layer of each
    model (colour, ``lab.probe_views.BoardProbe``), on the relative-depth axis."""
    if not results:
        raise ValueError("a board probe chart needs at least one model's result")
    lines = [DepthLine(f"{r.short_label}: supersense probe", r.layer_names, _depth(len(r.layer_names)), r.accuracy,
                       colour) for colour, r in results]
    n = results[0][1].used
    return depth_chart(lines, f"The supersense probe on our {n} labelled “{word}” sentences", model_label, projector,
                       y_title="accuracy", y_range=(0.0, 1.02))
