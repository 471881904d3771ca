"""Serve Context Lab from several app servers behind nginx on this machine
(``make serve-cluster SERVERS=2 PORT=8080``).

    python deploy/cluster.py --servers 2 --port 8080 [--host 0.0.0.0] [--tls CERT KEY]

It starts, in order:

1. nginx on ``--port`` from the shipped site (``deploy/nginx.py``): plain HTTP, or HTTPS
   with ``--tls``. Until an app server answers, nginx answers every request with the
   site's "starting" page (503, reloading itself), never with a bare 502; as each server
   first answers, nginx reloads, so that it sends browsers there at once;
2. the boards' PostgreSQL: ``LAB_BOARD_DB`` where set, else a cluster of its own kept
   under ``$LAB_DATA_DIR/cluster-postgres`` (made on first use with Debian's binaries,
   ``deploy.postgres``), started now and stopped at the end;
3. N app servers (``streamlit run serve.py``) on free loopback ports, sharing that
   database and ``LAB_CACHE_DIR``, with ``LAB_PUBLIC_URL`` set to nginx's address (unless
   set already, or nginx listens on every address, where the board finds this machine's
   own); each warms itself from launch.

It prints the address, waits until every server and nginx answer ``/_lab/ready``, and
prints "cluster ready". Then it watches the servers: one that exits (a crash, the
kernel's OOM killer, a stray ``kill -9``) is started again on its port after a pause
that doubles with each exit in a row (2 s, 4 s, 8 s ... at most 60 s; 2 s again once a
server has run for 5 minutes), and each step is said on the output: the exit and its
cause, the pause, the new process, when the server answers again. Meanwhile nginx sends
that server's tabs to the others. Ctrl-C or SIGTERM stops nginx, then the servers, then
the PostgreSQL it started.

The run folder (``$LAB_DATA_DIR/cluster-run``, or ``--run-dir``) holds this run's files:
``cluster.log`` (what this script said, each line with its time), ``server-N.log`` (app
server N's output; a restarted server's output goes on in the same file, after a line
that says so), nginx's configuration and its logs. At start, the files of the run before
move to ``earlier/<the time it started, UTC>/``; the newest ``--keep-runs`` (10) of those
folders are kept and older ones removed. nginx's temporary folder is the only other
thing removed.

On a machine without an NVIDIA driver, TensorFlow logs "failed call to cuInit: ... CUDA
error" as an error in every server's output, although nothing is wrong (it runs on the
CPU): there the servers run with ``TF_CPP_MIN_LOG_LEVEL=3`` (unless it is set to another
value than the usual 2), which leaves TensorFlow's C++ errors out of the logs; a failing
computation still raises, and the app logs its traceback.

This is one machine's cluster, for a lesson or a trial; a permanent installation runs the
same pieces under systemd (deploy/README.md).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from deploy.nginx import Nginx, Tls, nginx_missing
from deploy.postgres import Cluster, free_port, postgres_missing
from lab.board.store import data_dir

READY_PATH = "/_lab/ready"
HEALTH_PATH = "/_stcore/health"
READY_MESSAGE = "cluster ready"
EARLIER = "earlier"
# The pause before a dead server is started again: FIRST_PAUSE_S, doubled for each exit in
# a row up to MAX_PAUSE_S; a server that ran STEADY_S before it exited starts the count anew.
FIRST_PAUSE_S = 2.0
MAX_PAUSE_S = 60.0
STEADY_S = 300.0


class Stop(Exception):
    """SIGTERM, turned into an exception so that the clean-up runs as after Ctrl-C."""


def _on_sigterm(signum, frame):
    raise Stop


class Output:
    """What the script says: on its standard output (errors on standard error), and in
    ``cluster.log`` with the time."""

    def __init__(self, log: Path):
        self.log = log

    def __call__(self, message: str, error: bool = False) -> None:
        print(f"error: {message}" if error else message, file=sys.stderr if error else sys.stdout, flush=True)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
        with open(self.log, "a") as out:
            out.write(f"{stamp} {'error: ' if error else ''}{message}\n")


def exit_cause(returncode: int) -> str:
    """A process's exit status in words: "was killed by SIGKILL", "exited with status 1"."""
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


