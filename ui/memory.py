"""A shared server's memory in a class: closed tabs let go of what they held soon, and the
memory they held goes back to the system.

Streamlit keeps a closed tab's session (its state, and the results its page's fragments
rerun from) for ``server.disconnectedSessionTTL`` seconds, so that a tab whose connection
dropped can resume it; and its store drops an expired session only when another tab
disconnects (it expires lazily). Here every view lives in its URL (``ui.state``): a tab
that comes back after its session has gone gets a new one, which reopens the same view (a
browser test restarts the server under an open tab and clicks on). So
``.streamlit/config.toml`` keeps a closed session 5 s, and ``start`` sweeps the expired
ones out every ``SWEEP_EVERY_S`` and gives what they held back to the system (glibc's
``malloc_trim``), with glibc's malloc arenas capped at ``MALLOC_ARENAS``: with one arena
per busy thread, memory freed in one arena is not reused by another, and a burst of
sessions left each arena as large as its busiest moment. ``freeze_heap`` keeps the garbage
collector off what lives as long as the server (the models, the libraries).

With these and the bounded result caches (``ui.model_cache``), a server's memory stops growing
once those caches are full (``bench/load.py``: 20 new sessions at once, repeated).
"""

from __future__ import annotations

import ctypes
import functools
import gc
import logging
import threading
import time

_LOG = logging.getLogger(__name__)
SWEEP_EVERY_S = 2.0
MALLOC_ARENAS = 2
_M_ARENA_MAX = -8  # mallopt's parameter number for M_ARENA_MAX (glibc's malloc.h)
_started = threading.Lock()
_sweeper: threading.Thread | None = None


@functools.cache
def _glibc():
    """The process's C library if it is glibc (it has ``malloc_trim``), else None; looked up once."""
    libc = ctypes.CDLL(None)  # the symbols the process has loaded, its C library's among them
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


def cap_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Let glibc create at most ``arenas`` malloc arenas from now on (as
    ``MALLOC_ARENA_MAX`` would at start-up); False where the C library is not glibc."""
    libc = _glibc()
    return bool(libc and libc.mallopt(_M_ARENA_MAX, arenas))


def give_back() -> bool:
    """Return free heap memory to the system (``malloc_trim(0)``): True if any was."""
    libc = _glibc()
    return bool(libc and libc.malloc_trim(0))


def freeze_heap() -> None:
    """Collect what is garbage now, then keep the collector off every surviving object
    (``gc.freeze``): a loaded model and the libraries live as long as the server, and a
    collection that no longer walks them stays cheap."""
    gc.collect()
    gc.freeze()


def drop_expired(manager) -> int:
    """Remove the expired sessions from a Streamlit session manager's store now, under its
    lock; returns how many went. A manager without such a store (another Streamlit) drops
    none."""
    lock = getattr(manager, "_storage_lock", None)
    cache = getattr(getattr(manager, "_session_storage", None), "_cache", None)
    if lock is None or cache is None:
        return 0
    with lock:
        held = len(getattr(cache, "_data", ()))
        live = len(cache)  # a length query removes the expired entries (streamlit.runtime.caching.ttl_cache)
    return max(held - live, 0)


def sweep_once() -> int:
    """``drop_expired`` on the running server's session manager, then ``give_back`` when
    any went; returns how many went (0 outside a running server)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return 0
    dropped = drop_expired(getattr(Runtime.instance(), "_session_mgr", None))
    if dropped:
        give_back()
    return dropped


def _sweep_forever() -> None:
    while True:
        time.sleep(SWEEP_EVERY_S)
        try:
            sweep_once()
        except Exception:  # noqa: BLE001 - a failed sweep must not end the thread or the server
            _LOG.debug("session sweep failed", exc_info=True)


def start() -> threading.Thread:
    """Once per process (app.py calls it on every run): cap the malloc arenas and start the
    sweeping thread; returns that thread."""
    global _sweeper
    with _started:
        if _sweeper is None:
            cap_arenas()
            _sweeper = threading.Thread(target=_sweep_forever, name="lab-session-sweep", daemon=True)
            _sweeper.start()
        return _sweeper
