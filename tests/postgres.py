"""A throwaway PostgreSQL 15 cluster for the tests (a pytest plugin; tests/conftest.py loads it).

``deploy.postgres.Cluster`` (Debian's server binaries) makes a cluster in a temporary
folder, trusted on 127.0.0.1 only, on a free port, once per test session; it is stopped
and removed at the session's end. Without the binaries the tests that need it skip, except
where LAB_REQUIRE_POSTGRES=1 (CI), where that is a failure.

Fixtures: ``postgres`` (the ``Cluster``), ``postgres_url`` (one database for the session:
what two app servers share) and ``fresh_postgres_url`` (a new empty database per test).
Code outside pytest uses ``deploy.postgres.Cluster`` directly.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from deploy.postgres import Cluster, postgres_missing

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
