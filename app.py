"""Context Lab: see contextual word embeddings change layer by layer.

Run with `make run` (or `streamlit run app.py`). The pages live in pages/; each draws
the shared sidebar itself (ui.frame), so every page also runs alone in tests. Each URL
path equals its file's stem: with a pages/ folder present, Streamlit's browser client
checks a requested path against the folder's file names first and shows "Page not
found" for any other name, even though st.navigation would route it.
"""

import streamlit as st

from ui.pages import PAGES

st.set_page_config(page_title="Context Lab", page_icon=":material/biotech:", layout="wide")
st.navigation([st.Page(p.path, title=p.title, icon=p.icon, url_path=p.url_path, default=p.default)
               for p in PAGES]).run()
