"""The teacher in a real browser, on one server: the one-screen lesson of docs/board.md at
1024x768 (Present, and back), and a teacher's tab that keeps its controls through a server
killed with SIGKILL and restarted, and through a reload, without opening the teacher link
again.

Sentences reach the board through the store, as a student's post does: the students' page
is not what these tests are about. The teacher's table is read and ticked as in
``tests/test_browser_board.py``.
"""

from __future__ import annotations

import signal
import time
import urllib.request
from urllib.parse import urlsplit

import pytest

from harness.served import Server, free_port
from lab.board import links, rules
from lab.board.store import BoardStore
from tests.browser import ROOT, click_pill, download, serve_app, wait_idle
from tests.test_browser_board import (MONEY, RIVER, everything_on, maps_hold, query, table_texts, teacher_cookie,
                                      tick_hidden)

pytestmark = pytest.mark.browser

THIRD = "The bank by the mill flooded in spring."
FOURTH = "My bank charges a fee for every transfer."
# A tab reconnects to a restarted server on its own (Streamlit's client retries), then
# runs its page again in a new session, which loads both models before the teacher's
# table (46 s on a 2-core machine under a load average of 20).
RECONNECT_S = 240.0


@pytest.fixture(scope="module")
def board_app(tmp_path_factory):
    """The app on its own boards database (``LAB_DATA_DIR``) on a port kept for restarts:
    yields its ``Server``, a ``BoardStore`` on the same database and ``restart()``, which
    kills the server with SIGKILL and starts it again on the same port and data (each run's
    log kept: ``logs``)."""
    data = tmp_path_factory.mktemp("boards")
    port = free_port()
    env = {"LAB_DATA_DIR": str(data), "LAB_PUBLIC_URL": f"http://127.0.0.1:{port}"}
    with serve_app(tmp_path_factory, env=env, port=port) as srv:
        store = BoardStore(f"sqlite:///{data / 'boards.sqlite3'}")
        logs = [srv.log]

        def restart() -> None:
            srv.proc.send_signal(signal.SIGKILL)
            srv.proc.wait()
            srv.log = srv.log.with_name(f"server-{len(logs)}.log")
            logs.append(srv.log)
            srv.start()

        yield srv, store, restart, logs
        store.dispose()


def make_board(teacher, url: str) -> str:
    """Make the board "bank" from the form, as the lesson's first step says; its code."""
    teacher.goto(f"{url}/board")
    teacher.get_by_role("button", name="Create the board").wait_for()
    wait_idle(teacher)
    click_pill(teacher, "Presets", "bank")
    teacher.get_by_role("button", name="Create the board").click()
    teacher.get_by_role("heading", name="Moderation").wait_for()
    wait_idle(teacher)
    return query(teacher.url)["board"][0]


def hidden_in_store(store, board_id: int, texts: list[str], timeout_s: float = 30) -> None:
    """Wait until the board's hidden sentences are ``texts``: the tick reached the store."""
    deadline = time.monotonic() + timeout_s
    while sorted(e.text for e in store.entries(board_id) if e.hidden) != sorted(texts):
        if time.monotonic() > deadline:
            pytest.fail(f"the tick did not reach the store in {timeout_s} s: "
                        f"hidden {[e.text for e in store.entries(board_id) if e.hidden]}, not {texts}")
        time.sleep(0.1)


def assert_no_traceback_nor_key(logs, key: str) -> None:
    for log in logs:
        text = log.read_text(errors="replace")
        assert "Traceback" not in text, text[-3000:]
        assert key not in text


