"""Class board: the room writes sentences with one word; the projector shows every use, layer
by layer, in BERT and in ELMo.

One page, three views: with no board, the form that makes one; with a board's code
(``?board=``), the projector's view, which polls the board and redraws when it changed;
with the board's teacher key (held by this session, or kept by this browser from the
teacher link: ``ui.board.teacher_key``), the teacher's view: the same, with the teacher's
links and moderation. The teacher's view turns into the projector's at one click
(*Present*, for one screen mirrored to the projector) and back; which view a tab shows is
in the address (``board_view``), never the key.
"""

from __future__ import annotations

from ui.imports import before_page

before_page("lab.board.maps", "lab.board.exports", "lab.board.links", "lab.board.rules", "lab.board.store",
            "ui.board")

import pandas as pd
import streamlit as st

from lab import figures, quiz
from lab.board import exports, links, maps, rules
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
# ``?view=student`` (the join page's "See the board"): the maps only, no QR code, counts or
# teacher's controls
STUDENT_VIEW = st.query_params.get("view") == "student"
state.register(board="", board_layer_bert=-1, board_layer_elmo=-1, board_qr=True)
# The tab's view of a board: "teacher" or "present" (a teacher's tab showing what the
# projector shows); anything else: the view its key allows.
TEACHER, PRESENT = ub.TEACHER_VIEW, "present"
state.register(board_view="")


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
    state.put("board_view", TEACHER)
    st.session_state["_board_made"] = made.id
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


# The board page's own look: the join code large (read aloud, and read from the back of the
# room), and in projector mode less room above the page, so that the word, the code and
# both maps with their legend fit a 1024x768 or 1280x720 screen. Our own CSS, no user text.
_CODE_CSS = ".st-key-board_code code {{font-size: {size}rem !important; font-weight: 700; letter-spacing: 0.08em; " \
            "padding: 0.05em 0.35em !important; white-space: nowrap}} .st-key-board_code p {{margin: 0}}"
_PROJECTOR_BOARD_CSS = ('[data-testid="stMainBlockContainer"] {padding-top: 2.8rem !important; '
                        "padding-left: 2rem !important; padding-right: 2rem !important} "
                        '[data-testid="stMainBlockContainer"] h1 {padding-top: 0 !important; '
                        "padding-bottom: 0.2rem !important}")


QR_CORNER = 100  # px: the QR code folded to the corner, still read by a phone held up close


def join_panel(board: Board) -> None:
    """The code to read aloud and the join link, with its QR code: large until the board's
    first sentences are shown, then folded to a small one in the corner (the maps move up);
    the sidebar's "QR code" switch hides it altogether. The code is large, larger still in
    projector mode; there the link is left to the QR code."""
    base, choices = ub.app_base(links.BOARD_PAGE)
    code = rules.format_code(board.code)
    css = _CODE_CSS.format(size=3.6 if fr.projector else 2.4) + (_PROJECTOR_BOARD_CSS if fr.projector else "")
    st.markdown(f"<style>{css}</style>", unsafe_allow_html=True)
    if fr.projector:  # the maps need the room: the sidebar closes (its arrow opens it again)
        st.set_page_config(initial_sidebar_state="collapsed")
    with st.sidebar:
        state.widget(st.toggle, "board_qr", "QR code on the board",
                     help="Large until the first sentences arrive, then small in the corner; off hides it.")
    shown = any(e.approved for e in ub.store().entries(board.id, hidden=False))
    show_qr = bool(state.get("board_qr")) and base is not None
    big = show_qr and not shown
    st.session_state["_board_qr_big"] = board.id if big else None  # projector_view folds it when sentences come
    st.session_state["_board_fold_next"] = False
    if not show_qr:
        qr, text = None, st.container()
    elif big:
        qr, text = st.columns([2, 3] if fr.projector else [1, 3])
    else:
        text, qr = st.columns([6, 1], vertical_alignment="center")
    with text:
        if choices:
            base = st.selectbox("Phones cannot reach “localhost”: the address of this machine that they use",
                                choices, key="_board_host",
                                help="The server must listen on that address: a plain `make run` listens on every "
                                     "address of this machine (not with ADDRESS=127.0.0.1). Behind a proxy, "
                                     "set LAB_PUBLIC_URL.")
        elif base and links.is_local(base):
            st.warning("This machine has no network address a phone could reach: students need the app on an "
                       "address of your network (or LAB_PUBLIC_URL behind a proxy).")
        where = f"Join at **{md_escape(base)}/{links.JOIN_PAGE}** with the code" if base else "Join with the code"
        with st.container(key="board_code", horizontal=True, vertical_alignment="center", gap="medium"):
            st.markdown(where, width="content")
            st.markdown(f"`{code}`", width="content")
        if base and not fr.projector:
            st.code(links.join_link(base, board.code), language=None, wrap_lines=True)
    if qr is not None:
        with qr:
            st.image(links.qr_png(links.join_link(base, board.code), scale=12 if big and fr.projector else 6),
                     caption=f"Scan to join · {code}" if big else None, width="stretch" if big else QR_CORNER)


