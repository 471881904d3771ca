"""The students' phones in a rough room, in Chromium: the join page (a plain form,
``ui.server.join``) on phones of 390x844 with touch, whose screens lock (the page frozen,
or the network cut) while their students type, and a server that is SIGKILLed mid-typing
and started again on the same port and database. And the page itself: pastes at and over
the limit with and without JavaScript, a 360-px screen in light and dark, and a strict
Content-Security-Policy that the page keeps.
"""

from __future__ import annotations

import re
import time
import unicodedata

import pytest

from harness.served import free_port
from lab.board import join, links, rules
from lab.board.store import BoardStore
from tests.browser import serve_app
from tests.test_browser_board import maps_hold

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
LOCKED_S = 30  # how long a screen stays locked


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    """The app on a fixed port and its own boards database (SQLite in LAB_DATA_DIR), with no
    warm-up (the join page runs no model); yields its ``Server`` and a ``BoardStore`` on
    the same database."""
    data = tmp_path_factory.mktemp("boards")
    port = free_port()
    env = {"LAB_DATA_DIR": str(data), "LAB_PUBLIC_URL": f"http://127.0.0.1:{port}", "LAB_WARMUP": "0"}
    with serve_app(tmp_path_factory, env=env, port=port) as srv:
        store = BoardStore(f"sqlite:///{data / 'boards.sqlite3'}")
        yield srv, store
        store.dispose()


@pytest.fixture
def phones(browser):
    """``phones(n, **options)``: n phones, each a browser of its own (own cookies and
    storage); every page's uncaught script errors are kept in ``phones.errors``."""
    made = []

    def new(n: int = 1, **options):
        pages = []
        for _ in range(n):
            context = browser.new_context(**(PHONE | options))
            made.append(context)
            pg = context.new_page()
            pg.set_default_timeout(60_000)
            pg.on("pageerror", lambda exc: new.errors.append(str(exc)))
            pages.append(pg)
        return pages

    new.errors = []
    yield new
    for context in made:
        context.close()


def box(pg):
    return pg.get_by_label("Your sentence")


def answer(pg) -> str:
    return pg.locator("#answer").inner_text()


def tap_submit(pg, expect: str) -> str:
    """Tap Submit and wait for an answer holding ``expect``."""
    pg.locator("#join-form button[type=submit]").tap()
    pg.locator("#answer").filter(has_text=expect).wait_for()
    return answer(pg)


def open_board(store, hold: bool = False):
    return store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded", hold=hold)[0]


def kill_and_restart(srv, during) -> None:
    """SIGKILL the server, call ``during()`` while it is down, start it again on the same
    port and database."""
    srv.proc.kill()
    srv.proc.wait(timeout=30)
    during()
    srv.proc, srv.log = None, srv.log.with_name(srv.log.name + ".restarted")
    srv.start()


def assert_log_clean(srv) -> None:
    for log in srv.log.parent.glob(srv.log.name.split(".restarted")[0] + "*"):
        text = log.read_text(errors="replace")
        assert "Traceback" not in text, text[-3000:]


