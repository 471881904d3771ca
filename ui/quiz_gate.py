"""Quiz mode: a page's main figure stays behind a question until the class has answered.

The sidebar's *Quiz mode* switch (``ui.frame``, in the URL as ``quiz=1``) turns it on for
every page. A page builds its question from the numbers it is about to draw
(``lab.quiz``) and calls ``gate``: until "Reveal" is pressed the page draws neither the
figure nor any value behind it.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from lab.quiz import Question
from ui import state
from ui.text import md_escape


def active() -> bool:
    return bool(state.get("quiz"))


def _tag(question: Question) -> str:
    return hashlib.sha1(question.text.encode() + repr(question.choices).encode()).hexdigest()[:10]


def revealed(question: Question, key: str) -> bool:
    """True when ``gate(question, key, ...)`` lets its figures be drawn: no quiz, or this
    question revealed. For a page that draws part of a figure before asking (the question
    below the numbers that answer it, the rest of the figure after the reveal)."""
    return not active() or st.session_state.get(f"_quiz_{key}") == _tag(question)


def gate(question: Question, key: str, hides: str) -> bool:
    """Ask ``question`` in quiz mode; True when the figures may be drawn (revealed, or no quiz).
    ``hides`` says what waits for the reveal (a page may hold back more than one figure).

    The reveal holds for this question only: new words or sentences give a new question,
    hidden again.
    """
    if not active():
        return True
    tag, revealed_key = _tag(question), f"_quiz_{key}"
    shown = revealed(question, key)
    with st.container(border=True):
        # on a projector the question and its Reveal button share the first line, so that both
        # fit the first screen under the page's compact header (ui.frame.page_header)
        compact = not shown and bool(state.get("proj"))
        ask, reveal = st.columns([4, 1], vertical_alignment="top") if compact else (st, st)
        ask.markdown(f"**Quiz:** {md_escape(question.text)}")
        if compact:
            reveal.button("Reveal", key=f"_quiz_reveal_{key}", type="primary", width="stretch",
                          help=f"Quiz mode hides {hides} until you press Reveal.",
                          on_click=lambda: st.session_state.__setitem__(revealed_key, tag))
        mark = {question.answer: " ✓"} if shown else {}
        pick = st.radio("Your class's answer", options=list(range(len(question.choices))), index=None,
                        format_func=lambda i: md_escape(question.choices[i]) + mark.get(i, ""),
                        key=f"_quiz_pick_{key}_{tag}", horizontal=True)
        if compact:
            return False
        if not shown:
            st.button("Reveal", key=f"_quiz_reveal_{key}", type="primary",
                      on_click=lambda: st.session_state.__setitem__(revealed_key, tag))
            st.caption(f"Quiz mode hides {hides} until you press Reveal.")
            return False
        verdict = "" if pick is None else (" Your answer is right." if pick == question.answer
                                           else f" Your answer was {md_escape(question.choices[pick])}.")
        st.success(f"Right answer: **{md_escape(question.right)}**.{verdict}")
    return True