def teacher_links(board: Board, key: str) -> None:
    """The teacher link, folded, and never drawn: a copy button and a file to save; the
    projector's link."""
    base, choices = ub.app_base(links.BOARD_PAGE)
    base = st.session_state.get("_board_host") or (choices[0] if choices else base) or ""
    link = links.teacher_link(base, board.code, key)
    if st.session_state.pop("_board_made", None) == board.id:
        st.success("Board made. This browser keeps its teacher key: a reload or a restart of the server keeps "
                   "your controls. To manage it from another browser, save the teacher link (below).")
    with st.expander("Teacher link: save it to manage this board from another browser", icon=":material/key:"):
        st.markdown("Anyone who has the teacher link can hide, close, clear and download this board: keep it to "
                    "yourself. It is not shown on this page, in the address bar, the projector's link or the "
                    "students' pages.")
        copy, save = st.columns(2)
        with copy:
            ub.copy_button(link, "Copy the teacher link", "save it as a file instead.")
        with save:
            st.download_button("Save the teacher link (.txt)", key="_board_save_link", icon=":material/download:",
                               data=links.teacher_file(link, rules.format_code(board.code), board.word),
                               file_name=f"teacher-link-{board.code}.txt", mime="text/plain", on_click="ignore")
        st.markdown("Projector link (no key: open it on the projector's screen, or press *Present* to show "
                    "this tab on it):")
        st.code(links.projector_link(base, board.code), language=None, wrap_lines=True)


def _switch_view(view: str) -> None:
    """Present shows what the projector link shows, in projector mode as that link opens
    (large type, the sidebar closed); the teacher's view puts projector mode back as it was
    before (kept in this session; a new session keeps it on)."""
    if view == PRESENT:
        st.session_state["_board_proj_before"] = bool(state.get("proj"))
        state.put("proj", True)
    else:
        state.put("proj", st.session_state.pop("_board_proj_before", state.get("proj")))
    state.put("board_view", view)


def present_switch(presenting: bool) -> None:
    """One button (and a key) between the teacher's view and the projector's view of this
    tab: what a class may see is what the projector link shows, nothing more."""
    if presenting:
        st.button("Teacher's view", key="_board_teach", icon=":material/key:", shortcut="T",
                  on_click=_switch_view, args=(TEACHER,),
                  help="Back to the teacher link, moderation and downloads (key T).")
    else:
        st.button("Present", key="_board_present", icon=":material/present_to_all:", shortcut="P",
                  on_click=_switch_view, args=(PRESENT,),
                  help="One screen for you and the class: this tab shows what the projector shows, without the "
                       "teacher link, moderation, or hidden and held sentences (key P; back with T).")


def missing_key(board: Board) -> str:
    """What a tab that was the teacher's says where this browser holds no key for ``board``."""
    return (f"This tab was the teacher's view of board {rules.format_code(board.code)}, but this browser does "
            "not hold its teacher key (another browser, cookies cleared or refused): the board is shown as the "
            "projector sees it. To get control back, open the teacher link you saved when you made the board "
            "(copied, or the saved .txt file).")


