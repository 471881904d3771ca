"""Imports on a fresh server: whole, one thread at a time, and before a page's own.

Each page calls ``before_page()`` first, before its other imports: those take seconds on a
fresh server, and done there that time overlaps with the browser fetching Plotly's code
(``ui.charts.preload``, started by ``ui.server.boot``) instead of coming before it. The
modules every page imports (``PAGE_MODULES``) leave TensorFlow out (seconds to import):
the home page needs none, and the BERT page draws a stored run without it
(``ui.model_cache.LazyModel``). A page that needs a model module at its top names it
(``before_page(*MODEL_MODULES)``); loading a model imports them first (``ui.model_cache.load``).

On a fresh server several sessions (a class opening the link at once) run those imports at
the same moment, with the warm-up thread, and a module one thread is still importing is
already in ``sys.modules`` for the others: Plotly looks pandas up there without importing
it (``get_module(..., should_load=False)``) and, finding it half-built, fails with
"partially initialized module 'pandas' has no attribute 'Series'"; two threads importing
modules that import each other can also be handed each other's half-built module
(``tests/test_cold_start.py`` opens eight sessions of a fresh server at once).
``import_serially`` imports modules whole, one thread at a time: the boot imports pandas
and the app's modules before its first figure, each page the pages' modules before its own
import lines, the warm-up the same before it starts.
"""

from __future__ import annotations

import importlib
import threading

# What the pages import at their top, without TensorFlow (tests/test_imports_serially.py keeps this
# list complete and TensorFlow-free) ...
PAGE_MODULES = (
    "pandas", "plotly.graph_objects",
    "lab.analysis", "lab.elmo_vs_bert", "lab.figures", "lab.models", "lab.quiz", "lab.senses", "lab.sources",
    "lab.stored",
    "lab.tokenize", "lab.vectors", "lab.views",
    "ui.charts", "ui.clicks", "ui.frame", "ui.model_cache", "ui.pages", "ui.quiz_gate", "ui.state", "ui.text",
)
# ... and what running a model imports (TensorFlow and the model families).
MODEL_MODULES = (
    "tensorflow", "lab.wordpiece", "lab.models.bert_serving", "lab.models.bert", "lab.models.bert_io",
    "lab.models.elmo_io", "lab.models.transformer",
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


def before_page(*modules: str) -> None:
    """Import the pages' modules and ``modules`` (``import_serially``; a few dictionary
    lookups once they are loaded). Every page calls it before its own imports."""
    import_serially(*PAGE_MODULES, *modules)
