"""The server (serve.py) purges expired class boards on its own, from its start, with no
board opened: a laptop that is rarely started loses its old boards when it is."""

from __future__ import annotations

import asyncio
import time

from lab.board import store
from lab.board.store import BoardStore


def test_the_server_purges_expired_boards_when_it_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("LAB_BOARD_DB", raising=False)
    kept_store = BoardStore()
    kept, _ = kept_store.create("bat", (), bert_source="embedded", elmo_source="embedded")
    old = BoardStore(days=1, clock=lambda: time.time() - 2 * 86400)  # made two days ago: expired
    expired, _ = old.create("bank", (), bert_source="embedded", elmo_source="embedded")
    old.submit(expired.id, "The bank.", None, browser="b", token="t")
    old.dispose()

    import serve

    monkeypatch.setattr(serve.warmup, "start", lambda: None)  # no models: only the board's part of the start

    async def serve_a_while() -> None:
        async with serve.lifespan(None):
            deadline = time.monotonic() + 60
            while kept_store.get(expired.id) is not None and time.monotonic() < deadline:
                await asyncio.sleep(0.05)

    try:
        asyncio.run(serve_a_while())
        assert kept_store.get(expired.id) is None and kept_store.entries(expired.id) == []
        assert kept_store.get(kept.id) is not None
    finally:
        kept_store.dispose()
        shared = store._shared.pop(store.board_url(), None)
        if shared is not None:
            shared.dispose()
