"""A class on one server: N simulated sessions at once, over Streamlit's own websocket protocol.

    python bench/load.py [--sessions 20] [--selections 5] [--repeats 3] [--chars N] [--stay] [--linger S]
                         [--pages bert,elmo,attention[,compare]]
                         [--root CHECKOUT] [--url URL] [--nginx [--servers 2] [--kill-at S]]
                         [--arrive-within S] [--pauses MIN,MAX]

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
what is measured (``harness/served.py``). Prints, per repeat, the errors (an exception
shown by the app, a lost connection, a request over ``--timeout``), the time from a
request to its finished script run (p50, p95, max), the repeat's wall time and the
server's CPU for it (until it is quiet again), and once the server is quiet, its
RSS and what its caches hold (Streamlit's ``/_stcore/metrics``: cached results in MB, and
the number of resources kept: models, figures). Bounded in sessions, requests and time
(``--max-seconds``); asserts nothing.

``--arrive-within S`` spreads the sessions' starts evenly over S seconds, as a room opening
a link does, instead of all at the same instant; ``--pauses MIN,MAX`` makes each session
wait a random MIN to MAX seconds (seeded) before each selection, as a person reading the
chart does.

With ``--nginx``, ``--servers`` servers (default 2; 1 for comparison) share a throwaway
PostgreSQL and ``LAB_CACHE_DIR`` behind nginx from the shipped site (``bench/room.py``),
and the sessions go through nginx, each with its own ``lab_browser`` cookie as a browser
has (session i keeps its cookie from one repeat to the next), so that nginx spreads them.
Each repeat's line is then followed by one line per server: the tabs nginx passed to it
(its access log's ``upstream=``), its CPU for the repeat, RSS and caches. ``--kill-at S``
SIGKILLs server 1 S seconds after the first repeat starts; a session whose connection
drops reconnects through nginx, runs its page again from its address (as the browser
does) and then repeats the request that got no answer. Printed at the end: the
connections that dropped, and for each the seconds from the SIGKILL until its view was
shown again (p50, p95, max).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import random
import statistics
import re
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.room import Room, browser_cookie
from harness.served import CLICKS, Server, Session, loadavg, new_sentences
from bench.session import PAGES, add_pages_option, parser


@dataclasses.dataclass
class Failover:
    """A server's SIGKILL (``--kill-at``) and what the sessions saw of it."""

    at: float = 0.0  # perf_counter of the SIGKILL (0: not yet)
    drops: int = 0  # connections that dropped
    back: list[float] = dataclasses.field(default_factory=list)  # SIGKILL -> view shown again, per reconnect
    reconnect: list[float] = dataclasses.field(default_factory=list)  # drop noticed -> view shown again


def cookie(index: int, a) -> str:
    """Session ``index``'s cookie: its own browser through nginx, none without."""
    return browser_cookie(f"bench-load-{index:03d}") if a.nginx else ""


async def answered(s: Session, request, failover: Failover, errors: list, timeout: float):
    """``await request()``; where the connection drops (its server killed), reconnect, run
    the page again from its address and send the request once more, as a person does."""
    import websockets

    try:
        return await request()
    except websockets.exceptions.ConnectionClosed:
        if not failover.at:
            raise
    dropped = time.perf_counter()
    failover.drops += 1
    r = await s.reconnect(timeout)
    failover.back.append(time.perf_counter() - failover.at)
    failover.reconnect.append(time.perf_counter() - dropped)
    errors += [f"{s.page} after reconnecting: {e}" for e in r.errors]
    return await request()


async def one_session(url: str, index: int, repeat: int, a, times: list, errors: list,
                      session: Session | None = None, failover: Failover | None = None) -> None:
    """Session ``index`` opens its page with new sentences and clicks ``a.selections`` words:
    in a session of its own (closed after), or in ``session``, which stays connected and,
    once its page is open, types the new sentences into the sidebar."""
    page = a.pages[index % len(a.pages)]
    s = session or Session(url, cookie=cookie(index, a))
    failover = failover or Failover()
    text_a, text_b = new_sentences(index, f"r{repeat}", a.chars)
    pause = random.Random(f"{repeat}-{index}")
    if a.arrive_within:
        await asyncio.sleep(a.arrive_within * index / max(1, a.sessions))
    try:
        if session is None:
            await s.connect()
        label = CLICKS[page]
        if s.page:
            before = s.widgets[label].options
            r = await answered(s, lambda: s.type({"Sentence A": text_a, "Sentence B": text_b}, timeout=a.timeout),
                               failover, errors, a.timeout)
            if s.widgets[label].options == before:
                errors.append(f"{page}: the new sentences did not reach the page")
        else:
            r = await answered(s, lambda: s.open(page, text_a, text_b, timeout=a.timeout), failover, errors,
                               a.timeout)
        times.append(r.seconds)
        errors += [f"{page} new sentences: {e}" for e in r.errors]
        for k in range(a.selections):
            if a.pauses:
                await asyncio.sleep(pause.uniform(*a.pauses))
            options = s.widgets[label].options
            r = await answered(s, lambda: s.pick(label, (k + 1) % len(options), timeout=a.timeout), failover,
                               errors, a.timeout)
            times.append(r.seconds)
            errors += [f"{page} pick: {e}" for e in r.errors]
    except Exception as exc:  # noqa: BLE001 - a failed session is a counted error, not a crash
        errors.append(f"session {index} ({page}): {type(exc).__name__}: {exc}")
    finally:
        if session is None:
            await s.close()


