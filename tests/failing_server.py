"""tests/failing_page.py served as serve.py serves the app: ``st.App`` with the app's
handler of an exception no page caught (``ui.errors.on_script_error``)."""

import streamlit as st

from ui.errors import on_script_error

app = st.App("failing_page.py", on_script_error=on_script_error)
