"""Join a class board: the student's view. The word, one text box, the sense if the teacher
offered senses, and *Submit*; an answer at once. It computes no maps: a room of phones
costs the server a database write each, not a model run."""

from __future__ import annotations

from ui.server.imports import before_page

before_page("lab.board.links", "lab.board.rules", "lab.board.store", "ui.board")

import streamlit as st

from lab.board import links, rules
from lab.board.store import Board
from ui import board as ub
from ui import state
from ui.text import md_escape

NOT_SAID = "not sure"
# The submission's token lives in the page's address, not in the session: a server that
# restarts after storing a sentence but before answering leaves the student on a new
# session; the retry then sends the same token, and the store answers with the sentence
# it already holds instead of storing it twice.
TOKEN_PARAM = "sub"

state.register(code="")
st.title("Join a class board")


def ask_code() -> None:
    st.markdown("Type the code your teacher shows (or scan the QR code on the projector).")
    with st.form("_join_code_form", border=True):
        typed = st.text_input("Board code", max_chars=12, placeholder="ABC-DEF", key="_join_code")
        if st.form_submit_button("Join", type="primary") and typed.strip():
            state.put("code", rules.normalise_code(typed))
            state.sync_url()
            st.rerun()


def write(board: Board) -> None:
    """The form: its key changes after each accepted sentence, so a second click on the old
    form's button (a double click) finds no button to press, and the token of a submission
    stays the same until it was stored (``TOKEN_PARAM``): a repeated one is stored once."""
    st.markdown(f"## Write a sentence with “{md_escape(board.word)}”")
    if not board.is_open:
        st.warning("The teacher has closed this board: it takes no more sentences.")
        return
    generation = st.session_state.setdefault("_join_generation", 0)
    token = submission_token()
    with st.form(f"_join_form_{generation}", border=True):
        text = st.text_area("Your sentence", max_chars=rules.MAX_CHARS, height=100,
                            placeholder=f"We sat on the river {board.word}.")
        sense = None
        if board.senses:
            sense = st.radio(f"Which “{board.word}” do you mean?", [*board.senses, NOT_SAID], index=None,
                             horizontal=True)
        sent = st.form_submit_button("Submit", type="primary")
    if sent:
        submit(board, text, None if sense in (None, NOT_SAID) else sense, token)
    answer = st.session_state.get("_join_answer")
    if answer:
        kind, message = answer
        (st.success if kind == "ok" else st.error)(message)


def submission_token() -> str:
    token = st.query_params.get(TOKEN_PARAM, "")
    if not (0 < len(token) <= 64):
        token = st.query_params[TOKEN_PARAM] = ub.new_token()
    return token


def submit(board: Board, text: str, sense: str | None, token: str) -> None:
    try:
        done = ub.store().submit(board.id, text, sense, browser=ub.browser_id(), token=token)
    except rules.Refused as exc:
        st.session_state["_join_answer"] = ("no", str(exc))
        return
    except Exception as exc:  # noqa: BLE001 - the database did not answer: say it did not land
        ub.log_failure("a board submission", exc)
        st.session_state["_join_answer"] = ("no", "Your sentence was not stored: the server could not reach "
                                                  "the board just now. Please press Submit again.")
        return
    st.query_params[TOKEN_PARAM] = ub.new_token()  # the next submission's
    if done.repeated and done.entry.text != rules.clean_sentence(text):
        # an earlier submission landed, and its answer was lost (a restart); this text is another
        st.session_state["_join_answer"] = ("no", f"Your earlier sentence reached the board as number "
                                                  f"{done.entry.number} before the connection dropped: "
                                                  f"“{md_escape(done.entry.text)}”. Press Submit again to send "
                                                  "this one as well.")
        st.rerun()
    where = " It waits for the teacher's approval." if not done.entry.approved else ""
    st.session_state["_join_answer"] = ("ok", f"Accepted: your sentence is number {done.entry.number} "
                                              f"on the board.{where}")
    st.session_state["_join_generation"] = st.session_state.get("_join_generation", 0) + 1
    st.rerun()


code = rules.normalise_code(state.get("code") or "")
board = None
if code:
    try:
        board = ub.find_board(code)
        if board is None:
            st.error(f"No open board has the code “{md_escape(rules.format_code(code))}”. Check it with your teacher.")
    except rules.Refused as exc:
        st.error(str(exc))
if board is None:
    ask_code()
else:
    write(board)
    base, _ = ub.app_base(links.JOIN_PAGE)
    if base:
        st.link_button("See the board", links.projector_link(base, board.code), icon=":material/co_present:")
state.sync_url()
