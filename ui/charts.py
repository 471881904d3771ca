"""What leaves the app: every chart goes through ``show`` (one place for the Plotly
toolbar), and a run's vectors download through ``vectors_button``. Tables download as CSV
from the button under each (``ui.frame.show_table``); the grid's own toolbar offers no
download (``client.disableDataExport`` in ``.streamlit/config.toml``).

The toolbar's camera button saves the figure as a PNG of one size for all figures, named
after the figure's title (``figures.export_config``); the Plotly logo link is left out.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from lab import figures


def show(fig: go.Figure, key: str, **kwargs):
    """``st.plotly_chart`` with the app's toolbar (``figures.export_config``: the camera's PNG
    named after the figure's title, or ``key``); ``kwargs`` as for ``st.plotly_chart``
    (``on_select``, ``selection_mode``...). The figures carry their own look
    (``figures.layout._look``) and are shown without Streamlit's chart theme, which the browser
    applies to a copy of each new figure after drawing it: Plotly then drew every new chart
    a second time. A heatmap's printed values are fitted to the chart's width as drawn
    (``fit_cell_text``)."""
    fit = figures.cell_text_fit(fig)
    if fit is not None:
        fit_cell_text(key, fit)
    return st.plotly_chart(fig, key=key, config=figures.export_config(fig, key), theme=None, **kwargs)


def fit_cell_text(chart_key: str, fit: dict) -> None:
    """Keep the values printed in the heatmap shown under ``chart_key`` inside their cells
    at whatever width the browser gives the chart (``figures.cell_text_fit``): the figure's
    size where there is room, smaller where the chart is narrower than the figure was sized
    for (a 1024-px projector with the sidebar open, a phone), and no values where they
    would be smaller than the look's least legible size (the colours and the hover still
    give each). A style rule (``_rule``): the chart's element is a size container, and the
    text's size a ``calc`` of its width (``cqw``), so nothing is sent again as it changes."""
    sel, k = f".st-key-{chart_key}", fit["columns"] * fit["widest"]
    fitting = f"calc((100cqw - {fit['margins']}px) / {k:.4f} - {fit['pad'] / fit['widest']:.4f}px)"
    smallest = fit["margins"] + fit["columns"] * (fit["min"] * fit["widest"] + fit["pad"])  # chart width, px
    _rule(f"{chart_key}_fit", f"{sel} {{container-type: inline-size}} "
                              f"{sel} .heatmaplayer text {{font-size: min({fit['size']}px, {fitting}) !important}} "
                              f"@container (max-width: {smallest:.1f}px) "
                              f"{{{sel} .heatmaplayer text {{display: none}}}}")


def _rule(box_key: str, rule: str) -> None:
    """A page-wide style rule, written by a markdown element in a container keyed ``box_key``
    that takes no room."""
    with st.container(key=box_key):
        st.markdown(f"<style>.st-key-{box_key} {{display: none}} {rule}</style>", unsafe_allow_html=True)


MEMO_CELLS = 64 * 64  # larger maps are built each time: a 512 x 512 one holds about 107 MB


def cached_heatmap(z, *args, **kwargs) -> go.Figure:
    """``figures.heatmap``, built once for each input up to ``MEMO_CELLS`` cells: a click
    that leaves a map as it was (the A × B maps, the attention head view; the selection is
    outlined over the chart) finds its figure instead of building it again (a sizeable
    share of a click's server CPU)."""
    return _built("heatmap", z, *args, **kwargs)


def cached_attention_heatmap(attn, *args, **kwargs) -> go.Figure:
    """``figures.attention_heatmap``, built once for each input (as ``cached_heatmap``)."""
    return _built("attention_heatmap", attn, *args, **kwargs)


def _built(kind: str, cells, *args, **kwargs) -> go.Figure:
    if np.size(cells) > MEMO_CELLS:
        return getattr(figures, kind)(cells, *args, **kwargs)
    return _kept(kind, cells, *args, **kwargs)


# a resource: the figure itself, shared and never mutated (st.plotly_chart copies it)
@st.cache_resource(show_spinner=False, max_entries=64)
def _kept(kind: str, *args, **kwargs) -> go.Figure:
    return getattr(figures, kind)(*args, **kwargs)


