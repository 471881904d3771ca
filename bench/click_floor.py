"""What this stack alone costs a click, on this machine: the floor under the README's click targets.

    python bench/click_floor.py [--clicks 15] [--sentences 5] [--links 8] [--rounds 2] [--root CHECKOUT]

Serves two apps on loopback at once: the floor page (``bench/floor_app.py``: the BERT page's
sentence box, word pills and per-layer chart, built by the same code, and nothing else, no
model) and the app itself; then, in one Chromium (as ``bench/browser.py``, timed the same
way: from the pointerdown or the key press to the chart's final drawing, inside the page),
in turns so that both meet the same machine: clicks on a word pill, then new sentences A,
on the floor page and on the app's BERT page, ``--rounds`` times; then shared links with new
sentences, each in a new tab (``bench/browser.py``'s measure 4: from the navigation's start to
every chart settled), ``--links`` on each page a round, in turns. Prints p50 / p95 / max for
each; what separates the two lines is what the BERT page's own content costs (its other
charts, tables and widgets, and its model), and the floor line is the least any page of
this stack can do here.

Prints figures; asserts nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.browser import links_in_turns, row, timed_in_turns
from harness.served import Server
from bench.session import parser


def main(argv=None) -> int:
    ap = parser(__doc__, clicks=15, sentences=5, links=8, rounds=2)
    a = ap.parse_args(argv)
    root = a.root.resolve()
    # the floor page always from this checkout (its file may be missing in an older one)
    floor = Server(script=str(Path(__file__).with_name("floor_app.py")), env={"LAB_WARMUP": "0"})
    app = Server(root=root, python=a.python)
    try:
        floor.start()
        app.start()
        app.wait_warm()
        floor.wait_quiet()
        # both take the BERT page's pills and chart; the floor page first in every round
        turns = [[("floor page", floor.url + "/", "bert"), ("BERT page", app.url + "/bert", "bert")]]
        results = timed_in_turns(turns, a.clicks, a.sentences, a.rounds, swap=False)
        if a.links:
            results |= links_in_turns([[("floor page", floor.url, ""), ("BERT page", app.url, "bert")]], a.links,
                                      a.rounds, swap=False)
    finally:
        app.stop()
        floor.stop()
    print(f"app: {root}; {a.rounds} rounds, in turns")
    for (name, what), rounds in results.items():  # clicks then sentences, the floor page first
        print(row(f"{what} ({name})", [t for ts in rounds for t in ts]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
