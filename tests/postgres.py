"""A throwaway PostgreSQL 15 cluster for the tests (a pytest plugin; tests/conftest.py loads it).

Debian's server binaries (``/usr/lib/postgresql/15/bin``, package ``postgresql``; or
``LAB_POSTGRES_BIN``) make a cluster in a temporary folder, trusted on 127.0.0.1 only, on
a free port, once per test session; it is stopped and removed at the session's end.
PostgreSQL refuses to run as root: as root, the folder belongs to the ``postgres`` user and
the binaries run as it (``runuser``). Without the binaries the tests that need it skip,
except where LAB_REQUIRE_POSTGRES=1 (CI), where that is a failure.

Fixtures: ``postgres`` (the ``Cluster``), ``postgres_url`` (one database for the session:
what two app servers share) and ``fresh_postgres_url`` (a new empty database per test).
Code outside pytest can use ``Cluster`` directly.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

BIN = Path(os.environ.get("LAB_POSTGRES_BIN", "/usr/lib/postgresql/15/bin"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A PostgreSQL cluster in a temporary folder: ``start()``, ``url(db)``,
    ``create_database()``, ``stop()``. The superuser is ``lab``, trusted without a password,
    on 127.0.0.1 only (and a socket in the folder)."""

    def __init__(self, bin_dir: Path = BIN):
        self.bin = bin_dir
        self.root = os.geteuid() == 0
        self.folder: Path | None = None
        self.port: int | None = None
        self._names = itertools.count(1)

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.root:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise RuntimeError(f"{args[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done

    def start(self) -> Cluster:
        # Under /tmp, not pytest's tmp folders: as root those are not readable by postgres.
        self.folder = Path(tempfile.mkdtemp(prefix="lab-postgres-"))
        if self.root:
            shutil.chown(self.folder, "postgres", "postgres")
        data = self.folder / "data"
        self._run("initdb", "--auth=trust", "-U", "lab", "-E", "UTF8", "--locale=C.UTF-8", "-D", str(data))
        for attempt in range(3):  # a free port can be taken between choosing and binding it
            self.port = _free_port()
            # fsync off: a test cluster never needs to survive a crash, and it is much faster.
            options = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                       "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100")
            try:
                self._run("pg_ctl", "-D", str(data), "-l", str(self.folder / "server.log"), "-o", options,
                          "-w", "-t", "60", "start")
                return self
            except RuntimeError:
                if attempt == 2:
                    raise
        return self

    def stop(self) -> None:
        if self.folder is None:
            return
        try:
            self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", "immediate", "-w", "stop")
        except RuntimeError:
            pass  # not running (it failed to start): the folder goes all the same
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://lab@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its SQLAlchemy URL."""
        import psycopg

        name = name or f"lab_test_{next(self._names)}"
        with psycopg.connect(host="127.0.0.1", port=self.port, user="lab", dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return self.url(name)


def postgres_missing() -> str | None:
    """Why a cluster cannot be made here, or None."""
    if not (BIN / "initdb").exists() or not (BIN / "pg_ctl").exists():
        return (f"PostgreSQL server binaries not found in {BIN}; install Debian's postgresql package "
                "(or set LAB_POSTGRES_BIN) to run the PostgreSQL tests")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: PostgreSQL cannot be started as the postgres user"
    return None


def _skip_or_fail(message: str) -> None:
    if os.environ.get("LAB_REQUIRE_POSTGRES") == "1":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def postgres():
    """The session's PostgreSQL ``Cluster`` (skips where it cannot run, fails under
    LAB_REQUIRE_POSTGRES=1)."""
    missing = postgres_missing()
    if missing:
        _skip_or_fail(missing)
    cluster = Cluster()
    try:
        cluster.start()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        cluster.stop()
        _skip_or_fail(f"could not start a PostgreSQL cluster: {exc}")
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def postgres_url(postgres) -> str:
    """One database for the whole session, e.g. for two app servers that share a room."""
    return postgres.create_database("lab")


@pytest.fixture
def fresh_postgres_url(postgres) -> str:
    """A new empty database for one test."""
    return postgres.create_database()
