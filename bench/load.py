"""A class on one server: N simulated sessions at once, over Streamlit's own websocket protocol.

    python bench/load.py [--sessions 20] [--selections 5] [--repeats 3] [--chars N] [--stay] [--linger S]
                         [--pages bert,elmo,attention[,compare]]
                         [--root CHECKOUT] [--url URL]

Serves the app on a free loopback port (or uses ``--url``, which must be loopback), warms
it with one view of each page, then ``--repeats`` times starts ``--sessions`` sessions at
once; each opens a page (BERT, ELMo, attention in turn, or those of ``--pages``, which
may also name ``compare``, the ELMo vs BERT page) with sentences no one used yet and then
clicks ``--selections`` words, one after the other, as a person would (``--chars``: each
sentence grown to about N characters, as when a class pastes paragraphs). With
``--stay`` the same sessions stay connected from one repeat to the next and type their
new sentences into the open page's sidebar, as a class working in rounds; without it
every repeat is new sessions, while the server still holds the last ones' state for
``server.disconnectedSessionTTL`` (5 s in this app's config, Streamlit's default 120 s;
``--linger S`` prints the RSS again S seconds after the last repeat). No browser: the server is
what is measured (``bench/session.py``). Prints, per repeat, the errors (an exception
shown by the app, a lost connection, a request over ``--timeout``), the time from a
request to its finished script run (p50, p95, max), the repeat's wall time and the
server's CPU for it (until it is quiet again), and once the server is quiet, its
RSS and what its caches hold (Streamlit's ``/_stcore/metrics``: cached results in MB, and
the number of resources kept: models, figures). Bounded in sessions, requests and time
(``--max-seconds``); asserts nothing.
"""

from __future__ import annotations

import asyncio
import collections
import statistics
import re
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.session import CLICKS, PAGES, Server, Session, add_pages_option, new_sentences, parser


async def one_session(url: str, index: int, repeat: int, a, times: list, errors: list,
                      session: Session | None = None) -> None:
    """Session ``index`` opens its page with new sentences and clicks ``a.selections`` words:
    in a session of its own (closed after), or in ``session``, which stays connected and,
    once its page is open, types the new sentences into the sidebar."""
    page = a.pages[index % len(a.pages)]
    s = session or Session(url)
    text_a, text_b = new_sentences(index, f"r{repeat}", a.chars)
    try:
        if session is None:
            await s.connect()
        label = CLICKS[page]
        if s.page:
            before = s.widgets[label].options
            r = await s.type({"Sentence A": text_a, "Sentence B": text_b}, timeout=a.timeout)
            if s.widgets[label].options == before:
                errors.append(f"{page}: the new sentences did not reach the page")
        else:
            r = await s.open(page, text_a, text_b, timeout=a.timeout)
        times.append(r.seconds)
        errors += [f"{page} new sentences: {e}" for e in r.errors]
        for k in range(a.selections):
            options = s.widgets[label].options
            r = await s.pick(label, (k + 1) % len(options), timeout=a.timeout)
            times.append(r.seconds)
            errors += [f"{page} pick: {e}" for e in r.errors]
    except Exception as exc:  # noqa: BLE001 - a failed session is a counted error, not a crash
        errors.append(f"session {index} ({page}): {type(exc).__name__}: {exc}")
    finally:
        if session is None:
            await s.close()


async def repeat_once(url: str, repeat: int, a, sessions: list | None = None) -> tuple[list, list, float]:
    times, errors = [], []
    t0 = time.perf_counter()
    kept = sessions or [None] * a.sessions
    await asyncio.wait_for(asyncio.gather(*(one_session(url, i, repeat, a, times, errors, s)
                                            for i, s in enumerate(kept))), a.max_seconds)
    return times, errors, time.perf_counter() - t0


METRICS_TTL = 5.0  # Streamlit recomputes its memory metrics at most this often (seconds)


def held(url: str) -> str:
    """What the server's caches hold, from Streamlit's ``/_stcore/metrics``: the cached
    results (``st.cache_data``) in MB and how many resources it keeps (models, figures;
    counted, not sized). A session's own objects are not in these metrics."""
    try:
        with urllib.request.urlopen(url + "/_stcore/metrics", timeout=10) as r:
            text = r.read().decode()
    except OSError as exc:
        return f"(no metrics: {exc})"
    kinds = collections.Counter()
    for m in re.finditer(r'^cache_memory_bytes\{cache_type="(\w+)",cache="[^"]*"\} (\S+)$', text, re.M):
        kinds[m[1]] += float(m[2])
    return f"{kinds['st_cache_data'] / 2**20:7.1f} MB {kinds['st_cache_resource']:4.0f}"


