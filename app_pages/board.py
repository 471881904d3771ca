"""Class board: the room writes sentences with one word; the projector shows every use, layer
by layer, in BERT and in ELMo.

One page, three views: with no board, the form that makes one; with a board's code
(``?board=``), the projector's view, which polls the board and redraws when it changed;
with the board's teacher key in this session (from the teacher link), the same view and the
teacher's links and moderation under it.
"""

from __future__ import annotations

from ui.server.imports import before_page

before_page("lab.board.analysis", "lab.board.links", "lab.board.rules", "lab.board.store", "ui.board")

import pandas as pd
import streamlit as st

from lab import figures, quiz
from lab.board import analysis, links, rules
from lab.board.store import Board, Entry, NotTeacher
from lab.models import FAMILY_NAMES
from ui import board as ub
from ui import charts, quiz_gate, state
from ui.frame import explain, frame
from ui.text import md_escape

FAMILIES = ("bert", "elmo")
POLL_S = 1.0  # the projector asks the board's revision this often, and redraws when it moved
MODERATION_POLL_S = 2.0

fr = frame("Class board", sentences=False)
state.register(board="", board_layer_bert=-1, board_layer_elmo=-1, board_qr=True)


def create_form() -> None:
    """The word, its senses (a preset fills both) and the board's options; creating it keeps
    the teacher key in this session and puts the board's code in the address bar."""
    st.title("Class board")
    st.markdown("Ask the room to write a sentence with one word, each saying which sense they mean; "
                "the projector then shows every use of the word, layer by layer, in BERT and in ELMo.")
    with st.container(border=True):
        st.subheader("Make a board")
        preset = st.pills("Presets", list(rules.PRESETS), key="_board_preset",
                          help="A word with senses a class knows; its senses are filled in below.")
        if preset and st.session_state.get("_board_preset_seen") != preset:
            st.session_state["_board_word"] = preset
            st.session_state["_board_senses"] = ", ".join(rules.PRESETS[preset])
            st.session_state["_board_preset_seen"] = preset
        st.text_input("Word", key="_board_word", max_chars=rules.WORD_CHARS, placeholder="bank")
        st.text_input("Senses to offer the class (optional: two to four, separated by commas)",
                      key="_board_senses", placeholder="money, river")
        hold = st.checkbox("Hold new sentences until I approve them", key="_board_hold")
        st.caption(f"The board records the models chosen in the sidebar: BERT **{md_escape(fr.bert_source)}**, "
                   f"ELMo **{md_escape(fr.elmo_source)}**; every projector of the board draws with them.")
        if st.button("Create the board", type="primary", key="_board_create"):
            create(st.session_state.get("_board_word", ""), st.session_state.get("_board_senses", ""), hold)


def create(word: str, senses: str, hold: bool, like: Board | None = None) -> None:
    try:
        if like is not None:
            made, key = ub.store().renew(like.id, ub.teacher_key(like))
        else:
            made, key = ub.store().create(word, [s for s in senses.split(",")], bert_source=fr.bert_source,
                                          elmo_source=fr.elmo_source, pool="first", hold=hold)
    except (ValueError, NotTeacher) as exc:
        st.error(str(exc))
        return
    ub.keep_key(made, key)
    state.put("board", made.code)
    st.session_state["_board_new_key"] = made.id
    state.sync_url()
    st.rerun()


def open_form() -> None:
    with st.container(border=True):
        st.subheader("Show a board")
        code = st.text_input("The board's code", key="_board_open_code", max_chars=12, placeholder="ABC-DEF")
        if st.button("Show it", key="_board_open") and code.strip():
            state.put("board", rules.normalise_code(code))
            state.sync_url()
            st.rerun()


def join_panel(board: Board) -> None:
    """The code to read aloud and the join link, with its QR code (large in projector mode)
    until the teacher hides it once the room has joined."""
    base, choices = ub.app_base(links.BOARD_PAGE)
    code = rules.format_code(board.code)
    show_qr = state.get("board_qr")
    qr, text = st.columns([2, 3] if fr.projector else [1, 3]) if show_qr else (None, st.container())
    with text:
        if choices:
            base = st.selectbox("Phones cannot reach “localhost”: the address of this machine that they use",
                                choices, key="_board_host",
                                help="The server must listen on that address: start it with "
                                     "`make run ADDRESS=0.0.0.0` (or set LAB_PUBLIC_URL behind a proxy).")
        elif base and links.is_local(base):
            st.warning("This machine has no network address a phone could reach: students need the app on an "
                       "address of your network (or LAB_PUBLIC_URL behind a proxy).")
        if base:
            st.markdown(f"Join at **{md_escape(base)}/{links.JOIN_PAGE}** with the code")
        else:
            st.markdown("Join with the code")
        st.markdown(f"# `{code}`")
        if base:
            st.code(links.join_link(base, board.code), language=None, wrap_lines=True)
        state.widget(st.toggle, "board_qr", "QR code", help="Hide it once the room has joined: the maps move up.")
    if show_qr and base:
        with qr:
            st.image(links.qr_png(links.join_link(base, board.code), scale=12 if fr.projector else 6),
                     caption=f"Scan to join · {code}", width="stretch")


