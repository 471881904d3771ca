"""The student's join page (``ui.server.join``) as the server serves it, called in process:
the code step, the form, its post with and without the page's script, CSRF, pastes at and
over the limit, retries, and the page's headers.

Requests go straight to a Starlette app holding the join routes behind the server's cookie
middleware (``ui.cookies.BrowserCookie``), as ``serve.py`` mounts them; each test
has its own SQLite boards database.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import html
import json
import re
from dataclasses import dataclass, field
from urllib.parse import urlencode

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware

from lab.board import join, rules
from lab.board.store import BoardStore
from ui.server import join as route
from ui.cookies import COOKIE, BrowserCookie, cookie_id

MONEY = "She paid the cheque into the bank."
APP = Starlette(routes=route.routes(lambda path: [path]), middleware=[Middleware(BrowserCookie)])


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    text: str

    def json(self) -> dict:
        return json.loads(self.text)

    def field(self, name: str) -> str:
        return html.unescape(re.search(rf'name="{name}" value="([^"]*)"', self.text)[1])

    @property
    def answer(self) -> str:
        found = re.search(r'<p id="answer" class="answer (\w*)"[^>]*>(.*?)</p>', self.text, re.S)
        return f"{found[1]}: {html.unescape(found[2])}" if found else ""

    @property
    def box(self) -> str:
        return html.unescape(re.search(r"<textarea[^>]*>(.*?)</textarea>", self.text, re.S)[1])


@dataclass
class Browser:
    """One browser: its cookies, kept from the answers' Set-Cookie."""

    cookies: dict[str, str] = field(default_factory=dict)
    address: str = "10.0.0.2"

    def request(self, method: str, path: str, form: dict | None = None, script: bool = False) -> Reply:
        # in a thread of its own: Playwright's sync API (browser tests in the same run) keeps
        # an event loop running in this one
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, self._request(method, path, form, script)).result()

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def post(self, form: dict, script: bool = False) -> Reply:
        return self.request("POST", "/join", form, script)

    async def _request(self, method, path, form, script) -> Reply:
        target, _, query = path.partition("?")
        body = urlencode(form or {}).encode()
        headers = [(b"accept", b"application/json" if script else b"text/html,*/*"), (b"host", b"phone")]
        if self.cookies:
            headers.append((b"cookie", "; ".join(f"{k}={v}" for k, v in self.cookies.items()).encode()))
        if form is not None:
            headers += [(b"content-type", b"application/x-www-form-urlencoded"),
                        (b"content-length", str(len(body)).encode())]
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
                 "scheme": "http", "path": target, "raw_path": target.encode(), "query_string": query.encode(),
                 "root_path": "", "headers": headers, "client": (self.address, 5000), "server": ("phone", 80)}
        sent = [{"type": "http.request", "body": body, "more_body": False}]
        out = {"status": 0, "headers": [], "body": b""}

        async def receive():
            return sent.pop(0) if sent else {"type": "http.disconnect"}

        async def send(message):
            if message["type"] == "http.response.start":
                out["status"], out["headers"] = message["status"], message.get("headers", [])
            elif message["type"] == "http.response.body":
                out["body"] += message.get("body", b"")

        await APP(scope, receive, send)
        headers = {}
        for k, v in out["headers"]:
            name, value = k.decode().lower(), v.decode()
            headers[name] = value
            if name == "set-cookie":
                cookie = value.split(";")[0].split("=", 1)
                self.cookies[cookie[0]] = cookie[1]
        return Reply(out["status"], headers, out["body"].decode())


@pytest.fixture
def store(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'boards.sqlite3'}"
    monkeypatch.setenv("LAB_BOARD_DB", url)
    monkeypatch.setattr(join, "LOOKUPS", join.Lookups())
    s = BoardStore(url)
    yield s
    s.dispose()


def board_of(store, hold=False):
    """A new board and its teacher key."""
    return store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded", hold=hold)


def opened(store, hold=False) -> tuple[object, Browser, Reply]:
    """A board, and a new browser that opened its join link."""
    board, _ = board_of(store, hold)
    phone = Browser()
    page = phone.get(f"/join?code={board.code}")
    assert page.status == 200, page.text
    return board, phone, page


def form(page: Reply, text: str, sense: str | None = None, **changes) -> dict:
    sent = {"code": page.field("code"), "csrf": page.field("csrf"), "token": page.field("token"), "text": text}
    if sense is not None:
        sent["sense"] = sense
    return sent | changes


