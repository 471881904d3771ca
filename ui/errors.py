"""What a person sees when something in a page goes wrong: the app's own short message.

A page is often read off a projector by a room: Streamlit's own error box would show them
a traceback, the server's file paths and "Ask Google / Ask ChatGPT" buttons, none of which
they can act on. Code runs at two depths, and each runs it inside ``guard``: app.py runs
every page in it, ``ui.state.fragment`` every interactive section (a section's rerun does
not pass through app.py). The server's log keeps the whole traceback.

What escapes both (app.py's own lines, a widget's callback) reaches the server's handler
(``on_script_error``, serve.py), which reports it the same way; under a bare `streamlit run
app.py` it meets Streamlit's box with its details withheld (``client.showErrorDetails =
"none"`` in .streamlit/config.toml).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import streamlit as st

_LOG = logging.getLogger(__name__)

MESSAGE = ("Something went wrong while drawing this view. Reload the page, or change the "
           "sentences; the server log has the details.")


def report(exc: BaseException) -> None:
    """Log ``exc`` with its traceback and show the app's message where the page is drawing."""
    _LOG.error("a view failed; the page showed the app's message instead", exc_info=exc)
    st.error(MESSAGE, icon=":material/error:")


def on_script_error(exc: Exception) -> bool:
    """``st.App``'s handler (serve.py) of an exception no ``guard`` caught: a widget's
    callback, app.py's own lines. Reported as ``guard`` does; True: Streamlit shows nothing
    of its own."""
    report(exc)
    return True


@contextlib.contextmanager
def guard() -> Iterator[None]:
    """Run the block; an exception it raises is ``report``-ed, and the run goes on after it.

    ``st.stop``, ``st.rerun`` and ``st.switch_page`` pass through: Streamlit ends or
    restarts a run with exceptions that are no ``Exception``.
    """
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - whatever it was, a person gets the app's message
        report(exc)
