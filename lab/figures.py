"""Plotly figure builders: arrays in, ``go.Figure`` out. No Streamlit here.

Every figure names the model that produced it (a line under the title) and escapes
every text that came from a person (tokens are shown as text, never as HTML). Token axes
are numeric positions with tokens as tick labels, so a repeated token ("the" twice) keeps
its own row and column, and a clicked cell maps back to a position.

``projector=True`` is the classroom style: large type, thick lines, high-contrast,
colour-blind-safe colour scales.
"""

from __future__ import annotations

import hashlib
import html
import math
import re
import textwrap
import unicodedata
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import plotly.graph_objects as go

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")


OUTLINE = OKABE_ITO[1]  # the selection's outline (vermilion)
USE_MAP_SPAN = 0.5  # the least width of a use map's axes, in unit-vector distances
USES = "#8C8C8C"  # the corpus's uses of a word (use_map_chart): a neutral grey beside the selected uses' colours
# The ELMo vs BERT page's colours (and the report's), one meaning each in every chart there:
# a model's colour marks its lines and, in its use map and its row of the sense strip, your
# two uses of the word; the sense pairs and chance have colours of their own; sentence A and
# B are told apart by a letter beside the mark, never by a colour. Indices into OKABE_ITO.
MODEL_COLOURS = {"bert": 0, "elmo": 1}
PAIR_COLOURS = {"same sense": 2, "different sense": 3}  # the sense pairs of the sense strip
CHANCE_COLOUR = 7
# A use map's senses (use_map_chart): the named senses', most frequent first, then "other sense"
# (Paul Tol's "muted" scheme, colour-blind safe and none of the models' Okabe-Ito colours);
# the uses whose sense is not known keep USES
SENSE_COLOURS = ("#332288", "#DDCC77", "#882255", "#999933", "#44AA99")
SENSE_CHARS = 40  # the most characters of a sense's gloss in a use map's legend


def outline_width(projector: bool = False) -> float:
    """The selection outline's width in pixels: a line's width and one more."""
    return style(projector)["line"] + 1


def style(projector: bool) -> dict:
    """Sizes and colour scales for the normal and the projector look."""
    if projector:
        return {"font": 22, "title": 26, "tick": 20, "line": 6, "marker": 14, "cell_text": 18,
                "scale": "Cividis", "diverging": "PuOr", "attention": "Cividis", "height": 560,
                "title_chars": 70, "top": 96, "title_line": 46, "click_marker": 22, "colorbar": 24,
                "cell_text_min": 13, "strip_row": 120, "hover": 20}
    return {"font": 13, "title": 16, "tick": 12, "line": 2.5, "marker": 8, "cell_text": 11,
            "scale": "Viridis", "diverging": "RdBu", "attention": "Blues", "height": 420,
            "title_chars": 120, "top": 70, "title_line": 22, "click_marker": 16, "colorbar": 14,
            "cell_text_min": 8, "strip_row": 90, "hover": 12}


def label(text: str) -> str:
    """A person's text made safe for Plotly's HTML-like labels."""
    return html.escape(str(text), quote=False)


TICK_CHARS = 20


def tick_label(text: str) -> str:
    """A token as an axis label: cut to ``TICK_CHARS`` characters with an ellipsis, so one
    long word cannot take the chart's width (the hover shows it whole)."""
    text = str(text)
    return text if len(text) <= TICK_CHARS else text[: TICK_CHARS - 1] + "…"


def _title(title: str, model_label: str, projector: bool = False, width: float = 1.0) -> dict:
    # The model line is the caption every view must carry: wrap it to the figure's width
    # (fewer characters fit a line in projector type, or in a chart given ``width``, a
    # share of the page's chart width) rather than cut it off; the title too, in its
    # larger type.
    chars = int(style(projector)["title_chars"] * width)
    heading = "<br>".join(label(line) for line in textwrap.wrap(title, width=int(chars * 0.65)))
    lines = textwrap.wrap(f"Model: {model_label}", width=chars)[:3]
    model = "<br>".join(f"<sup>{label(line)}</sup>" for line in lines)
    return {"text": f"{heading}<br>{model}", "x": 0.0, "xanchor": "left"}