# --- the code step ---------------------------------------------------------------------------
def test_the_code_step_and_a_wrong_code(store):
    phone = Browser()
    page = phone.get("/join")
    assert page.status == 200 and "Board code" in page.text and 'method="get" action="join"' in page.text
    assert COOKIE in phone.cookies  # the first page load set the browser's cookie
    wrong = phone.get("/join?code=acefhk")
    assert wrong.status == 404 and wrong.answer == "no: " + join.not_found("ACEFHK")
    assert wrong.field("code") == "ACE-FHK"  # asked again, the code as typed


def test_old_links_and_printed_qr_codes_still_open_the_form(store):
    """The links the Streamlit page wrote (``/join?code=...``, with its ``sub`` token) and a
    code typed in lower case with a dash."""
    board, _ = board_of(store)
    for path in (f"/join?code={board.code}", f"/join?code={board.code}&sub=abc",
                 f"/join?code={rules.format_code(board.code).lower()}"):
        page = Browser().get(path)
        assert page.status == 200 and "Write a sentence with “bank”" in page.text, path


def test_wrong_codes_are_limited_per_browser_and_shared_with_the_board_page(store):
    phone, other = Browser(), Browser(address="10.0.0.3")
    phone.get("/join")
    for _ in range(join.LOOKUPS_PER_MINUTE):
        assert phone.get("/join?code=ACEFHK").status == 404
    board, _ = board_of(store)
    limited = phone.get(f"/join?code={board.code}")
    assert limited.status == 429 and "Too many codes that do not exist" in limited.answer
    # the board page's look-up (ui.board.find_board) counts the same browser in the same place
    with pytest.raises(rules.Refused, match="Too many codes"):
        join.find_board(store, board.code, cookie_id(phone.cookies[COOKIE]))
    assert other.get(f"/join?code={board.code}").status == 200  # another browser is not held back


def test_a_wrong_code_limit_without_cookies_counts_the_address():
    clock = [0.0]
    lookups = join.Lookups(per_minute=2, clock=lambda: clock[0])
    lookups.miss("a:10.0.0.9")
    lookups.miss("a:10.0.0.9")
    with pytest.raises(rules.Refused, match="Try again in 60 s"):
        lookups.check("a:10.0.0.9")
    clock[0] = 60.5
    lookups.check("a:10.0.0.9")  # a minute on, it may try again


# --- the form and its post ---------------------------------------------------------------------
def test_a_student_joins_and_submits_without_the_script(store):
    board, phone, page = opened(store)
    assert "Write a sentence with “bank”" in page.text
    assert [html.unescape(v) for v in re.findall(r'name="sense" value="([^"]*)"', page.text)] == \
        ["money", "river", "not sure"]
    assert 'action="join"' in page.text and 'method="post"' in page.text  # relative: works under a sub-path
    assert 'href="board?board=' + board.code + '&amp;view=student"' in page.text  # the student's view
    answer = phone.post(form(page, MONEY, "money"))
    assert answer.status == 200 and answer.answer == "ok: Accepted: your sentence is number 1 on the board."
    assert answer.box == "" and answer.field("token") != page.field("token")  # a fresh form
    (entry,) = store.entries(board.id)
    assert (entry.text, entry.sense) == (MONEY, "money")
    second = phone.post(form(answer, "The banks' vaults were full.", "not sure"))
    assert second.answer.startswith("ok: Accepted: your sentence is number 2")
    assert store.entries(board.id)[1].sense is None


def test_the_browser_is_the_cookies_as_on_the_streamlit_pages(store):
    """The stored browser id is the one ``ui.cookies.browser_id`` gives a session of
    the same browser, so limits per browser count both paths together."""
    board, phone, page = opened(store)
    phone.post(form(page, MONEY))
    with store.engine.connect() as conn:
        (stored,) = conn.exec_driver_sql("SELECT browser FROM sentences").scalars()
    assert stored == "c:" + phone.cookies[COOKIE] == cookie_id(phone.cookies[COOKIE])


def test_the_script_gets_json(store):
    board, phone, page = opened(store)
    reply = phone.post(form(page, MONEY, "river"), script=True)
    assert reply.status == 200 and reply.headers["content-type"].startswith("application/json")
    body = reply.json()
    assert body["ok"] and body["number"] == 1 and body["token"] != page.field("token")
    assert body["message"] == "Accepted: your sentence is number 1 on the board."
    refused = phone.post(form(page, "We sat on the riverbank.", token=body["token"]), script=True).json()
    assert not refused["ok"] and "does not use “bank” as a word" in refused["message"]
    assert refused["token"] == body["token"]  # nothing stored: the same submission may be sent again