def restart_pause(exits_in_a_row: int) -> float:
    """Seconds to wait before starting a server that has exited ``exits_in_a_row`` times in
    a row (1 for the first): 2, 4, 8 ... at most 60."""
    return min(FIRST_PAUSE_S * 2 ** (exits_in_a_row - 1), MAX_PAUSE_S)


# What a run leaves in its folder: this script's log, the servers' logs, nginx's files.
RUN_FILES = ("cluster.log", "server-*.log", "nginx.conf", "nginx.out", "nginx.pid", "error.log", "context-lab.*.log")


def rotate_logs(run_dir: Path, keep: int) -> Path | None:
    """Move what an earlier run left in ``run_dir`` (``RUN_FILES``; nothing else there is
    touched) to ``run_dir/earlier/<its start>``, named for the time (UTC) of its oldest
    file, nginx's configuration, written at its start; keep the newest ``keep`` of those
    folders (0: every one). nginx's temporary folder (request bodies in transit, no logs)
    is removed. Returns where the files went, or None where there were none."""
    run_dir.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(run_dir / "temp", ignore_errors=True)
    files = sorted({p for pattern in RUN_FILES for p in run_dir.glob(pattern) if p.is_file()})
    moved = None
    if files:
        stamp = time.strftime("%Y-%m-%dT%H-%M-%SZ", time.gmtime(min(p.stat().st_mtime for p in files)))
        moved, n = run_dir / EARLIER / stamp, 2
        while moved.exists():
            moved, n = run_dir / EARLIER / f"{stamp}-{n}", n + 1
        moved.mkdir(parents=True)
        for path in files:
            path.rename(moved / path.name)
    if keep and (run_dir / EARLIER).is_dir():
        runs = sorted((run_dir / EARLIER).iterdir())  # by name: by start time
        for old in runs[:-keep]:
            shutil.rmtree(old)
    return moved


