"""`make run` (through `make setup`) with a Python the pinned wheels do not exist for says
what to do in one sentence, before pip would fail with a resolver error."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no `make` on this machine")


def check(python: str, tmp_path) -> subprocess.CompletedProcess:
    # VENV: a folder that does not exist, so the check reads PYTHON, as on a fresh clone.
    # Under `make test` the suite inherits MAKEFLAGS and MAKELEVEL; without them this make
    # runs as a person's would.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(["make", "--no-print-directory", "-s", "check-python", f"PYTHON={python}",
                           f"VENV={tmp_path / 'venv'}"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)


MAKE_SAYS = re.compile(r"make(\[\d+\])?: ")  # make's own lines, "make: ***" or "make[2]: ***"


def interpreter(tmp_path, version: str) -> str:
    """A stand-in for an interpreter of ``version``: it answers the check's question so."""
    fake = tmp_path / f"python{version}"
    fake.write_text(f"#!/bin/sh\necho {version}\n")
    fake.chmod(0o755)
    return str(fake)


@pytest.mark.parametrize("version", ["3.9", "3.10", "3.14", "2.7"])
def test_an_unsupported_python_gets_one_sentence(tmp_path, version):
    done = check(interpreter(tmp_path, version), tmp_path)
    assert done.returncode != 0
    (said,) = [line for line in done.stderr.splitlines() if not MAKE_SAYS.match(line)]
    assert said.startswith("Context Lab needs Python 3.11, 3.12 or 3.13") and f" is {version}:" in said
    assert "make run PYTHON=" in said and said.count(". ") == 0  # one sentence
    assert not (tmp_path / "venv").exists()


def test_a_missing_python_is_named(tmp_path):
    done = check("/nonexistent/python3", tmp_path)
    assert done.returncode != 0 and "/nonexistent/python3 is not a Python that runs here" in done.stderr


@pytest.mark.parametrize("version", ["3.11", "3.12", "3.13"])
def test_a_supported_python_passes(tmp_path, version):
    assert check(interpreter(tmp_path, version), tmp_path).returncode == 0


def test_this_interpreter_passes(tmp_path):
    assert sys.version_info[:2] >= (3, 11)
    done = check(sys.executable, tmp_path)
    assert done.returncode == 0, done.stderr
