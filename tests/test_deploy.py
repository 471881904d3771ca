"""Two app servers behind nginx, as deploy/ ships them: the shipped site
(``deploy/nginx/context-lab.conf``, rewritten for loopback ports by ``deploy/nginx.py``)
in front of two ``streamlit run serve.py`` sharing one PostgreSQL.

- a browser's requests and websockets, told apart by its ``lab_browser`` cookie, all
  reach one server, and a handful of browsers use both (nginx's access log says which
  server answered each request);
- a student on one server appears on a projector served by the other;
- a tab whose server is killed reconnects to the other and shows the same view;
- HTTPS: the app sees ``X-Forwarded-Proto: https`` (its cookie is Secure), and plain
  HTTP redirects there;
- the systemd unit passes ``systemd-analyze verify``;
- ``deploy/cluster.py`` starts, says "cluster ready", serves, and stops without leaving
  a process behind; while it starts nginx answers with a "starting" page, not 502; it
  keeps the run before's logs; a server of it killed with SIGKILL is started again (and
  its tab comes back on the other meanwhile); the servers' logs hold no CUDA error.

Without nginx these tests skip, except where LAB_REQUIRE_NGINX=1 (CI), where that is a
failure. The servers run without the start-up warm-up (``LAB_WARMUP=0``): what is tested
here is where requests go, not how warm a server is.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.client
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from harness.served import Server, Session, free_port, last_upstream
from deploy.cluster import exit_cause, gpu_driver_missing, restart_pause, rotate_logs
from deploy.nginx import Nginx, Tls, nginx_missing, openssl_missing, self_signed
from lab.board import links
from lab.board.store import BoardStore
from tests.browser import click_pill, record_answers, wait_idle
from tests.test_browser_board import (MONEY, RIVER, everything_on, join, maps_hold, query, submit, table_texts,
                                      teacher_cookie, tick_hidden)
from tests.test_browser_board_projector import assert_same_coords, coords
from tests.test_browser_teacher import FOURTH, THIRD, hidden_in_store
from ui.cookies import COOKIE

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "deploy" / "systemd" / "context-lab@.service"
# A tab reconnects with a growing pause between tries (Streamlit's client), then its page
# runs again on the other server, which has the model loaded already (the test sees to it).
FAILOVER_S = 45


def _require(missing: str | None, variable: str) -> None:
    if missing is None:
        return
    if os.environ.get(variable) == "1":
        pytest.fail(missing, pytrace=False)
    pytest.skip(missing)


def _run_dir() -> Path:
    """A folder for nginx's files under /tmp, readable by all (as root, nginx's workers run
    as nobody; pytest's folders are closed to them)."""
    folder = Path(tempfile.mkdtemp(prefix="lab-nginx-"))
    folder.chmod(0o755)
    return folder


class Room:
    """App servers and nginx in front of them (``servers``: those the test started itself,
    where it did)."""

    def __init__(self, upstreams: list[str], nginx: Nginx, servers: list[Server] = ()):
        self.upstreams, self.nginx, self.servers = upstreams, nginx, list(servers)

    def log_lines(self, since: int = 0) -> list[str]:
        return self.nginx.access_log()[since:]

    def upstream_of(self, cookie: str) -> str:
        """The server nginx sends a browser with this cookie to (a health check through it)."""
        before = len(self.log_lines())
        get(self.nginx.url + "/_stcore/health", Cookie=f"{COOKIE}={cookie}")
        return upstreams(self.wait_lines(before, 1))[0]

    def wait_lines(self, since: int, count: int, timeout: float = 10) -> list[str]:
        """The access log's lines after the first ``since``, once there are ``count`` of them
        (nginx writes a request's line when it ends: a websocket's when it closes)."""
        deadline = time.monotonic() + timeout
        while len(lines := self.log_lines(since)) < count:
            assert time.monotonic() < deadline, f"nginx logged {lines}, expected {count} lines"
            time.sleep(0.05)
        return lines

    def cookies_by_server(self) -> dict[str, str]:
        """A cookie that nginx sends to each server."""
        found: dict[str, str] = {}
        for i in range(64):
            found.setdefault(self.upstream_of(f"browser-{i}"), f"browser-{i}")
            if len(found) == len(self.upstreams):
                return found
        raise AssertionError(f"64 cookies all went to {list(found)}")