@pytest.mark.parametrize("text, reason", [
    ("We sat on the riverbank.", "does not use “bank” as a word"),
    ("   ", "Your sentence is empty"),
])
def test_a_refused_sentence_says_why_and_stays(store, text, reason):
    board, phone, page = opened(store)
    answer = phone.post(form(page, text))
    assert answer.answer.startswith("no: ") and reason in answer.answer
    assert answer.box == text and answer.field("token") == page.field("token")
    assert store.entries(board.id) == []


def test_a_sense_stays_chosen_after_a_refusal_and_a_wrong_one_is_refused(store):
    board, phone, page = opened(store)
    answer = phone.post(form(page, "No word here.", "river"))
    assert re.search(r'value="river" checked', answer.text)
    wrong = phone.post(form(page, MONEY, "lake"))
    assert "“lake” is not one of this board's senses" in wrong.answer


def test_a_held_sentence_waits_and_a_closed_board_takes_none(store):
    board, phone, page = opened(store, hold=True)
    assert "waits for the teacher's approval" in phone.post(form(page, "The bank was closed.")).answer
    closed, key = board_of(store)
    store.set_open(closed.id, key, False)
    shut = phone.get(f"/join?code={closed.code}")
    assert join.CLOSED in shut.text and "<textarea" not in shut.text


def test_too_many_from_one_browser(store):
    board, phone, page = opened(store)
    for i in range(rules.PER_MINUTE):
        page = phone.post(form(page, f"Bank number {i} is by the river."))
        assert page.answer.startswith("ok: "), page.answer
    refused = phone.post(form(page, "One more bank."))
    assert f"You sent {rules.PER_MINUTE} sentences in the last minute" in refused.answer


# --- pastes at and over the limit --------------------------------------------------------------
@pytest.mark.parametrize("length", [299, 300, 301, 4000])
def test_a_paste_at_and_over_the_limit(store, length):
    """Up to ``MAX_CHARS`` is stored whole; a longer paste is refused with its length and the
    limit, and comes back in the box whole (the box has no maxlength to cut it)."""
    board, phone, page = opened(store)
    text = ("The bank " + "ab " * 2000)[:length - 1] + "."
    assert len(text) == length
    answer = phone.post(form(page, text))
    assert "maxlength" not in page.text
    if length <= rules.MAX_CHARS:
        assert answer.answer.startswith("ok: Accepted"), answer.answer
        assert store.entries(board.id)[0].text == text
    else:
        assert answer.answer == (f"no: Your sentence has {length} characters; a board takes at most "
                                 f"{rules.MAX_CHARS}. Shorten it to one sentence and send it again.")
        assert answer.box == text and store.entries(board.id) == []


