"""The boot of every script run (app.py): once per server, the warm-up and the memory
sweeper start; on a session's first run of a cold server, the browser starts fetching
Plotly's code while the page imports; whatever the page raises shows the app's message."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import streamlit as st

from ui import imports


@contextlib.contextmanager
def boot() -> Iterator[None]:
    """Run the page (the ``with`` block) on a booted server.

    Plotly's figure classes are imported whole first (quick, no pandas): the preload's
    chart needs them, and pandas must come after it, one session at a time (``imports``).
    """
    imports.import_serially("ui.charts")
    from ui import charts

    preload = None
    # a session's first run on a cold server: its browser has no chart code yet, and the
    # page's imports take seconds it can use (a later run of the session, or a warm server,
    # sends none)
    if "tensorflow" not in sys.modules and not st.session_state.get("_lab_preloaded"):
        st.session_state["_lab_preloaded"] = True
        # before pandas (slower to import), so that the browser starts fetching Plotly's code that
        # much sooner; as an import: its table imports pandas, which Plotly must never find
        # half-built
        preload = imports.serially(charts.preload)
    imports.import_serially("pandas", "ui.server.warmup", "ui.pages")
    from ui import errors, state
    from ui import memory
    from ui.server import warmup

    warmup.keep_kernel_cache()  # TensorFlow's kernels outlive a script run (Streamlit would clear them)
    warmup.start()  # once per server: load and compile the models, in the background
    memory.start()  # once per server: closed tabs' sessions swept out, their memory given back
    state.rerun_after_reconnect()  # a tab whose session has gone gets its view back, and its clicks work
    try:
        with errors.guard():  # a page that fails shows the app's message; the log keeps the traceback
            yield
    finally:
        if preload is not None:
            preload.empty()  # the page has been drawn: the hidden box has done its work
        warmup.first_page_done()  # the warm-up goes on once the first page has been answered
