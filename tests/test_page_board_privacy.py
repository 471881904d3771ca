"""The teacher's page deletes for good and downloads every sentence, headless with AppTest:
a sentence or the whole board goes only after a confirmation, a deleted sentence's retry is
refused, and the CSV and each model's .npz hold the same rows, times with date and offset,
formulas and markup inert."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from lab.board.rules import Refused, iso_time
from tests import test_page_board
from tests.test_page_board import fill, new_board, page, param

AWKWARD = [  # what a spreadsheet would run, or a browser would draw
    ('=HYPERLINK("http://evil.test","bank")', "money"),
    ("+44 20 7946 0000 is the bank's number", None),
    ("-1 for the bank by the river", "river"),
    ("@bank said the river", "river"),
    ("\tThe bank opened late.", "money"),  # tab and CR are cleaned away before storing
    ("\rBank holidays again.", None),
    ('<b>bank</b> <img src=x onerror="alert(1)"> by the river', "river"),
]


@pytest.fixture
def store(tmp_path, monkeypatch):
    """The Class board pages' own database (``tests.test_page_board.store``)."""
    yield from test_page_board.store.__wrapped__(tmp_path, monkeypatch)


def read_csv(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))


def test_the_teacher_deletes_a_sentence_only_when_sure(store):
    board, key = new_board(store)
    entries = fill(store, board)
    at = page("board", board=board.code, key=key)
    assert not at.exception
    assert at.checkbox(key="_board_delete_sure").disabled and at.button(key="_board_delete").disabled
    at.selectbox(key="_board_delete_which").set_value(entries[1].id).run()
    assert not at.checkbox(key="_board_delete_sure").disabled
    assert at.button(key="_board_delete").disabled  # not before the confirmation
    assert len(store.entries(board.id)) == len(entries)
    at.checkbox(key="_board_delete_sure").check().run()
    at.button(key="_board_delete").click().run()
    assert not at.exception
    left = store.entries(board.id)
    assert [e.id for e in left] == [e.id for e in entries if e.id != entries[1].id]
    assert "Sentence 2 deleted." in [t.value for t in at.toast]
    assert entries[1].text not in [str(o) for o in at.selectbox(key="_board_delete_which").options]
    # the phone that sent it retries (its answer was lost): refused, not stored again
    with pytest.raises(Refused, match="deleted by the teacher") as caught:
        store.submit(board.id, entries[1].text, "river", browser="b1", token="t1")
    assert caught.value.reason == "deleted" and len(store.entries(board.id)) == len(entries) - 1


def test_the_teacher_deletes_the_board_only_when_sure(store):
    board, key = new_board(store)
    fill(store, board)
    at = page("board", board=board.code, key=key)
    assert at.button(key="_board_delete_board").disabled
    at.checkbox(key="_board_delete_board_sure").check().run()
    at.button(key="_board_delete_board").click().run()
    assert not at.exception
    assert store.get(board.id) is None and store.entries(board.id) == [] and store.find(board.code) is None
    assert "The board “bank” and its 7 sentence(s) were deleted for good." in [s.value for s in at.success]
    assert not param(at, "board") and at.button(key="_board_create")  # ready for a new board
    projector = page("board", board=board.code)
    assert "No board has the code" in " ".join(w.value for w in projector.warning)


def test_the_table_shows_times_with_date_and_offset(store):
    board, key = new_board(store)
    (entry,) = fill(store, board, [("The bank was shut.", "money")])
    at = page("board", board=board.code, key=key)
    times = at.dataframe(key=f"_board_table_{board.id}_{board.revision + 1}").value["time"].tolist()
    assert times == [iso_time(entry.created)] and times[0].endswith("+00:00") and times[0][:4].isdigit()


def test_the_downloads_hold_every_row_alike_and_keep_formulas_inert(store, downloads):
    board, key = new_board(store, hold=True)
    entries = fill(store, board, AWKWARD)
    store.approve(board.id, key, entries[0].id)
    store.set_hidden(board.id, key, entries[0].id, True)  # hidden
    for e in entries[1:4]:
        store.approve(board.id, key, e.id)  # entries 4, 5 and 6 stay held
    at = page("board", board=board.code, key=key)
    assert not at.exception
    table = read_csv(downloads(at, "_board_csv"))
    assert [r["number"] for r in table] == [str(e.number) for e in entries]  # hidden and held included
    assert [r["sentence"][:2] for r in table[:4]] == ["'=", "'+", "'-", "'@"]  # read as text by a spreadsheet
    assert [r["sentence"][0] for r in table[4:6]] == ["T", "B"]  # no tab or CR reached the board
    assert table[6]["sentence"] == AWKWARD[6][0]  # markup: text, as typed
    assert [r["hidden"] for r in table] == ["yes"] + ["no"] * 6
    assert [r["held"] for r in table] == ["no"] * 4 + ["yes"] * 3
    for family in ("bert", "elmo"):
        with np.load(io.BytesIO(downloads(at, f"_board_npz_{family}")), allow_pickle=False) as z:
            assert z["tokens"].shape[0] == len(table)
            assert z["number"].tolist() == [int(r["number"]) for r in table]
            assert [f"'{s}" if s[0] in "=+-@" else s for s in z["sentence"].tolist()] == [r["sentence"] for r in table]
            assert z["sense"].tolist() == [r["sense"] for r in table]
            assert z["time"].tolist() == [r["time"] for r in table]
            assert z["hidden"].tolist() == [r["hidden"] == "yes" for r in table]
            assert z["held"].tolist() == [r["held"] == "yes" for r in table]
            assert z["sentence"][6] == AWKWARD[6][0] and str(z["word"]) == "bank"
            for b, (first, last) in enumerate(z["word_span"]):
                word = "".join(t.removeprefix("##") for t in z["tokens"][b, first:last + 1]).casefold()
                assert word.startswith("bank"), (family, b, word)
