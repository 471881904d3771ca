"""A PostgreSQL 15 cluster made and run with Debian's server binaries, for the tests
(``tests/postgres.py``: a throwaway one per test session) and for ``deploy/cluster.py`` (a
kept one under ``$LAB_DATA_DIR/cluster-postgres``).

It lives here rather than in ``lab``: ``lab`` computes and stores, and starts no
processes; this starts and stops a database server, as the deploy script does its app
servers and nginx.

The binaries are ``/usr/lib/postgresql/15/bin`` (package ``postgresql``) or
``LAB_POSTGRES_BIN``. The cluster is trusted on 127.0.0.1 only, on a free port, and its
socket lies in its folder. PostgreSQL refuses to run as root: as root, the folder belongs
to the ``postgres`` user and the binaries run as it (``runuser``).
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

BIN = Path(os.environ.get("LAB_POSTGRES_BIN", "/usr/lib/postgresql/15/bin"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def postgres_missing() -> str | None:
    """Why a cluster cannot be made here, or None."""
    if not (BIN / "initdb").exists() or not (BIN / "pg_ctl").exists():
        return (f"PostgreSQL server binaries not found in {BIN}; install Debian's postgresql package "
                "(or set LAB_POSTGRES_BIN)")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: PostgreSQL cannot be started as the postgres user"
    return None


class Cluster:
    """A PostgreSQL cluster: ``start()``, ``url(db)``, ``create_database()``, ``stop()``.
    The superuser is ``lab``, trusted without a password, on 127.0.0.1 only (and a socket
    in the folder).

    Without ``folder`` it lives in a new temporary folder, removed by ``stop()``, and
    runs without fsync (a test cluster never needs to survive a crash). With ``folder``
    it is made there on first use and kept: ``start()`` starts what an earlier run made,
    ``stop()`` shuts it down cleanly and leaves it."""

    def __init__(self, bin_dir: Path = BIN, folder: Path | None = None):
        self.bin = bin_dir
        self.root = os.geteuid() == 0
        self.kept = folder is not None
        self.folder: Path | None = Path(folder) if folder is not None else None
        self.port: int | None = None
        self.running = False
        self._names = itertools.count(1)

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.root:
            command = ["runuser", "-u", "postgres", "--", *command]
        # a session of its own: a Ctrl-C at the terminal reaches whoever started the cluster,
        # who stops it in its turn
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, start_new_session=True)
        if done.returncode:
            raise RuntimeError(f"{args[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done

    def _prepare_folder(self) -> None:
        if self.folder is None:
            # Under /tmp, not pytest's tmp folders: as root those are not readable by postgres.
            self.folder = Path(tempfile.mkdtemp(prefix="lab-postgres-"))
        else:
            self.folder.mkdir(parents=True, exist_ok=True)
        if self.root:
            shutil.chown(self.folder, "postgres", "postgres")
            reach = subprocess.run(["runuser", "-u", "postgres", "--", "test", "-w", str(self.folder)])
            if reach.returncode:
                raise RuntimeError(
                    f"the postgres user cannot write to {self.folder} (a folder above it is closed to it, as "
                    "/root is): set LAB_DATA_DIR to a folder it can reach (e.g. /var/lib/context-lab), or "
                    "LAB_BOARD_DB to a PostgreSQL of your own")

    def start(self) -> Cluster:
        self._prepare_folder()
        data = self.folder / "data"
        if not (data / "PG_VERSION").exists():
            self._run("initdb", "--auth=trust", "-U", "lab", "-E", "UTF8", "--locale=C.UTF-8", "-D", str(data))
        durability = "" if self.kept else " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        for attempt in range(3):  # a free port can be taken between choosing and binding it
            self.port = free_port()
            options = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 "
                       f"-c max_connections=100{durability}")
            try:
                self._run("pg_ctl", "-D", str(data), "-l", str(self.folder / "server.log"), "-o", options,
                          "-w", "-t", "60", "start")
                self.running = True
                return self
            except RuntimeError:
                if attempt == 2:
                    raise
        return self

    def stop(self) -> None:
        if self.folder is None:
            return
        try:
            # a kept cluster shuts down cleanly (no recovery at its next start)
            self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", "fast" if self.kept else "immediate",
                      "-w", "stop")
        except RuntimeError:
            pass  # not running (it failed to start)
        self.running = False
        if not self.kept:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://lab@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None, exist_ok: bool = False) -> str:
        """A new empty database (or, with ``exist_ok``, the one of that name where it
        exists); returns its SQLAlchemy URL."""
        import psycopg

        name = name or f"lab_test_{next(self._names)}"
        with psycopg.connect(host="127.0.0.1", port=self.port, user="lab", dbname="postgres",
                             autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            if not (exists and exist_ok):
                conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return self.url(name)