def teacher_links(board: Board, key: str) -> None:
    base, choices = ub.app_base(links.BOARD_PAGE)
    base = st.session_state.get("_board_host") or (choices[0] if choices else base) or ""
    with st.expander("Teacher link: keep it, it is the only way to manage this board",
                     expanded=st.session_state.pop("_board_new_key", None) == board.id, icon=":material/key:"):
        st.warning("Keep this link to yourself: anyone who has it can hide, close, clear and download this "
                   "board. It is not in the address bar, the projector's link or the students' pages.")
        st.code(links.teacher_link(base, board.code, key), language=None, wrap_lines=True)
        st.markdown("Projector link (no key: open it on the projector's screen):")
        st.code(links.projector_link(base, board.code), language=None, wrap_lines=True)


def layer_slider(family: str, names: list[str]) -> int:
    key = f"board_layer_{family}"
    if not (0 <= state.get(key) < len(names)):
        state.put(key, len(names) - 1)
    return state.widget(st.select_slider, key, f"{FAMILY_NAMES[family]} layer", options=list(range(len(names))),
                        format_func=lambda i: names[i])


def board_map(family: str, layer: int, shown: ub.Room, board: Board):
    """``family``'s map of the uses at ``layer``, turned to match the map this view drew
    before (another layer, or fewer sentences): what moves is what the model does. Built
    once per revision, layer and mode; a poll that changed nothing draws the same figure."""
    key = (shown.revision, layer, fr.projector)
    kept = st.session_state.get(f"_board_fig_{family}")
    if kept is not None and kept[0] == key:
        return kept[1]
    names, vectors = shown.found[family]
    previous = st.session_state.get(f"_board_frame_{family}")
    made = analysis.frame(vectors[layer], tuple(e.id for e in shown.entries), names[layer], previous)
    st.session_state[f"_board_frame_{family}"] = made
    fig = figures.board_map(made, [e.text for e in shown.entries], shown.senses, board.senses,
                            f"{FAMILY_NAMES[family]} · {names[layer]}", projector=fr.projector)
    st.session_state[f"_board_fig_{family}"] = (key, fig)
    return fig


def projector_view(board: Board) -> None:
    """Counts, both models' maps at their chosen layers, and the separation chart."""
    shown = ub.room(board)
    counts = st.columns(3)
    counts[0].metric("Sentences on the board", len(shown.entries))
    counts[1].metric("With a sense", sum(s is not None for s in shown.senses))
    counts[2].metric("Submissions", "open" if board.is_open else "closed")
    if shown.waiting:
        st.caption(f"{shown.waiting} sentence(s) wait for the teacher's approval.")
    if not shown.entries:
        st.info(f"No sentences yet. Students open the join link and write a sentence with “{md_escape(board.word)}”.")
        return
    for column, family in zip(st.columns(2), FAMILIES):
        with column:
            layer = layer_slider(family, shown.found[family][0])
            charts.show(board_map(family, layer, shown, board), key=f"board_map_{family}")
    explain(f"Each dot is one sentence's “{md_escape(board.word)}”, coloured by the sense its writer chose; "
            "hover for the sentence. The dots are placed by the first two principal components of that "
            "layer's vectors (as unit vectors: close dots have a high cosine), a map that is the same every time "
            "it is drawn. Each picture is turned (rotated or mirrored, never stretched) to match the one drawn "
            "before, when sentences arrive or the layer changes, so what moves is what the model does.",
            fr.projector)
    separation_section(shown)
    from ui import probe_cache  # the supersense probe on the room's sentences (What each layer knows)

    probe_cache.board_section(board, shown.found, shown.senses, fr.projector)


def separation_section(shown: ub.Room) -> None:
    st.subheader("At which layer does each model sort our sentences the way we did?")
    tests = shown.tests
    first = next(iter(tests.values()))
    if first.auc is None:
        st.info(first.message)
        return
    by_model = {FAMILY_NAMES[f]: (t.layer_names, t.auc) for f, t in tests.items()}
    question = quiz.best_separating(by_model)
    if not quiz_gate.gate(question, "board", hides="the chart of how well each layer separates our senses"):
        return
    charts.show(figures.separation_chart(by_model, projector=fr.projector), key="board_separation")
    st.caption("ROC AUC over every pair of sentences with a sense: the chance that two sentences of the same "
               "sense are closer (by cosine, at that layer) than two of different senses. 0.5 is chance, "
               "1.0 sorts every pair as the class did.")


@st.fragment(run_every=POLL_S)
def live(board_id: int) -> None:
    """The projector's view, rerun every ``POLL_S``: it asks the board's revision and draws
    again from the database only when that moved (or a control of the view changed)."""
    from ui import errors

    with errors.guard():
        try:
            board = ub.store().get(board_id)
            if board is None:
                st.warning("This board has been deleted or has expired.")
                return
            projector_view(board)
        finally:
            state.sync_url()


