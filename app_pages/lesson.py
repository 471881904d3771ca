"""Lesson: the five demos of a 20-minute lesson, each a question and the view that answers it,
and the glossary of the words the app uses."""

from ui.imports import before_page

before_page("lab.glossary", "lab.lesson")  # first: the imports below take seconds on a fresh server (ui.imports)

import streamlit as st

from lab.glossary import TERMS
from lab.lesson import DEMOS
from ui import state
from ui.frame import frame

fr = frame("Lesson")
st.title("A 20-minute lesson")
st.caption("Five demos, the class board the last. Ask the question first and let the class commit to an "
           "answer, then open the view: it opens in a new tab, in projector mode, set up exactly as the demo "
           "needs (its own sentences included; in quiz mode where the page has a quiz, so that its figure "
           "waits behind a question until you press Reveal), so this page stays as the plan of the lesson.")
for i, demo in enumerate(DEMOS, start=1):
    with st.container(border=True, key=f"lesson_{i}"):
        st.subheader(f"{i} · {demo.title} ({demo.minutes} min)")
        st.markdown(f"**Ask:** *“{demo.question}”*")
        if demo.before:
            st.markdown(f":material/event: **Before class:** {demo.before}")
        # a relative link: it works on any server, under any path the app is served at; a new
        # tab is a new session, which opens the view as the link says, whatever this tab holds
        st.link_button(f"Open {demo.view}", demo.path, icon=":material/open_in_new:", type="primary")
        with st.expander("What to look for"):  # folded: on a projector it would give the answer away
            st.markdown(demo.look_for)
with st.expander("Glossary: the words this app uses", icon=":material/menu_book:"):
    st.markdown("\n\n".join(f"**{term}**: {text}" for term, text in TERMS.items()))
state.sync_url()
