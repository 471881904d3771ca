"""The teacher link's route (``ui.server.teach``), driven as ASGI without a server: the
cookie and its flags for the right key, a redirect that carries no key and resolves under
a sub-path, and no cookie for a wrong key, an unknown board or a broken link."""

from __future__ import annotations

import asyncio
import concurrent.futures
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import pytest
from starlette.applications import Starlette

from lab.board import links, rules
from lab.board.store import BoardStore
from ui.server import teach


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A board database of this test's own, the one the route opens (``shared_store``)."""
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("LAB_BOARD_DB", raising=False)
    s = BoardStore()
    yield s
    s.dispose()


def app() -> Starlette:
    return Starlette(routes=teach.routes(lambda path: [path, f"/lab{path}"]))


def get(path: str, query: dict, headers: dict | None = None, scheme: str = "http"):
    """(status, headers as (name, value) pairs, body) of one GET."""
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": scheme,
             "path": path, "raw_path": path.encode(), "root_path": "", "query_string": urlencode(query).encode(),
             "headers": [(k.encode(), v.encode()) for k, v in (headers or {}).items()],
             "server": ("lab.test", 80), "client": ("127.0.0.1", 5000)}
    # in a thread of its own: Playwright's sync API (browser tests in the same run) keeps an
    # event loop running in this one
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, app()(scope, receive, send)).result()
    start = sent[0]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], [(k.decode(), v.decode()) for k, v in start["headers"]], body.decode()


def set_cookies(headers) -> list[str]:
    return [v for k, v in headers if k.lower() == "set-cookie"]


def location(headers) -> str:
    return next(v for k, v in headers if k.lower() == "location")


def test_the_right_key_sets_a_strict_httponly_cookie_and_redirects_without_it(store):
    board, key = store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded")
    status, headers, _ = get(teach.TEACH_PATH, {"board": board.code, "key": key})
    assert status == 303
    (cookie,) = set_cookies(headers)
    morsel = SimpleCookie(cookie)[f"lab_teach_{board.code}"]
    assert morsel.value == key
    assert morsel["httponly"] and morsel["samesite"].lower() == "strict" and morsel["path"] == "/"
    assert not morsel["secure"]  # plain HTTP: a Secure cookie would not come back
    assert int(morsel["max-age"]) == pytest.approx(store.days * 86400, abs=60)  # the board's life
    to = urljoin(f"http://lab.test{teach.TEACH_PATH}?board={board.code}&key={key}", location(headers))
    assert key not in to
    assert urlsplit(to).path == "/board"
    assert parse_qs(urlsplit(to).query) == {"board": [board.code], "board_view": ["teacher"]}
    assert dict(headers)["cache-control"] == "no-store"
    assert links.teacher_link("http://lab.test", board.code, key).endswith(
        f"{teach.TEACH_PATH}?board={board.code}&key={key}")


def test_under_a_sub_path_the_redirect_stays_under_it(store):
    board, key = store.create("bank", bert_source="embedded", elmo_source="embedded")
    status, headers, _ = get(f"/lab{teach.TEACH_PATH}", {"board": rules.format_code(board.code).lower(), "key": key})
    assert status == 303
    to = urljoin(f"https://school.org/lab{teach.TEACH_PATH}", location(headers))
    assert urlsplit(to).path == "/lab/board"


@pytest.mark.parametrize("headers, scheme", [({"x-forwarded-proto": "https"}, "http"), ({}, "https")])
def test_the_cookie_is_secure_under_https(store, headers, scheme):
    board, key = store.create("bank", bert_source="embedded", elmo_source="embedded")
    _, sent, _ = get(teach.TEACH_PATH, {"board": board.code, "key": key}, headers, scheme)
    assert SimpleCookie(set_cookies(sent)[0])[f"lab_teach_{board.code}"]["secure"]


def test_a_wrong_key_is_refused_and_sets_nothing(store):
    board, key = store.create("bank", bert_source="embedded", elmo_source="embedded")
    wrong = rules.new_key()
    status, headers, body = get(teach.TEACH_PATH, {"board": board.code, "key": wrong})
    assert status == 403 and set_cookies(headers) == []
    assert "is not the teacher key of board" in body and "Open the teacher link you saved" in body
    assert wrong not in body and key not in body
    assert f'href="../board?board={board.code}"' in body  # the projector's view, without a key
    assert "default-src 'none'" in dict(headers)["content-security-policy"]


@pytest.mark.parametrize("query, status, says", [
    ({"board": "ACEFHK", "key": "k" * 32}, 404, "No board has the code ACE-FHK"),
    ({"board": "ACEFHK"}, 400, "A teacher link holds the board"),
    ({"key": "k" * 32}, 400, "A teacher link holds the board"),
    ({"board": "<script>", "key": "k" * 32}, 400, "A teacher link holds the board"),
    ({"board": "ACEFHK", "key": "a key; Path=/x"}, 400, "A teacher link holds the board"),
])
def test_a_broken_link_says_so_and_sets_nothing(store, query, status, says):
    got, headers, body = get(teach.TEACH_PATH, query)
    assert (got, set_cookies(headers)) == (status, [])
    assert says in body and "<script>" not in body


def test_an_expired_board_sets_nothing(store):
    store.days = -1.0  # made already expired
    board, key = store.create("bank", bert_source="embedded", elmo_source="embedded")
    status, headers, _ = get(teach.TEACH_PATH, {"board": board.code, "key": key})
    assert (status, set_cookies(headers)) == (404, [])


def test_the_saved_file_holds_the_link_on_a_line_of_its_own():
    link = links.teacher_link("http://lab.test", "ACEFHK", "k_y-1")
    text = links.teacher_file(link, "ACE-FHK", "bank")
    assert link in text.splitlines()
    assert "ACE-FHK" in text and "keep it to yourself" in text