def layer_slider(family: str, names: list[str]) -> int:
    """The layer a model's map shows (its top layer first), named as a class reads it."""
    key = f"board_layer_{family}"
    if not (0 <= state.get(key) < len(names)):
        state.put(key, len(names) - 1)
    return state.widget(st.select_slider, key, f"{FAMILY_NAMES[family]} layer", options=list(range(len(names))),
                        format_func=lambda i: maps.layer_label("", names[i]))


def board_map(family: str, layer: int, shown: ub.Room, board: Board):
    """``family``'s map of the uses at ``layer``: the board's frame (``shown.frames``, the
    same on every projector), on one scale for all the model's layers, with a note where
    all its dots sit on one point. Built once per revision, layer and mode; a poll that
    changed nothing draws the same figure."""
    key = (shown.revision, layer, fr.projector)
    kept = st.session_state.get(f"_board_fig_{family}")
    if kept is not None and kept[0] == key:
        return kept[1]
    names = shown.found[family][0]
    stack = shown.frames[family]
    model = FAMILY_NAMES[family]
    fig = figures.board_map(stack[layer], [e.text for e in shown.entries], shown.senses, board.senses,
                            maps.layer_label(model, names[layer]), projector=fr.projector, width=0.6,
                            extent=maps.map_range(stack, least=figures.USE_MAP_SPAN),
                            note=maps.map_note(model, names[layer], board.word, stack[layer]))
    st.session_state[f"_board_fig_{family}"] = (key, fig)
    return fig


def projector_view(board: Board) -> None:
    """Both models' maps at their chosen layers (each slider under its map, so that the maps
    and their legend fit the first screen), the counts, and the separation chart."""
    shown = ub.room(board)
    # the first sentences: drawn at once, then at the next poll the whole page again, its QR
    # code folded to the corner (a rerun before drawing them delayed the first dots)
    fold = bool(shown.entries) and st.session_state.get("_board_qr_big") == board.id
    if fold and st.session_state.get("_board_fold_next"):
        st.rerun()
    st.session_state["_board_fold_next"] = fold
    counted = maps.counts(shown.senses, shown.waiting)
    if not shown.entries:
        st.info(f"No sentences yet. Students open the join link and write a sentence with “{md_escape(board.word)}”.")
    else:
        for column, family in zip(st.columns(2), FAMILIES):
            with column:
                chart = st.container()  # above the slider, drawn once the slider has said which layer
                layer = layer_slider(family, shown.found[family][0])
                with chart:
                    charts.show(board_map(family, layer, shown, board), key=f"board_map_{family}")
    if not STUDENT_VIEW:  # a student's view is the maps only
        counts = st.columns(3)
        counts[0].metric("Sentences on the board", counted.sentences)
        counts[1].metric("With a sense", counted.with_sense)
        counts[2].metric("Submissions", "open" if board.is_open else "closed")
        if counted.waiting:
            st.caption(f"{counted.waiting} sentence(s) wait for the teacher's approval.")
    if not shown.entries:
        return
    explain(f"Each dot is one sentence's “{md_escape(board.word)}”, coloured by the sense its writer chose; "
            "hover for the sentence. The dots are placed by the two directions along which that layer's vectors "
            "differ most (their first two principal components, as unit vectors: close dots have a high cosine); "
            "the numbers on the axes are distances between unit vectors, on one scale for every layer of a model, "
            "so dots that bunch together at one layer and spread at another show it. The map is the board's: "
            "it is turned (rotated or mirrored, never stretched) one sentence at a time, in the order they "
            "arrived, and from each layer to the next, so every projector of this board draws the same picture "
            "and what moves is what the model does.", fr.projector)
    separation_section(shown, board)
    from ui import probe_cache  # the supersense probe on the room's sentences (What each layer knows)

    probe_cache.board_section(board, shown.found, shown.senses, fr.projector)


