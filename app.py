"""Context Lab: see contextual word embeddings change layer by layer.

Run with `make run` (`streamlit run serve.py`, the server around this script). The pages are in
app_pages/ (``ui.pages``); what the server runs beside them is in ui/server/ (``ui.server.boot``).
"""

import streamlit as st

from ui.server.boot import boot

st.set_page_config(page_title="Context Lab", page_icon=":material/biotech:", layout="wide")
with boot():
    from ui.pages import navigation

    navigation().run()
