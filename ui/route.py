"""The first request of a server goes through app.py's navigation, before any page imports.

Streamlit starts in its older folder mode when a ``pages/`` folder sits beside the entry
file, and stays there until some run calls ``st.navigation``: if the very first request
of a server is a link to a page (``/bert?a=...``), Streamlit runs that page's file alone,
without the app's navigation and page config. ``through_app`` leaves that mode and
reruns; the rerun executes app.py, whose navigation resolves the same URL path to the page.

Each page calls it first, before its other imports: those import TensorFlow (about 6 s on
the 2-core machine), and done in app.py's run instead, that time overlaps with the browser
fetching Plotly's code (``ui.charts.preload``) and with the models loading in the
background (``ui.warmup``), instead of coming before both.
"""

from __future__ import annotations

import streamlit as st


def through_app() -> None:
    """Leave Streamlit's folder mode and rerun through app.py (only ever on a server's
    first run, when that run is a page's own file)."""
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
