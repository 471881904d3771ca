"""Several app servers behind nginx for the benchmarks, as deploy/ ships them: a throwaway
PostgreSQL (``deploy.postgres.Cluster``) and one ``LAB_CACHE_DIR`` shared by N
``harness.served.Server``s, and nginx in front of them from the shipped site
(``deploy.nginx.Nginx``), sticky by each browser's ``lab_browser`` cookie.

``Room.start(n, nginx=True)`` starts it all and waits until every server is warm;
``room.url`` is nginx's address (or the first server's, without nginx); ``room.spread()``
counts the websockets nginx passed to each server (its access log's ``upstream=``: a
websocket's line is written when it closes); ``room.kill(k)`` SIGKILLs server ``k`` and
notes its CPU seconds first; ``room.stop()`` stops everything and removes the files.
"""

from __future__ import annotations

import collections
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.served import ROOT, Server, free_port, last_upstream
from deploy.nginx import Nginx, nginx_missing
from deploy.postgres import Cluster, postgres_missing
from ui.cookies import COOKIE


def browser_cookie(name: str) -> str:
    """The Cookie header of a browser whose anonymous ``lab_browser`` cookie is ``name``."""
    return f"{COOKIE}={name}"


@dataclass
class Room:
    servers: list[Server]
    nginx: Nginx | None
    cluster: Cluster | None
    folder: Path  # LAB_DATA_DIR, the shared cache, nginx's files
    board_db: str
    killed: dict[int, float] = field(default_factory=dict)  # server index -> CPU seconds at its SIGKILL

    @classmethod
    def start(cls, n: int, nginx: bool = True, root: Path = ROOT, python: str = sys.executable,
              env: dict | None = None) -> Room:
        """``n`` servers sharing a new PostgreSQL and cache folder, warm, behind nginx when
        ``nginx``. Raises RuntimeError where nginx or PostgreSQL cannot run here."""
        for missing in (postgres_missing(), nginx_missing() if nginx else None):
            if missing:
                raise RuntimeError(missing)
        folder = Path(tempfile.mkdtemp(prefix="lab-room-"))
        folder.chmod(0o755)  # as root, nginx's workers run as nobody and need its temp folders
        room = cls([], None, None, folder, "")
        try:
            room.cluster = Cluster().start()
            room.board_db = room.cluster.create_database("lab")
            nginx_port = free_port()
            shared = {"LAB_BOARD_DB": room.board_db, "LAB_DATA_DIR": str(folder / "data"),
                      "LAB_CACHE_DIR": str(folder / "cache")}
            if nginx:
                shared["LAB_PUBLIC_URL"] = f"http://127.0.0.1:{nginx_port}"
            for k in range(n):
                srv = Server(root=root.resolve(), python=python, env=shared | (env or {}),
                             log=folder / f"server-{k + 1}.log")
                room.servers.append(srv.start(wait=False))
            for srv in room.servers:  # all start together: their start-up compiles share the cores
                srv.wait_healthy()
            for srv in room.servers:
                srv.wait_warm()
            if nginx:
                run_dir = folder / "nginx"
                room.nginx = Nginx([f"127.0.0.1:{s.port}" for s in room.servers], nginx_port, run_dir).start()
        except BaseException:
            room.stop()
            raise
        return room

    @property
    def url(self) -> str:
        return self.nginx.url if self.nginx else self.servers[0].url

    def address(self, k: int) -> str:
        return f"127.0.0.1:{self.servers[k].port}"

    def spread(self, since: int = 0) -> collections.Counter:
        """Websockets (tabs) nginx passed to each server, by server number (1, 2, ...), from
        the access log's lines after the first ``since``."""
        numbers = {self.address(k): k + 1 for k in range(len(self.servers))}
        lines = self.nginx.access_log()[since:] if self.nginx else []
        return collections.Counter(numbers.get(last_upstream(line), 0) for line in lines
                                   if '"GET /_stcore/stream ' in line and " 101 " in line)

    def log_length(self) -> int:
        return len(self.nginx.access_log()) if self.nginx else 0

    def server_of(self, cookie: str, timeout: float = 10) -> int:
        """The index of the server nginx sends a browser with ``cookie`` to now (a health
        check through nginx with that cookie, and the access log's line for it)."""
        import urllib.request

        before = self.log_length()
        request = urllib.request.Request(self.url + "/_stcore/health", headers={"Cookie": cookie})
        with urllib.request.urlopen(request, timeout=timeout):
            pass
        deadline = time.monotonic() + timeout
        while len(lines := self.nginx.access_log()[before:]) < 1:
            if time.monotonic() > deadline:
                raise RuntimeError("nginx logged no line for a health check")
            time.sleep(0.05)
        addresses = [self.address(k) for k in range(len(self.servers))]
        return addresses.index(last_upstream(lines[0]))

    def alive(self, k: int) -> bool:
        return k not in self.killed and self.servers[k].proc.poll() is None

    def kill(self, k: int) -> None:
        """SIGKILL server ``k`` (no clean-up: as a crash or an OOM kill), its CPU noted first."""
        srv = self.servers[k]
        self.killed[k] = srv.cpu_s()
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait()

    def cpu_s(self, k: int) -> float:
        return self.killed[k] if k in self.killed else self.servers[k].cpu_s()

    def stop(self) -> None:
        if self.nginx is not None:
            self.nginx.stop()
        for srv in self.servers:
            srv.stop()
        if self.cluster is not None:
            self.cluster.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
