"""The teacher's downloads in a real browser: the moderation table's own toolbar offers no
CSV (``client.disableDataExport``), and the page's CSV keeps formulas inert, with each
time's date and the offset of the teacher's time zone."""

from __future__ import annotations

import csv
import io

import pytest

from lab.board import links
from tests import test_browser_board
from tests.browser import download, wait_idle

pytestmark = pytest.mark.browser

FORMULAS = ['=HYPERLINK("http://evil.test","bank")', "+44 20 7946 0000 is the bank", "-1 for the bank",
            "@bank by the river"]


@pytest.fixture(scope="module")
def board_app(tmp_path_factory):
    """The app on a boards database of its own (``tests.test_browser_board.board_app``)."""
    yield from test_browser_board.board_app.__wrapped__(tmp_path_factory)


def test_the_table_has_no_toolbar_download_and_the_csv_keeps_formulas_inert(board_app, browser):
    srv, store = board_app
    board, key = store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded")
    entries = [store.submit(board.id, text, None, browser=f"b{i}", token=f"t{i}").entry
               for i, text in enumerate(FORMULAS)]
    context = browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Europe/Paris")
    try:
        teacher = context.new_page()
        teacher.set_default_timeout(120_000)
        teacher.goto(links.teacher_link(srv.url, board.code, key))
        table = teacher.get_by_test_id("stDataFrame")
        table.locator("td", has_text="@bank by the river").wait_for(state="attached")
        wait_idle(teacher)
        table.scroll_into_view_if_needed()
        table.hover()
        toolbar = teacher.get_by_test_id("stElementToolbar").filter(has=teacher.get_by_label("Search"))
        toolbar.get_by_label("Search").wait_for()  # the table's toolbar is drawn ...
        labels = [b.get_attribute("aria-label") for b in toolbar.get_by_role("button").all()]
        assert labels and not [a for a in labels if "download" in (a or "").lower()], labels  # ... with no download

        name, data = download(teacher, lambda: teacher.get_by_role("button", name="Sentences (.csv)").click())
        assert name == f"board-{board.code}-bank.csv"
        rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
        assert [r["sentence"] for r in rows] == ["'" + text for text in FORMULAS]
        assert [r["number"] for r in rows] == [str(e.number) for e in entries]
        # the time as the teacher's clock reads it: a date, and Paris's offset in winter or summer
        assert all(r["time"][:10].count("-") == 2 and r["time"][-6:] in ("+01:00", "+02:00") for r in rows), rows
    finally:
        context.close()
    log = srv.log.read_text(errors="replace")
    assert "Traceback" not in log and key not in log


def test_the_teacher_deletes_a_sentence_while_the_board_moves(board_app, person):
    """The choice and the confirmation survive the table's polls and a sentence arriving
    meanwhile; the sentence goes only on the confirmed click."""
    srv, store = board_app
    board, key = store.create("bank", [], bert_source="embedded", elmo_source="embedded")
    first = store.submit(board.id, "The bank opened.", None, browser="b1", token="t1").entry
    rude = store.submit(board.id, "A rude remark about the bank.", None, browser="b2", token="t2").entry
    teacher = person()
    teacher.goto(links.teacher_link(srv.url, board.code, key))
    teacher.get_by_test_id("stDataFrame").locator("td", has_text=rude.text).wait_for(state="attached")
    wait_idle(teacher)
    teacher.get_by_role("button", name="Delete a sentence").click()
    teacher.get_by_role("combobox", name="Sentence").click()
    teacher.get_by_role("option", name=f"{rude.number}. {rude.text}").click()
    store.submit(board.id, "Another bank sentence.", None, browser="b3", token="t3")  # the board moves on
    teacher.get_by_test_id("stDataFrame").locator("td", has_text="Another bank sentence.").wait_for(state="attached")
    teacher.get_by_text("Yes, delete this sentence").click()
    teacher.get_by_role("button", name="Delete the sentence").click()
    teacher.get_by_text(f"Sentence {rude.number} deleted.").wait_for()
    assert [e.text for e in store.entries(board.id)] == [first.text, "Another bank sentence."]
    assert "Traceback" not in srv.log.read_text(errors="replace")
