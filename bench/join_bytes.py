"""What a phone downloads to open a board's join page, in Chromium; or a laptop another page.

    python bench/join_bytes.py [--root CHECKOUT] [--cold] [--page PATH]

Serves the app of ``--root`` (default: this checkout) on a new SQLite boards database
(``LAB_DATA_DIR``), makes a board, and opens its join link on a phone (390x844, touch,
an empty cache) until the sentence box shows, then 3 s more: every response's bytes as
they came over the wire (Chromium's ``encodedDataLength``), how many responses, and the
bytes of websocket frames received (a Streamlit page's messages). By default the server
is warm: one phone has opened the page before the one measured (``--cold``: the first).
A checkout whose join page is a Streamlit page works too (its old figure).

``--page PATH`` (``bert``, ``elmo?proj=1``, ...) measures that page of the app instead, on a
laptop's 1280x800 window with an empty cache, until its first figure shows, then 3 s more:
what each device's first visit to a page a class opens downloads.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.served import ROOT, Server
from lab.board import links
from lab.board.store import BoardStore
from harness.chromium import CHROMIUM, CHROMIUM_ARGS

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
LAPTOP = {"viewport": {"width": 1280, "height": 800}}
SENTENCE_BOX = ("the sentence box", lambda pg: pg.get_by_label("Your sentence"))
FIGURE = ("the first figure", lambda pg: pg.locator('[data-testid="stPlotlyChart"]'))


def measure(browser, url: str, device: dict = PHONE, shown=SENTENCE_BOX) -> dict:
    context = browser.new_context(**device)
    try:
        pg = context.new_page()
        cdp = context.new_cdp_session(pg)
        cdp.send("Network.enable")
        seen = {"bytes": 0, "responses": 0, "ws_bytes": 0, "largest": []}
        urls: dict[str, str] = {}
        cdp.on("Network.responseReceived", lambda e: urls.__setitem__(e["requestId"], e["response"]["url"]))

        def finished(e):
            seen["responses"] += 1
            seen["bytes"] += e["encodedDataLength"]
            seen["largest"].append((e["encodedDataLength"], urls.get(e["requestId"], "?")))

        cdp.on("Network.loadingFinished", finished)
        cdp.on("Network.webSocketFrameReceived",
               lambda e: seen.__setitem__("ws_bytes", seen["ws_bytes"] + len(e["response"]["payloadData"])))
        t0 = time.perf_counter()
        pg.goto(url)
        shown[1](pg).first.wait_for(timeout=180_000)
        seen["shown_s"] = time.perf_counter() - t0
        pg.wait_for_timeout(3000)
        seen["largest"] = sorted(seen["largest"], reverse=True)[:3]
        return seen
    finally:
        context.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout to serve (default: this one)")
    ap.add_argument("--cold", action="store_true", help="measure the first phone of a just-started server")
    ap.add_argument("--page", help="an app page's path and query (bert, elmo?proj=1) on a laptop, not the join page")
    a = ap.parse_args(argv)
    data = Path(tempfile.mkdtemp(prefix="lab-join-bytes-"))
    srv = Server(root=a.root.resolve(), env={"LAB_DATA_DIR": str(data), "LAB_WARMUP": "0"}).start()
    if a.page is None:
        store = BoardStore(f"sqlite:///{data / 'boards.sqlite3'}")
        board, _ = store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded")
        store.dispose()
        url, device, shown, name = links.join_link(srv.url, board.code), PHONE, SENTENCE_BOX, "the join page"
    else:
        url, device, shown, name = f"{srv.url}/{a.page.lstrip('/')}", LAPTOP, FIGURE, f"/{a.page.lstrip('/')}"
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            if not a.cold:
                measure(browser, url, device, shown)
            got = measure(browser, url, device, shown)
            browser.close()
    finally:
        srv.stop()
    print(f"{a.root.resolve()} ({'cold' if a.cold else 'warm'} server): {name} in "
          f"{got['responses']} responses, {got['bytes'] / 1000:.1f} kB over HTTP, "
          f"{got['ws_bytes'] / 1000:.1f} kB of websocket frames; {shown[0]} shown after {got['shown_s']:.2f} s")
    for size, where in got["largest"]:
        print(f"  {size / 1000:8.1f} kB  {where[:100]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
