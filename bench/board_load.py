"""A class writes on one board: students submit sentences from their phones through the
join page's form (plain HTTP, ``ui.server.join``) while the projector follows the board
over Streamlit's own websocket protocol.

    python bench/board_load.py [--students 60] [--join-within 5] [--within 60] [--servers 1|2] [--restart]
                               [--nginx [--kill-at S]] [--max-seconds 400] [--root CHECKOUT]

Serves the app (one server on SQLite in a new ``LAB_DATA_DIR``; with ``--servers 2`` or
``--nginx`` a throwaway PostgreSQL cluster and servers whose ``LAB_BOARD_DB`` points at it,
``bench/room.py``), waits until each is warm (as ``bench/load.py`` does) and makes a
board ("bank": money, river) in that database, as the teacher's page would.

With ``--nginx`` the servers sit behind nginx from the shipped site, and the students and
the projector go through it: each browser's own ``lab_browser`` cookie decides its server
(the report says how many tabs each got, from nginx's access log), instead of the
students taking the servers in turn and the projector server 1. ``--kill-at S`` SIGKILLs
the projector's server S seconds after the first student arrives: its tabs reconnect
through nginx to the other server (the projector reopens its URL; a student whose submit
got no answer retries once, as below), and the report adds how long the projector took to
draw again and to show every sentence stored before the kill, and how long each student
who had to retry took to see the join page again.

One projector session opens ``/board?board=CODE`` on server 1 and stays, as the
projector's tab does: the board's view is a fragment with ``run_every``, so every second
it asks for that fragment's rerun (the browser's timer: ``Session.follow``) and reads what
comes back, noting when each sentence id first appears in the ``customdata`` of the BERT
map (``board_map_bert``) and which ids each map holds now.

``--students`` students open the join page evenly over ``--join-within`` seconds and send
evenly over ``--within`` seconds, split in turn over the servers; each (a browser of its
own: its own ``lab_browser`` cookie) GETs ``/join?code=CODE`` (the page's HTML: its
bytes are reported; the script and stylesheet are cached after a first load, and their
bytes are reported once), then POSTs its sentence (money, river, or ambiguous with "not
sure") with the form's fields, asking for JSON as the page's script does, and reads the
answer. A student not told (no answer, the server away, a database that did not answer)
keeps the sentence and sends it again every second with the same submission token, as the
page lets them, for up to ``--timeout`` seconds.

With ``--restart``, halfway through the arrivals server 1 gets SIGTERM, is waited for and
started again on the same port with the same database; clients whose connection drops
reconnect (students retry as above; the projector reopens its URL).

Prints, per run: students told accepted / refused (reasons) / never told; client errors;
sentences stored; the dots on the projector at the end (ids in each map); lost sentences
(told accepted but not stored, or stored and visible but missing from the projector's
maps at the end: both should be 0); stored twice (a retry after an unanswered submit
that had been stored) and stored without the student being told; submit -> BERT map
latency (from the moment Submit was sent to the first rerun whose map held the id) p50,
p95, max; the join page's GET and the post's time p50, p95; server CPU per student; per server
its CPU seconds from the first student to the end (a restarted server: the old process's
until it stopped, and all of the new one's, start-up included) and its RSS at the end.
With ``--restart``: how long the server was away, when the projector drew again, and
when it showed every sentence stored before the old server exited. Bounded in time
(``--max-seconds``); asserts nothing.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import json
import re
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.room import Room, browser_cookie
from harness.served import Server, Session, loadavg
from bench.session import parser
from lab.board import links

WORD, SENSES = "bank", ("money", "river")
NOT_SURE = "not sure"  # the join page's sense option for "did not say" (lab.board.join.NOT_SURE)
MAPS = {"bert": "board_map_bert", "elmo": "board_map_elmo"}
PROJECTOR_COOKIE = browser_cookie("bench-projector")
DRAIN_S = 60.0  # after the last student, how long the projector may take to show everything
IDLE_S = 10.0  # the projector's own polling CPU is measured over this long before the class

NAMES = ["Ana", "Ben", "Chloe", "Dev", "Emma", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kemal", "Lea"]
MONEY = ["{n} paid {k} euros into the bank on a rainy {d}.",
         "The bank lent {n} {k} thousand pounds for a bakery on {d}.",
         "{n} queued at the bank for {k} minutes on {d} to open an account."]
RIVER = ["{n} sat on the grassy bank of the river for {k} minutes on {d}.",
         "On {d} {n} saw {k} herons standing on the muddy bank.",
         "{n} pulled the canoe onto the bank after {k} kilometres on {d}."]
UNSURE = ["On {d} {n} waited by the bank for {k} minutes.",
          "{n} said the bank was {k} steps from the old mill on {d}."]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def sentence(i: int) -> tuple[str, str]:
    """Student ``i``'s sentence with "bank" and the option they pick: two in five money, two in
    five river, one in five "not sure" (an ambiguous sentence); no two students alike."""
    kind = ("money", "river", "money", "river", NOT_SURE)[i % 5]
    templates = {"money": MONEY, "river": RIVER, NOT_SURE: UNSURE}[kind]
    text = templates[(i // 5) % len(templates)].format(n=NAMES[i % len(NAMES)], k=i + 2, d=DAYS[(i // 3) % 7])
    return text, kind


@dataclass
class Student:
    index: int
    server: int
    text: str
    choice: str
    told: str = ""  # "accepted", "refused", or "" (never told)
    answer: str = ""  # the page's words
    number: int = 0  # the number the page gave an accepted sentence
    sent: float = 0.0  # perf_counter when the accepted Submit went out
    tries: int = 0  # submits sent
    untold: int = 0  # tries that ended without an answer
    connects: int = 0  # connection attempts that failed (a server away)
    reopened: float = 0.0  # perf_counter when a retry's join page was shown
    request_s: list[float] = field(default_factory=list)
    join_s: list[float] = field(default_factory=list)  # the join page's GETs
    page_bytes: int = 0  # the join page's HTML
    errors: list[str] = field(default_factory=list)


class Projector:
    """The projector's tab on server 1: follows the board, reopening its URL when the
    connection drops."""

    def __init__(self, url: str, code: str):
        self.url, self.code = url, code
        self.first_seen: dict[str, dict[int, float]] = {f: {} for f in MAPS}
        self.now: dict[str, set[int]] = {f: set() for f in MAPS}
        self.errors: list[str] = []
        self.runs = 0
        self.drops: list[float] = []  # perf_counter of each lost connection
        self.redrawn: list[float] = []  # perf_counter of the first map drawn after each reconnect
        self.history: list[tuple[float, set[int]]] = []  # (perf_counter, ids) of every BERT map received
        self.stop = asyncio.Event()

    def on_chart(self, key: str, spec: str, at: float) -> None:
        for family, chart_key in MAPS.items():
            if key != chart_key:
                continue
            ids = {int(i) for trace in json.loads(spec).get("data", []) for i in trace.get("customdata") or []}
            for i in ids:
                self.first_seen[family].setdefault(i, at)
            self.now[family] = ids
            if family == "bert":
                self.history.append((at, ids))
            if len(self.redrawn) < len(self.drops):
                self.redrawn.append(at)

    async def run(self, timeout: float) -> None:
        while not self.stop.is_set():
            s = Session(self.url, cookie=PROJECTOR_COOKIE)
            s.on_chart = self.on_chart
            try:
                await s.connect()
                r = await s.open("board", query={"board": self.code}, timeout=timeout)
                self.errors += [f"projector: {e}" for e in r.errors]
                if not s.auto_reruns:
                    self.errors.append("projector: the board page set no run_every fragment")
                while not self.stop.is_set():
                    runs, errors = await s.follow(1.0, until=self.stop.is_set)
                    self.runs += runs
                    self.errors += [f"projector: {e}" for e in errors]
            except Exception as exc:  # noqa: BLE001 - a drop (server restarting): reopen, as a person would
                if self.stop.is_set():
                    break
                if not self.drops or len(self.redrawn) >= len(self.drops):
                    self.drops.append(time.perf_counter())
                    self.errors.append(f"projector: {type(exc).__name__}: {str(exc)[:120]}")
                await asyncio.sleep(0.5)
            finally:
                await s.close()


_FIELDS = re.compile(r'name="(code|csrf|token)" value="([^"]*)"')


def http(url: str, cookie: str, form: dict | None, timeout: float) -> tuple[int, bytes, float]:
    """One request as a phone's browser sends it (GET, or a form's POST as the page's script
    sends it, asking for JSON); (status, body, seconds). Raises OSError when no answer came."""
    headers = {"Cookie": cookie, "Accept": "application/json" if form is not None else "text/html"}
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if form is not None else "GET")
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            body = r.read()
            return r.status, body, time.perf_counter() - t0
    except urllib.error.HTTPError as e:
        return e.code, e.read(), time.perf_counter() - t0


async def student(st: Student, url: str, code: str, join_at: float, send_at: float, a, pool) -> None:
    """Open the join page at ``join_at`` (the code in the link), send the sentence at
    ``send_at`` from the form's fields, as the page's script does, and read the answer. A
    student not told (no answer, the server away) keeps the sentence and taps Submit again
    every second, with the same submission token, as the page lets them, until told or
    ``a.timeout`` has passed."""
    loop = asyncio.get_running_loop()
    cookie = f"lab_browser=bench-student-{st.index:03d}"
    await asyncio.sleep(max(0.0, join_at - time.perf_counter()))
    fields: dict[str, str] = {}
    deadline = send_at + a.timeout
    while not fields:
        try:
            status, body, seconds = await loop.run_in_executor(
                pool, http, f"{url}/{links.JOIN_PAGE}?code={code}", cookie, None, a.timeout)
            st.join_s.append(seconds)
            st.page_bytes = len(body)
            fields = dict(_FIELDS.findall(body.decode()))
            if status != 200 or set(fields) != {"code", "csrf", "token"}:
                st.errors.append(f"join page: {status}, fields {sorted(fields)}")
                fields = {}
        except OSError as exc:
            st.connects += 1
            st.errors.append(f"join page: {type(exc).__name__}: {str(exc)[:120]}")
        if not fields:
            if time.perf_counter() > deadline:
                return
            await asyncio.sleep(1.0)
    await asyncio.sleep(max(0.0, send_at - time.perf_counter()))
    form = fields | {"text": st.text, "sense": st.choice}
    while time.perf_counter() < deadline:
        st.tries += 1
        sent = time.perf_counter()
        try:
            status, body, seconds = await loop.run_in_executor(pool, http, f"{url}/{links.JOIN_PAGE}", cookie,
                                                               form, a.timeout)
            reply = json.loads(body)
        except (OSError, ValueError) as exc:  # no answer, or a proxy's page: "not answering"
            st.untold += 1
            st.errors.append(f"submit: {type(exc).__name__}: {str(exc)[:120]}")
            await asyncio.sleep(1.0)
            continue
        st.request_s.append(seconds)
        if reply.get("ok"):
            st.told, st.answer, st.sent, st.number = "accepted", reply["message"], sent, reply["number"]
            if st.untold:
                st.reopened = time.perf_counter()
            return
        if status == 503:  # the database did not answer: the sentence is kept, sent again
            st.untold += 1
            st.errors.append(reply.get("message", ""))
            await asyncio.sleep(1.0)
            continue
        st.told, st.answer = "refused", reply.get("message", "")
        return


def restart(srv: Server, log: dict) -> None:
    """SIGTERM server 1, wait for it, start it again on the same port (blocking)."""
    log["cpu_before"] = srv.cpu_s()
    log["stopped"] = time.perf_counter()
    log["stopped_epoch"] = time.time()
    srv.stop()
    log["down"] = time.perf_counter()
    log["down_epoch"] = time.time()
    srv.proc, srv.log = None, Path(f"{srv.log}.restarted")
    srv.start(wait=True)
    log["up"] = time.perf_counter()


def kill(room: Room, k: int, log: dict) -> None:
    """SIGKILL server ``k`` (blocking), noting when."""
    log["stopped"] = time.perf_counter()
    log["stopped_epoch"] = time.time()
    log["loadavg"] = loadavg()
    room.kill(k)
    log["down"] = time.perf_counter()
    log["down_epoch"] = log["stopped_epoch"]  # a SIGKILLed server stores nothing after the signal


async def run_class(servers: list[Server], code: str, a,
                    room: Room | None = None) -> tuple[list[Student], Projector, dict]:
    urls = [room.url] if room and room.nginx else [srv.url for srv in servers]
    proj = Projector(urls[0], code)
    watching = asyncio.create_task(proj.run(a.timeout))
    up_by = time.perf_counter() + a.timeout
    while proj.runs == 0 and time.perf_counter() < up_by:  # the projector's first rerun: its view is up
        await asyncio.sleep(0.2)
    if proj.runs == 0:
        proj.errors.append(f"projector: no rerun of the board's view in {a.timeout:.0f} s")
    idle0, w0 = sum(srv.cpu_s() for srv in servers), time.perf_counter()
    await asyncio.sleep(IDLE_S)  # the projector alone, polling an unchanged board
    idle_rate = (sum(srv.cpu_s() for srv in servers) - idle0) / (time.perf_counter() - w0)
    t0 = time.perf_counter()
    students = []
    for i in range(a.students):
        text, choice = sentence(i)
        students.append(Student(i, i % len(urls), text, choice))
    log: dict = {"cpu0": [srv.cpu_s() for srv in servers], "epoch0": time.time() - (time.perf_counter() - t0),
                 "log_start": room.log_length() if room else 0, "idle_rate": idle_rate}
    pool = concurrent.futures.ThreadPoolExecutor(max(8, a.students))  # a phone each: none waits for a thread
    n = max(1, a.students)
    tasks = [student(st, urls[st.server], code, t0 + a.join_within * i / n, t0 + a.within * (i + 1) / n, a, pool)
             for i, st in enumerate(students)]
    if a.kill_at:
        log["killed"] = room.server_of(PROJECTOR_COOKIE)

        async def kill_later():
            await asyncio.sleep(a.kill_at)
            await asyncio.to_thread(kill, room, log["killed"], log)
        tasks.append(kill_later())
    if a.restart:
        async def restart_later():
            await asyncio.sleep(a.within / 2)
            await asyncio.to_thread(restart, servers[0], log)
        tasks.append(restart_later())
    try:
        await asyncio.wait_for(asyncio.gather(*tasks), max(1.0, a.max_seconds - DRAIN_S))
    except asyncio.TimeoutError:
        log["timed_out"] = True
    log["students_done"] = time.perf_counter()
    pool.shutdown(wait=False)
    return students, proj, log | {"start": t0, "watching": watching}


async def drain(proj: Projector, visible: set[int], limit: float) -> float | None:
    """Wait until both maps hold every visible id; the perf_counter when they did, or None."""
    end = time.perf_counter() + limit
    while time.perf_counter() < end:
        if all(visible <= ids for ids in proj.now.values()):
            return time.perf_counter()
        await asyncio.sleep(0.2)
    return None


def page_bytes(students, servers, room) -> str:
    """The join page's HTML (median over the students) and its script and stylesheet, before
    compression (urllib asks for none; a browser gets them gzipped: bench/join_bytes.py)."""
    html = [st.page_bytes for st in students if st.page_bytes]
    if not html:
        return "-"
    base = room.url if room and room.nginx else servers[0].url
    assets = [len(http(f"{base}/{links.JOIN_PAGE}/{name}", "", None, 30)[1]) for name in ("join.js", "join.css")]
    return (f"{int(np.median(html))} + {assets[0]} + {assets[1]} = {int(np.median(html)) + sum(assets)} bytes "
            "(uncompressed)")


def pct(values, q: float) -> str:
    return f"{np.percentile(values, q):.2f}" if len(values) else "-"


def main(argv=None) -> int:
    ap = parser(__doc__, students=60, within=60, servers=1)
    ap.add_argument("--join-within", type=float, default=5.0,
                    help="seconds over which the students open the join page (default 5)")
    ap.add_argument("--restart", action="store_true", help="stop server 1 halfway through and start it again")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds one request may take")
    ap.add_argument("--max-seconds", type=float, default=400.0, help="seconds the class may take, all included")
    ap.add_argument("--nginx", action="store_true",
                    help="the servers behind nginx; students and projector through it, spread by their cookies")
    ap.add_argument("--kill-at", type=float, default=0.0,
                    help="with --nginx --servers 2: SIGKILL the projector's server this many seconds after the "
                         "first student")
    a = ap.parse_args(argv)
    a.students, a.servers = max(1, min(a.students, 250)), max(1, min(a.servers, 2))
    if a.kill_at and not (a.nginx and a.servers == 2):
        ap.error("--kill-at needs --nginx --servers 2 (the other server takes the killed one's tabs)")
    if a.kill_at and a.restart:
        ap.error("--kill-at or --restart, not both")
    tmp = Path(tempfile.mkdtemp(prefix="lab-board-bench-"))
    room = None
    servers: list[Server] = []
    try:
        if a.servers > 1 or a.nginx:
            room = Room.start(a.servers, nginx=a.nginx, root=a.root, python=a.python)
            servers, url = room.servers, room.board_db
            database = "PostgreSQL 15" + (f", behind nginx on {room.url}" if a.nginx else "")
        else:
            url = f"sqlite:///{tmp / 'boards.sqlite3'}"
            database = f"SQLite in {tmp}"
            servers.append(Server(root=a.root.resolve(), python=a.python, env={"LAB_DATA_DIR": str(tmp)}).start())
            servers[0].wait_warm()
        from lab.board.store import BoardStore

        store = BoardStore(url)
        board, _key = store.create(WORD, list(SENSES), bert_source="embedded", elmo_source="embedded")
        print(f"app: {servers[0].root}; {a.servers} server(s) on {database}; board {board.code} "
              f"(“{WORD}”: {', '.join(SENSES)}); RSS after warm-up "
              + ", ".join(f"{s.rss_mb():.0f} MB" for s in servers))
        typing = f", joining over {a.join_within:g} s"
        where = ("through nginx, spread by their cookies" if a.nginx
                 else f"in turn on {a.servers} server(s); the projector on server 1")
        print(f"{a.students} students over {a.within} s{typing}, {where}"
              f"{'; server 1 restarted at ' + str(a.within / 2) + ' s' if a.restart else ''}"
              f"{f'; the projector server SIGKILLed at {a.kill_at:g} s' if a.kill_at else ''}; "
              f"load average {loadavg()}", flush=True)
        t_begin = time.perf_counter()

        async def whole():
            students, proj, log = await run_class(servers, board.code, a, room)
            visible = {e.id for e in store.visible(board.id)}
            left = max(5.0, a.max_seconds - (time.perf_counter() - t_begin))
            log["all_shown"] = await drain(proj, visible, min(DRAIN_S, left))
            proj.stop.set()
            await asyncio.wait_for(log.pop("watching"), 30)
            return students, proj, log

        students, proj, log = asyncio.run(whole())
        report(students, proj, log, store, board, servers, a, room)
        store.dispose()
    finally:
        if room is None:
            for srv in servers:
                srv.stop()
        if room is not None:
            room.stop()
    return 0


def report(students, proj, log, store, board, servers, a, room: Room | None = None) -> None:
    entries = store.entries(board.id)
    visible = {e.id for e in store.visible(board.id)}
    by_text = collections.defaultdict(list)
    for e in entries:
        by_text[e.text].append(e)
    by_number = {e.number: e for e in entries}
    told = collections.Counter(st.told or "never told" for st in students)
    refused = collections.Counter(st.answer for st in students if st.told == "refused")
    accepted = [st for st in students if st.told == "accepted"]
    lost_stored = [st for st in accepted if st.number not in by_number or by_number[st.number].text != st.text]
    lost_shown = {f: visible - ids for f, ids in proj.now.items()}
    twice = sum(len(v) - 1 for v in by_text.values() if len(v) > 1)
    # a try stored without its answer: a copy more than the student was told of
    unanswered_stored = sum(len(by_text[st.text]) - (st.told == "accepted") for st in students if st.text in by_text)
    latency = [proj.first_seen["bert"][by_number[st.number].id] - st.sent for st in accepted
               if st.number in by_number and by_number[st.number].id in proj.first_seen["bert"]]
    requests = [r for st in students for r in st.request_s]
    joins = [r for st in students for r in st.join_s]
    errors = [f"student {st.index}: {e}" for st in students for e in st.errors] + proj.errors
    rows = [
        ("students", f"{len(students)}"),
        ("told accepted", f"{told['accepted']}"),
        ("refused", f"{told['refused']}" + "".join(f"\n{'':32s}{n} x {r}" for r, n in refused.items())),
        ("never told (after a retry)", f"{told['never told']}"),
        ("tries without an answer (students)", f"{sum(st.untold for st in students)} "
                                               f"({sum(1 for st in students if st.untold)})"),
        ("client errors", f"{len(errors)}"),
        ("stored in the database", f"{len(entries)} ({len(visible)} visible)"),
        ("dots on the projector: BERT / ELMo", f"{len(proj.now['bert'])} / {len(proj.now['elmo'])}"),
        ("LOST: accepted, not stored", f"{len(lost_stored)}"),
        ("LOST: stored+visible, not on projector", f"BERT {len(lost_shown['bert'])} / ELMo {len(lost_shown['elmo'])}"),
        ("stored twice / stored, student not told", f"{twice} / {unanswered_stored}"),
        ("submit -> BERT map p50 / p95 / max", f"{pct(latency, 50)} / {pct(latency, 95)} / "
                                                f"{max(latency):.2f} s ({len(latency)} of {len(accepted)})"
         if latency else "-"),
        ("Submit request p50 / p95", f"{pct(requests, 50)} / {pct(requests, 95)} s ({len(requests)} requests)"),
        ("join page GET p50 / p95", f"{pct(joins, 50)} / {pct(joins, 95)} s ({len(joins)} requests)"),
        ("join page bytes: HTML + script + style", page_bytes(students, servers, room)),
        ("projector reruns", f"{proj.runs}"),
    ]
    if not (a.restart or a.kill_at):
        spent = sum(srv.cpu_s() - c for srv, c in zip(servers, log["cpu0"]))
        polling = log["idle_rate"] * (time.perf_counter() - log["start"])
        rows.append(("server CPU per student / less polling",
                     f"{spent / len(students) * 1000:.0f} / {(spent - polling) / len(students) * 1000:.0f} ms "
                     f"(projector polling alone {log['idle_rate'] * 100:.1f} % of a core)"))
    tabs = room.spread(log["log_start"]) if room and room.nginx else None
    for k, srv in enumerate(servers):
        alive = srv.proc is not None and srv.proc.poll() is None
        cpu = f"{srv.cpu_s():.1f} s" if alive else "-"
        if room and k in room.killed:
            cpu = f"{room.killed[k] - log['cpu0'][k]:.1f} s until its SIGKILL"
        elif k == 0 and "cpu_before" in log:  # the old process from the class's start, the new one from its own
            cpu = f"{log['cpu_before'] - log['cpu0'][0]:.1f} s before the restart + {cpu} after"
        elif alive:
            cpu = f"{srv.cpu_s() - log['cpu0'][k]:.1f} s"
        rows.append((f"server {k + 1}: CPU in the class / RSS at end", f"{cpu} / {srv.rss_mb():.0f} MB"
                     if alive else cpu))
        if tabs is not None:
            rows.append((f"server {k + 1}: tabs nginx passed to it", f"{tabs[k + 1]}"))
    if a.kill_at and "stopped" in log:
        k = log["killed"]
        rows.append(("SIGKILL: the projector's server", f"server {k + 1}, at {log['stopped'] - log['start']:.1f} s "
                                                         f"(load average then {log.get('loadavg', '-')})"))
        if proj.redrawn:
            rows.append(("SIGKILL -> projector drew a map", f"{proj.redrawn[0] - log['stopped']:.1f} s"))
        back = [st.reopened - log["stopped"] for st in students if st.reopened > log["stopped"]]
        rows.append(("SIGKILL -> a retrying student's page", f"p50 {pct(back, 50)} / p95 {pct(back, 95)} s "
                                                              f"({len(back)} students)"))
    if a.restart and "stopped" in log:
        rows.append(("restart: SIGTERM -> exited / -> healthy",
                     f"{log['down'] - log['stopped']:.1f} / {log['up'] - log['stopped']:.1f} s "
                     f"(at {log['stopped'] - log['start']:.1f} s)"))
        if proj.redrawn:
            rows.append(("restart: SIGTERM -> projector drew a map", f"{proj.redrawn[0] - log['stopped']:.1f} s"))
        rows.append(("students whose connect failed at first", f"{sum(1 for st in students if st.connects)}"))
    shown = log.get("all_shown")
    rows.append(("last student -> projector showed all",
                 f"{shown - log['students_done']:.1f} s" if shown else f"not within {DRAIN_S:.0f} s"))
    if (a.restart or a.kill_at) and "stopped" in log:
        before = {e.id for e in entries if e.id in visible and e.created < log["down_epoch"]}
        back = next((t for t, ids in proj.history if t > log["stopped"] and before <= ids), None)
        signal_name = "SIGKILL" if a.kill_at else "SIGTERM"
        rows.append((f"{signal_name} -> projector showed all before it",
                     f"{back - log['stopped']:.1f} s ({len(before)} ids)" if back else "never"))
    if log.get("timed_out"):
        rows.append(("TIMED OUT", f"the students did not finish in {a.max_seconds - DRAIN_S:.0f} s"))
    print()
    for name, value in rows:
        print(f"{name:40s} {value}")
    for st in students:
        copies = by_text.get(st.text, [])
        if len(copies) > 1 or st.untold:
            at = ", ".join(f"+{e.created - log['epoch0']:.2f} s" for e in copies)
            print(f"  student {st.index}: {st.tries} submits, {st.untold} unanswered, told {st.told or 'nothing'}; "
                  f"stored {len(copies)}x ({at})"
                  + (f"; {'SIGKILL' if a.kill_at else 'SIGTERM'} at +{log['stopped_epoch'] - log['epoch0']:.2f} s"
                     if "stopped_epoch" in log else ""))
    if errors:
        print("\nerrors seen by clients (first 12):")
        for e in errors[:12]:
            print(f"  {e}")


if __name__ == "__main__":
    sys.exit(main())