def separation_section(shown: ub.Room, board: Board) -> None:
    """How well each layer of each model sorts the class's sentences by sense, in plain words:
    the chart carries the section's title, and the heading stands in for it where the
    chart is not drawn (too few sentences, a quiz question first)."""
    head = st.empty()
    head.subheader(figures.SEPARATION_TITLE)
    tests = shown.tests
    first = next(iter(tests.values()))
    if first.auc is None:
        st.info(first.message)
        return
    by_model = {FAMILY_NAMES[f]: (t.layer_names, t.auc) for f, t in tests.items()}
    question = quiz.best_separating(by_model)
    if not quiz_gate.gate(question, "board", hides="the chart of how well each layer separates our senses"):
        return
    head.empty()
    measure, how = maps.told_apart(board.senses)
    ticks = {FAMILY_NAMES[f]: [maps.layer_tick(n) for n in t.layer_names] for f, t in tests.items()}
    charts.show(figures.separation_chart(by_model, projector=fr.projector, measure=measure, tick_names=ticks),
                key="board_separation")
    st.caption(f"{md_escape(measure)}, at each layer: {md_escape(how)} {md_escape(first.message)}")


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
    delete_board(board, key)


def delete_board(board: Board, key: str) -> None:
    """Delete the board and all its sentences for good, once the teacher has confirmed it;
    the page then offers to make a new one."""
    with st.popover("Delete this board", icon=":material/delete_forever:"):
        st.markdown(f"Deletes the board “{md_escape(board.word)}” ({rules.format_code(board.code)}) and every "
                    "sentence on it, for good: its code stops working, and the projector and the students' page "
                    "say it no longer exists. Download the sentences first if you want to keep them.")
        sure = st.checkbox("Yes, delete this board and its sentences", key="_board_delete_board_sure")
        if st.button("Delete the board", type="primary", key="_board_delete_board", disabled=not sure):
            gone = ub.store().delete_board(board.id, key)
            st.session_state.pop("_board_delete_board_sure", None)
            st.session_state["_board_gone"] = (f"The board “{board.word}” and its {gone} sentence(s) were deleted "
                                               "for good.")
            state.put("board", "")
            state.sync_url()
            st.rerun()


def board_gone_notice() -> None:
    """Say, once, that the board this tab showed was deleted (``delete_board``)."""
    notice = st.session_state.pop("_board_gone", None)
    if notice:
        st.success(notice, icon=":material/delete_forever:")


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
        zone = st.context.timezone  # the teacher's browser's: times read as on the classroom's clock
        if not entries:
            st.caption("No sentences yet.")
        else:
            rows = exports.rows(entries, zone)
            df = pd.DataFrame({"#": [r["number"] for r in rows], "sentence": [r["sentence"] for r in rows],
                               "sense": [r["sense"] for r in rows], "time": [r["time"] for r in rows],
                               "hidden": [e.hidden for e in entries], "approved": [e.approved for e in entries]})
            columns = ["#", "sentence", "sense", "time", "hidden"] + (["approved"] if board.hold else [])
            # the grid's own CSV download is off (client.disableDataExport): the CSV below
            # keeps spreadsheet formulas inert
            st.data_editor(df[columns], key=f"_board_table_{board.id}_{board.revision}", hide_index=True,
                           disabled=["#", "sentence", "sense", "time"], width="stretch",
                           on_change=apply_edits, args=(board.id, key, f"_board_table_{board.id}_{board.revision}",
                                                        [e.id for e in entries]))
        downloads(board, key, entries, zone)
        delete_sentence(board, key, entries)
        with st.popover("Clear the board", icon=":material/delete:"):
            st.markdown("Deletes every sentence of this board; the code and settings stay.")
            if st.button("Delete all sentences", type="primary", key="_board_clear"):
                ub.store().clear(board.id, key)
                st.rerun()


