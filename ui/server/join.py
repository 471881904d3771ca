"""The student's join page: a plain web form served by the app server, no Streamlit session.

``GET /join`` asks for the board's code (a form that comes back as ``/join?code=...``, the
address the QR code and the join link hold); with a code, the page shows the board's word,
one text box, the senses as buttons and *Submit*. *Submit* posts the form to ``/join``:
one request, one database write, and the answer page. A phone downloads this page, its
stylesheet and its script (kilobytes) instead of Streamlit's frontend, and the server's
cost per student is a request, not a session.

With JavaScript (``join_page/join.js``) the post goes by ``fetch``, the answer shows
without a page load, the draft (text, sense, submission token) is kept in the tab's
``sessionStorage`` (a screen lock, a reload or a server restart leaves it in the box), and
a post that gets no answer says that the board's server is not answering, keeping the
sentence. Without JavaScript the form still posts and the server answers with the page.

What holds:

- the same rules as every board page: ``BoardStore.submit`` checks them, the messages are
  ``lab.board.rules``' and ``lab.board.join``'s;
- a retry is safe: the form's ``token`` names one submission of this browser (the store
  keeps one sentence per token), and changes only once a sentence was accepted;
- CSRF: the form carries ``lab.board.join.csrf_token`` of the browser's ``lab_browser``
  identifier under the database's secret (``BoardStore.secret``: the same on every server
  and after a restart); a post without it, or with another browser's, is refused;
- nothing is cut silently: the box has no ``maxlength`` (browsers cut a longer paste to it
  without a word); the script counts characters as the server does and the server refuses
  a longer sentence with the limit in its message, the text left in the box;
- a strict Content-Security-Policy: no inline script or style, the script and stylesheet
  from this route (``/join/join.js``, ``/join/join.css``); every text from a person or a
  board is escaped.
"""

from __future__ import annotations

import hashlib
import html
import logging
import secrets
from pathlib import Path
from string import Template
from urllib.parse import parse_qs, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from lab.board import join, rules
from ui.cookies import COOKIE, cookie_id, request_id

PATH = "/join"
ASSETS = Path(__file__).with_name("join_page")
CSRF_SECRET = "join-csrf"
# A post's body, bytes: a sentence of MAX_CHARS is at most a few kB even %-encoded; a
# 4,000-character paste of emoji about 50 kB. Beyond this the post is not read (the
# shipped nginx site's client_max_body_size is the same).
MAX_BODY = 64 * 1024

HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

log = logging.getLogger(__name__)


def _asset(name: str) -> tuple[bytes, str]:
    data = (ASSETS / name).read_bytes()
    return data, hashlib.sha256(data).hexdigest()[:12]


_PAGE = Template((ASSETS / "page.html").read_text(encoding="utf-8"))
_STATIC = {name: _asset(name) for name in ("join.css", "join.js")}
_TYPES = {"join.css": "text/css; charset=utf-8", "join.js": "text/javascript; charset=utf-8"}


def _store():
    from lab.board.store import shared_store

    return shared_store()


def new_token() -> str:
    """A submission's token: the store keeps one sentence per token and browser."""
    return secrets.token_urlsafe(16)


# --- The page ---------------------------------------------------------------------------------
def e(text) -> str:
    return html.escape(str(text), quote=True)


def _answer(kind: str, message: str) -> str:
    """The answer's place: right under *Submit*, where the thumb is; the script fills it."""
    hidden = "" if message else " hidden"
    return f'<p id="answer" class="answer {e(kind)}" role="status" aria-live="polite"{hidden}>{e(message)}</p>'


def code_form(code: str = "", message: str = "") -> tuple[str, str]:
    body = (f"<h1>Join a class board</h1><p>{e(join.ASK_CODE)}</p>"
            f'<form method="get" action="join" class="card">'
            f'<label for="code">Board code</label>'
            f'<input id="code" name="code" value="{e(rules.format_code(code) if code else "")}" '
            f'autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="20" '
            f'placeholder="ABC-DEF" required>'
            f'<button type="submit">Join</button>{_answer("no", message)}</form>')
    return "Join a class board", body