def gpu_driver_missing() -> bool:
    """True where NVIDIA's driver library does not load: TensorFlow then runs on the CPU
    and logs its failed ``cuInit`` as an error."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return True
    return False


class AppServer:
    """App server ``number``: ``streamlit run serve.py`` on 127.0.0.1:``port``, its output in
    ``log``, in a process group of its own (Ctrl-C reaches this script alone, which stops
    everything in order)."""

    def __init__(self, number: int, port: int, env: dict, log: Path):
        self.number, self.port, self.env, self.log = number, port, env, log
        self.proc: subprocess.Popen | None = None
        self.started = 0.0  # time.monotonic() of the last start
        self.exits_in_a_row = 0
        self.restarts = 0
        self.down_since: float | None = None  # exited, not yet ready again
        self.start_at: float | None = None  # a restart is due then
        self.answering = False

    @property
    def name(self) -> str:
        return f"app server {self.number} (port {self.port})"

    def start(self, note: str = "") -> None:
        """Start the process; its output goes on at the end of ``log``, after ``note``."""
        with open(self.log, "a") as out:
            if note:
                out.write(f"\n---- {time.strftime('%Y-%m-%d %H:%M:%S')} {note} ----\n")
                out.flush()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", "serve.py", "--server.address", "127.0.0.1",
                 "--server.port", str(self.port), "--server.headless", "true"],
                cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.started = time.monotonic()
        self.answering = False

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def answers(self, path: str) -> bool:
        try:
            with urllib.request.urlopen(f"http://{self.address}{path}", timeout=2) as r:
                return r.status == 200
        except (OSError, urllib.error.HTTPError):
            return False

    def ready(self) -> bool:
        return self.answers(READY_PATH)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def watch(self, say: Output) -> None:
        """One look at a server after the cluster is ready: an exit is said and a restart
        planned; a planned restart whose time has come is made; a restarted server that
        answers again, and then is warm again, is said."""
        now = time.monotonic()
        if not self.running():
            if self.start_at is None:  # it has just exited
                up = now - self.started
                self.exits_in_a_row = 1 if up >= STEADY_S else self.exits_in_a_row + 1
                pause = restart_pause(self.exits_in_a_row)
                self.start_at = now + pause
                self.down_since = self.down_since or now
                say(f"{self.name} {exit_cause(self.proc.returncode)} after {up:.0f} s; nginx sends its tabs "
                    f"to the others. Starting it again in {pause:.0f} s (exit {self.exits_in_a_row} in a row; "
                    f"its log: {self.log})")
            elif now >= self.start_at:
                self.start_at = None
                self.restarts += 1
                self.start(f"cluster.py starts this server again (restart {self.restarts})")
                say(f"{self.name} started again (pid {self.proc.pid}, restart {self.restarts})")
            return
        if self.down_since is None:
            return
        if not self.answering and self.answers(HEALTH_PATH):
            self.answering = True
            say(f"{self.name} answers again, {now - self.down_since:.1f} s after it went down")
        if self.answering and self.ready():
            say(f"{self.name} is ready again (warm), {now - self.down_since:.1f} s after it went down")
            self.down_since = None

    def stop(self, timeout: float = 20) -> None:
        """SIGTERM (Streamlit closes its sessions and exits), SIGKILL after ``timeout``."""
        if not self.running():
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def nginx_ready(nginx: Nginx, timeout: float) -> bool:
    """Whether ``READY_PATH`` answers 200 through nginx within ``timeout`` seconds (asked
    on loopback; a certificate is not checked: this is nginx itself)."""
    host = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(nginx.host, nginx.host)
    url = f"{'https' if nginx.tls else 'http'}://{host}:{nginx.port}{READY_PATH}"
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2, context=context) as r:
                if r.status == 200:
                    return True
        except (OSError, urllib.error.HTTPError):
            pass
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--servers", type=int, default=2, help="app servers (default: %(default)s)")
    ap.add_argument("--port", type=int, default=8080, help="nginx's port (default: %(default)s)")
    ap.add_argument("--host", default="127.0.0.1",
                    help="nginx's address (default: %(default)s; 0.0.0.0 for this machine's network)")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), type=Path, help="serve HTTPS with this certificate")
    ap.add_argument("--run-dir", type=Path, help="logs and nginx's files (default: $LAB_DATA_DIR/cluster-run)")
    ap.add_argument("--keep-runs", type=int, default=10,
                    help="earlier runs whose logs are kept in RUN_DIR/earlier (default: %(default)s; 0: all)")
    ap.add_argument("--ready-timeout", type=float, default=900,
                    help="seconds to wait for every server to be warm (default: %(default)s)")
    args = ap.parse_args(argv)
    if args.servers < 1:
        ap.error("--servers must be at least 1")
    if args.keep_runs < 0:
        ap.error("--keep-runs must be 0 (all) or more")
    return args


def server_env(board_db: str, public_url: str | None) -> tuple[dict, str | None]:
    """The app servers' environment, and a note to say where it differs from this one's
    for a reason an operator should know (TensorFlow's log level without a GPU driver)."""
    env = dict(os.environ, LAB_BOARD_DB=board_db)
    if public_url:
        env.setdefault("LAB_PUBLIC_URL", public_url)
    note = None
    if env.get("TF_CPP_MIN_LOG_LEVEL", "2") == "2" and gpu_driver_missing():
        env["TF_CPP_MIN_LOG_LEVEL"] = "3"
        note = ("no NVIDIA driver here: TensorFlow runs on the CPU, its C++ errors left out of the servers' logs "
                "(TF_CPP_MIN_LOG_LEVEL=3; the one it writes on every such machine is \"failed call to cuInit\")")
    return env, note


def main(argv=None) -> int:
    args = parse_args(argv)
    if missing := nginx_missing():
        print(f"error: {missing}", file=sys.stderr)
        return 2
    run_dir = args.run_dir or data_dir() / "cluster-run"
    earlier = rotate_logs(run_dir, args.keep_runs)
    say = Output(run_dir / "cluster.log")
    if earlier is not None:
        say(f"the run before's logs: {earlier}")
    signal.signal(signal.SIGTERM, _on_sigterm)

    scheme = "https" if args.tls else "http"
    address = f"{scheme}://{args.host}:{args.port}"
    cluster: Cluster | None = None
    servers: list[AppServer] = []
    nginx: Nginx | None = None
    try:
        board_db = os.environ.get("LAB_BOARD_DB")
        if not board_db and (missing := postgres_missing()):
            say(f"{missing}; or set LAB_BOARD_DB to a PostgreSQL of your own", error=True)
            return 2
        # nginx first: its "starting" page answers while the database and the servers start
        ports = [free_port() for _ in range(args.servers)]
        tls = Tls(*args.tls) if args.tls else None
        nginx = Nginx([f"127.0.0.1:{port}" for port in ports], args.port, run_dir, host=args.host, tls=tls).start()
        say(f"nginx on {address} (logs: {run_dir}); its \"starting\" page answers until an app server does")
        if not board_db:
            cluster = Cluster(folder=data_dir() / "cluster-postgres").start()
            board_db = cluster.create_database("lab", exist_ok=True)
            say(f"boards: PostgreSQL in {cluster.folder} on 127.0.0.1:{cluster.port}")
        env, note = server_env(board_db, address if args.host not in ("0.0.0.0", "::") else None)
        if note:
            say(note)
        servers = [AppServer(n, port, env, run_dir / f"server-{n}.log") for n, port in enumerate(ports, 1)]
        for server in servers:
            server.start()
            say(f"app server {server.number} on http://{server.address} (pid {server.proc.pid}, log: {server.log})")

        deadline = time.monotonic() + args.ready_timeout
        waiting = list(servers)
        while waiting:
            for server in list(waiting):
                if server.proc.poll() is not None:
                    say(f"{server.name} {exit_cause(server.proc.returncode)} while starting; see {server.log}",
                        error=True)
                    return 1
                if not server.answering and server.answers(HEALTH_PATH):
                    # nginx's workers took the refusals before as "down for fail_timeout":
                    # new workers send browsers to this server at once
                    server.answering = True
                    nginx.reload()
                    say(f"{server.name} answers, {time.monotonic() - server.started:.1f} s after its start")
                if server.ready():
                    waiting.remove(server)
                    say(f"{server.name} ready, {time.monotonic() - server.started:.1f} s after its start")
            if time.monotonic() > deadline:
                say(f"not ready after {args.ready_timeout:.0f} s: " + ", ".join(str(s.log) for s in waiting),
                    error=True)
                return 1
            time.sleep(0.5)
        if not nginx_ready(nginx, timeout=30):
            say(f"every app server is ready, yet nginx does not answer {READY_PATH} with 200; see {run_dir}",
                error=True)
            return 1
        say(f"{READY_MESSAGE}: {address}")

        while True:
            for server in servers:
                server.watch(say)
            time.sleep(0.5)
    except (KeyboardInterrupt, Stop):
        say("stopping")
        return 0
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one clean-up, even if asked twice
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if nginx is not None:
            nginx.stop()
        for server in servers:  # all at once, then each waited for
            if server.running():
                server.proc.terminate()
        for server in servers:
            server.stop()
        if cluster is not None:
            cluster.stop()
        say("stopped")


if __name__ == "__main__":
    sys.exit(main())
