"""Take the README's picture of a class board: the projector's view of a room's 20 sentences.

    python tools/board_screenshot.py [--out docs/board.png] [--width 1024] [--height 768]

Starts the app on a free loopback port with a board database of its own (a temporary
``LAB_DATA_DIR``), makes a board for "bank" (money / river), sends the sentences below as
twenty students would (each from a browser of its own), opens the board's projector link
in projector mode in Debian's Chromium (Playwright) and saves its first screen, as a 1024x768
projector shows it: the word, the join code (the links made for an address of the room's
network) and both models' maps. The sentences were written for this project.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.served import Server
from harness.chromium import CHROMIUM, CHROMIUM_ARGS

ROOM = [
    ("The bank raised its interest rates again.", "money"),
    ("We sat on the river bank and ate lunch.", "river"),
    ("My bank charges a fee for every transfer.", "money"),
    ("Ducks nested on the far bank of the pond.", "river"),
    ("She opened a savings account at the bank.", "money"),
    ("The flood washed away part of the bank.", "river"),
    ("The bank approved our loan for the house.", "money"),
    ("Willows grow along the bank of the canal.", "river"),
    ("He robbed a bank in the film.", "money"),
    ("The boat drifted slowly towards the bank.", "river"),
    ("The central bank printed more money.", "money"),
    ("Otters live in holes in the river bank.", "river"),
    ("I need to go to the bank before it closes.", "money"),
    ("We climbed up the steep, muddy bank.", "river"),
    ("The bank sent me a new card.", "money"),
    ("Fishermen lined the bank at dawn.", "river"),
    ("Our school has a bank account for trips.", None),
    ("The grassy bank was full of wild flowers.", None),
    ("That bank is closed on Sundays.", "money"),
    ("The children slid down the snowy bank.", "river"),
]


PUBLIC_URL = "http://192.168.1.20:8501"  # an address of a classroom's network, for the join line and QR code


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=str(ROOT / "docs" / "board.png"))
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--height", type=int, default=768)
    a = p.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="lab-board-shot-") as data:
        os.environ["LAB_DATA_DIR"] = data
        from lab.board.store import BoardStore

        store = BoardStore()
        board, _ = store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded")
        for i, (text, sense) in enumerate(ROOM):
            store.submit(board.id, text, sense, browser=f"student-{i}", token=f"shot-{i}")
        with Server(env={"LAB_DATA_DIR": data, "LAB_PUBLIC_URL": PUBLIC_URL}) as srv, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": a.width, "height": a.height})
            page.set_default_timeout(180_000)
            # projector mode closes the sidebar and folds the QR code to the corner
            page.goto(f"{srv.url}/board?board={board.code}&proj=1")
            page.locator(".st-key-board_map_elmo .js-plotly-plot .scatterlayer").wait_for()
            page.wait_for_timeout(2500)  # a poll or two: the view is settled
            page.mouse.move(0, 0)  # away from the charts, so their toolbars are hidden
            page.wait_for_timeout(800)
            page.screenshot(path=a.out)
            browser.close()
        store.dispose()
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
