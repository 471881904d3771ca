"""Laying a figure out: the one place a figure is assembled (``_figure``: title with the
model's name, margins fitted to its labels, plain JSON arrays), how its PNG export is set
(``export_config``), and the text measures that margins and label angles come from."""

from __future__ import annotations

import hashlib
import html
import math
import re
import textwrap
import unicodedata
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from lab.figures.theme import (BACKGROUND, BORDER_COLOUR, COLOURWAY, FONT_FAMILY, GRID_COLOUR, HEADING_COLOUR,
                               LEGEND_COLOUR, TEXT_COLOUR, label, style)


def _title(title: str, model_label: str, projector: bool = False, width: float = 1.0) -> dict:
    # The model line is the caption every view must carry: wrap it to the figure's width
    # (fewer characters fit a line in projector type, or in a chart given ``width``, a
    # share of the page's chart width) rather than cut it off; the title too, in its
    # larger type.
    chars = int(style(projector)["title_chars"] * width)
    heading = "<br>".join(label(line) for line in textwrap.wrap(title, width=int(chars * 0.65)))
    lines = textwrap.wrap(f"Model: {model_label}", width=chars)[:3] if model_label else []
    model = "".join(f"<br><sup>{label(line)}</sup>" for line in lines)  # none where the title names the model
    return {"text": f"{heading}{model}", "x": 0.0, "xanchor": "left"}


def _look() -> dict:
    """The layout every figure starts from (its own values win, ``_merged``)."""
    axis = {"ticks": "", "tickcolor": GRID_COLOUR, "gridcolor": GRID_COLOUR, "zerolinecolor": GRID_COLOUR,
            "zerolinewidth": 2, "automargin": True, "tickfont": {"color": TEXT_COLOUR},
            "title": {"font": {"color": TEXT_COLOUR}}}
    return {
        "font": {"family": FONT_FAMILY, "color": TEXT_COLOUR},
        "title": {"font": {"family": FONT_FAMILY, "color": HEADING_COLOUR, "weight": "bold"}, "pad": {"l": 4}},
        "paper_bgcolor": BACKGROUND, "plot_bgcolor": BACKGROUND, "colorway": list(COLOURWAY),
        "hovermode": "closest", "autotypenumbers": "strict",  # a token "1" stays a category
        "hoverlabel": {"bgcolor": BACKGROUND, "bordercolor": BORDER_COLOUR, "align": "left",
                       "font": {"family": FONT_FAMILY, "color": TEXT_COLOUR}},
        "legend": {"font": {"color": LEGEND_COLOUR}, "bordercolor": "rgba(0,0,0,0)", "borderwidth": 0, "valign": "top"},
        "margin": {"pad": 8},
        "xaxis": _merged(axis, {"showgrid": False, "zeroline": False, "title": {"standoff": TITLE_STANDOFF["x"]}}),
        "yaxis": _merged(axis, {"showgrid": True, "zeroline": True, "title": {"standoff": TITLE_STANDOFF["y"]}}),
    }


def _merged(base: dict, top: dict) -> dict:
    """``top`` over ``base``, nested dicts merged key by key."""
    out = dict(base)
    for key, value in top.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


PLAIN_ARRAY_MAX = 4096  # numbers in one array sent as a JSON list (see _plain)


