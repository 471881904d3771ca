"""The teacher's key, kept by the teacher's browser: the ``/board/teach`` route.

A board's teacher key must outlive the Streamlit session that made the board: a server
restart, a reload or a failover to another server starts a new session, and a key held
only in the session is gone with it. The key must still stay out of the address bar, the
page, the server's log and the projector's link. So the teacher's browser keeps it in a
cookie, one per board (``lab_teach_<CODE>``), which the board page reads back from its
websocket's request (``st.context.cookies``) in every new session.

A Streamlit script cannot set a cookie, and the tab that makes a board sends no HTTP
request of its own, so a plain route sets it: ``GET board/teach?board=CODE&key=KEY``
checks the key against the board's store and only then answers with the cookie and a 303
to the board's page, without the key (``board?board=CODE&board_view=teacher``). The cookie is

- ``HttpOnly``: no script on the page (the app's own included) can read it;
- ``SameSite=Strict``: no other site's page or form sends it. It is needed only on the
  board page's websocket, which the page itself opens (same-site), so a teacher link
  opened from a mail or a chat (a cross-site navigation) still works: the cookie is set
  by that response, and the page's websocket carries it;
- ``Secure`` where the request came over HTTPS (directly or behind a proxy that says so
  in ``X-Forwarded-Proto``);
- ``Path=/``, so that the websocket under a sub-path (``server.baseUrlPath``) carries it;
- as long-lived as the board (``Max-Age`` the board's time left): a cookie outliving its
  board could only name a later board with the same code, and its key would not match.

The saved teacher link is this route's address, opened with a full page load. The tab
that makes a board asks the same route once with ``fetch`` instead (``ui.board.keep_in_browser``):
its session keeps the key meanwhile, so a browser that refuses cookies still has its
controls until the session ends, and the page does not load again under the teacher's
eyes. The redirect is relative (``../board``), so the route works under any sub-path and
behind a proxy that rewrites the host.

A wrong key, an unknown board or a malformed link gets a short page saying so and how to
get control back, and no cookie. Nothing here logs the key.
"""

from __future__ import annotations

import html
import re
import time
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, RedirectResponse
from starlette.routing import Route

from lab.board import links, rules

TEACH_PATH = f"/{links.BOARD_PAGE}/{links.TEACH_PAGE}"
_CODE = re.compile(f"[{rules.CODE_ALPHABET}]{{{rules.CODE_LENGTH}}}")
_KEY = re.compile(r"[A-Za-z0-9_-]{1,200}")  # URL-safe base64, as rules.new_key makes it
_HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


def board_page(code: str) -> str:
    """The board's teacher view, relative to this route (``<base>/board/teach`` ->
    ``<base>/board``): right under any sub-path."""
    return f"../{links.BOARD_PAGE}?{urlencode({'board': code, links.VIEW_PARAM: links.TEACHER_VIEW})}"


def _https(request) -> bool:
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip()
    return request.url.scheme == "https" or forwarded == "https"


def _page(status: int, title: str, text: str, code: str | None = None) -> HTMLResponse:
    """A short page of its own (no Streamlit): what went wrong and what to do."""
    back = (f'<p><a href="../{links.BOARD_PAGE}?{html.escape(urlencode({"board": code}))}">'
            "Show the board as the projector sees it</a></p>") if code else ""
    body = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
            f'<body style="font-family: sans-serif; max-width: 40em; margin: 2em auto; padding: 0 1em">'
            f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p>{back}"
            f'<p><a href="../{links.BOARD_PAGE}">Make a new board</a></p></body></html>')
    return HTMLResponse(body, status_code=status, headers={**_HEADERS, "Content-Security-Policy": "default-src 'none'"})


def answer(store, code: str, key: str, https: bool, now: float | None = None):
    """The route's answer for ``code`` and ``key`` (as typed in the link) from ``store``: the
    303 with the cookie, or a page that says why not."""
    code = rules.normalise_code(code)
    if not _CODE.fullmatch(code) or not _KEY.fullmatch(key or ""):
        return _page(400, "This teacher link is incomplete",
                     "A teacher link holds the board's code and its key. Open the whole link you saved when you "
                     "made the board (copy it again from the saved file).")
    board = store.find(code)
    if board is None:
        return _page(404, "No such board",
                     f"No board has the code {rules.format_code(code)}: it may have expired. Make a new board.")
    if not store.is_teacher(board.id, key):
        return _page(403, "This key does not belong to this board",
                     f"The key in this link is not the teacher key of board {rules.format_code(code)}: nothing "
                     "was kept in this browser. Open the teacher link you saved when you made the board (the "
                     "copied link or the saved file); without it, the board can only be shown, not managed.",
                     code=code)
    now = time.time() if now is None else now
    response = RedirectResponse(board_page(code), status_code=303, headers=_HEADERS)
    response.set_cookie(links.teach_cookie(code), key, max_age=max(1, int(board.expires - now)), path="/",
                        secure=https, httponly=True, samesite="strict")
    return response


async def teach(request):
    from lab.board.store import shared_store

    params = request.query_params
    try:
        store = shared_store()
    except Exception:  # noqa: BLE001 - a database that cannot open: say so, no traceback
        return _page(503, "The board's database cannot be opened",
                     "The server cannot read its boards now. Try again in a moment, or ask whoever runs it.")
    return await run_in_threadpool(answer, store, params.get("board", ""), params.get("key", ""), _https(request))


def routes(mounted) -> list[Route]:
    """The route at ``TEACH_PATH``, at the root and under the server's sub-path
    (``mounted``: serve.py's)."""
    return [Route(path, teach, methods=["GET"]) for path in mounted(TEACH_PATH)]