def sentence_form(board, csrf: str, token: str, text: str = "", sense: str | None = None,
                  kind: str = "", message: str = "") -> tuple[str, str]:
    word = e(board.word)
    code = rules.format_code(board.code)
    see = "board?" + urlencode({"board": board.code, "view": "student"})
    head = (f"<h1>Write a sentence with “{word}”</h1>"
            f'<p class="code">Board <strong>{e(code)}</strong></p>')
    if not board.is_open:
        return f"“{board.word}”: class board", head + f'<p class="answer no">{e(join.CLOSED)}</p>' + _see(see)
    senses = ""
    if board.senses:
        options = "".join(
            f'<label class="sense"><input type="radio" name="sense" value="{e(name)}"'
            f'{" checked" if sense == name else ""}><span>{e(name)}</span></label>'
            for name in [*board.senses, join.NOT_SURE])
        senses = (f'<fieldset class="senses"><legend>Which “{word}” do you mean?</legend>'
                  f'<div class="choices">{options}</div></fieldset>')
    body = (head + f'<form id="join-form" method="post" action="join" class="card" '
            f'data-max="{rules.MAX_CHARS}" data-unreachable="{e(join.NOT_ANSWERING)}" '
            f'data-sending="{e(join.SENDING)}" data-too-big="{e(join.TOO_BIG)}">'
            f'<input type="hidden" name="code" value="{e(board.code)}">'
            f'<input type="hidden" name="csrf" value="{e(csrf)}">'
            f'<input type="hidden" name="token" value="{e(token)}">'
            f'<label for="text">Your sentence</label>'
            f'<textarea id="text" name="text" rows="4" required placeholder="We sat on the river {word}.">'
            f"{e(text)}</textarea>"
            f'<p id="count" class="count">At most {rules.MAX_CHARS} characters.</p>'
            f"{senses}"
            f'<button type="submit">Submit</button>{_answer(kind, message)}</form>' + _see(see))
    return f"“{board.word}”: class board", body


def _see(href: str) -> str:
    return f'<p class="see"><a href="{e(href)}">See the board</a></p>'


def render(title: str, body: str, status: int = 200) -> Response:
    css, js = (f"join/{name}?v={_STATIC[name][1]}" for name in ("join.css", "join.js"))
    page = _PAGE.substitute(title=e(title), body=body, css=e(css), js=e(js))
    return Response(page, status_code=status, media_type="text/html; charset=utf-8", headers=HEADERS)


# --- Requests ---------------------------------------------------------------------------------
def _who(request) -> str:
    """Whom the wrong-code limit counts: the browser's cookie, or where it sent none (a
    script that drops cookies gets a new one on every page), its address."""
    return cookie_id(request.cookies.get(COOKIE)) or "a:" + (request.client.host if request.client else "?")


async def page(request) -> Response:
    if request.method == "POST":
        return await post(request)
    code = rules.normalise_code(request.query_params.get("code", ""))
    if not code:
        return render(*code_form())
    try:
        store = await run_in_threadpool(_store)
        board = await run_in_threadpool(join.find_board, store, code, _who(request))
        if board is None:
            return render(*code_form(code, join.not_found(code)), status=404)
        browser = request_id(request)
        csrf = join.csrf_token(await run_in_threadpool(store.secret, CSRF_SECRET), browser) if browser else ""
    except rules.Refused as exc:
        return render(*code_form(code, str(exc)), status=429)
    except Exception as exc:  # the database did not answer: the page says so
        log.error("the join page could not read the board", exc_info=exc)
        return render(*code_form(code, join.NOT_STORED), status=503)
    message = "" if browser else join.NO_COOKIE
    return render(*sentence_form(board, csrf, new_token(), kind="no", message=message))