def _plain(value):
    """``value`` (a trace as Plotly's JSON dict, or a part of one) with its NumPy arrays of
    up to ``PLAIN_ARRAY_MAX`` numbers as plain lists.

    Plotly writes NumPy arrays as base64 typed arrays, which ``Plotly.react`` decodes anew
    on each call and so always counts as changed; plain arrays under an unchanged
    ``layout.datarevision`` count as unchanged, and the chart is drawn once. Larger arrays
    (the attention model view's grid) stay typed: as text they would be several times the
    size to send."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray) and value.size <= PLAIN_ARRAY_MAX:
        return value.tolist()
    return value


def _data_revision(data: list[dict]) -> str:
    """A fingerprint of the traces' contents: ``layout.datarevision``, so that Plotly skips
    comparing data arrays when a figure is handed to it again unchanged, and compares them
    whenever the data differ."""
    h = hashlib.blake2b(digest_size=8)
    for trace in data:
        for name, value in sorted(trace.items()):
            h.update(name.encode())
            if isinstance(value, np.ndarray) and value.dtype != object:
                h.update(f"{value.dtype}{value.shape}".encode())
                h.update(np.ascontiguousarray(value).tobytes())
            else:  # lists, texts, settings (an array's repr would leave out the middle of a long one)
                h.update(repr(value.tolist() if isinstance(value, np.ndarray) else value).encode())
    return h.hexdigest()


MAX_HEIGHT = 1400  # px: a figure no taller than about a screen and a half


def _figure(traces: list, title: str, model_label: str, projector: bool, margin_top: int = 0,
            margin_right: int = 10, numeric_axes: Sequence[str] = (), plot_height: int = 0,
            width: float = 1.0, **layout) -> go.Figure:
    """The figure of ``traces`` with the common layout (title and model line, type sizes,
    margins, the look of ``_look``) plus ``layout``, built in one go: each
    ``update_layout`` / ``update_xaxes`` / ``add_shape`` on a built figure goes through
    Plotly's batch-update machinery again (it would be most of a figure's build time). Margins
    fit the tick labels (``_fit_margins``; ``numeric_axes`` names the axes whose ticks are
    numbers); ``plot_height``: the least height of the plot between the margins (the
    figure grows to hold it, up to ``MAX_HEIGHT``; never less than the y axis title's
    length, nor half the look's height where values are read off the y axis); ``width``:
    the share of the page's chart width the figure gets (a column's), for wrapping its
    title. Small arrays go as
    plain lists and the layout carries a ``datarevision`` (``_plain``, ``_data_revision``),
    so that the browser draws the figure once."""
    s = style(projector)
    head = _title(title, model_label, projector, width)
    head["font"] = {"size": s["title"]}
    n_lines = max(head["text"].count("<br>"), 1)  # a title without a model line keeps that line's room
    layout = {
        "title": head,
        "font": {"size": s["font"]},
        "height": s["height"],
        "margin": {"l": 10, "r": margin_right, "t": s["top"] + s["title_line"] * (n_lines - 1) + margin_top, "b": 10},
        "legend": {"font": {"size": s["font"]}},
        "hoverlabel": {"font": {"size": s["hover"]}},
    } | layout
    # Axis titles and the legend at the page's type size: Streamlit's chart theme would
    # otherwise keep them small (in projector mode too).
    for axis in ("xaxis", "yaxis"):
        ax = dict(layout.get(axis) or {})
        title = ax.get("title") or {}
        title = {"text": title} if isinstance(title, str) else dict(title)
        ax["title"] = {**title, "font": {"size": s["font"]}}
        layout[axis] = ax
    layout["legend"] = {"font": {"size": s["font"]}} | dict(layout.get("legend") or {})
    _fit_margins(layout, traces, s, numeric_axes)
    y_title = layout["yaxis"]["title"].get("text")
    if y_title and layout["yaxis"].get("visible", True):
        # the y axis's title runs along the plot's side: no longer than the plot is high
        plot_height = max(plot_height, math.ceil(text_width(y_title, s["font"]) + 2 * s["font"]))
    if "y" in numeric_axes:  # values read off a y axis: a plot of half the look's height at least,
        # whatever the labels and the legend below it take (380 px under a projector's depth chart)
        plot_height = max(plot_height, s["height"] // 2)
    if plot_height:
        m = layout["margin"]
        layout["height"] = min(max(layout["height"], m["t"] + m["b"] + plot_height), MAX_HEIGHT)
    return _assembled([_plain(trace.to_plotly_json()) for trace in traces], layout)


def _assembled(data: list[dict], layout: dict) -> go.Figure:
    """The figure of ``data`` (traces as plain JSON dicts) under ``layout`` on the common look,
    with its ``datarevision``.

    The traces were validated as they were built; as JSON dicts with plain lists they go
    into the figure unvalidated, with the layout: validating the lists and the look again
    cost more than building the figure (tests/test_figures.py puts every kind of figure
    through Plotly's validated path and compares)."""
    layout["datarevision"] = _data_revision(data)
    fig = go.Figure(data=data, layout=_merged(_look(), layout), _validate=False)
    # The look is in the layout: no template (Plotly adds its default one). Assigning None
    # removes a property only where the layout validates (Plotly's switch, as in go.Figure).
    fig.layout._validate = True
    fig.layout.template = None
    return fig


def plain_text(text: str) -> str:
    """A Plotly label as a person reads it: tags (``<sup>``, ``<br>``...) dropped, HTML
    entities turned back into characters."""
    return html.unescape(re.sub(r"<[^>]+>", "", text))


# The toolbar camera's PNG: this wide whatever the chart's width on the screen, as high as
# the figure, at twice the resolution. The figures are laid out for a plot ``PLOT_WIDTH``
# wide and up, so a wider image only has room to spare.
EXPORT_WIDTH = 1200  # px


EXPORT_SCALE = 2


def title_of(fig: go.Figure) -> str:
    """The figure's title as text (its lines joined; the model line below it, in ``<sup>``,
    is left out)."""
    lines = (fig.layout.title.text or "").split("<br>")
    return plain_text(" ".join(line for line in lines if not line.startswith("<sup>")))


def file_name(text: str) -> str:
    """A safe file name from a figure's title: 'Cosine of A "bank"…' -> 'cosine-of-a-bank'."""
    slug = re.sub(r"[^\w]+", "-", text.casefold(), flags=re.ASCII).strip("-")
    return slug[:60].rstrip("-") or "figure"


def export_config(fig: go.Figure, name: str = "figure") -> dict:
    """Plotly's ``config`` for ``fig``, on a page or in the report: no Plotly logo link (it
    would leave the app), and the toolbar's camera saves a PNG ``EXPORT_WIDTH`` px wide and
    as high as the figure, at ``EXPORT_SCALE`` times that, named after its title (``name``
    for a figure without one). Plotly draws that image in the browser, so it works offline;
    it draws the figure again at that size, and the image sees the computer's fonts, not the
    page's web font (Source Sans): the layouts keep room for a wider font (``text_width``)."""
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": "png", "filename": file_name(title_of(fig) or name),
                                     "width": EXPORT_WIDTH, "height": fig.layout.height, "scale": EXPORT_SCALE}}


