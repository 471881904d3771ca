"""The addresses of a board: the join link students open, the projector's and the teacher's
links, and the join link as a QR code.

A join link must be one the students' phones can reach. That is the address in the
teacher's browser, except where the teacher opened the app on this machine (``localhost``,
``127.0.0.1``): a phone cannot reach that, so the page offers this machine's network
addresses instead (and the server must listen on them, as it does unless
``--server.address`` says otherwise: Streamlit listens on every interface by default).
Behind a proxy the server cannot know the public address: ``LAB_PUBLIC_URL`` says it.
"""

from __future__ import annotations

import io
import ipaddress
import os
import socket
from urllib.parse import urlencode, urlsplit, urlunsplit

import segno

from lab.board import rules

JOIN_PAGE = "join"
BOARD_PAGE = "board"
TEACH_PAGE = "teach"  # under the board page: the route that keeps the key in the browser
# The cookie a teacher's browser holds a board's key in (set by the teach route,
# ``ui.server.teach``; read by the board page), and the board page's teacher view.
TEACH_COOKIE_PREFIX = "lab_teach_"
VIEW_PARAM, TEACHER_VIEW = "board_view", "teacher"
LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def public_url() -> str | None:
    """``LAB_PUBLIC_URL`` (the app's address as students reach it, e.g. through a proxy),
    without a trailing slash; None when unset."""
    url = os.environ.get("LAB_PUBLIC_URL", "").strip()
    return url.rstrip("/") or None


def app_base(browser_url: str | None, page: str) -> str | None:
    """The app's base address from the address in the browser (``st.context.url``, which
    ends with the page's path): ``http://host:8501/board`` -> ``http://host:8501``; a
    sub-path (``server.baseUrlPath``) is kept."""
    if not browser_url:
        return None
    parts = urlsplit(browser_url)
    path = parts.path.rstrip("/")
    if path.rsplit("/", 1)[-1] == page:
        path = path[: -len(page)].rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def is_local(base: str) -> bool:
    """Whether ``base`` names this machine only (a phone cannot reach it)."""
    host = urlsplit(base).hostname or ""
    if host in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def network_addresses() -> list[str]:
    """This machine's IPv4 addresses that another machine on its network could reach
    (not loopback, not link-local), the one of its default route first. Finds them without
    sending anything: connecting a UDP socket only picks the route."""
    found = []
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1 (RFC 5737): never answered, never sent to
            found.append(s.getsockname()[0])
    except OSError:
        pass
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.append(info[4][0])
    except OSError:
        pass
    out = []
    for text in found:
        ip = ipaddress.ip_address(text)
        if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified) and text not in out:
            out.append(text)
    return out


def with_host(base: str, host: str) -> str:
    """``base`` with its host replaced by ``host`` (the port and path kept)."""
    parts = urlsplit(base)
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def join_link(base: str, code: str) -> str:
    """The link a student opens: the join page with the board's code."""
    return f"{base}/{JOIN_PAGE}?{urlencode({'code': code})}"


def projector_link(base: str, code: str) -> str:
    """The projector's link: the board page with the code and no teacher key, in projector
    mode (``proj=1``: large type, and the word, the code and both maps on the first screen
    of a 1024x768 projector)."""
    return f"{base}/{BOARD_PAGE}?{urlencode({'board': code, 'proj': 1})}"


def teacher_link(base: str, code: str, key: str) -> str:
    """The teacher's link: the server's route that keeps the key in the browser (a cookie)
    and answers with the board's page without it (``ui.server.teach``)."""
    return f"{base}/{BOARD_PAGE}/{TEACH_PAGE}?{urlencode({'board': code, 'key': key})}"


def qr_png(url: str, scale: int = 8) -> bytes:
    """``url`` as a QR code, a PNG (black on white, a quiet zone of 4 modules as the
    standard asks). Error correction "M": readable from the back of a room, and a small
    code for a short link."""
    out = io.BytesIO()
    segno.make(url, error="m", micro=False).save(out, kind="png", scale=scale, border=4)
    return out.getvalue()


def teacher_file(link: str, code: str, word: str) -> str:
    """The text of the "save this link" file: the teacher link on a line of its own (a
    double click in most editors selects it whole), and what it is."""
    return (f"Teacher link of the class board {code} (word: {word})\n\n{link}\n\n"
            "Open it to manage the board from any browser: hide, approve, close, clear, download.\n"
            "Anyone who has it can do the same: keep it to yourself.\n")


def teach_cookie(code: str) -> str:
    """The name of the cookie that holds the teacher key of the board with ``code``."""
    return TEACH_COOKIE_PREFIX + rules.normalise_code(code)