def delete_sentence(board: Board, key: str, entries: list[Entry]) -> None:
    """Delete one sentence for good, once the teacher has confirmed it (hiding keeps it)."""
    if not entries:
        return
    with st.popover("Delete a sentence", icon=":material/delete_forever:"):
        by_id = {e.id: e for e in entries}
        chosen = st.selectbox("Sentence", list(by_id), key="_board_delete_which", index=None,
                              placeholder="Choose the sentence to delete",
                              format_func=lambda i: f"{by_id[i].number}. {by_id[i].text}" if i in by_id else "")
        st.caption("Deleted for good: its text leaves the database, the projector and the downloads. "
                   "Hide it instead to keep it for yourself.")
        known = chosen in by_id
        sure = st.checkbox("Yes, delete this sentence", key="_board_delete_sure", disabled=not known)
        if st.button("Delete the sentence", type="primary", key="_board_delete", disabled=not (sure and known)):
            gone = ub.store().delete(board.id, key, chosen)
            for widget in ("_board_delete_which", "_board_delete_sure"):
                st.session_state.pop(widget, None)
            st.session_state["_board_deleted"] = (f"Sentence {by_id[chosen].number} deleted." if gone else
                                                  "That sentence was already gone.")
            st.rerun()
    notice = st.session_state.pop("_board_deleted", None)
    if notice:
        st.toast(notice, icon=":material/delete_forever:")


def apply_edits(board_id: int, key: str, table_key: str, ids: list[int]) -> None:
    """The table's ticks, written to the board (each a new revision: every projector follows)."""
    edits = st.session_state.get(table_key, {}).get("edited_rows", {})
    for row, change in edits.items():
        entry_id = ids[int(row)]
        if "hidden" in change:
            ub.store().set_hidden(board_id, key, entry_id, bool(change["hidden"]))
        if "approved" in change:
            ub.store().approve(board_id, key, entry_id, bool(change["approved"]))


def downloads(board: Board, key: str, entries: list[Entry], zone: str | None) -> None:
    """The sentences as CSV and each model's vectors as .npz, row for row: every sentence,
    hidden and held ones included and marked so (``lab.board.exports``)."""
    stem = f"board-{board.code}-{board.word}"
    cols = st.columns(3)
    with cols[0]:
        st.download_button("Sentences (.csv)", data=lambda: exports.csv_bytes(entries, zone), file_name=f"{stem}.csv",
                           mime="text/csv", key="_board_csv", icon=":material/download:", on_click="ignore")
    for column, family in zip(cols[1:], FAMILIES):
        with column:
            if entries:  # no rerun on a download (on_click="ignore"): see charts.vectors_button
                def npz(f=family) -> bytes:
                    return exports.npz_bytes(ub.board_run(board, f, entries), entries, board.word, zone)

                st.download_button(
                    f"{FAMILY_NAMES[family]} vectors (.npz)", key=f"_board_npz_{family}", data=npz,
                    file_name=f"{stem}-{family}.npz", mime="application/octet-stream",
                    icon=":material/download:", on_click="ignore",
                    help="Every sentence's vectors, row for row as in the CSV: the contract of python -m lab export "
                         "(tokens, layers, mask, layer_names, model) with number, sentence, sense, time, hidden, "
                         "held and word_span (the word's first and last token). Load with numpy.load(file).")


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
    view = state.get("board_view")
    key = None if STUDENT_VIEW else ub.teacher_key(board, from_browser=view in (TEACHER, PRESENT))
    if view not in (TEACHER, PRESENT):
        view = TEACHER if key else ""
        state.put("board_view", view)
    presenting = view == PRESENT
    if not presenting and not STUDENT_VIEW:
        if problem:
            st.warning(problem)
        elif view == TEACHER and not key:
            st.warning(missing_key(board))
    st.title(f"Class board: “{board.word}”")
    st.caption((f"Senses: **{md_escape(' / '.join(board.senses))}** · " if board.senses else "")
               + f"BERT: **{md_escape(board.bert_source)}** · ELMo: **{md_escape(board.elmo_source)}** "
               "(the models this board was made with)")
    teacher = bool(key) and not presenting
    if key or presenting:
        present_switch(presenting)
    if teacher:
        ub.keep_in_browser(board, key)
    if not STUDENT_VIEW:
        join_panel(board)
    if teacher:
        teacher_links(board, key)
    live(board.id)
    if teacher:
        moderation(board, key)


code = rules.normalise_code(state.get("board") or "")
if code:
    show_board(code)
else:
    board_gone_notice()
    create_form()
    open_form()
state.sync_url()