def upstreams(lines: list[str]) -> list[str]:
    """The upstream of each access log line (the last one tried, where one failed)."""
    return [last_upstream(line) for line in lines]


def get(url: str, context: ssl.SSLContext | None = None, **headers) -> tuple[int, str, dict]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=20, context=context) as r:
            return r.status, r.read().decode(errors="replace"), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace"), e.headers


@pytest.fixture(scope="module")
def room(postgres_url, tmp_path_factory):
    """Two app servers sharing ``postgres_url`` and a cache folder, behind nginx (plain
    HTTP on loopback); yields the ``Room``."""
    _require(nginx_missing(), "LAB_REQUIRE_NGINX")
    run_dir = _run_dir()
    nginx_port = free_port()
    env = {"LAB_WARMUP": "0", "LAB_BOARD_DB": postgres_url,
           "LAB_CACHE_DIR": str(tmp_path_factory.mktemp("shared_cache")),
           "LAB_REFERENCE_CORPUS": str(ROOT / "tests" / "fixtures" / "small_corpus.txt"),
           "LAB_PUBLIC_URL": f"http://127.0.0.1:{nginx_port}"}
    servers = [Server(env=env, log=tmp_path_factory.mktemp("server") / "server.log").start(wait=False)
               for _ in range(2)]
    nginx = Nginx([f"127.0.0.1:{s.port}" for s in servers], nginx_port, run_dir)
    try:
        for server in servers:
            server.wait_healthy()
        nginx.start()
        yield Room([f"127.0.0.1:{s.port}" for s in servers], nginx, servers)
    finally:
        nginx.stop()
        for server in servers:
            server.stop()
        shutil.rmtree(run_dir, ignore_errors=True)


@pytest.fixture
def tab(person, room):
    """``tab(cookie)``: a new tab in a browser of its own that already holds ``cookie`` as
    its ``lab_browser`` (so its server is known in advance)."""
    return lambda cookie: person([{"name": COOKIE, "value": cookie, "url": room.nginx.url}])


def session_runs(url: str, cookie: str, runs: int, page: str = "", query: str = "") -> None:
    """One websocket session with this cookie that runs ``page`` ``runs`` times, in a thread
    of its own (Playwright's sync API keeps an event loop running in this one)."""

    async def runs_of_page() -> None:
        s = Session(url, headers={"Cookie": f"{COOKIE}={cookie}"})
        await s.connect()
        try:
            for _ in range(runs):
                result = await s.run_page(page, query)
                assert result.status == 0 and not result.errors, result
        finally:
            await s.close()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, runs_of_page()).result()


# --- deploy/cluster.py (first in the module: the room's servers are not up yet) ------------
def _processes(pattern: str) -> list[str]:
    found = subprocess.run(["pgrep", "-af", "--", pattern], capture_output=True, text=True)
    return [line for line in found.stdout.splitlines() if "pgrep" not in line]


