"""Server CPU per new view and per click, page by page, with where it goes.

    python bench/server_cpu.py [--views 5] [--clicks 5] [--chars N] [--pages bert,elmo,attention[,compare]]
                               [--switches N] [--root CHECKOUT] [--no-profile]

Serves the app (``--root``: another checkout, e.g. a worktree of an older commit, to
compare), then on each page opens it once to warm up (imports, model load, compilation),
then opens it ``--views`` times with sentences it has not seen, and clicks a word
``--clicks`` times (``--chars``: each sentence grown to about N characters, a pasted
paragraph; ``--switches``: also flip the page's switch N times, on the pages that have one
in ``SWITCHES``). The CPU of one view is utime + stime of the server process
(/proc/PID/stat) before and after the run, as a browser would cause it (the requests go
over Streamlit's own websocket protocol, ``harness/served.py``). Unless ``--no-profile``,
the server runs under ``bench/profiled_server.py`` and the table below the figures splits
each run's CPU into its parts (model runs, figure construction, Plotly to JSON, tables
to Arrow, ...), with the bytes sent. Prints figures; asserts nothing.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.served import CLICKS, Server, Session, new_sentences
from bench.session import PAGES, add_pages_option, parser


WARM = 999  # the number of the warm-up sentences
# --switches: a toggle a person flips on a page (its label begins so)
SWITCHES = {"compare": "Baseline-adjusted similarity"}


async def measure(srv: Server, views: int, clicks: int, chars: int = 0, pages=PAGES, switches: int = 0) -> dict:
    """{(page, 'view'|'click'|'switch'): [(cpu_s, wall_s, bytes), ...]}.

    A view is a new session (a person opening a link with sentences nobody used yet: the
    URL's sentences are read when a session starts); the clicks and switches are made in
    the last one.
    """
    results = {}
    for page in pages:
        s = await _session(srv, page, WARM)  # warm-up: imports, model, compilation
        await s.close()
        await asyncio.to_thread(srv.wait_warm)  # and what the app does in the background after it
        rows = results.setdefault((page, "view"), [])
        for i in range(views):
            if i:
                await s.close()
            c0 = srv.cpu_s()
            s = Session(srv.url)
            await s.connect()
            r = await s.open(page, *new_sentences(i, page, chars))
            rows.append(_row(srv, c0, r, page, "view"))
        rows = results.setdefault((page, "click"), [])
        for i in range(clicks):
            options = s.widgets[CLICKS[page]].options
            c0 = srv.cpu_s()
            r = await s.pick(CLICKS[page], (i + 1) % len(options))
            rows.append(_row(srv, c0, r, page, "click"))
        if switches and page in SWITCHES:
            label = next(w for w in s.widgets if w.startswith(SWITCHES[page]))
            rows = results.setdefault((page, "switch"), [])
            for i in range(switches):
                c0 = srv.cpu_s()
                r = await s.switch(label, i % 2 == 0)
                rows.append(_row(srv, c0, r, page, "switch"))
        await s.close()
    return results


async def _session(srv: Server, page: str, i: int) -> Session:
    s = Session(srv.url)
    await s.connect()
    r = await s.open(page, *new_sentences(i, page))
    if r.errors:
        raise RuntimeError(f"{page}: {r.errors}")
    return s


def _row(srv: Server, cpu_before: float, r, page: str, kind: str) -> tuple[float, float, int]:
    if r.errors:
        raise RuntimeError(f"{page} {kind}: {r.errors}")
    return srv.cpu_s() - cpu_before, r.seconds, r.bytes


def breakdown(srv: Server, pages=PAGES) -> None:
    path = getattr(srv, "profile", None)
    if not path or not path.exists():
        return
    time.sleep(1.0)  # a run's line is written just after its last message
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    print("\nWhere a run's CPU goes (mean per run, ms; from bench/profiled_server.py):")
    table = {}
    for page in pages:
        for kind in ("view", "click"):
            table[(page, kind)] = [r for r in lines if r["page"] == page and str(WARM) not in r["query"]
                                   and r["fragment"] == (kind == "click")]
    for key, runs in list(table.items()):
        if not runs:
            continue
        parts = {}
        for r in runs:
            for name, v in r["parts"].items():
                parts[name] = parts.get(name, 0.0) + v / len(runs)
        parts["= whole script run"] = statistics.mean(r["cpu_s"] for r in runs)
        parts["bytes sent (kB)"] = statistics.mean(r["bytes"] for r in runs) / 1e3
        table[key] = parts
    table = {k: v for k, v in table.items() if isinstance(v, dict)}
    names = sorted({n for p in table.values() for n in p}, key=lambda n: (n.startswith(("=", "bytes")), n))
    cols = list(table)
    print(f"{'part':58s}" + "".join(f"{p[:5] + ' ' + k:>13s}" for p, k in cols))
    for n in names:
        cells = []
        for c in cols:
            v = table[c].get(n)
            cells.append("" if v is None else (f"{v:.0f}" if n.startswith("bytes") else f"{v * 1000:.0f}"))
        print(f"{n[:58]:58s}" + "".join(f"{x:>13s}" for x in cells))


def main(argv=None) -> int:
    ap = parser(__doc__, views=5, clicks=5, chars=0)
    ap.add_argument("--no-profile", action="store_true", help="plain streamlit run, no part timers")
    add_pages_option(ap, "the pages measured in turn")
    ap.add_argument("--switches", type=int, default=0,
                    help="flip the page's switch this many times too (pages: " + ", ".join(SWITCHES) + "); the "
                         "profile's 'click' column then holds the switches' fragment runs as well")
    a = ap.parse_args(argv)
    srv = Server(root=a.root.resolve(), python=a.python)
    if not a.no_profile:
        srv.profile = Path(tempfile.mkdtemp()) / "runs.jsonl"
        srv.launcher = [str(Path(__file__).with_name("profiled_server.py")), str(srv.profile)]
    with srv:
        results = asyncio.run(measure(srv, a.views, a.clicks, a.chars, a.pages, a.switches))
        rss = srv.rss_mb()
        print(f"app: {srv.root}; server RSS after: {rss:.0f} MB")
        print(f"{'page':10s} {'action':6s} {'CPU median':>11s} {'CPU max':>8s} {'wall median':>12s} {'sent':>8s}")
        for (page, kind), rows in results.items():
            cpu, wall, size = zip(*rows)
            print(f"{page:10s} {kind:6s} {statistics.median(cpu):10.2f}s {max(cpu):7.2f}s "
                  f"{statistics.median(wall):11.2f}s {statistics.median(size) / 1e3:6.0f}kB")
        breakdown(srv, a.pages)
    return 0


if __name__ == "__main__":
    sys.exit(main())