def text_width(text: str, size: float) -> float:
    """A generous estimate of ``text``'s width in pixels at font ``size``: the widest line
    of a Plotly label (``<br>`` breaks lines, tags are dropped, entities are one character),
    in the page's Source Sans or in a wider font a PNG export falls back to (DejaVu Sans,
    ``export_config``)."""

    def em(ch: str) -> float:
        if unicodedata.east_asian_width(ch) in "WF" or ord(ch) > 0xFFFF:
            return 1.15  # CJK, emoji
        if ch in "mW@%":
            return 1.0
        if ch.isupper() or ch in "wM#&":
            return 0.85
        if ch in "ijlft.,:;'|!()[] ":
            return 0.4
        return 0.62

    lines = re.split(r"<br\s*/?>", text)
    return size * max(sum(em(c) for c in plain_text(line)) for line in lines)


PLOT_WIDTH = 560  # px: about the narrowest plot area of a full-width chart on a laptop


TITLE_STANDOFF = {"x": 20, "y": 24}  # px between an axis's tick labels and its title


# A PNG export draws the labels in a font up to a quarter wider than the page's Source Sans
# (DejaVu Sans: 1.18-1.28 times as wide in Chromium), at the places Plotly worked out from
# their width as measured on the page: an axis title stands this share of its labels'
# ``text_width`` further off, so that the wider labels stay clear of it.
WIDER_FONT = 0.25


TICK_ANGLES = (0, 30, 45, 60, 90)  # degrees, counter-clockwise: the least that keeps x labels apart


TICK_GAP = 12  # px between two x labels side by side