async def rounds(url: str, a, srv: Server | None) -> list:
    """Every repeat, one line each (``a.stay``: the same sessions throughout); the last
    repeat's request times."""
    sessions = [Session(url) for _ in range(a.sessions)] if a.stay else None
    for s in sessions or []:
        await s.connect()
    try:
        for rep in range(a.repeats):
            cpu0 = srv.cpu_s() if srv else 0.0
            times, errors, wall = await repeat_once(url, rep, a, sessions)
            if srv:
                await asyncio.to_thread(srv.wait_quiet, timeout=60)
            cpu = f"{srv.cpu_s() - cpu0:.1f}s" if srv else "-"
            await asyncio.sleep(METRICS_TTL)  # the metrics then describe this repeat's end
            rss = f"{srv.rss_mb():.0f} MB" if srv else "-"
            t = np.asarray(times) if times else np.array([np.nan])
            print(f"{rep + 1:6d} {len(errors):6d} {np.percentile(t, 50):6.2f}s {np.percentile(t, 95):6.2f}s "
                  f"{t.max():6.2f}s {wall:6.1f}s {cpu:>7s} {rss:>10s} {held(url)}", flush=True)
            for e in errors[:5]:
                print(f"       {e}")
    finally:
        for s in sessions or []:
            await s.close()
    return times


async def warm(url: str, pages) -> None:
    for page in dict.fromkeys((*PAGES, *pages)):
        s = Session(url)
        await s.connect()
        await s.open(page, *new_sentences(0, "warm"))
        await s.close()


def main(argv=None) -> int:
    ap = parser(__doc__, sessions=20, selections=5, repeats=3, chars=0)
    add_pages_option(ap, "the pages the sessions open in turn")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds one request may take")
    ap.add_argument("--max-seconds", type=float, default=600.0, help="seconds one repeat may take")
    ap.add_argument("--url", help="an already running app on loopback (RSS then not reported)")
    ap.add_argument("--stay", action="store_true",
                    help="the same sessions stay connected through every repeat and type their new sentences "
                         "(a class working in rounds); by default every repeat starts new sessions")
    ap.add_argument("--linger", type=float, default=0.0,
                    help="after the last repeat, wait this many seconds (at most 600) and print the RSS again "
                         "(the server keeps a closed session's state for server.disconnectedSessionTTL: 5 s here)")
    a = ap.parse_args(argv)
    a.sessions, a.selections, a.repeats = min(a.sessions, 50), min(a.selections, 20), min(a.repeats, 12)
    srv = None
    if a.url:
        if urllib.parse.urlparse(a.url).hostname not in ("127.0.0.1", "localhost", "::1"):
            ap.error("--url must be a loopback address")
        url = a.url.rstrip("/")
    else:
        srv = Server(root=a.root.resolve(), python=a.python).start()
        url = srv.url
    try:
        asyncio.run(warm(url, a.pages))
        if srv:
            srv.wait_warm()
            print(f"app: {srv.root}; RSS after warm-up {srv.rss_mb():.0f} MB")
        print(f"{a.sessions} sessions at once{' (the same ones in every repeat)' if a.stay else ''}, "
              "each: open a page with new sentences"
              f"{f' of about {a.chars:,} characters' if a.chars else ''}, then "
              f"{a.selections} clicks ({a.sessions * (1 + a.selections)} requests per repeat)")
        print(f"{'repeat':>6s} {'errors':>6s} {'p50':>7s} {'p95':>7s} {'max':>7s} {'wall':>7s} {'RSS after':>10s} "
              f"{'results':>10s} {'kept':>4s}")
        times = asyncio.run(rounds(url, a, srv))
        if srv and a.linger:
            time.sleep(min(a.linger, 600))
            print(f"RSS {min(a.linger, 600):.0f} s after the last repeat: {srv.rss_mb():.0f} MB; "
                  f"results, kept: {held(url)}")
        if srv:
            print(f"server CPU in all: {srv.cpu_s():.1f} s; mean over requests "
                  f"{statistics.mean(times) if times else float('nan'):.2f} s (last repeat)")
    finally:
        if srv:
            srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
