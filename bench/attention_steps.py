"""A click on a query token in "How one weight is computed", in Chromium: until it is redrawn.

    python bench/attention_steps.py [--clicks 20] [--model block|bert] [--screenshot FILE.png]
                                    [--root CHECKOUT]

Serves the app (warm: after its start-up warm-up), opens the attention page with the
step-by-step section of the seeded block (``--model block``) or of BERT's head view
(``--model bert``) open, and clicks that section's query pills ``--clicks`` times, a
different token each time. Each click is timed in the page, as ``bench/browser.py`` times
a click: from the pointerdown to the first DOM change after which the watched charts show
their final drawing; once for the softmax bars (the step a class watches) and once for
every chart of the page. ``--screenshot`` also saves the page in projector mode at
1024 x 768 with the section open (the whole page, to look at). Prints figures; asserts
nothing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.browser import clicks as head_view_clicks, row, timed_in_page, wait_idle
from harness.served import Server
from bench.session import parser
from harness.chromium import CHROMIUM, CHROMIUM_ARGS

SOFTMAX = "5 · softmax"  # a step of the section's chart
SCREENS = 8  # screenshots of the projector view, 700 px apart


def query_pills(pg, model: str):
    """The section's query pills: the first "Query token" group on the page for the block
    (section 1 comes first), the last for BERT (after the head view's own)."""
    groups = pg.get_by_role("radiogroup", name="Query token")
    group = groups.first if model == "block" else groups.last
    return group.get_by_role("radio")


def clicks(pg, url: str, model: str, n: int, title: str | None) -> list[float]:
    pg.goto(url)
    pg.locator('[data-testid="stPlotlyChart"]', has_text=SOFTMAX).first.wait_for(timeout=180_000)
    wait_idle(pg)
    radios = query_pills(pg, model)
    count, target, times = radios.count(), 0, []
    for _ in range(n):
        target = (target + 1) % count
        if radios.nth(target).get_attribute("aria-checked") == "true":
            target = (target + 1) % count
        radios.nth(target).scroll_into_view_if_needed()
        times.append(timed_in_page(pg, radios.nth(target).click, title))
        wait_idle(pg)
    return times


def main(argv=None) -> int:
    ap = parser(__doc__, clicks=20)
    ap.add_argument("--model", choices=("block", "bert"), default="block")
    ap.add_argument("--screenshot", type=Path, help="save the projector view at 1024 x 768 here")
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    srv = Server(root=a.root.resolve(), python=a.python).start()
    try:
        srv.wait_warm()
        url = f"{srv.url}/attention?att_steps_{a.model}=1"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            pg = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            pg.set_default_timeout(120_000)
            clicks(pg, url, a.model, 3, SOFTMAX)  # the first clicks fill the caches
            softmax = clicks(pg, url, a.model, a.clicks, SOFTMAX)
            every = clicks(pg, url, a.model, a.clicks, None)
            # the same machine's yardstick, in the same run: the head view's query click, sections closed
            head = head_view_clicks(pg, f"{srv.url}/attention", "attention", a.clicks)
            print(f"app: {a.root.resolve()}; the {a.model}'s section; load average {os.getloadavg()[0]:.1f}")
            print(row("click a query -> softmax bars redrawn", softmax))
            print(row("click a query -> every chart redrawn", every))
            print(row("head view's query click (sections closed)", head))
            if a.screenshot:
                shot = browser.new_context(viewport={"width": 1024, "height": 768}).new_page()
                shot.goto(f"{url}&proj=1")
                shot.locator('[data-testid="stPlotlyChart"]', has_text=SOFTMAX).first.wait_for(timeout=180_000)
                wait_idle(shot)
                section = shot.locator('[data-testid="stExpander"]', has_text="How one weight").first
                section.scroll_into_view_if_needed()
                top = section.bounding_box()["y"]
                shot.mouse.move(700, 400)  # over the page, not the sidebar: the wheel scrolls the page
                for i in range(SCREENS):  # the section, a screen at a time, as the room sees it
                    shot.mouse.wheel(0, top if i == 0 else 700)
                    shot.wait_for_timeout(1500)
                    path = a.screenshot.with_name(f"{a.screenshot.stem}-{i + 1}{a.screenshot.suffix}")
                    shot.screenshot(path=str(path))
                    print(f"screenshot: {path}")
            browser.close()
    finally:
        srv.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
