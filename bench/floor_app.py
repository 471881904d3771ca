"""The floor page of ``bench/click_floor.py``: what a click costs in this stack alone.

The BERT page's sidebar sentence, its word pills and its per-layer chart, built by the same
code (``lab.figures.layer_curve`` through ``ui.charts.show``, in a fragment as there),
served with the app's ``.streamlit/config.toml``, and nothing else: no model (each word's
curve is made up from its text), no other element. A click here is Streamlit's round trip
and Plotly's redraw of one chart, and a link opened here (``?a=`` sets the sentence) is
Streamlit's start in a new tab with Plotly's code and one chart: the app's pages cannot
answer faster on the same machine.

    streamlit run bench/floor_app.py   (from the repository root)
"""

from __future__ import annotations

import zlib

import numpy as np
import streamlit as st

from lab import figures
from lab.tokenize import DEFAULT_A
from lab.vectors import INPUT_LAYER
from ui import charts

LAYERS = [INPUT_LAYER] + [f"layer {i}" for i in range(1, 7)]  # as the embedded BERT's: the input layer and 6

st.set_page_config(page_title="Context Lab: floor page", layout="wide")
with st.sidebar:
    # a shared link's sentence (``?a=``), as the app's pages take it
    words = st.text_area("Sentence A", st.query_params.get("a", DEFAULT_A), height=80).split() or ["(empty)"]


def curve(word: str) -> np.ndarray:
    """A cosine per layer, the same for the same word: falling from 1, as a word's does."""
    rng = np.random.default_rng(zlib.crc32(word.encode()))
    return np.round(1.0 - np.cumsum(rng.uniform(0.0, 0.12, len(LAYERS))), 4)


@st.fragment
def pick_and_draw() -> None:
    # the last word selected at first: a new sentence changes the chart (its last word does)
    i = st.pills("Word in sentence A", list(range(len(words))), format_func=words.__getitem__,
                 selection_mode="single", default=len(words) - 1)
    word = words[-1 if i is None else i]
    fig = figures.layer_curve(LAYERS, {f'A "{word}"': curve(word)}, "Cosine similarity at every layer",
                              "floor page (no model)", False)
    charts.show(fig, key="floor_curve")


st.title("Floor page")
pick_and_draw()
