"""What this stack alone costs a click, on this machine: the floor under issue 11's click targets.

    python bench/click_floor.py [--clicks 15] [--sentences 5] [--rounds 2] [--root CHECKOUT]

Serves two apps on loopback at once: the floor page (``bench/floor_app.py``: the BERT page's
sentence box, word pills and per-layer chart, built by the same code, and nothing else, no
model) and the app itself; then, in one Chromium (as ``bench/browser.py``, timed the same
way: from the pointerdown or the key press to the chart's final drawing, inside the page),
in turns so that both meet the same machine: clicks on a word pill, then new sentences A,
on the floor page and on the app's BERT page, ``--rounds`` times. Prints p50 / p95 / max for
each; what separates the two lines is what the BERT page's own content costs (its other
charts, tables and widgets, and its model), and the floor line is the least any page of
this stack can do here.

Prints figures; asserts nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.browser import clicks, new_sentence, row  # noqa: E402
from bench.session import Server, parser  # noqa: E402
from tests.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402


def main(argv=None) -> int:
    ap = parser(__doc__, clicks=15, sentences=5, rounds=2)
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    root = a.root.resolve()
    # the floor page always from this checkout (its file may be missing in an older one)
    floor = Server(script=str(Path(__file__).with_name("floor_app.py")), env={"LAB_WARMUP": "0"})
    app = Server(root=root, python=a.python)
    try:
        floor.start()
        app.start()
        app.wait_warm()
        floor.wait_quiet()
        urls = {"floor page": floor.url + "/", "BERT page": app.url + "/bert"}
        results: dict[str, list[float]] = {}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            pg = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            pg.set_default_timeout(120_000)
            for r in range(a.rounds):
                for name, url in urls.items():
                    results.setdefault(f"click a word -> chart changed ({name})", []).extend(
                        clicks(pg, url, "bert", a.clicks))
                for name, url in urls.items():
                    results.setdefault(f"new sentence -> charts redrawn ({name})", []).extend(
                        new_sentence(pg, url, "bert", a.sentences, f"floor-{r}"))
            browser.close()
    finally:
        app.stop()
        floor.stop()
    print(f"app: {root}; {a.rounds} rounds, in turns")
    for name, times in results.items():
        print(row(name, times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