def moderation(board: Board, key: str) -> None:
    st.header("Moderation")
    controls = st.columns(3)
    with controls[0]:
        is_open = st.toggle("Open for sentences", value=board.is_open, key=f"_board_open_{board.revision}")
        if is_open != board.is_open:
            ub.store().set_open(board.id, key, is_open)
            st.rerun()
    with controls[1]:
        hold = st.toggle("Hold new sentences for approval", value=board.hold, key=f"_board_hold_{board.revision}")
        if hold != board.hold:
            ub.store().set_hold(board.id, key, hold)
            st.rerun()
    with controls[2]:
        if st.button("Start a new board with these settings", key="_board_renew",
                     help="Next lesson: a new code, the same word, senses and models; this board stays as it is."):
            create("", "", board.hold, like=board)
    moderation_table(board.id, key)


@st.fragment(run_every=MODERATION_POLL_S)
def moderation_table(board_id: int, key: str) -> None:
    """Every sentence as typed (shown as text, never rendered), with hide and approve; the
    downloads; clearing the board."""
    from ui import errors

    with errors.guard():
        board = ub.store().get(board_id)
        if board is None:
            return
        entries = ub.store().entries(board.id)
        if not entries:
            st.caption("No sentences yet.")
        else:
            df = pd.DataFrame({"#": [e.number for e in entries], "sentence": [e.text for e in entries],
                               "sense": [e.sense or "" for e in entries],
                               "time": [pd.Timestamp(e.created, unit="s", tz="UTC").strftime("%H:%M:%S")
                                        for e in entries],
                               "hidden": [e.hidden for e in entries], "approved": [e.approved for e in entries]})
            columns = ["#", "sentence", "sense", "time", "hidden"] + (["approved"] if board.hold else [])
            st.data_editor(df[columns], key=f"_board_table_{board.id}_{board.revision}", hide_index=True,
                           disabled=["#", "sentence", "sense", "time"], width="stretch",
                           on_change=apply_edits, args=(board.id, key, f"_board_table_{board.id}_{board.revision}",
                                                        [e.id for e in entries]))
        downloads(board, key, entries)
        with st.popover("Clear the board", icon=":material/delete:"):
            st.markdown("Deletes every sentence of this board; the code and settings stay.")
            if st.button("Delete all sentences", type="primary", key="_board_clear"):
                ub.store().clear(board.id, key)
                st.rerun()


def apply_edits(board_id: int, key: str, table_key: str, ids: list[int]) -> None:
    """The table's ticks, written to the board (each a new revision: every projector follows)."""
    edits = st.session_state.get(table_key, {}).get("edited_rows", {})
    for row, change in edits.items():
        entry_id = ids[int(row)]
        if "hidden" in change:
            ub.store().set_hidden(board_id, key, entry_id, bool(change["hidden"]))
        if "approved" in change:
            ub.store().approve(board_id, key, entry_id, bool(change["approved"]))


def downloads(board: Board, key: str, entries: list[Entry]) -> None:
    rows = [{"number": e.number, "sentence": e.text, "sense": e.sense or "", "time": e.created,
             "hidden": e.hidden, "held": not e.approved} for e in entries]
    stem = f"board-{board.code}-{board.word}"
    cols = st.columns(3)
    with cols[0]:
        st.download_button("Sentences (.csv)", data=rules.csv_bytes(rows), file_name=f"{stem}.csv", mime="text/csv",
                           key="_board_csv", icon=":material/download:", on_click="ignore")
    shown = [e for e in entries if not e.hidden and e.approved]
    for column, family in zip(cols[1:], FAMILIES):
        with column:
            if shown:
                charts.vectors_button(lambda f=family: ub.board_run(board, f, shown), f"{stem}-{family}",
                                      key=f"_board_npz_{family}",
                                      label=f"{FAMILY_NAMES[family]} vectors (.npz)")


def show_board(code: str) -> None:
    try:
        board = ub.find_board(code)
    except rules.Refused as exc:
        st.error(str(exc))
        return
    problem = ub.take_key(board)
    if board is None:
        st.warning(f"No board has the code “{md_escape(code)}”: it may have expired or been mistyped.")
        state.put("board", "")
        create_form()
        return
    if problem:
        st.warning(problem)
    key = ub.teacher_key(board)
    st.title(f"Class board: “{board.word}”")
    st.caption((f"Senses: **{md_escape(' / '.join(board.senses))}** · " if board.senses else "")
               + f"BERT: **{md_escape(board.bert_source)}** · ELMo: **{md_escape(board.elmo_source)}** "
               "(the models this board was made with)")
    join_panel(board)
    if key:
        teacher_links(board, key)
    live(board.id)
    if key:
        moderation(board, key)


code = rules.normalise_code(state.get("board") or "")
if code:
    show_board(code)
else:
    create_form()
    open_form()
state.sync_url()