def test_the_saved_teacher_link_under_a_sub_path(tmp_path_factory, person):
    """The saved teacher link of a server under a sub-path (``server.baseUrlPath``, as
    behind the shipped nginx site), opened in a browser that never saw the board: the
    route keeps the key and lands on the board's teacher view under the sub-path, without
    the key in the address; a reload (a new session) is the teacher's still. A board made
    there gets its cookie from the same route."""
    data = tmp_path_factory.mktemp("boards-under-lab")
    store = BoardStore(f"sqlite:///{data / 'boards.sqlite3'}")
    board, key = store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded")
    srv = Server(env={"LAB_DATA_DIR": str(data), "LAB_WARMUP": "0", "STREAMLIT_SERVER_BASE_URL_PATH": "lab"},
                 log=tmp_path_factory.mktemp("streamlit-lab") / "server.log").start(wait=False)
    try:
        deadline = time.monotonic() + 120
        while not answers(f"{srv.url}/lab/_stcore/health"):
            assert srv.proc.poll() is None and time.monotonic() < deadline, srv.log.read_text()[-3000:]
            time.sleep(0.2)
        teacher = person()
        teacher.goto(links.teacher_link(f"{srv.url}/lab", board.code, key))
        teacher.get_by_role("heading", name="Moderation").wait_for()
        wait_idle(teacher)
        assert urlsplit(teacher.url).path == "/lab/board" and key not in teacher.url
        assert query(teacher.url) == {"board": [board.code], "board_view": ["teacher"]}
        teacher.reload()
        teacher.get_by_role("heading", name="Moderation").wait_for()
        wait_idle(teacher)
        assert key not in teacher.url and key not in teacher.locator("body").inner_text()  # drawn nowhere
        # a board made there: its page asks the route under the sub-path too
        maker = person()
        made = make_board(maker, f"{srv.url}/lab")
        assert store.is_teacher(store.find(made).id, teacher_cookie(maker, made)["value"])
        assert_no_traceback_nor_key([srv.log], key)
    finally:
        srv.stop()
        store.dispose()


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def test_the_one_screen_lesson_as_the_guide_tells_it(board_app, browser):
    """docs/board.md's one-screen lesson, step by step, at 1024x768: make a board, press
    Present (the room then sees the board and nothing of the teacher's: no key anywhere in
    the page, no teacher link, no moderation), sentences arrive, T brings the teacher's view
    back to hide one, Present again shows the board without it. Present is in projector
    mode, as the projector link is; the teacher's view is not."""
    srv, store, _, logs = board_app
    guide = (ROOT / "docs" / "board.md").read_text()
    lesson = guide[guide.index("## One screen"):guide.index("## Two screens")]
    for words in ("*Create the board*", "*Present*", "**T**", "**P**", "*Teacher's view*", "*hidden*"):
        assert words in lesson, words  # what the guide tells the teacher to press is what this test presses

    context = browser.new_context(viewport={"width": 1024, "height": 768})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    try:
        teacher = context.new_page()
        teacher.set_default_timeout(120_000)
        code = make_board(teacher, srv.url)
        board = store.find(code)
        cookie = teacher_cookie(teacher, code)
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
        key = cookie["value"]
        assert store.is_teacher(board.id, key)
        assert key not in teacher.locator("body").inner_text()  # never drawn, even for the teacher
        panel = teacher.get_by_test_id("stExpander").filter(has_text="Teacher link")
        assert panel.locator("details").get_attribute("open") is None  # folded
        # the teacher link, copied and saved, without being drawn
        link = links.teacher_link(srv.url, code, key)
        panel.locator("summary").click()
        panel.get_by_role("button", name="Copy the teacher link").click()
        panel.get_by_text("Copied.").wait_for()
        assert teacher.evaluate("navigator.clipboard.readText()") == link
        name, data = download(teacher, panel.get_by_role("button", name="Save the teacher link (.txt)").click)
        assert name == f"teacher-link-{code}.txt" and link in data.decode().splitlines()
        assert key not in teacher.locator("body").inner_text()

        teacher.get_by_role("button", name="Present").click()
        teacher.get_by_role("button", name="Teacher's view").wait_for()
        wait_idle(teacher)
        assert query(teacher.url)["board_view"] == ["present"]
        assert query(teacher.url)["proj"] == ["1"]  # in projector mode, as the projector link opens
        assert teacher.get_by_role("heading", name="Moderation").count() == 0
        assert teacher.get_by_test_id("stExpander").filter(has_text="Teacher link").count() == 0
        assert teacher.get_by_test_id("stDataFrame").count() == 0
        assert key not in everything_on(teacher)
        assert teacher.get_by_text(rules.format_code(code), exact=True).count() == 1  # the code to read aloud

        entries = [store.submit(board.id, text, sense, browser=f"b{n}", token=f"t{n}").entry
                   for n, (text, sense) in enumerate([(MONEY, "money"), (RIVER, "river"), (THIRD, "river")])]
        maps_hold(teacher, [e.id for e in entries], time.monotonic(), 120)  # (the first drawing: no time asked)

        teacher.keyboard.press("t")  # the teacher's view again, from the keyboard
        teacher.get_by_role("heading", name="Moderation").wait_for()
        wait_idle(teacher)
        assert "proj" not in query(teacher.url)  # projector mode off again, as it was
        teacher.locator('[data-testid="stDataFrame"] td', has_text=THIRD).wait_for(state="attached")
        tick_hidden(teacher, table_texts(teacher, 2).index(THIRD))
        hidden_in_store(store, board.id, [THIRD])
        # (the button: just after a tick the table has the keyboard, and keeps the P)
        teacher.get_by_role("button", name="Present").click()
        teacher.get_by_role("button", name="Teacher's view").wait_for()
        maps_hold(teacher, [entries[0].id, entries[1].id], time.monotonic(), 60)
        assert THIRD not in everything_on(teacher) and key not in everything_on(teacher)
        assert [e.text for e in store.entries(board.id) if e.hidden] == [THIRD]
    finally:
        context.close()
    assert_no_traceback_nor_key(logs, key)