def test_locked_screens_and_a_killed_server_lose_nothing(room, phones, browser):
    """Three phones and a projector. One's page is frozen (a locked screen) and one's network is cut for
    LOCKED_S while their students type: both come back with their text and send it. Then
    the server is SIGKILLed mid-typing: a post sent while it is down says the board's server
    is not answering and keeps the sentence; after the restart every draft is in its box
    (a reload included) and one tap sends it. Every answered post is stored exactly once,
    and the projector, left open through it all, shows every one. (The teacher's tab
    through the same kind of restart: tests/test_browser_teacher.py.)"""
    srv, store = room
    board = open_board(store)
    link = links.join_link(srv.url, board.code)
    screen = browser.new_context(viewport={"width": 1024, "height": 768})
    projector = screen.new_page()
    projector.goto(links.projector_link(srv.url, board.code))
    frozen, offline, steady = phones(3)
    for pg in (frozen, offline, steady):
        pg.goto(link)
        box(pg).wait_for()
    told: dict[str, int] = {}  # sentence -> the number its answer gave

    def accepted(pg, sentence: str) -> None:
        text = tap_submit(pg, "Accepted")
        told[sentence] = int(re.search(r"number (\d+)", text)[1])

    # --- screens lock while typing ---
    box(frozen).press_sequentially("The bank lent ")
    box(offline).press_sequentially("We sat on the ")
    cdp = frozen.context.new_cdp_session(frozen)
    cdp.send("Page.setWebLifecycleState", {"state": "frozen"})
    offline.context.set_offline(True)
    box(offline).press_sequentially("bank.")  # typed with no network: the page is still there
    offline.locator("#join-form label.sense").get_by_text("river", exact=True).tap()
    offline.locator("#join-form button[type=submit]").tap()
    offline.locator("#answer").filter(has_text="server is not answering").wait_for()
    assert answer(offline) == join.NOT_ANSWERING and box(offline).input_value() == "We sat on the bank."
    box(steady).fill("The bank is open on Sundays.")
    accepted(steady, "The bank is open on Sundays.")
    time.sleep(LOCKED_S)
    cdp.send("Page.setWebLifecycleState", {"state": "active"})
    offline.context.set_offline(False)
    assert box(frozen).input_value() == "The bank lent "
    box(frozen).press_sequentially("me money.")
    accepted(frozen, "The bank lent me money.")
    accepted(offline, "We sat on the bank.")  # one tap: the sentence and its sense were kept
    assert store.entries(board.id)[-1].sense == "river"

    # --- the server is killed mid-typing ---
    box(frozen).press_sequentially("The bank ne")
    box(offline).fill("A heron stood on the bank.")
    box(steady).fill("My bank charges a fee.")

    def while_down():
        box(frozen).press_sequentially("ver closes.")  # typing goes on: nothing is cut
        steady.locator("#join-form button[type=submit]").tap()
        steady.locator("#answer").filter(has_text="server is not answering").wait_for()
        assert box(steady).input_value() == "My bank charges a fee."

    kill_and_restart(srv, while_down)
    offline.reload()  # a reload after the restart: the draft comes back from the tab's storage
    box(offline).wait_for()
    assert box(frozen).input_value() == "The bank never closes."
    assert box(offline).input_value() == "A heron stood on the bank."
    assert box(steady).input_value() == "My bank charges a fee."
    accepted(steady, "My bank charges a fee.")  # the one tap the student gives after "not answering"
    accepted(frozen, "The bank never closes.")
    accepted(offline, "A heron stood on the bank.")

    entries = store.entries(board.id)
    assert sorted(e.text for e in entries) == sorted(told)  # 0 lost, 0 doubled
    assert {e.text: e.number for e in entries} == told
    # the projector reconnected by itself and draws them all (a new session loads both models)
    maps_hold(projector, [e.id for e in entries], time.monotonic(), 240)
    screen.close()
    assert phones.errors == []
    assert_log_clean(srv)


def test_a_post_stored_whose_answer_was_lost_is_stored_once(room, phones):
    """The post reached the server and was stored, but its answer never reached the phone
    (the network dropped as it came back): the phone shows "not answering" and keeps the
    sentence; the student's tap sends it again, and the board holds it once."""
    srv, store = room
    board = open_board(store)
    [pg] = phones(1)
    pg.goto(links.join_link(srv.url, board.code))
    box(pg).fill("The bank by the mill.")
    pg.route("**/join", lambda route: (route.fetch(), route.abort("connectionreset")))  # stored, no answer
    pg.locator("#join-form button[type=submit]").tap()
    pg.locator("#answer").filter(has_text="server is not answering").wait_for()
    assert [e.text for e in store.entries(board.id)] == ["The bank by the mill."]
    pg.unroute("**/join")
    assert tap_submit(pg, "Accepted") == "Accepted: your sentence is number 1 on the board."
    assert len(store.entries(board.id)) == 1
    assert phones.errors == []


