"""Home: what Context Lab shows, and where to start."""

from ui.imports import before_page

before_page()  # first: the imports below take seconds on a fresh server (ui.imports)

import streamlit as st

from ui import state
from ui.frame import frame
from ui.pages import PAGES

fr = frame("Home")
st.title("Context Lab")
st.markdown(
    "A word has one entry in a dictionary but many meanings in use: *bank* of a river, "
    "*bank* that lends money. Contextual models give each **use** of a word its own vector. "
    "Type two sentences in the sidebar, then open a page and click a word to watch its "
    "vector change from layer to layer."
)
# a card per page: a page link's label stays on one line (cut off at the column's edge), so
# the link holds the title and the description wraps beneath it
pages = [p for p in PAGES if not p.default]
for row in range(0, len(pages), 2):
    for col, p in zip(st.columns(2), pages[row:row + 2]):
        with col.container(border=True, height="stretch"):  # a row of cards of one height
            st.page_link(p.path, label=f"**{p.title}**", icon=p.icon)
            st.markdown(p.blurb)
st.markdown(
    "**Offline first.** Every page runs on models that ship with the app: no network is "
    "needed. Pick a TF Hub model in the sidebar (or set `LAB_BERT_SOURCE` / "
    "`LAB_ELMO_SOURCE`) to use a real hub model or a local copy; every figure names the "
    "model that produced it.\n\n"
    "**Classroom.** *Projector mode* in the sidebar enlarges type and lines and switches "
    "to colour-blind-safe colours. *Quiz mode* hides the main figures behind a question "
    "(\"At which layer are the two banks least alike?\") until you press Reveal. "
    "The address bar always holds the current sentences and "
    "selections: bookmark a prepared demo, or share the link."
)
state.sync_url()
