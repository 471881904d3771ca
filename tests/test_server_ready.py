"""The server's own routes, on a real server: ``/_lab/ready`` says "ready" only once the
server is warm (the warm-up begun at launch, without any visitor), while Streamlit's
``/_stcore/health`` answers as soon as the server does; a page load sets the browser cookie."""

from __future__ import annotations

import time
import urllib.error
import urllib.request

from harness.served import Server
from ui.cookies import COOKIE
from ui.server.warmup import ANSWERING_LINE, READY_LINE


def get(url: str, **headers):
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.read().decode(), r.headers  # (names case-blind)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), e.headers


def test_ready_only_once_warm_and_health_at_once():
    with Server(env={"LAB_WARMUP": "1"}) as srv:  # no page is ever opened on it
        assert get(srv.url + "/_stcore/health")[:2] == (200, "ok")
        states = []
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            status, body, headers = get(srv.url + "/_lab/ready")
            states.append((status, body))
            if status == 200:
                break
            assert status == 503 and body in ("starting", "answering"), (status, body)
            time.sleep(0.5)
        log = srv.log.read_text()
        assert states[-1] == (200, "ready"), log[-3000:]
        assert (503, "starting") in states  # told "not yet" first, not "ready" at launch
        assert headers.get("Cache-Control") == "no-store"
        # the console says it too, in that order, and "ready" only once the compiles ended
        assert ANSWERING_LINE in log and READY_LINE in log and log.index(ANSWERING_LINE) < log.index(READY_LINE)
        assert "BERT lengths compiled" in log[log.index(READY_LINE):]


def test_a_page_load_sets_the_browser_cookie():
    with Server(env={"LAB_WARMUP": "0"}) as srv:
        _, _, headers = get(srv.url + "/join", Accept="text/html")
        assert headers.get("Set-Cookie", "").startswith(f"{COOKIE}=")
        _, _, again = get(srv.url + "/join", Accept="text/html", Cookie=f"{COOKIE}=abc")
        assert "Set-Cookie" not in again
        assert get(srv.url + "/_lab/ready")[:2] == (200, "ready")  # no warm-up: nothing to wait for


def test_ready_under_a_sub_path():
    """Behind a proxy under /lab/ (server.baseUrlPath), the ready route answers there, not
    the app's page (a 200 that a proxy's check would take for "ready")."""
    srv = Server(env={"LAB_WARMUP": "0", "STREAMLIT_SERVER_BASE_URL_PATH": "lab"}).start(wait=False)
    try:
        deadline = time.monotonic() + 120
        while get_or_none(srv.url + "/lab/_stcore/health") != 200:
            assert srv.proc.poll() is None and time.monotonic() < deadline, srv.log.read_text()[-3000:]
            time.sleep(0.2)
        assert get(srv.url + "/lab/_lab/ready")[:2] == (200, "ready")
        assert get(srv.url + "/_lab/ready")[:2] == (200, "ready")
    finally:
        srv.stop()


def get_or_none(url: str) -> int | None:
    try:
        return get(url)[0]
    except OSError:
        return None