@pytest.mark.parametrize("script", [True, False], ids=["script", "no-script"])
def test_pastes_at_and_over_the_limit(room, phones, script):
    """Pasted sentences of 299, 300, 301 and 4,000 characters, and 300 with emoji and with
    combining accents: up to the limit each is stored whole; over it the answer gives the
    length and the limit and the whole paste stays in the box. With the script the counter
    says so before sending."""
    srv, store = room
    board = open_board(store)
    [pg] = phones(1, java_script_enabled=script)
    pg.goto(links.join_link(srv.url, board.code))

    def paste(text: str) -> None:
        box(pg).fill("")
        box(pg).focus()
        pg.keyboard.insert_text(text)  # as a paste: one input of the whole text, no key presses

    cases = {
        299: ("The bank " + "ab " * 120)[:298] + ".",
        300: ("The bank " + "ab " * 120)[:299] + ".",
        301: ("The bank " + "ab " * 120)[:300] + ".",
        4000: ("The bank " + "ab " * 2000)[:3999] + ".",
        "emoji": "bank " + "🏦" * (rules.MAX_CHARS - 5),  # one character each (two in UTF-16)
        "combining": "bank " + "e\u0301" * (rules.MAX_CHARS - 5),  # e + accent: one character once NFC
    }
    for name, text in cases.items():
        paste(text)
        assert box(pg).input_value() == text, name  # the box took the whole paste
        length = len(unicodedata.normalize("NFC", text))  # as the server counts
        over = length > rules.MAX_CHARS
        if script:
            counted = pg.locator("#count").inner_text()
            assert counted.startswith(f"{length} / {rules.MAX_CHARS} characters"), (name, counted)
            assert ("too many" in counted) is over, (name, counted)
            pg.locator("#join-form button[type=submit]").tap()
            pg.locator("#answer").filter(has_text="characters;" if over else "Accepted").wait_for()
        else:
            with pg.expect_navigation():
                pg.locator("#join-form button[type=submit]").tap()
        said = answer(pg)
        if over:
            assert said == (f"Your sentence has {length} characters; a board takes at most {rules.MAX_CHARS}. "
                            "Shorten it to one sentence and send it again."), name
            assert box(pg).input_value() == text, name
        else:
            assert said.startswith("Accepted"), (name, said)
            assert box(pg).input_value() == "", name
    stored = [e.text for e in store.entries(board.id)]
    assert stored == [cases[299], cases[300], cases["emoji"], "bank " + "é" * (rules.MAX_CHARS - 5)]
    assert phones.errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_360_px_phone_in_light_and_dark(room, phones, scheme):
    """At 360 px nothing scrolls sideways; Submit, the senses and the code box are big tap
    targets; the page follows the phone's colour scheme; the script and stylesheet load
    under the Content-Security-Policy, which reports no violation."""
    srv, store = room
    board = open_board(store)
    [pg] = phones(1, viewport={"width": 360, "height": 740}, color_scheme=scheme)
    violations = []
    pg.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    pg.goto(links.join_link(srv.url, board.code))
    box(pg).wait_for()
    assert pg.evaluate("document.scrollingElement.scrollWidth") <= 360
    heights = pg.evaluate("""() => Array.from(document.querySelectorAll(
        '#join-form button, .sense span'), el => el.getBoundingClientRect().height)""")
    assert len(heights) == 4 and min(heights) >= 48, heights
    background = pg.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (background == "rgb(18, 18, 18)") is (scheme == "dark"), background
    assert pg.locator("#count").inner_text() == f"0 / {rules.MAX_CHARS} characters"  # the script ran
    submit = pg.locator("#join-form button[type=submit]").bounding_box()
    assert submit["y"] + submit["height"] <= 740  # Submit on the first screen, under the thumb
    see = pg.get_by_role("link", name="See the board")
    assert see.get_attribute("href") == f"board?board={board.code}&view=student"
    assert violations == [] and phones.errors == []


def test_markup_and_csrf_in_the_browser(room, phones):
    """Markup in a refused sentence comes back as text and runs nowhere; a form page
    opened in one browser does not post for another (the form's token is bound to the
    cookie)."""
    srv, store = room
    board = open_board(store)
    one, two = phones(2)
    for pg in (one, two):
        pg.goto(links.join_link(srv.url, board.code))
        box(pg).wait_for()
    markup = '<img src=x onerror="window.__pwned=1"> no word here'
    box(one).fill(markup)
    tap_submit(one, "does not use")
    assert box(one).input_value() == markup
    assert one.locator('img[src="x"]').count() == 0 and one.evaluate("typeof window.__pwned") == "undefined"
    # the other browser's form token in this one's form
    two_token = two.locator("input[name=csrf]").get_attribute("value")
    one.evaluate("t => { document.querySelector('input[name=csrf]').value = t; }", two_token)
    box(one).fill("The bank of the river.")
    assert tap_submit(one, "another browser") == join.BAD_FORM
    assert box(one).input_value() == "The bank of the river." and store.entries(board.id) == []
    one.reload()  # the draft stays, and the page's own token posts it
    box(one).wait_for()
    assert tap_submit(one, "Accepted").startswith("Accepted")
    assert [e.text for e in store.entries(board.id)] == ["The bank of the river."]
