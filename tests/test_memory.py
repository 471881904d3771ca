"""ui.memory: closed tabs' sessions swept out once expired, and the malloc controls."""

from __future__ import annotations

import tomllib
import types
from pathlib import Path

from streamlit.runtime.caching.ttl_cache import TTLCache
from streamlit.runtime.memory_session_storage import MemorySessionStorage
from streamlit.runtime.session_manager import SessionInfo
from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

from ui import memory

ROOT = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _manager(ttl: float, clock: Clock) -> WebsocketSessionManager:
    """Streamlit's own session manager and store, the store on ``clock``."""
    storage = MemorySessionStorage(ttl_seconds=ttl)
    storage._cache = TTLCache(maxsize=128, ttl=ttl, timer=clock)
    return WebsocketSessionManager(session_storage=storage, uploaded_file_manager=None, script_cache=None,
                                   message_enqueued_callback=None)


def _closed_session(manager, session_id: str) -> None:
    """What Streamlit stores for a tab that disconnected (``disconnect_session``)."""
    manager._session_storage.save(SessionInfo(client=None, session=types.SimpleNamespace(id=session_id)))


def test_expired_sessions_are_dropped_at_once_and_live_ones_kept():
    clock = Clock()
    manager = _manager(ttl=5, clock=clock)
    _closed_session(manager, "a")
    clock.now = 3.0
    _closed_session(manager, "b")
    assert memory.drop_expired(manager) == 0
    clock.now = 6.0  # "a" expired, "b" not: Streamlit's store still holds both until a write
    assert len(manager._session_storage._cache._data) == 2
    assert memory.drop_expired(manager) == 1
    assert list(manager._session_storage._cache._data) == ["b"]
    assert manager._session_storage.get("b") is not None  # a tab can still resume "b"
    clock.now = 9.0
    assert memory.drop_expired(manager) == 1
    assert manager._session_storage.list() == []


def test_a_manager_without_such_a_store_drops_nothing():
    assert memory.drop_expired(None) == 0
    assert memory.drop_expired(types.SimpleNamespace(_storage_lock=None)) == 0


def test_no_sweep_outside_a_running_server():
    assert memory.sweep_once() == 0  # no Streamlit runtime in this process


def test_the_arena_cap_is_taken_on_glibc():
    assert memory.cap_arenas() is True  # the machines here run Debian's glibc


def test_start_is_once_per_process():
    first = memory.start()
    assert memory.start() is first and first.is_alive() and first.daemon


def test_closed_sessions_are_kept_briefly():
    """The server keeps a closed tab's session 5 s (Streamlit's default is 120 s): the view
    lives in the URL (tests/test_browser_bert.py restarts the server under an open tab)."""
    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]
    assert server["disconnectedSessionTTL"] == 5
    assert memory.SWEEP_EVERY_S < server["disconnectedSessionTTL"]
