"""A page that fails in its body, on a click in a section, and in a widget's callback, for
tests/test_errors.py and tests/test_browser_errors.py: the body runs inside
``ui.errors.guard`` as app.py runs every page, the section is a ``ui.state.fragment`` as
every page's sections are, and the callback reaches the server's handler
(tests/failing_server.py, as serve.py serves the app). What fails names a file on the
server, as a real failure's text often does."""

import streamlit as st

from ui import errors, state
from ui.frame import frame

with errors.guard():
    frame("Failing page")
    st.title("A page that fails")

    @state.fragment
    def section() -> None:
        if st.button("Break this section"):
            raise ZeroDivisionError("division by zero in /srv/lab/secret_section.py")
        st.markdown("The section is drawn.")

    section()

    def broken_callback() -> None:
        raise KeyError("/srv/lab/secret_callback.json")

    st.button("Break a callback", on_click=broken_callback)
    st.markdown("The page goes on after its section.")
    raise FileNotFoundError("/srv/lab/secret_model/saved_model.pb")
