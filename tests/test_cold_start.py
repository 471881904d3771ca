"""A class opening the link of a freshly started server at once, over Streamlit's own
websocket protocol (harness/served.py): every session gets its page, none an exception.

Before ``ui.imports.import_serially`` 1 to 6 of 8 such sessions got "partially initialized
module 'pandas'..." (Plotly found a half-imported pandas), and a page's first run could
iterate the shared URL defaults while another session's first run added to them."""

import asyncio
import concurrent.futures

import pytest

from harness.served import CLICKS, Session, new_sentences
from tests.browser import serve_app

pytestmark = pytest.mark.browser  # a served app, like the browser tests

PAGES = ("bert", "elmo", "attention", "compare")


@pytest.fixture(scope="module")
def fresh_server(tmp_path_factory):
    with serve_app(tmp_path_factory) as srv:
        yield srv.url


def test_eight_sessions_opening_pages_of_a_fresh_server_at_once_all_get_their_page(fresh_server):
    async def one(i: int):
        s = Session(fresh_server)
        await s.connect()
        try:
            page = PAGES[i % len(PAGES)]
            result = await s.open(page, *new_sentences(i, "cold"), timeout=300)
            return page, result, set(s.widgets)
        finally:
            await s.close()

    async def everyone():
        return await asyncio.gather(*(one(i) for i in range(8)))

    # in a thread of its own: the browser tests' Playwright keeps an event loop running in this one
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        results = pool.submit(asyncio.run, everyone()).result()
    for page, result, widgets in results:
        assert result.errors == [], f"{page}: {result.errors}"
        assert result.status == 0  # FINISHED_SUCCESSFULLY
        if page in CLICKS:
            assert CLICKS[page] in widgets  # the page itself was drawn, with its word pills