class ClusterScript:
    """``deploy/cluster.py --servers 2 --port PORT`` with ``LAB_DATA_DIR=data`` (and ``env``),
    its output in a file of ``data``."""

    def __init__(self, data: Path, port: int, env: dict | None = None):
        self.data, self.port = data, port
        self.url = f"http://127.0.0.1:{port}"
        self.run_dir = data / "cluster-run"
        self.out = data / f"cluster-{len(list(data.glob('cluster-*.out')))}.out"
        full = {k: v for k, v in os.environ.items() if k not in ("LAB_BOARD_DB", "LAB_PUBLIC_URL")}
        full |= {"LAB_DATA_DIR": str(data), "LAB_WARMUP": "0", "PYTHONUNBUFFERED": "1"} | (env or {})
        with open(self.out, "w") as sink:
            self.proc = subprocess.Popen([sys.executable, str(ROOT / "deploy" / "cluster.py"), "--servers", "2",
                                          "--port", str(port)], cwd=ROOT, env=full, stdout=sink,
                                         stderr=subprocess.STDOUT)

    def text(self) -> str:
        return self.out.read_text()

    def wait_for(self, needle: str, timeout: float, since: int = 0) -> str:
        """The output once ``needle`` is in it after its first ``since`` characters."""
        deadline = time.monotonic() + timeout
        while needle not in (text := self.text())[since:]:
            assert self.proc.poll() is None, text
            assert time.monotonic() < deadline, f"no {needle!r} in {timeout} s:\n{text}"
            time.sleep(0.2)
        return text

    def servers(self) -> list[tuple[int, int]]:
        """(port, pid) of app servers 1 and 2 as first started."""
        found = re.findall(r"app server \d on http://127\.0\.0\.1:(\d+) \(pid (\d+)", self.text())
        return [(int(port), int(pid)) for port, pid in found]

    def stop(self) -> None:
        """SIGTERM: it stops with status 0, says "stopped" last, and leaves no process."""
        ports = [port for port, _ in self.servers()]
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=60) == 0, self.text()
        assert self.text().rstrip().endswith("stopped")
        for pattern in [str(self.data), *(f"--server.port {p}" for p in ports)]:
            assert _processes(pattern) == [], pattern

    def close(self) -> None:
        """Stop it where it still runs (a failed test): SIGTERM, for it to stop what it
        started (SIGKILL would leave nginx and the servers behind), SIGKILL after 60 s."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _cluster_data() -> Path:
    data = Path(tempfile.mkdtemp(prefix="lab-cluster-"))
    data.chmod(0o755)  # the postgres user keeps its cluster under it; nginx's workers read it
    return data


def test_the_cluster_script_serves_and_stops_cleanly():
    """``deploy/cluster.py --servers 2``: its own PostgreSQL (in LAB_DATA_DIR), two servers,
    nginx; "cluster ready"; / and /_lab/ready through nginx; SIGTERM leaves no process."""
    _require(nginx_missing(), "LAB_REQUIRE_NGINX")
    from deploy.postgres import postgres_missing

    _require(postgres_missing(), "LAB_REQUIRE_POSTGRES")
    data = _cluster_data()
    cluster = ClusterScript(data, free_port())
    try:
        text = cluster.wait_for("cluster ready", 150)
        assert len(cluster.servers()) == 2, text
        assert get(cluster.url + "/", Accept="text/html")[0] == 200
        assert get(cluster.url + "/_lab/ready")[:2] == (200, "ready")
        assert _processes(str(data / "cluster-postgres")), "no PostgreSQL of its own"
        cluster.stop()
    finally:
        cluster.close()
        shutil.rmtree(data, ignore_errors=True)


STARTING = "Context Lab is starting"


def answer(url: str) -> tuple[int | str, str]:
    """The status and body of a GET, or ("refused", "") where nothing listens yet."""
    try:
        return get(url, Accept="text/html")[:2]
    except OSError:  # urllib's URLError included
        return "refused", ""


def serves_tensorflow(pid: int) -> bool:
    """Whether the process has TensorFlow's library loaded (it has computed with it)."""
    return "libtensorflow" in Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.browser
