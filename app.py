"""Context Lab: see contextual word embeddings change layer by layer.

Run with `make run` (or `streamlit run app.py`). The pages live in pages/; each draws
the shared sidebar itself (ui.frame), so every page also runs alone in tests.
"""

import streamlit as st

st.set_page_config(page_title="Context Lab", page_icon="🔬", layout="wide")

PAGES = [
    st.Page("pages/bert.py", title="BERT WordPiece", icon="🧩", url_path="bert", default=True),
]

st.navigation(PAGES).run()