async def _body(request) -> bytes | None:
    """The post's body, or None when it is longer than ``MAX_BODY``."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


async def post(request) -> Response:
    """A sentence: checked, stored, answered (JSON for the page's script, else the page)."""
    wants_json = "application/json" in request.headers.get("accept", "")
    body = await _body(request)
    if body is None:
        return _reply(wants_json, 413, None, "no", join.TOO_BIG)
    fields = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
    code = rules.normalise_code(fields.get("code", ""))
    text, token = fields.get("text", ""), fields.get("token", "")
    sense = fields.get("sense") or None
    browser = cookie_id(request.cookies.get(COOKIE))
    found = await _board_of(request, code, wants_json)
    if isinstance(found, Response):
        return found
    store, board, secret = found
    form = {"board": board, "text": text, "sense": sense, "token": token,
            "csrf": join.csrf_token(secret, browser) if browser else ""}
    if not browser:
        return _reply(wants_json, 403, form, "no", join.NO_COOKIE)
    if not join.csrf_ok(secret, browser, fields.get("csrf")) or not 0 < len(token) <= 64:
        return _reply(wants_json, 403, form, "no", join.BAD_FORM)
    chosen = None if sense in (None, join.NOT_SURE) else sense
    try:
        done = await run_in_threadpool(store.submit, board.id, text, chosen, browser=browser, token=token)
    except rules.Refused as exc:
        if exc.reason in ("closed", "no_board"):
            form["board"] = await run_in_threadpool(store.get, board.id) or board
        if exc.reason == "deleted":  # this token is buried for good: a new sentence needs another
            form["token"] = new_token()
        return _reply(wants_json, 200, form, "no", str(exc))
    except Exception as exc:  # the database did not answer: say it did not land
        log.error("a board submission failed", exc_info=exc)
        return _reply(wants_json, 503, form, "no", join.NOT_STORED)
    form["token"] = new_token()  # the next submission's
    if done.repeated and done.entry.text != _cleaned(text):
        # an earlier post of this form landed and its answer was lost; this text is another
        return _reply(wants_json, 200, form, "no", join.earlier_landed(done.entry.number, done.entry.text))
    form.update(text="", sense=None)
    return _reply(wants_json, 200, form, "ok", join.accepted(done.entry.number, done.entry.approved),
                  number=done.entry.number)


async def _board_of(request, code: str, wants_json: bool):
    """(the store, the open board ``code`` names, the CSRF secret), or the answer that says
    why there is none: no such board, too many wrong codes, a database that did not answer."""
    try:
        store = await run_in_threadpool(_store)
        board = await run_in_threadpool(join.find_board, store, code, _who(request)) if code else None
        if board is None:
            return _reply(wants_json, 404, None, "no", join.not_found(code), code=code)
        return store, board, await run_in_threadpool(store.secret, CSRF_SECRET)
    except rules.Refused as exc:
        return _reply(wants_json, 429, None, "no", str(exc), code=code)
    except Exception as exc:  # the database did not answer
        log.error("a board submission could not read the board", exc_info=exc)
        return _reply(wants_json, 503, None, "no", join.NOT_STORED, code=code)


def _cleaned(text: str) -> str | None:
    try:
        return rules.clean_sentence(text)
    except rules.Refused:
        return None


def _reply(wants_json: bool, status: int, form: dict | None, kind: str, message: str, code: str = "",
           number: int | None = None) -> Response:
    """The answer: for the script, JSON (``ok``, ``message``, the next ``token``, and
    ``number`` once accepted); else the page, the form refilled as the student left it
    (cleared once accepted)."""
    if wants_json:
        payload = {"ok": kind == "ok", "message": message}
        if form is not None:
            payload["token"] = form["token"]
        if number is not None:
            payload["number"] = number
        return JSONResponse(payload, status_code=status, headers=HEADERS)
    if form is None:
        return render(*code_form(code, message), status=status)
    return render(*sentence_form(form["board"], form["csrf"], form["token"], form["text"], form["sense"],
                                 kind, message), status=status)


async def asset(request) -> Response:
    name = request.path_params["name"]
    if name not in _STATIC:
        return Response("not found", status_code=404, media_type="text/plain")
    return Response(_STATIC[name][0], media_type=_TYPES[name],
                    headers={"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff"})


def routes(mounted) -> list[Route]:
    """The join page and its assets at ``mounted(PATH)``'s paths (the root, and the
    server's sub-path where it has one)."""
    made = []
    for path in mounted(PATH):
        made.append(Route(path, page, methods=["GET", "HEAD", "POST"]))
        made.append(Route(path + "/{name}", asset, methods=["GET", "HEAD"]))
    return made