def test_the_cluster_script_restarts_a_killed_server_and_keeps_the_logs(postgres_url, person, tmp_path):
    """An operator's cluster: an earlier run stopped while it started, then
    ``deploy/cluster.py --servers 2`` on the tests' PostgreSQL:

    - the earlier run's logs are kept, in ``cluster-run/earlier/<its start>/``;
    - while it starts nginx answers with its "starting" page (503), never with a 502;
    - a projector tab and the teacher's tab (the teacher link opened through nginx: its key
      kept in the browser's cookie) on server one, which is SIGKILLed: both come back on
      server two; the projector draws the same maps (each sentence's coordinates within
      1e-6), the teacher's tab is the teacher's (its table lists a sentence sent after the
      kill, a tick hides a sentence in the store), and so is a reload; the script says that
      server one was killed, starts it again after a pause and says when it answers; server
      one's log keeps what it wrote before the kill, a line that says it was started again,
      and what it wrote after;
    - TensorFlow ran on both servers (each drew the maps) and their logs hold no "failed call
      to cuInit" (a machine without a GPU driver) and no traceback.
    """
    _require(nginx_missing(), "LAB_REQUIRE_NGINX")
    data = _cluster_data()
    port = free_port()
    # as `make serve-cluster` runs it (the Makefile exports TF_CPP_MIN_LOG_LEVEL=2)
    env = {"LAB_BOARD_DB": postgres_url, "TF_CPP_MIN_LOG_LEVEL": "2", "LAB_CACHE_DIR": str(tmp_path / "cache")}
    earlier = ClusterScript(data, port, env)
    cluster = None
    store = BoardStore(postgres_url)
    try:
        earlier.wait_for("app server 2 on", 60)
        earlier.stop()
        # all but nginx's temporary folder (request bodies in transit)
        earlier_files = sorted(p.name for p in earlier.run_dir.iterdir() if p.name != "temp")
        assert {"cluster.log", "server-1.log", "server-2.log", "nginx.conf"} <= set(earlier_files)

        cluster = ClusterScript(data, port, env)
        answers = []
        while "cluster ready" not in cluster.text():
            assert cluster.proc.poll() is None, cluster.text()
            answers.append(answer(cluster.url + "/"))
            time.sleep(0.1)
        statuses = [status for status, _ in answers]
        print(f"nginx's answers while the cluster started: { {s: statuses.count(s) for s in set(statuses)} }")
        assert 502 not in statuses
        assert 503 in statuses and all(STARTING in body for status, body in answers if status == 503)
        [kept] = (cluster.run_dir / "earlier").iterdir()
        assert sorted(p.name for p in kept.iterdir()) == earlier_files
        assert "app server 2 on" in (kept / "cluster.log").read_text()
        assert f"the run before's logs: {kept}" in cluster.text()
        if gpu_driver_missing():
            assert "TF_CPP_MIN_LOG_LEVEL=3" in cluster.text()

        (one_port, one_pid), (two_port, two_pid) = cluster.servers()
        one, two = f"127.0.0.1:{one_port}", f"127.0.0.1:{two_port}"
        room = Room([one, two], Nginx([one, two], port, cluster.run_dir))
        cookies = room.cookies_by_server()
        board, key = store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded")
        for n, (text, sense) in enumerate([(MONEY, "money"), (RIVER, "river"), (THIRD, "river")]):
            store.submit(board.id, text, sense, browser="cluster-test", token=str(n))
        ids = [entry.id for entry in store.entries(board.id)]
        on_one = [{"name": COOKIE, "value": cookies[one], "url": cluster.url}]
        projector = person(on_one)
        projector.goto(links.projector_link(cluster.url, board.code))
        maps_hold(projector, ids, time.monotonic(), 240)  # server one loads BERT and ELMo (no time asked)
        wait_idle(projector, settle_ms=800)
        drawn = coords(projector)
        assert {key: sorted(dots) for key, dots in drawn.items()} == {key: sorted(ids) for key in drawn}, drawn
        logged = len(room.log_lines())
        teacher = person(on_one)
        teacher.goto(links.teacher_link(cluster.url, board.code, key))
        teacher.get_by_role("heading", name="Moderation").wait_for()
        teacher.locator('[data-testid="stDataFrame"] td', has_text=THIRD).wait_for(state="attached")
        wait_idle(teacher)
        assert teacher_cookie(teacher, board.code)["value"] == key and key not in teacher.url
        routed = [line for line in room.log_lines(logged) if '"GET /board/teach ' in line]
        assert routed and set(upstreams(routed)) == {one}, routed  # the key's cookie, set by server one

        runs, teacher_runs = record_answers(projector), record_answers(teacher)
        before = len(cluster.text())
        os.kill(one_pid, signal.SIGKILL)
        # server two loads the models for the tabs' new sessions (no time asked)
        deadline = time.monotonic() + 240
        while "script_finished:FINISHED_SUCCESSFULLY" not in runs:
            assert time.monotonic() < deadline, f"the projector did not come back: {runs}"
            projector.wait_for_timeout(200)
        assert "new_session" in runs
        maps_hold(projector, ids, time.monotonic(), 240)
        wait_idle(projector, settle_ms=800)
        assert_same_coords(drawn, coords(projector))  # server two replays the same orientation
        assert any(f"upstream={one}, {two}" in line for line in room.log_lines()), room.log_lines()[-10:]

        # the teacher's tab: a new session on server two, and the teacher's (its table lists
        # a sentence sent after the kill; a tick reaches the store); the link is not opened again
        late = store.submit(board.id, FOURTH, "money", browser="cluster-test", token="late").entry
        teacher.bring_to_front()
        teacher.locator('[data-testid="stDataFrame"] td', has_text=FOURTH).wait_for(state="attached",
                                                                                   timeout=240_000)
        wait_idle(teacher)
        assert "new_session" in teacher_runs
        assert query(teacher.url)["board"] == [board.code] and key not in teacher.url
        tick_hidden(teacher, table_texts(teacher, 2).index(MONEY))
        hidden_in_store(store, board.id, [MONEY])
        projector.bring_to_front()
        maps_hold(projector, [*ids[1:], late.id], time.monotonic(), 60)  # hidden on the projector

        teacher.reload()  # a new page load: whichever server answers, the cookie keeps the controls
        teacher.get_by_role("heading", name="Moderation").wait_for(timeout=240_000)
        teacher.locator('[data-testid="stDataFrame"] td', has_text=FOURTH).wait_for(state="attached",
                                                                                   timeout=240_000)
        wait_idle(teacher)
        tick_hidden(teacher, table_texts(teacher, 2).index(RIVER))
        hidden_in_store(store, board.id, [MONEY, RIVER])
        assert key not in everything_on(projector)

        text = cluster.wait_for(f"app server 1 (port {one_port}) answers again", 240, since=before)
        said = text[before:]
        print(said)
        assert f"app server 1 (port {one_port}) was killed by SIGKILL" in said
        assert "Starting it again in 2 s" in said and f"app server 1 (port {one_port}) started again" in said
        log = (cluster.run_dir / "server-1.log").read_text()
        restarted = log.index("cluster.py starts this server again (restart 1)")
        assert f"URL: http://127.0.0.1:{one_port}" in log[:restarted]  # its first start's output, kept
        assert f"URL: http://127.0.0.1:{one_port}" in log[restarted:]
        assert serves_tensorflow(two_pid)
        for server_log in sorted(cluster.run_dir.glob("server-*.log")):
            text = server_log.read_text(errors="replace")
            assert "cuInit" not in text and "CUDA error" not in text, server_log
            assert "Traceback" not in text, server_log
            assert key not in text, server_log
        assert key not in room.nginx.access_log_path.read_text()
        cluster.stop()
    finally:
        store.dispose()
        earlier.close()
        if cluster is not None:
            cluster.close()
        shutil.rmtree(data, ignore_errors=True)


