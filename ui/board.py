"""What the class board's pages share: the board store, the teacher's key, the join links,
and the projector's picture of the room's sentences.

The store (``lab.board.store.BoardStore``) is one per server and shared by every session:
several servers share a board through one database (``LAB_BOARD_DB``). The teacher's key
is held by the session that has it (``keep_key``) and by the teacher's browser, in an
HttpOnly cookie that ``ui.server.teach`` sets and every new session of that browser reads
back (``teacher_key``): a reload, a server restart or a failover keeps the teacher's
controls. It is never in the address bar: an old link's ``?key=`` is taken out as soon as
it was read (``take_key``), so that the app's own copy of a page's settings into the URL
never carries it and a projector or a screenshot of the address bar never shows it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from dataclasses import dataclass

import numpy as np

import streamlit as st

from lab.board import links, maps
from lab.board.store import Board, BoardStore, Entry
from ui import model_cache
from ui import cookies
from ui.text import md_escape

# The board's code in the link (?board= on the board page, ?code= on the join page)
BOARD_PARAM = "board"
KEY_PARAM = "key"
# The board page's view for the teacher (``board_view=``), where the teacher link lands.
TEACHER_VIEW = links.TEACHER_VIEW


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


def teacher_key(board: Board, from_browser: bool = False) -> str | None:
    """The teacher key this session holds for ``board``; with ``from_browser``, or else the
    one this browser keeps in its cookie for it, where that is the board's (kept in the
    session from then on). None: a projector or a student. Only a tab that asks for the
    teacher's view takes the browser's key: the projector link opened in the teacher's own
    browser (a second screen) stays the projector's."""
    key = _keys().get(board.id)
    if key is None and from_browser:
        kept = browser_key(board)
        if kept and store().is_teacher(board.id, kept):
            keep_key(board, kept)
            key = kept
    return key


def browser_key(board: Board) -> str | None:
    """The teacher key this browser keeps in its cookie for ``board`` (``ui.server.teach``),
    unchecked; None without one (a projector, AppTest)."""
    value = st.context.cookies.get(links.teach_cookie(board.code))
    return value if isinstance(value, str) and value else None


def keep_in_browser(board: Board, key: str) -> None:
    """Have this browser keep ``board``'s key, once per session where it does not already:
    a script asks the teacher link's route (``ui.server.teach``) in the background, whose
    answer sets the cookie. The session keeps its key meanwhile, so a browser that refuses
    cookies loses nothing now; it is then the teacher only until this session ends."""
    done = st.session_state.setdefault("_board_kept_in_browser", set())
    if board.id in done or browser_key(board) == key:
        return
    done.add(board.id)
    query = json.dumps(f"?board={board.code}&key={key}")  # URL-safe characters only
    # (no "<" followed by a letter in the script: the page's HTML sanitiser drops such a script)
    st.html(rf"""<script>
(() => {{
  const here = window.location.pathname.replace(/\/+$/, "");  // this page, the board's
  fetch(here + "/{links.TEACH_PAGE}" + {query}, {{credentials: "same-origin", redirect: "manual",
                                                cache: "no-store"}}).catch(() => {{}});
}})();
</script>""", unsafe_allow_javascript=True)


def copy_button(text: str, label: str, fallback: str) -> None:
    """A button that copies ``text`` to the clipboard without drawing it. The clipboard
    needs a secure context (HTTPS, or this machine's own address): elsewhere the button is
    off and says to use ``fallback`` instead."""
    at = "lab-copy-" + hashlib.sha1(label.encode()).hexdigest()[:8]  # the same element on every run
    st.html(rf"""<div><button type="button" id="{at}" style="padding: 0.4rem 0.8rem; border-radius: 0.5rem;
  border: 1px solid rgba(128, 128, 128, 0.5); background: transparent; color: inherit; font: inherit;
  cursor: pointer">{label}</button> <span id="{at}-said" role="status"></span></div>
<script>
(() => {{
  const button = document.getElementById("{at}"), said = document.getElementById("{at}-said");
  if (!button) return;
  const text = {json.dumps(text)}, instead = {json.dumps(fallback)};
  if (!window.isSecureContext || !navigator.clipboard) {{
    button.disabled = true;
    said.textContent = "Copying needs HTTPS or this machine's own address (localhost): " + instead;
    return;
  }}
  button.addEventListener("click", () => navigator.clipboard.writeText(text).then(
    () => {{ said.textContent = "Copied."; }},
    () => {{ said.textContent = "The browser did not allow copying: " + instead; }}));
}})();
</script>""", unsafe_allow_javascript=True)


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
    """The board with ``code``, counting this browser's failed look-ups with the join
    page's (``lab.board.join.find_board``): after ``LOOKUPS_PER_MINUTE`` wrong codes in a
    minute, the next look-up waits (a message, no look-up)."""
    from lab.board import join

    return join.find_board(store(), code, browser_id())


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
    from lab.board.maps import UseVectors

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
    """This browser's identifier for the board's per-browser limits (``ui.cookies``)."""
    return cookies.browser_id()


def new_token() -> str:
    """A submission's token: the store keeps one sentence per token (a double click)."""
    return secrets.token_urlsafe(16)


def log_failure(what: str, exc: BaseException) -> None:
    """Log ``exc`` with its traceback (the page says, in its own words, what did not happen)."""
    logging.getLogger(__name__).error("%s failed", what, exc_info=exc)


@st.cache_resource(show_spinner=False)
def _frame_chains():
    from lab.board.maps import FrameChains

    return FrameChains()


@dataclass(frozen=True)
class Room:
    """What the projector draws at one revision of a board: the visible sentences, each
    model's (layer names, (N, U, C) vectors) of their uses, its map at every layer
    (``lab.board.maps.board_frames``: the same on every projector of the board), and
    each model's separation."""

    revision: tuple[int, int]  # (board id, revision)
    entries: list[Entry]
    waiting: int  # sentences held for the teacher's approval
    found: dict[str, tuple[list[str], np.ndarray]]
    tests: dict[str, maps.Separation]
    frames: dict[str, list[maps.Frame]]  # family -> (N,) frames of ``entries``' uses

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
            tests[family] = maps.separation(vectors, senses, names)
            # replayed from the sentences in arrival order: a server's every session, and every
            # server, draws this map; the server's chains resume from the last revision's
            frames[family] = _frame_chains().frames((family, model.source, board.pool), list(zip(texts, uses)),
                                                    [e.id for e in entries], vectors, names)
    made = Room(at, entries, len(every) - len(entries), found, tests, frames)
    st.session_state["_board_room"] = made
    return made
