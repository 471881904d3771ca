"""A server started as ``make run`` starts it, asked for a custom model source by a browser
on this machine and by one on another host (a network namespace joined to this one by a
veth pair): by default only this machine's request may choose; ``LAB_SHARED=0`` lets both,
``LAB_SHARED=1`` neither (``lab.access``).

The other host is made here, as root: ``ip netns add``, a veth pair with a private /30 on
both ends, and the client run inside the namespace with ``ip netns exec``; its requests go
to the veth's own address on this side, never to this machine's address on its real
network. Where namespaces cannot be made (not root, no ``ip``, a container without the
capability), the test skips and says why.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.conftest import ROOT

MODEL = "/nonexistent/lab-model"  # the custom source a link asks for: a folder, not there
CUSTOM = "Custom handle or folder..."

# Run on either side: open the ELMo page with a link that names a custom ELMo source, print
# whether the sidebar offered the custom choice and what the page said about the source.
CLIENT = """
import asyncio, json, sys
sys.path.insert(0, sys.argv[2])
from harness.served import Session

async def main():
    s = Session(sys.argv[1])
    for attempt in range(20):  # a link just brought up may drop the first connection
        try:
            await s.connect()
            break
        except OSError:
            await asyncio.sleep(0.5)
    result = await s.open("elmo", query={"elmo_src": "custom", "elmo_custom": sys.argv[3]}, timeout=300)
    await s.close()
    print(json.dumps({"options": s.widgets["ELMo"].options, "alerts": result.alerts, "errors": result.errors}))

asyncio.run(main())
"""


def _ip(*args: str, ns: str | None = None) -> subprocess.CompletedProcess:
    cmd = ["ip", "netns", "exec", ns, "ip", *args] if ns else ["ip", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30)


@pytest.fixture(scope="module")
def other_host():
    """(namespace, this side's veth address): a host whose address is not loopback."""
    if shutil.which("ip") is None:
        pytest.skip("no `ip` command (package iproute2): cannot make another host to connect from")
    if os.geteuid() != 0:
        pytest.skip("not root: network namespaces (the other host) need root")
    tag = os.getpid() % 100000
    ns, here, there = f"lab-ns{tag}", f"labh{tag}", f"labn{tag}"
    net = f"10.231.{tag % 250}"
    made = _ip("netns", "add", ns)
    if made.returncode != 0:
        pytest.skip(f"network namespaces are not allowed here: {made.stderr.strip()}")
    try:
        steps = [(("link", "add", here, "type", "veth", "peer", "name", there), None),
                 (("link", "set", there, "netns", ns), None),
                 (("addr", "add", f"{net}.1/30", "dev", here), None),
                 (("link", "set", here, "up"), None),
                 (("addr", "add", f"{net}.2/30", "dev", there), ns),
                 (("link", "set", there, "up"), ns),
                 (("link", "set", "lo", "up"), ns)]
        for args, where in steps:
            done = _ip(*args, ns=where)
            if done.returncode != 0:
                pytest.skip(f"cannot set up the other host (ip {' '.join(args)}): {done.stderr.strip()}")
        yield ns, f"{net}.1"
    finally:
        _ip("link", "del", here)  # removes its peer too
        _ip("netns", "del", ns)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MakeRun:
    """``make run PORT=...`` (the requirements' stamp taken as up to date: no install), on the
    embedded models, without the warm-up or the run store; stopped with its process group."""

    def __init__(self, shared: str | None, log):
        if shutil.which("make") is None:
            pytest.skip("no `make`: the test starts the server as `make run` does")
        self.port = _free_port()
        env = dict(os.environ, LAB_WARMUP="0", LAB_STORED_RUNS="0", LAB_BERT_SOURCE="", LAB_ELMO_SOURCE="")
        env.pop("LAB_SHARED", None)
        if shared is not None:
            env["LAB_SHARED"] = shared
        self.log = log
        self.proc = subprocess.Popen(["make", "-o", ".venv/.installed", "run", f"PORT={self.port}"], cwd=ROOT,
                                     env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def wait(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"make run exited:\n{self.log.read_text()[-3000:]}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        raise AssertionError(f"make run did not answer in {timeout} s:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def _ask(url: str, ns: str | None = None) -> dict:
    """What the ELMo page gave a client at ``url`` (inside namespace ``ns``, or on this side)."""
    cmd = [sys.executable, "-c", CLIENT, url, str(ROOT), MODEL]
    if ns:
        cmd = ["ip", "netns", "exec", ns, *cmd]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=400, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _allowed(answer: dict) -> bool:
    """True when the page offered the custom choice and tried the link's source; False when it
    refused both (and said it ignored the link's source). Anything else fails the test."""
    assert not answer["errors"], answer
    offered = CUSTOM in answer["options"]
    texts = " ".join(text for _, text in answer["alerts"])
    tried = MODEL in texts  # the page's message about a folder that is not there
    ignored = "ELMo source in the link is ignored" in texts
    assert (offered, tried, ignored) in ((True, True, False), (False, False, True)), answer
    return offered


@pytest.mark.parametrize(("shared", "local", "remote"), [(None, True, False), ("0", True, True), ("1", False, False)],
                         ids=["make-run", "LAB_SHARED=0", "LAB_SHARED=1"])
def test_only_this_machine_may_choose_a_model_by_default(other_host, tmp_path, shared, local, remote):
    ns, address = other_host
    server = MakeRun(shared, tmp_path / "server.log")
    try:
        server.wait()
        assert _allowed(_ask(f"http://127.0.0.1:{server.port}")) is local
        assert _allowed(_ask(f"http://{address}:{server.port}", ns=ns)) is remote
    finally:
        server.stop()