def test_the_teachers_tab_moderates_after_a_sigkill_and_a_reload(board_app, person):
    """The tab that made a board, the server killed (SIGKILL) and started again on the same
    port and database: the tab reconnects and its new session is the teacher's (its table
    shows a sentence sent after the restart, and a tick hides a sentence from the
    projector); after a reload too. The teacher link is never opened again. The projector
    link, opened in the teacher's own browser, stays the projector's view."""
    srv, store, restart, logs = board_app
    teacher = person()
    code = make_board(teacher, srv.url)
    board = store.find(code)
    key = teacher_cookie(teacher, code)["value"]
    first = [store.submit(board.id, text, sense, browser=f"b{n}", token=f"t{n}").entry
             for n, (text, sense) in enumerate([(MONEY, "money"), (RIVER, "river"), (THIRD, "river")])]
    projector = teacher.context.new_page()  # a second screen of the teacher's laptop: the same browser
    projector.set_default_timeout(60_000)
    projector.goto(links.projector_link(srv.url, code))
    maps_hold(projector, [e.id for e in first], time.monotonic(), 120)
    assert projector.get_by_role("heading", name="Moderation").count() == 0  # the projector's view all the same
    teacher.locator('[data-testid="stDataFrame"] td', has_text=THIRD).wait_for(state="attached")

    restart()
    late = store.submit(board.id, FOURTH, "money", browser="b9", token="t9").entry
    # the table lists a sentence sent after the restart: a new session, the teacher's
    teacher.bring_to_front()
    teacher.locator('[data-testid="stDataFrame"] td', has_text=FOURTH).wait_for(state="attached",
                                                                               timeout=RECONNECT_S * 1000)
    wait_idle(teacher)
    assert query(teacher.url)["board"] == [code] and "key" not in query(teacher.url)
    tick_hidden(teacher, table_texts(teacher, 2).index(MONEY))
    hidden_in_store(store, board.id, [MONEY])
    ticked = time.monotonic()
    projector.bring_to_front()
    maps_hold(projector, [first[1].id, first[2].id, late.id], ticked, RECONNECT_S)
    assert [e.text for e in store.entries(board.id) if e.hidden] == [MONEY]

    teacher.reload()
    teacher.get_by_role("heading", name="Moderation").wait_for()
    teacher.locator('[data-testid="stDataFrame"] td', has_text=FOURTH).wait_for(state="attached")
    wait_idle(teacher)
    tick_hidden(teacher, table_texts(teacher, 2).index(RIVER))
    hidden_in_store(store, board.id, [MONEY, RIVER])
    ticked = time.monotonic()
    projector.bring_to_front()
    maps_hold(projector, [first[2].id, late.id], ticked, 10)
    assert sorted(e.text for e in store.entries(board.id) if e.hidden) == sorted([MONEY, RIVER])
    assert key not in everything_on(projector) and projector.get_by_role("heading", name="Moderation").count() == 0
    assert_no_traceback_nor_key(logs, key)
