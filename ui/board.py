"""What the class board's pages share: the board store, the teacher's key, the join links,
and the projector's picture of the room's sentences.

The store (``lab.board.store.BoardStore``) is one per server and shared by every session:
several servers share a board through one database (``LAB_BOARD_DB``). The teacher's key
lives in this session only, taken out of the address bar as soon as it was read
(``take_key``), so that the app's own copy of a page's settings into the URL never carries
it and a projector or a screenshot of the address bar never shows it.
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass

import numpy as np

import streamlit as st

from lab.board import analysis, links, rules
from lab.board.store import Board, BoardStore, Entry
from ui import model_cache
from ui.server import cookies
from ui.text import md_escape

# The board's code in the link (?board= on the board page, ?code= on the join page)
BOARD_PARAM = "board"
KEY_PARAM = "key"
# Wrong codes a session may try in a minute before it must wait: six characters from
# the code alphabet are too many to guess, and this keeps a script from trying.
LOOKUPS_PER_MINUTE = 8


def store() -> BoardStore:
    """This server's board store (``LAB_BOARD_DB``, or SQLite in ``LAB_DATA_DIR``); a store
    that cannot open says why and stops the page."""
    from lab.board.store import shared_store

    try:
        return shared_store()
    except Exception as exc:  # noqa: BLE001 - a database that cannot open: the page says so
        st.error(f"The class board's database cannot be opened: {md_escape(str(exc).splitlines()[0])}. "
                 "Check LAB_BOARD_DB (or LAB_DATA_DIR) on the server.")
        st.stop()


def _keys() -> dict[int, str]:
    return st.session_state.setdefault("_board_keys", {})


def keep_key(board: Board, key: str) -> None:
    """Remember in this session that it holds ``board``'s teacher key."""
    _keys()[board.id] = key


def teacher_key(board: Board) -> str | None:
    """The teacher key this session holds for ``board`` (None: a projector or a student)."""
    return _keys().get(board.id)


def take_key(board: Board | None) -> str | None:
    """Read the teacher key from the address bar and take it out of it at once; keep it in
    the session where it matches ``board``. Returns a message where it does not."""
    params = st.query_params
    if KEY_PARAM not in params:
        return None
    key = params[KEY_PARAM]
    del params[KEY_PARAM]
    if board is None:
        return None
    if store().is_teacher(board.id, key):
        keep_key(board, key)
        return None
    return ("The teacher key in this link does not belong to this board: the board is shown as the "
            "projector sees it. Open the teacher link you kept when you made the board.")


def find_board(code: str) -> Board | None:
    """The board with ``code``, counting this session's failed look-ups: after
    ``LOOKUPS_PER_MINUTE`` wrong codes in a minute, the next look-up waits (a message, no
    look-up)."""
    now = time.monotonic()
    failed = [t for t in st.session_state.get("_board_misses", []) if now - t < 60]
    if len(failed) >= LOOKUPS_PER_MINUTE:
        wait = int(60 - (now - failed[0])) + 1
        raise rules.Refused("too_fast", f"Too many codes that do not exist were tried from this page. "
                                        f"Try again in {wait} s, and check the code with your teacher.")
    board = store().find(code)
    if board is None:
        st.session_state["_board_misses"] = [*failed, now]
    return board


def app_base(page: str) -> tuple[str | None, list[str]]:
    """The base of the links students open, and where the teacher's browser shows only this
    machine (``localhost``), this machine's network addresses to choose from instead.
    ``LAB_PUBLIC_URL`` (a server behind a proxy) wins over both."""
    public = links.public_url()
    if public:
        return public, []
    base = links.app_base(st.context.url, page)
    if base is None or not links.is_local(base):
        return base, []
    return base, [links.with_host(base, host) for host in links.network_addresses()]


@st.cache_resource(show_spinner=False)
def _use_cache():
    from lab.board.analysis import UseVectors

    return UseVectors()


def use_vectors(model, family: str, source: str, pool: str, texts: list[str], uses: list[int]):
    """(layer names, (N, U, C) vectors) of the uses, from this server's cache of the board's
    sentences: a projector's redraw runs the model only on sentences it has not seen."""
    cache = _use_cache()
    with st.spinner(f"Reading the new sentences with {family.upper()}..."):
        vectors = cache.vectors(model, family, source, pool, texts, uses)
    return cache.layer_names(family, source), vectors


def board_run(board: Board, family: str, entries) -> object:
    """``LayerVectors`` of ``entries``' sentences (one row each) for the ``.npz`` download."""
    from lab.tokenize import split_words

    source = board.bert_source if family == "bert" else board.elmo_source
    model = model_cache.model(family, source)
    texts = [e.text for e in entries]
    return model.run(texts) if family == "bert" else model.run([split_words(t) for t in texts])


def browser_id() -> str:
    """This browser's identifier for the board's per-browser limits (``ui.server.cookies``)."""
    return cookies.browser_id()


def new_token() -> str:
    """A submission's token: the store keeps one sentence per token (a double click)."""
    return secrets.token_urlsafe(16)


def log_failure(what: str, exc: BaseException) -> None:
    """Log ``exc`` with its traceback (the page says, in its own words, what did not happen)."""
    logging.getLogger(__name__).error("%s failed", what, exc_info=exc)


@st.cache_resource(show_spinner=False)
def _frame_chains():
    from lab.board.analysis import FrameChains

    return FrameChains()


@dataclass(frozen=True)
class Room:
    """What the projector draws at one revision of a board: the visible sentences, each
    model's (layer names, (N, U, C) vectors) of their uses, its map at every layer
    (``lab.board.analysis.board_frames``: the same on every projector of the board), and
    each model's separation."""

    revision: tuple[int, int]  # (board id, revision)
    entries: list[Entry]
    waiting: int  # sentences held for the teacher's approval
    found: dict[str, tuple[list[str], np.ndarray]]
    tests: dict[str, analysis.Separation]
    frames: dict[str, list[analysis.Frame]]  # family -> (N,) frames of ``entries``' uses

    @property
    def senses(self) -> list[str | None]:
        return [e.sense for e in self.entries]


def room(board: Board) -> Room:
    """The board at its revision, read and computed once per revision in this session: the
    projector polls every second, and a poll that finds the same revision reads nothing
    more. The sentences are in arrival order (the store's). A model that cannot load says
    why and stops the view."""
    at = (board.id, board.revision)
    kept = st.session_state.get("_board_room")
    if kept is not None and kept.revision == at:
        return kept
    every = store().entries(board.id, hidden=False)
    entries = [e for e in every if e.approved]
    found, tests, frames = {}, {}, {}
    if not entries:  # load the models now: the room's first sentence must not wait for them
        for family, source in (("bert", board.bert_source), ("elmo", board.elmo_source)):
            model_cache.model(family, source)
    else:
        texts, uses, senses = [e.text for e in entries], [e.use_index for e in entries], [e.sense for e in entries]
        for family, source in (("bert", board.bert_source), ("elmo", board.elmo_source)):
            model = model_cache.model(family, source)  # one that cannot load: says so, and the embedded one
            names, vectors = use_vectors(model, family, model.source, board.pool, texts, uses)
            found[family] = (names, vectors)
            tests[family] = analysis.separation(vectors, senses, names)
            # replayed from the sentences in arrival order: a server's every session, and every
            # server, draws this map; the server's chains resume from the last revision's
            frames[family] = _frame_chains().frames((family, model.source, board.pool), list(zip(texts, uses)),
                                                    [e.id for e in entries], vectors, names)
    made = Room(at, entries, len(every) - len(entries), found, tests, frames)
    st.session_state["_board_room"] = made
    return made
