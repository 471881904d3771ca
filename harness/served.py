"""A served app on loopback, its CPU and memory from /proc, and a client that speaks
Streamlit's websocket protocol (no browser): what the benchmarks (``bench/``), the tests
(``tests/browser.py`` serves its browser tests with ``Server``) and ``tools/`` share.

A browser talks to the server over one websocket, ``/_stcore/stream``: it sends
``BackMsg(rerun_script=ClientState(...))`` and reads ``ForwardMsg``s until one carries
``script_finished`` (0 a full run finished, 3 a fragment run finished, 2 ended early for a
rerun: keep reading). ``Session`` does the same, remembers the widgets the run drew (id,
label, options, the fragment each lives in) and can "click" a pill as the browser would:
the widget's new value and the id of its fragment.

Nothing here asserts a time; the benchmarks print figures.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from ui.server.warmup import READY_LINE

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")

# What checkouts before ``READY_LINE`` printed at the end of the warm-up (the compiles still running)
OLD_DONE_LINE = "Context Lab: start-up warm-up done"

# Sentences a session has not seen: a new view needs a model run, not a cache hit.
SUBJECTS = ["The central bank", "A fisherman", "The old teacher", "My neighbour", "The pilot", "A young nurse",
            "The mayor", "Our coach", "The baker", "A tired student"]
VERBS = ["raised interest rates", "rested by the river bank", "read the letter twice", "sold the old boat",
         "planted a tree", "painted the fence", "found a key", "lost the match", "fixed the bike", "sang a song"]


def new_sentences(i: int, salt: str = "", chars: int = 0, words: int = 0) -> tuple[str, str]:
    """Two sentences numbered ``i`` (different for every i and salt), sharing the word "bank";
    with ``chars``, each grown to about that many characters (a pasted paragraph); with
    ``words``, sentence A grown to exactly that many words."""
    a = f"{SUBJECTS[i % 10]} {VERBS[(i // 10) % 10]} near the bank on day {i}{salt}."
    b = f"{SUBJECTS[(i + 3) % 10]} walked along the bank of the river at {i}{salt} o'clock."
    more = " ".join(f"Then {SUBJECTS[(i + k) % 10].lower()} {VERBS[k % 10]} again."
                    for k in range(max(chars // 20, words // 3)))
    if chars:
        a, b = (f"{s} {more}"[:chars] for s in (a, b))
    if words:
        a = " ".join(f"{a} {more}".split()[:words]).rstrip(".") + "."
    return a, b


def loadavg() -> str:
    """The machine's load average over 1, 5 and 15 minutes (/proc/loadavg): printed with
    every figure, as other work on the machine moves them."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def free_port() -> int:
    """A loopback port no one listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """``streamlit run serve.py`` on a free loopback port, from ``root`` (a checkout), on the
    embedded models, without stored runs (``env`` adds to or overrides the environment),
    its output in ``log`` (default: /tmp/lab-bench-PORT.log)."""

    root: Path = ROOT
    python: str = sys.executable
    env: dict = field(default_factory=dict)
    port: int = 0
    proc: subprocess.Popen | None = None
    started: float = 0.0
    log: Path | None = None
    launcher: list[str] = field(default_factory=lambda: ["-m", "streamlit"])  # or a wrapper script
    script: str = ""  # the script, relative to root or absolute (default: serve.py, or app.py in a checkout without it)

    def start(self, wait: bool = True) -> "Server":
        self.port = self.port or free_port()
        self.script = self.script or ("serve.py" if (self.root / "serve.py").is_file() else "app.py")
        # no runs stored by earlier servers (lab.stored): a benchmark's new sentences are new
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", LAB_BERT_SOURCE="", LAB_ELMO_SOURCE="", LAB_WARMUP="1",
                   LAB_STORED_RUNS="0", PYTHONPATH=str(self.root)) | self.env
        self.log = self.log or Path(f"/tmp/lab-bench-{self.port}.log")
        self.started = time.monotonic()
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(
                [self.python, *self.launcher, "run", self.script, "--server.port", str(self.port),
                 "--server.address", "127.0.0.1", "--server.headless", "true",
                 "--browser.gatherUsageStats", "false"],
                cwd=self.root, env=env, stdout=out, stderr=subprocess.STDOUT)
        if wait:
            self.wait_healthy()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_healthy(self, timeout: float = 120) -> float:
        """Seconds from start until /_stcore/health answers."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited:\n{self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return time.monotonic() - self.started
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"server did not start in {timeout} s:\n{self.log.read_text()[-3000:]}")

    def cpu_s(self) -> float:
        """utime + stime of the server process (fields 14 and 15 of /proc/PID/stat), in s."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def wait_quiet(self, timeout: float = 300, window: float = 2.0, share: float = 0.05) -> float:
        """Wait until the server uses under ``share`` of a core over ``window`` seconds
        (start-up warm-up and background compilation done); returns the seconds waited."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            c0 = self.cpu_s()
            time.sleep(window)
            if self.cpu_s() - c0 < share * window:
                break
        return time.monotonic() - t0

    def wait_warm(self, timeout: float = 300) -> float:
        """Wait until the server says it is warm, then until it is quiet; returns the seconds
        waited. A checkout that prints ``ui.server.warmup.READY_LINE`` says so once the common
        BERT lengths are compiled; an older one printed only the warm-up's end
        (``OLD_DONE_LINE``), and compiled for 20-35 s more, which ``wait_quiet`` then waits out.
        The warm-up waits for a first page and then pauses, which looks quiet: a server no
        page has been opened on yet gets one (the home page, over the protocol). A checkout
        with neither line, or a server without the warm-up, waits out the pause instead."""
        t0 = time.monotonic()
        if self.env.get("LAB_WARMUP", "1") != "0":
            code = "".join(p.read_text() for p in self.root.glob("ui/**/warmup.py"))
            line = READY_LINE if "READY_LINE" in code else OLD_DONE_LINE if "DONE_LINE" in code else None
            if line is None:
                time.sleep(10.0)  # an older checkout: its pause (at most 6 s), then quiet
            else:
                if line not in self.log.read_text(errors="replace"):
                    # in a thread of its own: the caller may be running an event loop (Playwright's)
                    with concurrent.futures.ThreadPoolExecutor(1) as pool:
                        pool.submit(asyncio.run, _open_home(self.url)).result()
                while line not in self.log.read_text(errors="replace"):
                    if time.monotonic() - t0 > timeout:
                        raise RuntimeError(f"not warm in {timeout} s:\n{self.log.read_text()[-3000:]}")
                    if self.proc.poll() is not None:
                        raise RuntimeError(f"server exited:\n{self.log.read_text()[-3000:]}")
                    time.sleep(0.2)
        self.wait_quiet(timeout=max(1.0, timeout - (time.monotonic() - t0)))
        return time.monotonic() - t0

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