# The charts' look, as plain layout values: what Streamlit's light chart theme made of
# Plotly's "plotly_white" template on this app's figures (Streamlit 1.67, read back from
# the drawn charts). The figures carry it themselves, with no template, and are shown with
# ``theme=None``: Streamlit's chart element hands Plotly a JSON copy of every new figure
# right after drawing it (its theme step), and a template, a themed title or a base64
# typed array in that copy makes ``Plotly.react`` draw the whole chart a second time.
FONT_FAMILY = '"Source Sans", sans-serif'
TEXT_COLOUR, HEADING_COLOUR, LEGEND_COLOUR = "#808495", "#2F2D2B", "#262730"
GRID_COLOUR, BORDER_COLOUR, BACKGROUND = "#e6eaf1", "#DCD8D4", "#FFFFFF"
COLOURWAY = ("#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880", "#FF97FF", "#FECB52")


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
    n_lines = head["text"].count("<br>")
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
    # The traces were validated as they were built; as JSON dicts with plain lists they go
    # into the figure unvalidated, with the layout: validating the lists and the look again
    # cost more than building the figure (tests/test_figures.py puts every kind of figure
    # through Plotly's validated path and compares).
    data = [_plain(trace.to_plotly_json()) for trace in traces]
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
    margins it finds differ from the ones it drew with, draws the whole chart again: about
    half of a chart's drawing time in Chromium (a line chart draws in 52 ms instead of 80, a
    token heatmap in 84-105 ms instead of 160-200, with Plotly.newPlot on this app's
    figures). Axes with ``ticktext`` use their labels, ``numeric_axes`` a number's width;
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
            line={"color": "#222222", "width": s["line"] + 1}, hovertemplate="%{text}: baseline %{y:.3f}<extra></extra>"))
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


@dataclass(frozen=True)
class DepthLine:
    """One line of a ``depth_chart``: values at layers placed by relative depth."""

    name: str
    layer_names: Sequence[str]
    depth: Sequence[float]  # 0 = input layer, 1 = top layer
    values: Sequence[float]
    colour: int = 0  # index into OKABE_ITO: one colour per model
    dashed: bool = False  # a baseline


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
        traces.append(go.Scatter(
            x=x, y=y, name=label(line.name), mode="lines+markers", text=names,
            line={"width": s["line"] * (0.7 if line.dashed else 1), "color": OKABE_ITO[line.colour % 8],
                  "dash": "dash" if line.dashed else "solid"},
            marker={"size": s["marker"] * (0.6 if line.dashed else 1)},
            hovertemplate="%{text} (depth %{x:.2f}): %{y:.3f}<extra>" + label(line.name) + "</extra>",
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
    baseline-adjusted. ``curves``: (colour, ``lab.compare.ModelCurve``) per model."""
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
    relative-depth axis. ``tests``: (colour, ``lab.compare.SenseTest``) per model."""
    lines = [DepthLine(f"{t.short_label}: ROC AUC", t.layer_names, t.depth, t.auc, colour) for colour, t in tests]
    ends = [tests[0][1].layer_names[0], tests[0][1].layer_names[-1]]  # named as the layers there: no tick of its own
    lines.append(DepthLine("chance", ends, [0.0, 1.0], [0.5, 0.5], CHANCE_COLOUR, dashed=True))
    n = len(tests[0][1].labels)
    return depth_chart(lines, f"Same or different sense? ROC AUC per layer over {n} sentence pairs", model_label,
                       projector, y_title="ROC AUC", y_range=(0.0, 1.05))


def use_map_chart(m, hover: Sequence[tuple[str, str, str]], texts: tuple[str, str], title: str, model_label: str,
                  projector: bool = False, width: float = 1.0, colour: int = 0) -> go.Figure:
    """A ``lab.compare.UseMap``: the corpus's uses of a word as dots coloured by their sense
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
    return _figure(traces, title, model_label, projector, showlegend=True, legend={"orientation": "h"},
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
