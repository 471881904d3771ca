"""Take the README's pictures: the BERT page's per-layer chart in projector mode, and the
ELMo vs BERT page's comparison chart.

    python tools/screenshot.py [--out docs/screenshot.png] [--compare-out docs/compare.png]

Starts the app on a free loopback port and opens it in Debian's Chromium (Playwright) at
1280 x 900: scrolls the BERT page's per-layer cosine chart into view and saves the
viewport; then saves the ELMo vs BERT page's comparison chart (the chart's element alone).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.served import Server
from harness.chromium import CHROMIUM, CHROMIUM_ARGS


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=str(ROOT / "docs" / "screenshot.png"))
    p.add_argument("--compare-out", default=str(ROOT / "docs" / "compare.png"))
    a = p.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with Server() as srv, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(180_000)
        page.goto(srv.url + "/bert?proj=1")
        chart = page.locator('[data-testid="stPlotlyChart"]', has_text="Cosine similarity at every layer")
        chart.wait_for()
        page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached")
        chart.scroll_into_view_if_needed()  # the chart at the bottom, the word pills above it
        page.mouse.move(800, 450)
        page.mouse.wheel(0, 180)
        page.wait_for_timeout(1500)
        page.screenshot(path=a.out)
        page.goto(srv.url + "/compare")
        chart = page.locator('[data-testid="stPlotlyChart"]',
                             has_text="Cosine similarity at every layer of both models")
        chart.wait_for()
        page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached")
        chart.scroll_into_view_if_needed()
        page.mouse.move(0, 0)  # away from the chart, so its toolbar is hidden
        page.wait_for_timeout(1500)
        chart.screenshot(path=a.compare_out)
        browser.close()
    print(f"wrote {a.out} and {a.compare_out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
