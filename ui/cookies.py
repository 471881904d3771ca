"""An anonymous cookie that tells one browser from another, for the class board's limits.

A student's submissions are limited per browser (``lab.board.rules.PER_MINUTE``,
``PER_BOARD``), and "this browser" must survive a reload: a session does not, and a client
address names a whole school network (or the proxy). ``BrowserCookie`` gives every browser
that loads a page a random identifier in a cookie; a Streamlit page reads it back from the
websocket's request (``st.context.cookies``, ``browser_id``), the server's own routes from
theirs (``request_id``: the join page, ``ui.server.join``), both as the same identifier.
It names a browser, not a person: nothing
else is stored with it, and clearing cookies makes a new one.
"""

from __future__ import annotations

import secrets

COOKIE = "lab_browser"
MAX_AGE_S = 365 * 24 * 3600
# Where the middleware leaves the value it has just set, for the server's own routes
# (``request.state``): a first visit's request carries no cookie yet.
STATE_KEY = "lab_browser_new"


class BrowserCookie:
    """ASGI middleware: the page's HTML (a GET that accepts ``text/html``) of a browser
    that has no ``lab_browser`` cookie sets one. Scripts, styles and the websocket are left
    alone: the page's own load sets the cookie before its websocket connects, and one
    response setting it keeps a page's parallel requests from setting different ones."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET" or not _wants_html(scope) or _has_cookie(scope):
            await self.app(scope, receive, send)
            return
        value = secrets.token_urlsafe(16)
        scope.setdefault("state", {})[STATE_KEY] = value
        secure = "; Secure" if _https(scope) else ""

        async def send_with_cookie(message):
            if message["type"] == "http.response.start":
                cookie = f"{COOKIE}={value}; Max-Age={MAX_AGE_S}; Path=/; HttpOnly; SameSite=Lax{secure}"
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie.encode())]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)


def _header(scope, name: bytes) -> str:
    return b",".join(v for k, v in scope.get("headers", []) if k.lower() == name).decode("latin-1")


def _wants_html(scope) -> bool:
    return "text/html" in _header(scope, b"accept")


def _has_cookie(scope) -> bool:
    return any(part.strip().startswith(COOKIE + "=") for part in _header(scope, b"cookie").replace(",", ";").split(";"))


def _https(scope) -> bool:
    return scope.get("scheme") == "https" or _header(scope, b"x-forwarded-proto") == "https"


def cookie_id(value: str | None) -> str | None:
    """The browser identifier of a ``lab_browser`` cookie's ``value`` (None for none): the
    one ``browser_id`` gives a session of the same browser, so the board's limits per
    browser count a page's posts and the server's routes' together."""
    if isinstance(value, str) and value:
        return "c:" + value[:64]
    return None


def request_id(request) -> str | None:
    """The browser identifier of a Starlette ``request``: its cookie, or the one the
    middleware has just set on this response (a first visit); None when neither."""
    return cookie_id(request.cookies.get(COOKIE) or request.scope.get("state", {}).get(STATE_KEY))


def browser_id() -> str:
    """This browser's identifier: the cookie, or, where a browser sent none (cookies
    blocked, a test without a browser), this session's own identifier, kept for the
    session."""
    import streamlit as st

    value = cookie_id(st.context.cookies.get(COOKIE))  # (AppTest's context has no cookies of its own)
    if value:
        return value
    return "s:" + st.session_state.setdefault("_browser_id", secrets.token_urlsafe(16))
