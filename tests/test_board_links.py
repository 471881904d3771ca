"""The class board's addresses: join links students can reach, the QR code, the browser cookie."""

import asyncio
import io

import pytest
import zxingcpp
from PIL import Image

from lab.board import links
from ui.cookies import COOKIE, BrowserCookie


@pytest.mark.parametrize("url, base", [
    ("http://localhost:8501/board", "http://localhost:8501"),
    ("https://lab.school.org/context/board", "https://lab.school.org/context"),  # a sub-path is kept
    ("http://10.1.2.3:8501/", "http://10.1.2.3:8501"),
    ("http://10.1.2.3:8501/board/", "http://10.1.2.3:8501"),
])
def test_app_base_drops_the_page(url, base):
    assert links.app_base(url, "board") == base


def test_app_base_without_an_address():
    assert links.app_base(None, "board") is None


@pytest.mark.parametrize("base, local", [
    ("http://localhost:8501", True), ("http://127.0.0.1:8501", True), ("http://[::1]:8501", True),
    ("http://10.0.0.5:8501", False), ("https://lab.example.org", False),
])
def test_is_local(base, local):
    assert links.is_local(base) is local


def test_network_addresses_are_reachable_ones():
    found = links.network_addresses()
    assert all(not a.startswith("127.") and not a.startswith("169.254.") for a in found)
    assert len(found) == len(set(found))


def test_with_host_keeps_port_and_path():
    assert links.with_host("http://localhost:8501/lab", "10.0.0.7") == "http://10.0.0.7:8501/lab"
    assert links.with_host("https://localhost/lab", "10.0.0.7") == "https://10.0.0.7/lab"


def test_links_carry_code_and_key_only_where_they_should():
    base = "http://10.0.0.7:8501"
    assert links.join_link(base, "ACEFHK") == "http://10.0.0.7:8501/join?code=ACEFHK"
    assert links.projector_link(base, "ACEFHK") == "http://10.0.0.7:8501/board?board=ACEFHK&proj=1"
    teacher = links.teacher_link(base, "ACEFHK", "k_y-1")
    assert teacher == "http://10.0.0.7:8501/board/teach?board=ACEFHK&key=k_y-1"


def test_public_url_wins(monkeypatch):
    monkeypatch.setenv("LAB_PUBLIC_URL", "https://lab.school.org/context/")
    assert links.public_url() == "https://lab.school.org/context"
    monkeypatch.setenv("LAB_PUBLIC_URL", "  ")
    assert links.public_url() is None


def test_qr_code_reads_back_as_the_join_link():
    url = links.join_link("http://192.168.1.20:8501", "ACEFHK")
    image = Image.open(io.BytesIO(links.qr_png(url, scale=4)))
    assert [r.text for r in zxingcpp.read_barcodes(image)] == [url]


def _serve(headers, method="GET", scheme="http"):
    """The response headers ``BrowserCookie`` sends for one request."""
    sent = []

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": b"ok"})

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "scheme": scheme, "path": "/",
             "headers": [(k.encode(), v.encode()) for k, v in headers.items()]}
    asyncio.run(BrowserCookie(app)(scope, None, send))
    return [v.decode() for k, v in sent[0]["headers"] if k == b"set-cookie"]


def test_a_page_load_without_the_cookie_sets_one():
    cookies = _serve({"accept": "text/html,application/xhtml+xml"})
    assert len(cookies) == 1 and cookies[0].startswith(f"{COOKIE}=")
    value = cookies[0].split(";")[0].split("=", 1)[1]
    assert len(value) >= 20  # 16 random bytes
    assert "HttpOnly" in cookies[0] and "SameSite=Lax" in cookies[0] and "Secure" not in cookies[0]
    assert _serve({"accept": "text/html"}) != cookies  # random, one per browser


def test_the_cookie_is_kept_and_only_pages_set_it():
    assert _serve({"accept": "text/html", "cookie": f"theme=x; {COOKIE}=abc"}) == []
    assert _serve({"accept": "application/javascript"}) == []  # scripts and styles of a page
    assert _serve({"accept": "text/html"}, method="POST") == []


def test_the_cookie_is_secure_behind_https():
    assert "Secure" in _serve({"accept": "text/html", "x-forwarded-proto": "https"})[0]
    assert "Secure" in _serve({"accept": "text/html"}, scheme="https")[0]