@pytest.mark.parametrize("filler, count, stored", [
    ("🏦", rules.MAX_CHARS - 5, True),  # emoji: one character each (two in UTF-16)
    ("🏦", rules.MAX_CHARS - 4, False),
    ("e\u0301", rules.MAX_CHARS - 5, True),  # "é" typed as e + combining acute: one character once NFC
    ("q\u0301", (rules.MAX_CHARS - 5) // 2, True),  # no precomposed "q́": two characters each
    ("q\u0301", (rules.MAX_CHARS - 5) // 2 + 1, False),
])
def test_emoji_and_combining_characters_at_the_limit(store, filler, count, stored):
    board, phone, page = opened(store)
    text = "bank " + filler * count
    answer = phone.post(form(page, text), script=True).json()
    assert answer["ok"] is stored, answer
    if stored:
        assert len(store.entries(board.id)[0].text) <= rules.MAX_CHARS
    else:
        assert f"at most {rules.MAX_CHARS}" in answer["message"] and store.entries(board.id) == []


def test_a_post_too_big_to_read(store):
    board, phone, page = opened(store)
    answer = phone.post(form(page, "bank " * 14_000), script=True)
    assert answer.status == 413 and answer.json()["message"] == join.TOO_BIG


# --- retries ------------------------------------------------------------------------------------
def test_a_retry_of_an_answered_post_is_stored_once(store):
    """A post stored whose answer was lost (a restart), sent again with its token: one
    sentence, and the same answer."""
    board, phone, page = opened(store)
    sent = form(page, MONEY, "money")
    first = phone.post(sent, script=True).json()
    again = phone.post(sent, script=True).json()
    assert first["message"] == again["message"] == "Accepted: your sentence is number 1 on the board."
    assert len(store.entries(board.id)) == 1
    # the same token with another text: the earlier one is named, and this one goes with a new token
    other = phone.post(sent | {"text": "A heron stood on the bank."}, script=True).json()
    assert not other["ok"] and "reached the board as number 1" in other["message"] and MONEY in other["message"]
    done = phone.post(sent | {"text": "A heron stood on the bank.", "token": other["token"]}, script=True).json()
    assert done["message"].startswith("Accepted: your sentence is number 2")



def test_a_retry_of_a_deleted_sentence_is_refused_and_a_new_one_goes(store):
    """The teacher deleted a sentence whose answer the phone never got: the retry is
    refused with the teacher's reason, and the answer hands the phone a fresh token, so
    the student's next sentence is stored."""
    board, key = board_of(store)
    phone = Browser()
    page = phone.get(f"/join?code={board.code}")
    sent = form(page, MONEY, "money")
    assert phone.post(sent, script=True).json()["ok"]
    [entry] = store.entries(board.id)
    assert store.delete(board.id, key, entry.id)
    retry = phone.post(sent, script=True).json()
    assert not retry["ok"] and "deleted" in retry["message"] and retry["token"] != sent["token"]
    assert store.entries(board.id) == []
    again = phone.post(sent | {"text": "A heron stood on the bank.", "token": retry["token"]}, script=True).json()
    assert again["ok"], again
    assert [e.text for e in store.entries(board.id)] == ["A heron stood on the bank."]

# --- CSRF, headers, markup ---------------------------------------------------------------------
def test_a_post_without_the_forms_token_or_with_another_browsers_is_refused(store):
    board, phone, page = opened(store)
    _, other, other_page = opened(store)
    cases = {
        "no token": (phone, form(page, MONEY) | {"csrf": ""}, join.BAD_FORM),
        "another browser's": (phone, form(page, MONEY) | {"csrf": other_page.field("csrf")}, join.BAD_FORM),
        "no cookie": (Browser(), form(page, MONEY), join.NO_COOKIE),
    }
    for name, (who, sent, message) in cases.items():
        answer = who.post(sent)
        assert answer.status == 403 and answer.answer == "no: " + message, name
        assert answer.box == MONEY, name  # the sentence stays
        assert who.post(sent, script=True).json()["message"] == message, name
    assert store.entries(board.id) == []


def test_the_secret_survives_a_restart(store, tmp_path):
    """Another process on the same database (a restart, another server) makes the same
    form token, so a form served before posts after."""
    again = BoardStore(store.url)
    try:
        assert again.secret(route.CSRF_SECRET) == store.secret(route.CSRF_SECRET)
        assert len(store.secret(route.CSRF_SECRET)) == 32
    finally:
        again.dispose()
    assert BoardStore(f"sqlite:///{tmp_path / 'other.sqlite3'}").secret(route.CSRF_SECRET) != \
        store.secret(route.CSRF_SECRET)


def test_headers_and_no_inline_script_or_style(store):
    board, phone, page = opened(store)
    csp = page.headers["content-security-policy"]
    for rule in ("default-src 'none'", "script-src 'self'", "style-src 'self'", "form-action 'self'",
                 "frame-ancestors 'none'"):
        assert rule in csp
    assert page.headers["cache-control"] == "no-store" and page.headers["x-content-type-options"] == "nosniff"
    assert re.findall(r"<script[^>]*>", page.text) == [f'<script src="join/join.js?v={route._STATIC["join.js"][1]}" '
                                                       'defer>']
    assert "<style" not in page.text and not re.search(r"\s(style|on\w+)=", page.text)
    for name, kind in (("join.js", "text/javascript"), ("join.css", "text/css")):
        asset = phone.get(f"/join/{name}")
        assert asset.status == 200 and asset.headers["content-type"].startswith(kind)
    assert phone.get("/join/other.js").status == 404


def test_markup_in_a_sentence_is_inert(store):
    board, phone, page = opened(store)
    markup = '<b>bank</b> <img src=x onerror="alert(1)"> </textarea><script>alert(2)</script>'
    refused = phone.post(form(page, markup + " " + "x" * 300))
    assert "<img" not in refused.text and "<script>alert" not in refused.text and "<b>" not in refused.text
    assert refused.box == markup + " " + "x" * 300  # shown as the text it is
    accepted = phone.post(form(page, markup))
    assert accepted.answer.startswith("ok: ") and "<img" not in accepted.text
    retry = phone.post(form(page, "A heron on the bank."), script=True).json()  # the same token: names it
    assert markup.replace("  ", " ") in retry["message"]  # JSON text, which the script shows as text