@dataclass
class Widget:
    id: str
    kind: str
    label: str
    options: list[str]
    fragment_id: str


@dataclass
class RunResult:
    seconds: float
    bytes: int
    messages: int
    errors: list[str]
    status: int
    alerts: list[tuple[str, str]] = field(default_factory=list)  # (SUCCESS/ERROR/WARNING/INFO, text), in order
    sent: float = 0.0  # time.perf_counter() when the request went out


def element_key(element_id: str) -> str:
    """The user's key in an element's id (``$$ID-<hash>-<key>``; "" for an element without one)."""
    parts = element_id.split("-", 2)
    return parts[2] if len(parts) == 3 and parts[2] != "None" else ""


class Session:
    """One browser tab's worth of protocol: ``await s.open(page, a, b)``, ``await s.pick(label, i)``."""

    def __init__(self, base_url: str, cookie: str = "", headers: dict[str, str] | None = None):
        self.ws_url = base_url.replace("http://", "ws://") + "/_stcore/stream"
        # sent with the websocket's request: a Cookie, as a browser sends (through a proxy, the
        # one that keeps a tab on its server), and any other header
        self.headers = dict(headers or {}) | ({"Cookie": cookie} if cookie else {})
        self.ws = None
        self.page = ""
        self.query = ""
        self.widgets: dict[str, Widget] = {}
        self.charts: dict[str, str] = {}  # Plotly figure JSON of the latest chart drawn under each key
        self.auto_reruns: dict[str, float] = {}  # fragment id -> seconds between its reruns (run_every)
        self.on_chart = None  # called as on_chart(key, figure JSON, time.perf_counter()) for each chart received
        self._due: dict[str, float] = {}  # fragment id -> perf_counter of its next timed rerun (follow)
        self._alerts: list[tuple[str, str]] = []

    async def connect(self) -> None:
        import websockets

        self.ws = await websockets.connect(self.ws_url, subprotocols=["streamlit"], max_size=None,
                                           open_timeout=60, ping_interval=None,
                                           additional_headers=self.headers or None)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def reconnect(self, timeout: float = 120) -> RunResult:
        """After the connection dropped (its server gone): connect again, retrying every 0.5 s
        for ``timeout`` seconds, and run the page again from its address, as the browser
        does; the new session on the server starts from what the address holds."""
        import websockets

        deadline = time.perf_counter() + timeout
        while True:
            try:
                await self.connect()
                break
            except (OSError, websockets.exceptions.InvalidHandshake):
                if time.perf_counter() > deadline:
                    raise
                await asyncio.sleep(0.5)
        self.widgets.clear()
        self.charts.clear()
        self.auto_reruns.clear()
        self._due.clear()
        return await self._rerun(max(1.0, deadline - time.perf_counter()))

    async def _rerun(self, timeout: float, **client_state) -> RunResult:
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ClientState_pb2 import ClientState
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = BackMsg(rerun_script=ClientState(query_string=self.query, page_name=self.page, **client_state))
        self._alerts = []
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        size = count = 0
        errors: list[str] = []
        deadline = t0 + timeout
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), max(0.1, deadline - time.perf_counter()))
            size += len(raw)
            count += 1
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            kind = self._read(fm, errors)
            if kind == "script_finished":
                if fm.script_finished == 2:  # ended early for a rerun: the rerun follows
                    continue
                return RunResult(time.perf_counter() - t0, size, count, errors, fm.script_finished,
                                 self._alerts, t0)

    def _read(self, fm, errors: list[str]) -> str:
        """Note what one ForwardMsg says (widgets, charts, alerts, errors, fragment timers);
        returns its type."""
        kind = fm.WhichOneof("type")
        if kind == "delta":
            self._note(fm.delta, errors)
        elif kind == "page_not_found":
            errors.append(f"page not found: {self.page}")
        elif kind == "auto_rerun":
            self.auto_reruns[fm.auto_rerun.fragment_id] = fm.auto_rerun.interval
        elif kind == "stop_auto_rerun":
            for fragment_id in fm.stop_auto_rerun.fragment_ids:
                self.auto_reruns.pop(fragment_id, None)
        elif kind == "page_info_changed":  # the page wrote its address (st.query_params): keep it,
            self.query = fm.page_info_changed.query_string  # as the browser does, for the next run
        return kind

    def _note(self, delta, errors: list[str]) -> None:
        if delta.WhichOneof("type") != "new_element":
            return
        el = delta.new_element
        kind = el.WhichOneof("type")
        if kind == "exception":
            errors.append(f"{el.exception.type}: {el.exception.message}")
        elif kind == "alert":
            from streamlit.proto.Alert_pb2 import Alert

            self._alerts.append((Alert.Format.Name(el.alert.format), el.alert.body))
        elif kind == "plotly_chart":
            key = element_key(el.plotly_chart.id)
            self.charts[key] = el.plotly_chart.spec
            if self.on_chart is not None:
                self.on_chart(key, el.plotly_chart.spec, time.perf_counter())
        elif kind == "radio":
            self.widgets[el.radio.label] = Widget(el.radio.id, kind, el.radio.label, list(el.radio.options),
                                                  delta.fragment_id)
        elif kind == "button" and el.button.is_form_submitter:
            self.widgets[el.button.label] = Widget(el.button.id, kind, el.button.label, [], delta.fragment_id)
        elif kind == "button_group":
            bg = el.button_group
            self.widgets[bg.label] = Widget(bg.id, kind, bg.label, [o.content for o in bg.options],
                                            delta.fragment_id)
        elif kind == "selectbox":  # the word picker past ``ui.frame.MAX_PILLS`` words
            self.widgets[el.selectbox.label] = Widget(el.selectbox.id, kind, el.selectbox.label,
                                                      list(el.selectbox.options), delta.fragment_id)
        elif kind == "text_area":
            self.widgets[el.text_area.label] = Widget(el.text_area.id, kind, el.text_area.label, [],
                                                      delta.fragment_id)
        elif kind == "checkbox":  # st.checkbox and st.toggle
            self.widgets[el.checkbox.label] = Widget(el.checkbox.id, kind, el.checkbox.label, [], delta.fragment_id)

    async def run_page(self, page: str = "", query: str = "", timeout: float = 120) -> RunResult:
        """Run ``page`` ("": the default page) with the query string ``query`` (a full run)."""
        return await self.open(page, timeout=timeout, query=dict(urllib.parse.parse_qsl(query)))

    async def open(self, page: str, a: str = "", b: str = "", timeout: float = 120,
                   query: dict[str, str] | None = None) -> RunResult:
        """Open ``page`` with sentences ``a`` and ``b``, or with the address's ``query``
        parameters instead (``{"code": "ACEFHJ"}``): a full script run."""
        self.page = page
        self.query = urllib.parse.urlencode({"a": a, "b": b} if query is None else query)
        self.widgets.clear()
        self.charts.clear()
        self.auto_reruns.clear()
        self._due.clear()
        return await self._rerun(timeout)

    async def type(self, texts: dict[str, str], timeout: float = 120) -> RunResult:
        """Enter new text in the text areas labelled as ``texts``' keys (the sidebar's
        "Sentence A" and "Sentence B"), as a person does on the open page: a rerun of the
        whole page with the new values."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates

        states = [WidgetState(id=self.widgets[label].id, string_value=text) for label, text in texts.items()]
        return await self._rerun(timeout, widget_states=WidgetStates(widgets=states))

    async def pick(self, label: str, option: int, timeout: float = 120) -> RunResult:
        """Click option ``option`` of the pills or segmented control labelled ``label`` (or
        choose it in the select box of that label, which a page shows for a long sentence),
        as the browser does: its new value, and a rerun of the fragment it sits in."""
        from streamlit.proto.Common_pb2 import StringArray
        from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates

        w = self.widgets[label]
        if w.kind == "selectbox":  # the option's label, as the browser sends it
            state = WidgetState(id=w.id, string_value=w.options[option])
        else:
            state = WidgetState(id=w.id, string_array_value=StringArray(data=[w.options[option]]))
        return await self._rerun(timeout, widget_states=WidgetStates(widgets=[state]), fragment_id=w.fragment_id)

    async def switch(self, label: str, on: bool, timeout: float = 120) -> RunResult:
        """Turn the toggle (or checkbox) labelled ``label`` on or off, as the browser does: its
        new value, and a rerun of the fragment it sits in."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates

        w = self.widgets[label]
        state = WidgetState(id=w.id, bool_value=on)
        return await self._rerun(timeout, widget_states=WidgetStates(widgets=[state]), fragment_id=w.fragment_id)


    async def submit_form(self, button: str, texts: dict[str, str] | None = None,
                          choices: dict[str, str] | None = None, timeout: float = 120) -> RunResult:
        """Fill a form and click its submit button labelled ``button``, as the browser does: the
        form's values (text areas labelled as ``texts``' keys, radio buttons labelled as
        ``choices``' keys set to the option named) go with the button's click in one rerun of
        the page. ``RunResult.alerts`` holds what the page answered (``st.success``, ``st.error``)."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates

        states = [WidgetState(id=self.widgets[label].id, string_value=text) for label, text in (texts or {}).items()]
        for label, option in (choices or {}).items():
            w = self.widgets[label]
            if option not in w.options:
                raise ValueError(f"{option!r} is not an option of {label!r}: {w.options}")
            states.append(WidgetState(id=w.id, string_value=option))
        w = self.widgets[button]
        states.append(WidgetState(id=w.id, trigger_value=True))
        return await self._rerun(timeout, widget_states=WidgetStates(widgets=states), fragment_id=w.fragment_id)

    def chart(self, key: str) -> dict | None:
        """The Plotly figure (``{"data": [...], "layout": {...}}``) of the latest chart drawn under
        ``key``, or None."""
        spec = self.charts.get(key)
        return json.loads(spec) if spec else None

    async def follow(self, seconds: float, until=None) -> tuple[int, list[str]]:
        """Keep the open page as an open tab does for ``seconds`` (or until ``until()`` is true,
        checked after each message): ask every fragment with ``run_every`` to rerun on its
        timer, without waiting for the last rerun to finish (the browser's timer), and read
        whatever the server sends (widgets, charts and ``on_chart``, errors). Returns the
        finished runs and the errors shown; raises what the connection raises when it drops."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ClientState_pb2 import ClientState
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        end = time.perf_counter() + seconds
        due = self._due  # the timers run on from one call to the next, as the browser's do
        runs, errors = 0, []
        while (now := time.perf_counter()) < end:
            for fragment_id, at in list(due.items()):
                if fragment_id not in self.auto_reruns:
                    del due[fragment_id]
                elif at <= now:
                    msg = BackMsg(rerun_script=ClientState(query_string=self.query, page_name=self.page,
                                                           fragment_id=fragment_id, is_auto_rerun=True))
                    await self.ws.send(msg.SerializeToString())
                    every = self.auto_reruns[fragment_id]
                    due[fragment_id] = at + every if at + every > now else now + every  # late: no burst
            for fragment_id, every in self.auto_reruns.items():
                due.setdefault(fragment_id, now + every)
            wait = min([end, *due.values()]) - time.perf_counter()
            try:
                raw = await asyncio.wait_for(self.ws.recv(), max(0.001, wait))
            except asyncio.TimeoutError:
                continue
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            if self._read(fm, errors) == "script_finished" and fm.script_finished != 2:
                runs += 1
            if until is not None and until():
                break
        return runs, errors


# What a session clicks on each page: (label of a pills group, how to pick an option).
CLICKS = {"bert": "Word in sentence A", "elmo": "Word in sentence A", "attention": "Query token",
          "compare": "Word in sentence A"}


async def _open_home(url: str) -> None:
    """One session runs the home page (no model): app.py's first run, which the warm-up waits for."""
    s = Session(url)
    await s.connect()
    try:
        await s._rerun(120)
    finally:
        await s.close()


def last_upstream(line: str) -> str | None:
    """The server that answered an access log line's request (the last one tried, where
    one failed first: ``upstream=A, B``), or None for a line without one."""
    m = re.search(r"upstream=(\S+(?:, \S+)*) upstream_status", line)
    return m[1].split(", ")[-1] if m else None