def test_one_browser_stays_on_one_server_and_browsers_spread(room):
    """Each of 8 browsers (cookies): its page load, health check and a websocket session
    that runs the home page three times all reach one server; the 8 use both servers."""
    servers_used = set()
    for i in range(8):
        cookie = f"sticky-{i}"
        before = len(room.log_lines())
        headers = {"Cookie": f"{COOKIE}={cookie}"}
        assert get(room.nginx.url + "/", Accept="text/html", **headers)[0] == 200
        assert get(room.nginx.url + "/_stcore/health", **headers)[:2] == (200, "ok")
        session_runs(room.nginx.url, cookie, 3)
        lines = room.wait_lines(before, 3)
        assert any('"GET /_stcore/stream ' in line and " 101 " in line for line in lines), lines
        assert len(set(upstreams(lines))) == 1, lines
        servers_used |= set(upstreams(lines))
    assert servers_used == set(room.upstreams)


def test_a_first_page_load_sets_the_cookie_through_nginx(room):
    """A browser without the cookie gets one from whichever server answers its page."""
    status, _, headers = get(room.nginx.url + "/join", Accept="text/html")
    assert status == 200
    cookie = headers.get("Set-Cookie", "")
    assert cookie.startswith(f"{COOKIE}=") and "Secure" not in cookie  # plain HTTP