def outline(chart_key: str, box: dict) -> None:
    """Outline ``box`` (``figures.outline_box``) over the chart shown under ``chart_key``.

    The box is a style rule on the chart's element (whose class names its key), written
    by a markdown element in a keyed container that takes no room: moving the selection
    changes this rule, and the chart, whose figure has not changed, is not drawn again.
    The box's sides are worked out by the browser from the chart's width (``calc``).
    """
    sel = f".st-key-{chart_key}"
    margins = f"{box['left']:.2f}px - {box['right']:.2f}px"
    left = f"calc({box['left']:.2f}px + (100% - {margins}) * {box['x0']:.6f})"
    right = f"calc({box['right']:.2f}px + (100% - {margins}) * {1 - box['x1']:.6f})"
    rule = (f"{sel} {{position: relative}} {sel}::after {{content: ''; position: absolute; "
            f"top: {box['top']:.2f}px; height: {box['height']:.2f}px; left: {left}; right: {right}; "
            f"border: {box['width']:.1f}px solid {box['color']}; box-sizing: border-box; pointer-events: none}}")
    _rule(f"{chart_key}_outline", rule)


PRELOAD_KEY = "lab_preload"


def preload():
    """A small chart and table in a box nobody sees (hidden by CSS, taking no room), for
    app.py to show on a cold server before the page's imports (TensorFlow's take seconds):
    meanwhile the browser fetches and compiles Plotly's code (megabytes, seconds of a fresh
    Chromium's main thread) and the table's (with Arrow's) and draws a first heatmap,
    markers and a line, work it would otherwise do
    after the page's data had arrived. The figure is plain data: nothing heavier than
    Streamlit is imported for it. Returns the box's slot, for ``slot.empty()`` once the
    page has been drawn."""
    fig = {
        "data": [
            {"type": "heatmap", "z": [[0.1, 0.9], [0.5, -0.3]], "texttemplate": "%{z:.2f}", "xgap": 1, "ygap": 1},
            {"type": "scatter", "x": [0, 1, 0, 1], "y": [0, 0, 1, 1], "mode": "markers",
             "marker": {"symbol": "square", "color": "rgba(0,0,0,0)"}},
            {"type": "scatter", "x": [0, 1], "y": [0.2, 0.8], "mode": "lines+markers"},
        ],
        "layout": {"title": {"text": "Context Lab<br><sup>loading</sup>"}, "height": 200,
                   "xaxis": {"tickvals": [0, 1], "ticktext": ["a", "b"]}, "yaxis": {"autorange": "reversed"}},
    }
    slot = st.empty()
    # cut to 1 px by its own height (a scrolling container) until the style below applies:
    # the browser loads the markdown element's code as it does Plotly's, and in about one
    # cold start of three Plotly's came first and showed the chart, 296 px high
    with slot.container(key=PRELOAD_KEY, height=1, border=False):
        # first in the box, so the browser applies it as the box appears (st.html's style
        # would wait for its own code to load): the box's wrapper out of the page's flow (no
        # gap above the page), the box at a chart's width but no height, invisible
        st.markdown(f"<style>:has(> .st-key-{PRELOAD_KEY}) {{position: absolute; width: 600px; height: 0; "
                    f"overflow: hidden; visibility: hidden; pointer-events: none}} .st-key-{PRELOAD_KEY} "
                    "{width: 600px}</style>", unsafe_allow_html=True)
        st.plotly_chart(fig, key=f"{PRELOAD_KEY}_chart", config={"displaylogo": False}, theme=None)
        st.dataframe({"token": ["a", "b"], "cosine": [0.5, -0.25]}, key=f"{PRELOAD_KEY}_table")
    return slot


def vectors_button(out, file_stem: str, key: str, label: str = "Download these vectors (.npz)",
                   model: str | None = None) -> None:
    """A button that downloads ``out`` (``LayerVectors``, or a function that returns them
    when the button is clicked) as ``.npz``: the contract of ``python -m lab export``
    (``lab.vectors.to_arrays``), built only when clicked. ``model``, when given, opens the
    tooltip (for a label that does not name it)."""
    from lab.vectors import npz_bytes

    get = out if callable(out) else lambda: out
    # on_click="ignore": a download changes nothing shown, so it runs no script. A rerun would
    # cost a page's CPU and end with Streamlit's sweep of unreferenced files, twice of which
    # (this rerun's and the next) delete the built file, unmapped, before a slow browser fetches it (a 404)
    st.download_button(label, data=lambda: npz_bytes(get()), file_name=f"{file_stem}.npz",
                       mime="application/octet-stream", key=key, icon=":material/download:", on_click="ignore",
                       help=(f"{model}'s vectors: " if model else "")
                       + "tokens (B, T), layers (N, B, T, C), mask, layer_names, model (and attentions, "
                         "input_word_ids for BERT): load with numpy.load(file).")
