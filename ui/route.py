"""The first request of a server goes through app.py's navigation, before any page imports.

Streamlit starts in its older folder mode when a ``pages/`` folder sits beside the entry
file, and stays there until some run calls ``st.navigation``: if the very first request
of a server is a link to a page (``/bert?a=...``), Streamlit runs that page's file alone,
without the app's navigation and page config. ``through_app`` leaves that mode and
reruns; the rerun executes app.py, whose navigation resolves the same URL path to the page.

Each page calls it first, before its other imports: those take seconds on a fresh server,
and done in app.py's run instead, that time overlaps with the browser fetching Plotly's
code (``ui.charts.preload``) instead of coming before it. The modules every page imports
(``PAGE_MODULES``) leave TensorFlow out (5-9 s to import on the 2-core machines): the home
page needs none, and the BERT page draws a stored run without it (``ui.models.LazyModel``).
A page that needs a model module at its top names it (``through_app(*MODEL_MODULES)``);
loading a model imports them first (``ui.models.load``).

On a fresh server several sessions (a class opening the link at once) run those imports
at the same moment, with the warm-up thread, and a module one thread is still importing
is already in ``sys.modules`` for the others: Plotly looks pandas up there without
importing it (``get_module(..., should_load=False)``) and, finding it half-built, fails
with "partially initialized module 'pandas' has no attribute 'Series'" (without
``import_serially``, 1 to 6 of 8 sessions opening pages of a fresh server at once); two
threads importing modules that import each other can also be handed each other's
half-built module. ``import_serially`` imports modules whole, one thread at a time:
app.py imports pandas and its own modules so before its first figure, each page the
pages' modules before its own import lines, the warm-up the same before it starts.
"""

from __future__ import annotations

import importlib
import threading

import streamlit as st

# What the pages import at their top, without TensorFlow (tests/test_route.py keeps this
# list complete and TensorFlow-free) ...
PAGE_MODULES = (
    "pandas", "plotly.graph_objects",
    "lab.analysis", "lab.compare", "lab.figures", "lab.models", "lab.quiz", "lab.senses", "lab.sources", "lab.stored",
    "lab.tokenize", "lab.views",
    "ui.charts", "ui.clicks", "ui.frame", "ui.models", "ui.pages", "ui.quiz", "ui.state",
)
# ... and what running a model imports (TensorFlow and the model families).
MODEL_MODULES = (
    "tensorflow", "lab.wordpiece", "lab.models.bert", "lab.models.elmo_io", "lab.models.transformer",
)
_IMPORTING = threading.Lock()


def import_serially(*names: str) -> None:
    """Import ``names`` (default: ``PAGE_MODULES``), one thread at a time: a thread that
    finds another importing waits, then finds every module whole in ``sys.modules``."""
    with _IMPORTING:
        for name in names or PAGE_MODULES:
            importlib.import_module(name)


def serially(call):
    """``call()`` while no other thread imports through ``import_serially`` (for a first
    figure that may import pandas, before the modules are whole)."""
    with _IMPORTING:
        return call()


def through_app(*modules: str) -> None:
    """Leave Streamlit's folder mode and rerun through app.py (only ever on a server's
    first run, when that run is a page's own file); then import the pages' modules and
    ``modules`` (``import_serially``; a few dictionary lookups once they are loaded)."""
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
    import_serially(*PAGE_MODULES, *modules)
