"""Serve Context Lab from several app servers behind nginx on this machine
(``make serve-cluster SERVERS=2 PORT=8080``).

    python deploy/cluster.py --servers 2 --port 8080 [--host 0.0.0.0] [--tls CERT KEY]

It starts, in order:

1. the boards' PostgreSQL: ``LAB_BOARD_DB`` where set, else a cluster of its own kept
   under ``$LAB_DATA_DIR/cluster-postgres`` (made on first use with Debian's binaries,
   ``deploy.postgres``), started now and stopped at the end;
2. N app servers (``streamlit run serve.py``) on free loopback ports, sharing that
   database and ``LAB_CACHE_DIR``, with ``LAB_PUBLIC_URL`` set to nginx's address (unless
   set already, or nginx listens on every address, where the board finds this machine's
   own); each warms itself from launch;
3. nginx on ``--port`` from the shipped site (``deploy/nginx.py``): plain HTTP, or HTTPS
   with ``--tls``.

It prints the address, waits until every server answers ``/_lab/ready``, and prints
"cluster ready". Ctrl-C or SIGTERM stops nginx, then the servers, then the PostgreSQL it
started. The run folder (``$LAB_DATA_DIR/cluster-run``, or ``--run-dir``) keeps nginx's
configuration and logs and each server's output.

This is one machine's cluster, for a lesson or a trial; a permanent installation runs the
same pieces under systemd (deploy/README.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
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
READY_MESSAGE = "cluster ready"


class Stop(Exception):
    """SIGTERM, turned into an exception so that the clean-up runs as after Ctrl-C."""


def _on_sigterm(signum, frame):
    raise Stop


class AppServer:
    """``streamlit run serve.py`` on 127.0.0.1:``port``, its output in ``log``, in a process
    group of its own (Ctrl-C reaches this script alone, which stops everything in order)."""

    def __init__(self, port: int, env: dict, log: Path):
        self.port, self.env, self.log = port, env, log
        self.proc: subprocess.Popen | None = None
        self.exit_reported = False

    def start(self) -> None:
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", "serve.py", "--server.address", "127.0.0.1",
                 "--server.port", str(self.port), "--server.headless", "true"],
                cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://{self.address}{READY_PATH}", timeout=2) as r:
                return r.status == 200
        except (OSError, urllib.error.HTTPError):
            return False

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

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


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--servers", type=int, default=2, help="app servers (default: %(default)s)")
    ap.add_argument("--port", type=int, default=8080, help="nginx's port (default: %(default)s)")
    ap.add_argument("--host", default="127.0.0.1",
                    help="nginx's address (default: %(default)s; 0.0.0.0 for this machine's network)")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), type=Path, help="serve HTTPS with this certificate")
    ap.add_argument("--run-dir", type=Path, help="logs and nginx's files (default: $LAB_DATA_DIR/cluster-run)")
    ap.add_argument("--ready-timeout", type=float, default=900,
                    help="seconds to wait for every server to be warm (default: %(default)s)")
    args = ap.parse_args(argv)
    if args.servers < 1:
        ap.error("--servers must be at least 1")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if missing := nginx_missing():
        print(f"error: {missing}", file=sys.stderr)
        return 2
    run_dir = args.run_dir or data_dir() / "cluster-run"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    signal.signal(signal.SIGTERM, _on_sigterm)

    scheme = "https" if args.tls else "http"
    address = f"{scheme}://{args.host}:{args.port}"
    cluster: Cluster | None = None
    servers: list[AppServer] = []
    nginx: Nginx | None = None
    try:
        board_db = os.environ.get("LAB_BOARD_DB")
        if not board_db:
            if missing := postgres_missing():
                print(f"error: {missing}; or set LAB_BOARD_DB to a PostgreSQL of your own", file=sys.stderr)
                return 2
            cluster = Cluster(folder=data_dir() / "cluster-postgres").start()
            board_db = cluster.create_database("lab", exist_ok=True)
            print(f"boards: PostgreSQL in {cluster.folder} on 127.0.0.1:{cluster.port}", flush=True)
        env = dict(os.environ, LAB_BOARD_DB=board_db)
        if args.host not in ("0.0.0.0", "::"):
            env.setdefault("LAB_PUBLIC_URL", address)
        for _ in range(args.servers):
            port = free_port()
            servers.append(AppServer(port, env, run_dir / f"server-{port}.log"))
        for server in servers:
            server.start()
            print(f"app server on http://{server.address} (log: {server.log})", flush=True)
        tls = Tls(*args.tls) if args.tls else None
        nginx = Nginx([s.address for s in servers], args.port, run_dir, host=args.host, tls=tls).start()
        print(f"nginx on {address} (logs: {run_dir})", flush=True)

        deadline = time.monotonic() + args.ready_timeout
        waiting = list(servers)
        while waiting:
            for server in list(waiting):
                if server.proc.poll() is not None:
                    print(f"error: the app server on port {server.port} exited ({server.proc.returncode}); "
                          f"see {server.log}", file=sys.stderr)
                    return 1
                if server.ready():
                    waiting.remove(server)
            if time.monotonic() > deadline:
                print(f"error: not ready after {args.ready_timeout:.0f} s: "
                      + ", ".join(str(s.log) for s in waiting), file=sys.stderr)
                return 1
            time.sleep(0.5)
        print(f"{READY_MESSAGE}: {address}", flush=True)

        while True:
            for server in servers:
                if not server.running() and not server.exit_reported:
                    server.exit_reported = True
                    print(f"the app server on port {server.port} exited ({server.proc.returncode}); nginx sends "
                          f"its tabs to the others. See {server.log}", file=sys.stderr, flush=True)
            time.sleep(1)
    except (KeyboardInterrupt, Stop):
        print("stopping", flush=True)
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
        print("stopped", flush=True)


if __name__ == "__main__":
    sys.exit(main())
