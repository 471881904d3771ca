"""State that survives page switches and lives in the URL.

Every value a person sets (sentences, selected tokens, layer, projector mode, ...) is kept
under a *persistent* key in ``st.session_state`` and mirrored into ``st.query_params``, so
a bookmarked or shared link reopens the same view. Widgets get their own key
(``_w_<key>``) that is refilled from the persistent key before each render: Streamlit
drops a widget's state when a page without that widget runs, the persistent key stays.

A link's value that its widget cannot show (a word past the sentence's end, ``nan`` on a
slider, an option not offered) is replaced, and the page says so once, above everything
else (``link_notices``, drawn by ``ui.frame``).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

import streamlit as st

from ui import errors
from ui.text import md_code


# key -> default. Pages register their own keys with ``register``.
_DEFAULTS: dict[str, Any] = {}
# Earlier names of keys -> their names now. Links already out there (bookmarks, shared
# links) carry them: ``register`` reads a value under either name, and ``sync_url`` writes
# it back under the name of now.
RENAMED = {
    "bert_ta": "bert_word_a", "bert_tb": "bert_word_b", "cmp_wa": "cmp_word_a", "cmp_wb": "cmp_word_b",
    "elmo_wa": "elmo_word_a", "elmo_wb": "elmo_word_b", "elmo_g": "elmo_gamma",
    "att_head": "att_block_head", "att_row": "att_block_row", "att_brow": "att_bert_row",
    "att_bhead": "att_bert_head", "att_tok": "att_query",
}
_EARLIER = {new: old for old, new in RENAMED.items()}


def register(**defaults: Any) -> None:
    """Declare persistent keys with their defaults (type taken from the default)."""
    _DEFAULTS.update(defaults)
    loaded = st.session_state.setdefault("_url_loaded", set())
    params = st.query_params
    for key, default in defaults.items():
        if key in loaded:
            continue
        loaded.add(key)
        name = key if key in params or key not in _EARLIER else _EARLIER[key]  # the link's name for it
        if name in params and key not in st.session_state:
            st.session_state[key] = _from_link(key, params[name], default, name)
        st.session_state.setdefault(key, default)


def _from_link(key: str, text: str, default: Any, name: str | None = None) -> Any:
    """The link's ``text`` for ``key`` (under ``name`` in the link, by default ``key``) read
    as ``default``'s type (``default`` where it cannot be); kept with it until the key's
    widget says whether it can show it (``_settle``)."""
    try:
        value, why = _parse(text, default), ""
    except ValueError as exc:
        value, why = default, str(exc)
    if value != default or why:
        st.session_state.setdefault("_link_values", {})[key] = (f"{name or key}={text}", value, why)
    return value


def _parse(text: str, default: Any) -> Any:
    """``text`` read as the type of ``default``; ValueError saying, for a person, what it is not."""
    if isinstance(default, bool):
        if text.strip().lower() in ("1", "true", "yes", "on"):
            return True
        if text.strip().lower() in ("0", "false", "no", "off", ""):
            return False
        raise ValueError("is not on or off (1 or 0)")
    if isinstance(default, (int, float)):
        try:
            value = type(default)(text)
        except ValueError:
            raise ValueError("is not a whole number" if isinstance(default, int) else "is not a number") from None
        if not math.isfinite(value):  # "nan", "inf"
            raise ValueError("is not a number" if math.isnan(value) else "is not a finite number")
        return value
    return text


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def get(key: str) -> Any:
    return st.session_state.get(key, _DEFAULTS.get(key))


def put(key: str, value: Any) -> None:
    """Set a persistent value (its widget picks it up on the next run)."""
    st.session_state[key] = value


def reset_when_changed(basis: Any, **defaults: Any) -> None:
    """Reset keys to ``defaults`` when ``basis`` (e.g. the sentences) changed since last run.

    Token selections are indices into a sentence: once the sentence is edited they would
    point at other words. The first run of a session trusts what the URL says.
    """
    marker = "_basis_" + "_".join(sorted(defaults))
    if marker in st.session_state and st.session_state[marker] != basis:
        for key, value in defaults.items():
            st.session_state[key] = value
    st.session_state[marker] = basis


# Controls made of option buttons: in single-selection mode a click on the selected option
# would clear it (the widget's value becomes None) unless the control is ``required``.
_BUTTON_GROUPS = (st.pills, st.segmented_control)


def widget(fn: Callable, key: str, *args, **kwargs):
    """Render ``fn(*args, **kwargs)`` bound to the persistent ``key``.

    Returns the widget's value. ``on_change`` callbacks still run after the copy. Where the
    widget cannot show the persistent value (a token index from a longer, older sentence, a
    link's 50 on a slider to 10), it shows ``fallback`` (a keyword; default: the key's
    default) instead. A single-choice ``st.pills`` or ``st.segmented_control`` is always
    ``required``: a second click on its selected option keeps it selected, on every page.
    """
    if fn in _BUTTON_GROUPS and kwargs.get("selection_mode", "single") == "single":
        kwargs["required"] = True
    wkey = f"_w_{key}"
    value = _settle(key, kwargs.pop("fallback", _DEFAULTS.get(key)), args[0] if args else "", kwargs)
    st.session_state[wkey] = value
    user_cb = kwargs.pop("on_change", None)

    def copy_back():
        st.session_state[key] = st.session_state[wkey]
        if user_cb:
            user_cb()

    return fn(*args, key=wkey, on_change=copy_back, **kwargs)


def choice(fn: Callable, key: str, label: str, options, fallback: Any, **kwargs) -> Any:
    """A single-choice control (``st.pills``, ``st.segmented_control``) bound to ``key``
    that always holds one of ``options``: a stored value that is not among them (from a
    link, or an index into a sentence since edited) becomes ``fallback``, also before an
    ``on_change`` callback reads it. Returns the chosen option."""
    options = list(options)
    user_cb = kwargs.pop("on_change", None)

    def keep_a_choice() -> None:
        if get(key) not in options:
            put(key, fallback)
        if user_cb:
            user_cb()

    if get(key) is None:  # no choice yet: a link's value, whatever it is, is told of by ``widget``
        put(key, fallback)
    widget(fn, key, label, options=options, fallback=fallback, on_change=keep_a_choice, **kwargs)
    return get(key)


def _allowed(value: Any, kwargs: dict) -> bool:
    """Whether a widget made with ``kwargs`` can show ``value`` (Streamlit raises on one
    outside its options or its ``min_value``/``max_value``)."""
    if value is None:
        return True
    if "options" in kwargs:
        return value in list(kwargs["options"])
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        low, high = kwargs.get("min_value"), kwargs.get("max_value")
        return math.isfinite(value) and (low is None or value >= low) and (high is None or value <= high)
    return True


def _settle(key: str, fallback: Any, label: str, kwargs: dict) -> Any:
    """The value of ``key`` if a widget made with ``kwargs`` can show it, else ``fallback``
    (stored). Where the value came from the link, the page says what it shows instead
    (``link_notices``), once: in the run that opened the link, not in a fragment's rerun."""
    value = st.session_state.get(key, _DEFAULTS.get(key))
    text, asked, why = st.session_state.get("_link_values", {}).pop(key, (None, None, ""))
    from_link = text is not None and asked == value  # not since changed by the page
    if not _allowed(value, kwargs):
        why = why or _refusal(value, kwargs)
        value = fallback
        st.session_state[key] = value
    if from_link and why and not _fragment_rerun():
        where = f" in “{label}”" if label else " here"
        notice = (f"The link's {md_code(text)} cannot be shown{where}: it {why}; "
                  f"showing {_shown(value, kwargs)} instead.")
        st.session_state.get("_link_notices", st).info(notice, icon=":material/link:")
    return value