def _fit_margins(layout: dict, traces: list, s: dict, numeric_axes: Sequence[str]) -> None:
    """Margins worked out here from the tick labels, with Plotly's automargin off.

    With automargin on, Plotly measures every tick label in the browser and, when the
    margins it finds differ from the ones it drew with, draws the whole chart again: up to
    half of a chart's drawing time in Chromium. Axes with ``ticktext`` use their labels,
    ``numeric_axes`` a number's width;
    any other axis keeps automargin. A horizontal legend sits in the bottom margin (container
    coordinates), which grows to hold it.

    Everything is laid out for a plot ``PLOT_WIDTH`` wide, and holds in wider ones (the
    camera's ``EXPORT_WIDTH``) and in a wider font (``WIDER_FONT``): x labels turned by the
    figure's own angle (``_tick_angle``; Plotly, turning them as they fit the chart on the
    screen, leaves them flat in a wider image, where the wider font runs them together),
    legend entries of a fixed width (as Plotly measures them on the page, the legend cuts
    them in the wider font and draws them over each other).
    """
    margin, font, tick = layout["margin"], s["font"], s["tick"]
    title_room = _title_room(s)

    def labels(axis: str) -> list[str] | None:
        ax = layout[axis]
        if ax.get("visible", True) is False:
            return None
        if "ticktext" in ax:
            return [str(t) for t in ax["ticktext"]] or ["0"]
        return ["-0.25"] if axis[0] in numeric_axes else None

    y_labels = labels("yaxis")
    if y_labels is not None:
        ay, titled = layout["yaxis"], bool(layout["yaxis"]["title"].get("text"))
        if titled:
            ay["title"]["standoff"] = TITLE_STANDOFF["y"] + math.ceil(WIDER_FONT * _widest(y_labels, tick))
        margin["l"] = max(margin["l"], _left_margin(y_labels, s, titled))
        ay["automargin"] = False
    x_labels = labels("xaxis")
    bottom = margin["b"]
    if x_labels is not None:
        ax = layout["xaxis"]
        widths = [text_width(t, tick) for t in x_labels]
        lines = max(t.count("<br>") + 1 for t in x_labels)
        flat = lines * tick * 1.3
        if "tickangle" not in ax:
            ax["tickangle"] = -_tick_angle(widths, flat, _tick_gaps(ax, len(x_labels)))
        angle = math.radians(abs(ax["tickangle"]))
        if angle:
            # counter-clockwise, each label ending at its tick: turned clockwise (Plotly's
            # default) the last one reached past the chart's right edge and Plotly hid it,
            # the top layer's name of a 13-layer BERT in projector mode
            margin["l"] = max(margin["l"], math.ceil(widths[0] * math.cos(angle) + 4))
            depth = max(widths) * math.sin(angle)
            height = max(flat, depth + flat * math.cos(angle))
        else:
            # the end labels are centred on the first and last ticks: Plotly hides one that
            # would reach past the chart's edge
            margin["r"] = max(margin["r"], math.ceil(widths[-1] / 2 + 4))
            margin["l"] = max(margin["l"], math.ceil(widths[0] / 2 + 4))
            depth, height = 0.0, flat
        below = 0
        if "y" in numeric_axes:
            # below the lowest y label, which is centred on the axis line: the first x label
            # can reach left under it (Plotly places the axis title as if it were not moved)
            below = ax["ticklabelstandoff"] = math.ceil(tick * 0.6)
        extra = below + math.ceil(WIDER_FONT * depth)  # turned labels grow downwards in a wider font
        if ax["title"].get("text"):
            ax["title"]["standoff"] = TITLE_STANDOFF["x"] + extra
        bottom = max(bottom, math.ceil(height + 12 + (title_room + extra if ax["title"].get("text") else below)))
        ax["automargin"] = False
    legend = layout.get("legend", {})
    if layout.get("showlegend") and legend.get("orientation") == "h":
        names = [t.name for t in traces if getattr(t, "name", None) and t.showlegend is not False]
        # every entry as wide as the widest name's estimate (Plotly: 40 px for the symbol, 5 between entries)
        legend["entrywidth"] = math.ceil(_widest(names or [""], font))
        per_row = max(1, int(PLOT_WIDTH // (legend["entrywidth"] + 45)))
        rows = math.ceil(len(names) / per_row) if names else 0
        legend.update({"yref": "container", "y": 0, "yanchor": "bottom", "x": 0, "xanchor": "left"})
        bottom += math.ceil(rows * font * 1.6 + 8)
    margin["b"] = bottom


def _widest(texts: Sequence[str], size: float) -> float:
    return max(text_width(t, size) for t in texts)


def _tick_gaps(ax: dict, n: int) -> list[float]:
    """The px between neighbouring x ticks on a plot ``PLOT_WIDTH`` wide: the axis's range,
    or its ticks and half a step beyond each end (where Plotly pads them less)."""
    ticks = [float(v) for v in ax.get("tickvals", range(n))]
    low, high = ax.get("range") or (min(ticks) - 0.5, max(ticks) + 0.5)
    px = PLOT_WIDTH / max(abs(high - low), 1e-9)
    return [(b - a) * px for a, b in zip(ticks, ticks[1:])]


def _tick_angle(widths: Sequence[float], height: float, gaps: Sequence[float]) -> int:
    """The least of ``TICK_ANGLES`` at which x labels ``widths`` px wide and ``height``
    high, ``gaps`` px apart, keep clear of each other: side by side, each pair's halves
    and ``TICK_GAP`` within their gap; turned by an angle, the labels are parallel strips
    ``gap * sin(angle)`` apart, whatever their widths."""
    for angle in TICK_ANGLES:
        if angle == 0:
            if all((a + b) / 2 + TICK_GAP <= g for a, b, g in zip(widths, widths[1:], gaps)):
                return 0
        elif all(g * math.sin(math.radians(angle)) >= height + 2 for g in gaps):
            return angle
    return TICK_ANGLES[-1]


def number_width(text: str) -> float:
    """The width of a printed number in ems of the figures' font (Source Sans: digits 0.5 em,
    "." 0.26, "-" 0.33, as Chromium measures them), for text that must fit a cell, where
    ``text_width``'s generous estimate would shrink it for nothing."""
    return sum(0.5 if c.isdigit() else 0.26 if c == "." else 0.33 if c == "-" else 0.62 for c in text)


def _title_room(s: dict) -> float:
    """The room an axis title takes beside its tick labels."""
    return s["font"] * 1.4 + 8


def _left_margin(y_labels: Sequence[str], s: dict, titled: bool) -> int:
    """The left margin that holds the y tick labels (and the axis title, if any, that far
    further off as the labels may grow in a wider font: ``WIDER_FONT``)."""
    width = _widest(y_labels, s["tick"])
    return math.ceil(width + 12 + ((_title_room(s) + math.ceil(WIDER_FONT * width)) if titled else 0))


# px: a full-width chart on a 1280-px laptop with the sidebar open (Streamlit's wide
# layout; 820 measured in Chromium); a wider screen only has room to spare
CHART_WIDTH = 800