async def repeat_once(url: str, repeat: int, a, sessions: list | None = None,
                      failover: Failover | None = None) -> tuple[list, list, float]:
    times, errors = [], []
    t0 = time.perf_counter()
    kept = sessions or [None] * a.sessions
    await asyncio.wait_for(asyncio.gather(*(one_session(url, i, repeat, a, times, errors, s, failover)
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


async def rounds(url: str, a, srv: Server | None, room: Room | None = None,
                 failover: Failover | None = None) -> list:
    """Every repeat, one line each (``a.stay``: the same sessions throughout), and with
    ``room`` one more per server; the last repeat's request times. With ``a.kill_at``,
    server 1 is SIGKILLed that many seconds after the first repeat starts."""
    sessions = [Session(url, cookie=cookie(i, a)) for i in range(a.sessions)] if a.stay else None
    for s in sessions or []:
        await s.connect()
    servers = room.servers if room else [srv] if srv else []
    killing = None
    if room and a.kill_at:
        async def kill_later():
            await asyncio.sleep(a.kill_at)
            failover.at = time.perf_counter()
            await asyncio.to_thread(room.kill, 0)
            print(f"       server 1 SIGKILLed at {a.kill_at:g} s (load average {loadavg()})", flush=True)
        killing = asyncio.create_task(kill_later())
    try:
        for rep in range(a.repeats):
            alive = [k for k in range(len(servers)) if room is None or room.alive(k)]
            cpu0 = {k: room.cpu_s(k) if room else servers[k].cpu_s() for k in alive}
            since = room.log_length() if room else 0
            times, errors, wall = await repeat_once(url, rep, a, sessions, failover)
            for k in alive:
                try:
                    await asyncio.to_thread(servers[k].wait_quiet, timeout=60)
                except FileNotFoundError:  # its /proc entry: the server was killed meanwhile
                    pass
            cpu = {k: (room.cpu_s(k) if room else servers[k].cpu_s()) - cpu0[k] for k in alive}
            await asyncio.sleep(METRICS_TTL)  # the metrics then describe this repeat's end
            t = np.asarray(times) if times else np.array([np.nan])
            if room is None:
                rss = f"{srv.rss_mb():.0f} MB" if srv else "-"
                print(f"{rep + 1:6d} {len(errors):6d} {np.percentile(t, 50):6.2f}s {np.percentile(t, 95):6.2f}s "
                      f"{t.max():6.2f}s {wall:6.1f}s {f'{cpu[0]:.1f}s' if srv else '-':>7s} {rss:>10s} "
                      f"{held(url)}", flush=True)
            else:
                print(f"{rep + 1:6d} {len(errors):6d} {np.percentile(t, 50):6.2f}s {np.percentile(t, 95):6.2f}s "
                      f"{t.max():6.2f}s {wall:6.1f}s {sum(cpu.values()):6.1f}s  load average {loadavg()}",
                      flush=True)
                await asyncio.sleep(1.0)  # nginx writes a websocket's line once it has closed
                tabs = room.spread(since)
                for k, server in enumerate(servers):
                    state = (f"CPU {cpu[k]:6.1f}s, RSS {server.rss_mb():5.0f} MB, results, kept: {held(server.url)}"
                             if room.alive(k) else "killed" + (f" (CPU {cpu[k]:.1f}s)" if k in cpu else ""))
                    print(f"       server {k + 1}: {tabs[k + 1]:3d} tabs, {state}", flush=True)
            for e in errors[:5]:
                print(f"       {e}")
    finally:
        if killing is not None:
            killing.cancel()
        for s in sessions or []:
            await s.close()
    return times


async def warm(url: str, pages) -> None:
    """One view of each page (on this server, not through nginx)."""
    for page in dict.fromkeys((*PAGES, *pages)):
        s = Session(url)
        await s.connect()
        await s.open(page, *new_sentences(0, "warm"))
        await s.close()


def main(argv=None) -> int:
    ap = parser(__doc__, sessions=20, selections=5, repeats=3, chars=0)
    add_pages_option(ap, "the pages the sessions open in turn")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds one request may take")
    ap.add_argument("--arrive-within", type=float, default=0.0, metavar="S",
                    help="spread the sessions' starts over S seconds (default: all at once)")
    ap.add_argument("--pauses", type=lambda v: tuple(float(x) for x in v.split(",")), default=None,
                    metavar="MIN,MAX", help="a person's pause before each selection, MIN to MAX seconds")
    ap.add_argument("--max-seconds", type=float, default=600.0, help="seconds one repeat may take")
    ap.add_argument("--url", help="an already running app on loopback (RSS then not reported)")
    ap.add_argument("--stay", action="store_true",
                    help="the same sessions stay connected through every repeat and type their new sentences "
                         "(a class working in rounds); by default every repeat starts new sessions")
    ap.add_argument("--linger", type=float, default=0.0,
                    help="after the last repeat, wait this many seconds (at most 600) and print the RSS again "
                         "(the server keeps a closed session's state for server.disconnectedSessionTTL: 5 s here)")
    ap.add_argument("--nginx", action="store_true",
                    help="--servers servers sharing a throwaway PostgreSQL behind nginx; the sessions go through nginx")
    ap.add_argument("--servers", type=int, default=2, help="app servers behind nginx (default: %(default)s)")
    ap.add_argument("--kill-at", type=float, default=0.0,
                    help="with --nginx and 2 servers: SIGKILL server 1 this many seconds after the first repeat starts")
    a = ap.parse_args(argv)
    a.sessions, a.selections, a.repeats = min(a.sessions, 100), min(a.selections, 20), min(a.repeats, 12)
    if a.nginx and a.url:
        ap.error("--nginx starts its own servers: leave out --url")
    if a.nginx and not 1 <= a.servers <= 4:
        ap.error("--servers: 1 to 4")
    if a.kill_at and not (a.nginx and a.servers >= 2):
        ap.error("--kill-at needs --nginx and at least 2 servers (the others take the killed one's tabs)")
    srv = room = None
    failover = Failover()
    if a.url:
        if urllib.parse.urlparse(a.url).hostname not in ("127.0.0.1", "localhost", "::1"):
            ap.error("--url must be a loopback address")
        url = a.url.rstrip("/")
    elif a.nginx:
        room = Room.start(a.servers, nginx=True, root=a.root, python=a.python)
        url = room.url
    else:
        srv = Server(root=a.root.resolve(), python=a.python).start()
        url = srv.url
    try:
        if room:
            for server in room.servers:
                asyncio.run(warm(server.url, a.pages))
                server.wait_warm()
            print(f"app: {room.servers[0].root}; {a.servers} server(s) behind nginx on {url}, sharing PostgreSQL 15 "
                  f"and a cache folder; RSS after warm-up "
                  + ", ".join(f"{s.rss_mb():.0f} MB" for s in room.servers) + f"; load average {loadavg()}")
        else:
            asyncio.run(warm(url, a.pages))
        if srv:
            srv.wait_warm()
            print(f"app: {srv.root}; RSS after warm-up {srv.rss_mb():.0f} MB")
        when = f"arriving within {a.arrive_within:g} s" if a.arrive_within else "at once"
        pauses = f", {a.pauses[0]:g}-{a.pauses[1]:g} s before each" if a.pauses else ""
        print(f"{a.sessions} sessions {when}{' (the same ones in every repeat)' if a.stay else ''}, "
              "each: open a page with new sentences"
              f"{f' of about {a.chars:,} characters' if a.chars else ''}, then "
              f"{a.selections} clicks{pauses} ({a.sessions * (1 + a.selections)} requests per repeat)")
        print(f"{'repeat':>6s} {'errors':>6s} {'p50':>7s} {'p95':>7s} {'max':>7s} {'wall':>7s} {'RSS after':>10s} "
              f"{'results':>10s} {'kept':>4s}")
        times = asyncio.run(rounds(url, a, srv, room, failover))
        if srv and a.linger:
            time.sleep(min(a.linger, 600))
            print(f"RSS {min(a.linger, 600):.0f} s after the last repeat: {srv.rss_mb():.0f} MB; "
                  f"results, kept: {held(url)}")
        if srv:
            print(f"server CPU in all: {srv.cpu_s():.1f} s; mean over requests "
                  f"{statistics.mean(times) if times else float('nan'):.2f} s (last repeat)")
        if room:
            print("server CPU in all (start-up included): "
                  + ", ".join(f"{room.cpu_s(k):.1f} s" for k in range(len(room.servers)))
                  + f"; mean over requests {statistics.mean(times) if times else float('nan'):.2f} s (last repeat)")
        if a.kill_at:
            if not failover.at:
                print(f"server 1 was not killed: the repeats ended before {a.kill_at:g} s")
            else:
                back = np.asarray(failover.back) if failover.back else np.array([np.nan])
                again = np.asarray(failover.reconnect) if failover.reconnect else np.array([np.nan])
                print(f"SIGKILL of server 1: {failover.drops} connections dropped, {len(failover.back)} reconnected "
                      f"through nginx; SIGKILL -> view shown again p50 {np.percentile(back, 50):.2f} s, "
                      f"p95 {np.percentile(back, 95):.2f} s, max {back.max():.2f} s (drop noticed -> shown: "
                      f"p50 {np.percentile(again, 50):.2f} s, p95 {np.percentile(again, 95):.2f} s)")
    finally:
        if srv:
            srv.stop()
        if room:
            room.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