def _refusal(value: Any, kwargs: dict) -> str:
    """Why a widget made with ``kwargs`` cannot show ``value`` (``_allowed`` said so), for a person."""
    if "options" in kwargs:
        options = list(kwargs["options"])
        if len(options) > 4:
            return f"is not one of its {len(options)} choices"
        return "is not one of its choices (" + ", ".join(_shown(o, kwargs) for o in options) + ")"
    if isinstance(value, float) and not math.isfinite(value):
        return "is not a finite number"
    low, high = kwargs.get("min_value"), kwargs.get("max_value")
    if low is not None and high is not None:
        return f"is outside its range, {low} to {high}"
    return f"is below its least value, {low}" if low is not None else f"is above its greatest value, {high}"


def _shown(value: Any, kwargs: dict) -> str:
    """``value`` as its widget shows it: its option's label in quotes, or the number."""
    if value is None:
        return "no choice"
    if "format_func" in kwargs:
        return f"“{str(kwargs['format_func'](value)).replace(chr(0x200B), '')}”"  # pills' zero-width spaces
    return str(value) if isinstance(value, (int, float)) else f"“{value}”"


def _fragment_rerun() -> bool:
    """True while a fragment reruns alone (it may not write above itself)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(ctx and ctx.fragment_ids_this_run)


def link_notices() -> None:
    """Where this run says which values of the link it cannot show: a container at the
    caller's place (``ui.frame``: the top of every page), which ``widget`` fills. A link
    value no widget of the run showed is then replaced, when one does, without a word."""
    st.session_state["_link_values"] = {}
    st.session_state["_link_notices"] = st.container()


def sync_url() -> None:
    """Write every persistent value that differs from its default into the URL."""
    params = st.query_params
    # a copy: the defaults are shared by every session, and another one's first run of a
    # page may be registering its keys meanwhile
    for old in RENAMED:
        if old in params:
            del params[old]  # written under its name of now below
    for key, default in dict(_DEFAULTS).items():
        value = st.session_state.get(key, default)
        if value is None or value == default:
            if key in params:
                del params[key]
        elif params.get(key) != _format(value):
            params[key] = _format(value)


def fragment(fn: Callable | None = None, *, key: str | None = None) -> Callable:
    """``st.fragment`` that writes the URL when it is done; ``key`` names it, so that a
    widget elsewhere can rerun it (``rerun``).

    A fragment rerun does not reach the page's last line, where the page writes the URL,
    nor app.py's guard: every interactive section is declared with this instead of
    ``st.fragment``. A section that fails shows the app's message in its place
    (``ui.errors.guard``; it returns None then), and the rest of the page is drawn.
    """

    def wrap(fn: Callable) -> Callable:
        @st.fragment(key=key)
        @functools.wraps(fn)
        def run(*args, **kwargs):
            try:
                with errors.guard():
                    return fn(*args, **kwargs)
            finally:
                sync_url()

        return run

    return wrap(fn) if fn is not None else wrap


def rerun(*keys: str) -> None:
    """From a widget's callback: rerun the fragments named ``keys`` (``fragment(key=...)``)
    instead of the one the widget sits in (a control whose value another fragment draws)."""
    st.rerun(list(keys))


# How often the empty fragment of ``rerun_after_reconnect`` reruns itself (seconds): rarely.
RECONNECT_FRAGMENT_EVERY_S = 3600


def rerun_after_reconnect() -> None:
    """Have a tab that reconnects run its page again in full, from its URL and widgets.

    A server keeps a closed tab's session a few seconds (``.streamlit/config.toml``); a tab
    that comes back later, or after a restart of the server, gets a new session that has
    run nothing. Streamlit's browser client asks for a full run on reconnecting only where
    the page has a fragment that reruns itself (``run_every``); otherwise its next click
    asks the new session to rerun a fragment it never registered, which Streamlit drops,
    and that click and every later one change nothing. This empty fragment reruns itself
    once an hour, which costs nothing, and makes every reconnect a full run.
    """
    _reconnect_fragment()


@st.fragment(run_every=RECONNECT_FRAGMENT_EVERY_S)
def _reconnect_fragment() -> None:
    pass