@pytest.mark.browser
def test_a_student_on_one_server_appears_on_a_projector_on_the_other(room, tab, postgres_url):
    """A projector tab through nginx on one server, a student's tab on the other (their
    cookies chosen so): the student's sentence reaches the projector through PostgreSQL."""
    store = BoardStore(postgres_url)
    try:
        board, _ = store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded")
        cookies = room.cookies_by_server()
        one, two = room.upstreams
        before = len(room.log_lines())
        projector = tab(cookies[two])
        projector.goto(links.projector_link(room.nginx.url, board.code))
        projector.get_by_text("No sentences yet").wait_for()
        student = tab(cookies[one])
        join(student, links.join_link(room.nginx.url, board.code))
        submit(student, MONEY, sense="money")
        [entry] = store.entries(board.id)
        # the projector's server loads BERT and ELMo for the first sentence (no time asked)
        maps_hold(projector, [entry.id], time.monotonic(), 90)
        # the student's page is a plain form: its post, and no websocket, went to server one
        posts = [line for line in room.log_lines(before) if '"POST /join' in line]
        assert posts and set(upstreams(posts)) == {one}, posts
        for server in room.servers:
            assert "Traceback" not in server.log.read_text(errors="replace")
    finally:
        store.dispose()


def test_https_through_nginx_and_plain_http_redirects(room, tmp_path):
    """nginx with a self-signed certificate: an HTTPS page load works (verified against
    that certificate), the app marks its cookie Secure (it saw X-Forwarded-Proto: https),
    and plain HTTP redirects to HTTPS; the access log holds the path, not the key."""
    _require(openssl_missing(), "LAB_REQUIRE_NGINX")
    cert, key = self_signed(tmp_path)
    port, redirect = free_port(), free_port()
    run_dir = _run_dir()
    try:
        with Nginx(room.upstreams, port, run_dir, tls=Tls(cert, key, redirect)) as nginx:
            context = ssl.create_default_context(cafile=str(cert))  # verified against that certificate
            status, body, headers = get(nginx.url + "/board", context=context, Accept="text/html")
            assert status == 200 and "<html" in body.lower()
            cookie = headers.get("Set-Cookie", "")
            assert cookie.startswith(f"{COOKIE}=") and "; Secure" in cookie  # the app saw https
            assert get(nginx.url + "/_lab/ready", context=context)[:2] == (200, "ready")
            plain = http.client.HTTPConnection("127.0.0.1", redirect, timeout=10)
            plain.request("GET", "/board?key=secret")
            answer = plain.getresponse()
            assert answer.status == 301
            assert answer.getheader("Location") == f"https://127.0.0.1:{port}/board?key=secret"
            log = nginx.access_log_path.read_text()
            assert "secret" not in log and '"GET /board HTTP/1.1" 301' in log  # the path, not the key
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def test_the_systemd_unit_verifies(tmp_path):
    """``systemd-analyze verify`` on the unit, its paths rewritten to this checkout (it
    checks that ExecStart's program exists). systemd does not run here: verified, not run."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze not found (package systemd): the unit cannot be verified here")
    venv_python = ROOT / ".venv" / "bin" / "python"
    python = venv_python if venv_python.exists() else Path(sys.executable)
    env_file = tmp_path / "context-lab.env"
    env_file.write_text("LAB_SHARED=1\n")
    text = (UNIT.read_text().replace("/opt/context-lab/.venv/bin/python", str(python))
            .replace("/opt/context-lab", str(ROOT)).replace("/etc/context-lab.env", str(env_file)))
    assert str(ROOT) in text and "/opt/" not in text
    (tmp_path / UNIT.name).write_text(text)
    done = subprocess.run([analyze, "verify", str(tmp_path / "context-lab@8501.service")],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    # (a machine without systemd running warns about what it cannot reach, on stderr lines
    # that do not name the unit)
    problems = [line for line in done.stderr.splitlines() if "context-lab" in line]
    assert done.returncode == 0 and not problems, done.stderr


_CHARTS = """() => Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot'),
  el => JSON.stringify((el.data || []).map(t => ({name: t.name || '',
    y: Array.from(t.y || [], v => typeof v === 'number' ? v.toFixed(4) : v)}))))"""

SENTENCES = "a=The+pitcher+threw+a+fast+ball.&b=She+poured+water+from+the+pitcher."


@pytest.mark.browser
def test_a_tab_whose_server_dies_reconnects_to_the_other(room, tab):
    """The BERT page (sentences and a chosen word in its URL) open through nginx on one
    server; that server killed (SIGKILL); the tab reconnects through nginx to the other and
    shows the same view: the same URL, the same charts. Nothing is restarted. (Last in
    this module: the room keeps one server.)"""
    cookies = room.cookies_by_server()
    one, two = room.upstreams
    # the other server has BERT loaded (as a warm server would): the failover is timed, the load is not
    session_runs(room.nginx.url, cookies[two], 1, "bert", SENTENCES)
    pg = tab(cookies[one])
    pg.goto(f"{room.nginx.url}/bert?{SENTENCES}")
    pg.wait_for_selector("text=One word, two contexts")
    wait_idle(pg)
    click_pill(pg, "Word in sentence A", "threw")
    pg.wait_for_selector('text=Token cosine "threw" / "pitcher"')
    url, charts = pg.url, pg.evaluate(_CHARTS)
    assert charts and all(json.loads(c) for c in charts)

    answers = record_answers(pg)
    killed = room.servers[0]
    killed.proc.send_signal(signal.SIGKILL)
    killed.proc.wait()
    t0 = time.monotonic()
    while "script_finished:FINISHED_SUCCESSFULLY" not in answers:
        assert time.monotonic() - t0 < FAILOVER_S, f"no full run on the other server: got {answers}"
        pg.wait_for_timeout(100)
    assert "new_session" in answers
    wait_idle(pg, settle_ms=300)
    assert pg.url == url
    assert pg.evaluate(_CHARTS) == charts
    assert pg.get_by_text('Token cosine "threw" / "pitcher"').count() == 1
    # the reconnect went to server two: nginx tried server one, found it gone, and went on
    lines = room.log_lines()
    assert any(f"upstream={one}, {two}" in line for line in lines), lines[-10:]


def test_the_cluster_script_moves_an_earlier_runs_logs_aside(tmp_path):
    """``rotate_logs``: an earlier run's files move to ``earlier/<the time of its oldest
    file, UTC>``; a file of another program stays; the newest ``keep`` folders are kept;
    nginx's temporary folder goes."""
    run_dir = tmp_path / "cluster-run"
    assert rotate_logs(run_dir, keep=2) is None and run_dir.is_dir()
    made = []
    for start in (1_800_000_000, 1_800_000_100, 1_800_000_200):
        for name in ("nginx.conf", "cluster.log", "server-1.log", "context-lab.access.log"):
            (run_dir / name).write_text(f"{name} of the run at {start}\n")
            os.utime(run_dir / name, (start, start + (name != "nginx.conf") * 50))
        (run_dir / "temp" / "proxy").mkdir(parents=True, exist_ok=True)
        (run_dir / "notes.txt").write_text("an operator's own file\n")
        made.append(rotate_logs(run_dir, keep=2))
        assert sorted(p.name for p in run_dir.iterdir()) == ["earlier", "notes.txt"]
    assert [p.name for p in made] == ["2027-01-15T08-00-00Z", "2027-01-15T08-01-40Z", "2027-01-15T08-03-20Z"]
    assert sorted(p.name for p in (run_dir / "earlier").iterdir()) == [p.name for p in made[1:]]
    assert (made[2] / "server-1.log").read_text() == "server-1.log of the run at 1800000200\n"
    assert sorted(p.name for p in made[2].iterdir()) == [
        "cluster.log", "context-lab.access.log", "nginx.conf", "server-1.log"]


def test_the_cluster_script_says_why_a_server_stopped_and_how_long_it_waits():
    assert exit_cause(-signal.SIGKILL) == "was killed by SIGKILL"
    assert exit_cause(1) == "exited with status 1"
    assert [restart_pause(n) for n in range(1, 9)] == [2, 4, 8, 16, 32, 60, 60, 60]
