"""The class boards' database (lab.board.store), each test on SQLite and on PostgreSQL."""

from __future__ import annotations

import itertools
import sqlite3
import threading

import pytest
import sqlalchemy as sa

from lab.board import rules, store
from lab.board.rules import Refused
from lab.board.store import BoardStore, NotTeacher

DAY = 86400.0
T0 = 1_800_000_000.0


class Clock:
    """A clock a test moves by hand."""

    def __init__(self, now: float = T0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'boards.sqlite3'}"
    return request.getfixturevalue("fresh_postgres_url")


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def open_store(db_url, clock):
    """``open_store(**kwargs)``: a BoardStore on the test's database (several of them act
    as several servers); all are disposed of at the end."""
    made = []

    def make(**kwargs):
        kwargs.setdefault("clock", clock)
        made.append(BoardStore(db_url, **kwargs))
        return made[-1]

    yield make
    for s in made:
        s.dispose()


@pytest.fixture
def boards(open_store):
    return open_store()


def new_board(s: BoardStore, word="bank", senses=("money", "river"), **kwargs):
    return s.create(word, senses, bert_source="embedded", elmo_source="embedded", **kwargs)


_tokens = itertools.count()


def send(s: BoardStore, board, text="The bank was closed.", sense=None, *, browser="b1", token=None):
    """Submit as a fresh click (a new token) unless ``token`` is given."""
    return s.submit(board.id, text, sense, browser=browser, token=token or f"t{next(_tokens)}")


def refusal(call) -> Refused:
    with pytest.raises(Refused) as caught:
        call()
    return caught.value


def test_create_find_get(boards, clock):
    board, key = new_board(boards, " Bank ", [" money", "river", "MONEY"], pool="mean", hold=True)
    assert (board.word, board.senses, board.pool, board.hold, board.is_open) == ("bank", ("money", "river"),
                                                                               "mean", True, True)
    assert (board.created, board.expires, board.revision) == (T0, T0 + 30 * DAY, 0)
    assert len(board.code) == rules.CODE_LENGTH and key
    assert boards.find(rules.format_code(board.code).lower() + " ") == board
    assert boards.get(board.id) == board
    assert boards.find("") is None and boards.find("AAAAAA") is None and boards.get(board.id + 99) is None
    other, _ = new_board(boards, "bat", ())
    assert other.code != board.code and other.senses == ()
    assert boards.open_count() == 2
    for word, senses in [("two words", ()), ("bank", ("one",))]:
        assert refusal(lambda: new_board(boards, word, senses)).reason in {"bad_word", "bad_senses"}


def dump(s: BoardStore) -> str:
    with s.engine.connect() as conn:
        return repr([list(conn.execute(sa.select(t))) for t in store.metadata.sorted_tables])


def test_only_the_key_opens_teacher_operations(boards):
    board, key = new_board(boards)
    entry = send(boards, board).entry
    assert boards.is_teacher(board.id, key)
    for wrong in [None, "", key + "x", key[:-1]]:
        assert not boards.is_teacher(board.id, wrong)
        for operation in [lambda: boards.set_hidden(board.id, wrong, entry.id, True),
                          lambda: boards.approve(board.id, wrong, entry.id),
                          lambda: boards.set_hold(board.id, wrong, True),
                          lambda: boards.set_open(board.id, wrong, False),
                          lambda: boards.clear(board.id, wrong),
                          lambda: boards.renew(board.id, wrong)]:
            with pytest.raises(NotTeacher, match="teacher"):
                operation()
    assert boards.revision(board.id) == 1  # refused operations changed nothing
    assert boards.entries(board.id) == [entry]
    rows = dump(boards)
    assert key not in rows and rules.key_hash(key) in rows


def test_submit_numbers_cleans_and_stores(boards):
    board, _ = new_board(boards)
    first = send(boards, board, " The\u200b bank\n closed. ", "Money")
    assert not first.repeated
    assert (first.entry.number, first.entry.text, first.entry.sense, first.entry.use_index) == (
        1, "The bank closed.", "money", 1)
    assert first.entry.approved and not first.entry.hidden and first.entry.created == T0
    second = send(boards, board, "Banks lend money.", "", browser="b2")
    third = send(boards, board, "We sat by the river's bank.", "river", browser="b3")
    assert [e.number for e in boards.entries(board.id)] == [1, 2, 3]
    assert boards.entries(board.id) == [first.entry, second.entry, third.entry]
    assert second.entry.sense is None and third.entry.use_index == 5
    assert boards.revision(board.id) == 3


def test_a_repeated_token_stores_one_sentence(boards):
    board, _ = new_board(boards)
    one = boards.submit(board.id, "The bank.", None, browser="b1", token="click")
    again = boards.submit(board.id, "The bank.", None, browser="b1", token="click")
    assert not one.repeated and again.repeated and again.entry == one.entry
    assert len(boards.entries(board.id)) == 1 and boards.revision(board.id) == 1
    # the same text from another browser (or another click) is another sentence
    boards.submit(board.id, "The bank.", None, browser="b2", token="other")
    boards.submit(board.id, "The bank.", None, browser="b1", token="click2")
    # a token is one browser's: the same token from another browser (a join link copied
    # with its token) is another submission, not a repeat
    copied = boards.submit(board.id, "A bank by the river.", None, browser="b3", token="click")
    assert not copied.repeated and copied.entry.text == "A bank by the river."
    assert [e.number for e in boards.entries(board.id)] == [1, 2, 3, 4]


def test_refused_submissions_change_nothing(boards):
    board, _ = new_board(boards)
    send(boards, board)
    for text, sense, reason in [("The banker.", None, "no_word"), ("   ", None, "empty"),
                                ("bank " * 70, None, "too_long"), ("The bank.", "music", "bad_sense")]:
        caught = refusal(lambda: send(boards, board, text, sense))
        assert caught.reason == reason and caught.message
    assert "“money” or “river”" in refusal(lambda: send(boards, board, "bank", "fish")).message
    assert boards.revision(board.id) == 1 and len(boards.entries(board.id)) == 1
    assert send(boards, board).entry.number == 2  # refusals took no number
    assert refusal(lambda: boards.submit(board.id + 99, "bank", None, browser="b", token="t")).reason == "no_board"
    assert boards.revision(board.id + 99) is None
    with pytest.raises(ValueError, match="pool"):
        new_board(boards, pool="x" * 33)
    plain, _ = new_board(boards, "rock", ())
    assert refusal(lambda: send(boards, plain, "A rock.", "stone")).reason == "bad_sense"
    with pytest.raises(ValueError):
        boards.submit(board.id, "bank", None, browser="", token="t")


def test_close_and_reopen(boards):
    board, key = new_board(boards)
    boards.set_open(board.id, key, False)
    assert not boards.get(board.id).is_open
    assert refusal(lambda: send(boards, board)).reason == "closed"
    boards.set_open(board.id, key, True)
    assert send(boards, board).entry.number == 1


def test_full_counts_hidden_sentences(boards, monkeypatch):
    monkeypatch.setattr(rules, "MAX_SENTENCES", 3)
    board, key = new_board(boards)
    entries = [send(boards, board, browser=f"b{i}").entry for i in range(3)]
    boards.set_hidden(board.id, key, entries[0].id, True)
    caught = refusal(lambda: send(boards, board, browser="late"))
    assert caught.reason == "full" and "3 sentences" in caught.message


def test_per_minute_and_per_board_limits(boards, clock):
    board, _ = new_board(boards)
    for i in range(rules.PER_MINUTE):
        clock.now += 1
        send(boards, board)
    caught = refusal(lambda: send(boards, board))
    assert caught.reason == "too_fast" and "56 seconds" in caught.message  # the first leaves the window then
    send(boards, board, browser="someone else")
    clock.now += 56
    send(boards, board)
    for i in range(rules.PER_BOARD - rules.PER_MINUTE - 1):
        clock.now += 13
        send(boards, board)
    clock.now += 60
    assert refusal(lambda: send(boards, board)).reason == "browser_limit"
    assert send(boards, board, browser="b2").entry.number == rules.PER_BOARD + 2


def test_hide_hold_and_approve(boards):
    board, key = new_board(boards)
    shown = send(boards, board, browser="a").entry
    assert boards.set_hidden(board.id, key, shown.id, True)
    assert boards.visible(board.id) == [] and boards.entries(board.id, hidden=False) == []
    boards.set_hidden(board.id, key, shown.id, False)
    boards.set_hold(board.id, key, True)
    held = send(boards, board, browser="b").entry
    assert not held.approved
    assert [e.id for e in boards.visible(board.id)] == [shown.id]
    assert [e.id for e in boards.entries(board.id, held=False)] == [shown.id]
    boards.set_hold(board.id, key, False)  # approves nothing by itself
    assert [e.id for e in boards.visible(board.id)] == [shown.id]
    assert boards.approve(board.id, key, held.id)
    assert [e.id for e in boards.visible(board.id)] == [shown.id, held.id]
    assert send(boards, board, browser="c").entry.approved
    assert not boards.set_hidden(board.id, key, 12345, True)  # no such sentence
    assert boards.revision(board.id) == 9  # 3 submissions, 6 teacher operations


def test_clear_keeps_the_board(boards):
    board, key = new_board(boards)
    for i in range(3):
        send(boards, board, browser=f"b{i}")
    assert boards.clear(board.id, key) == 3
    assert boards.entries(board.id) == [] and boards.find(board.code).id == board.id
    assert send(boards, board).entry.number == 1


def test_renew_copies_the_settings(boards):
    board, key = new_board(boards, hold=True)
    send(boards, board)
    renewed, new_key = boards.renew(board.id, key)
    assert renewed.id != board.id and renewed.code != board.code and new_key != key
    assert (renewed.word, renewed.senses, renewed.hold, renewed.pool) == (board.word, board.senses, True, board.pool)
    assert boards.entries(renewed.id) == [] and len(boards.entries(board.id)) == 1
    assert boards.is_teacher(renewed.id, new_key) and not boards.is_teacher(renewed.id, key)


def test_boards_expire_and_are_purged(open_store, clock):
    boards = open_store(days=1)
    board, key = new_board(boards)
    send(boards, board)
    clock.now += DAY
    assert boards.get(board.id).is_expired(clock.now)  # until purged, for the teacher's page
    assert refusal(lambda: send(boards, board)).reason == "no_board"
    assert boards.open_count() == 0
    assert boards.purge() == 1
    assert boards.get(board.id) is None and boards.revision(board.id) is None
    with boards.engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(store.sentences)) == 0
    # find hides an expired board, and purges at most every PURGE_EVERY seconds
    later, _ = new_board(boards)
    clock.now += DAY
    assert boards.find(later.code) is None and boards.get(later.id) is None
    last, _ = new_board(boards)
    clock.now += DAY
    boards._purged_at = clock.now - 1
    assert boards.find(last.code) is None and boards.get(last.id) is not None


def test_the_open_board_cap_holds_across_servers(open_store, clock):
    one, two = open_store(max_open=2, days=1), open_store(max_open=2, days=1)
    new_board(one)
    new_board(two)
    for s in (one, two):
        assert refusal(lambda: new_board(s)).reason == "too_many_boards"
    assert one.open_count() == two.open_count() == 2
    clock.now += DAY  # expired boards are purged to make room
    new_board(two)
    assert one.open_count() == 1


def test_revision_moves_on_every_change(boards):
    board, key = new_board(boards)
    seen = [boards.revision(board.id)]
    entry = send(boards, board).entry
    for change in [lambda: send(boards, board, browser="b2"),
                   lambda: boards.set_hidden(board.id, key, entry.id, True),
                   lambda: boards.approve(board.id, key, entry.id, False),
                   lambda: boards.set_hold(board.id, key, True),
                   lambda: boards.set_open(board.id, key, False),
                   lambda: boards.clear(board.id, key)]:
        seen.append(boards.revision(board.id))
        change()
    seen.append(boards.revision(board.id))
    assert seen == sorted(set(seen)) and len(seen) == 8


def test_simultaneous_submissions_all_land_with_distinct_numbers(boards):
    board, _ = new_board(boards)
    start = threading.Barrier(8)
    results, errors = [], []

    def submit(i):
        start.wait()
        try:
            results.append(boards.submit(board.id, f"Bank number {i}.", None, browser=f"b{i}", token=f"t{i}"))
        except Exception as exc:  # noqa: BLE001 (the test reports every failure)
            errors.append(exc)

    threads = [threading.Thread(target=submit, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert sorted(r.entry.number for r in results) == list(range(1, 9))
    assert boards.revision(board.id) == 8


def test_concurrent_upgrades_record_one_version(db_url):
    engines = [store.make_engine(db_url) for _ in range(4)]
    start = threading.Barrier(len(engines))
    errors = []

    def upgrade(engine):
        start.wait()
        try:
            store.upgrade(engine)
        except Exception as exc:  # noqa: BLE001 (the test reports every failure)
            errors.append(exc)

    threads = [threading.Thread(target=upgrade, args=(e,)) for e in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    with engines[0].connect() as conn:
        assert list(conn.execute(sa.select(store.board_schema.c.version))) == [(store.SCHEMA_VERSION,)]
    for e in engines:
        e.dispose()


def test_a_newer_schema_is_a_clear_error(boards, db_url):
    with boards.engine.begin() as conn:
        conn.execute(store.board_schema.update().values(version=store.SCHEMA_VERSION + 1))
    with pytest.raises(RuntimeError, match=rf"newer Context Lab \(schema {store.SCHEMA_VERSION + 1}\)"):
        BoardStore(db_url)


def test_sqlite_is_in_wal_mode(tmp_path):
    path = tmp_path / "boards.sqlite3"
    BoardStore(f"sqlite:///{path}").dispose()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_board_url(monkeypatch, tmp_path):
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("LAB_BOARD_DB", raising=False)
    assert store.board_url() == f"sqlite:///{tmp_path / 'data' / 'boards.sqlite3'}"
    assert (tmp_path / "data").is_dir()
    for plain in ["postgresql://u@h/db", "postgres://u@h/db"]:
        monkeypatch.setenv("LAB_BOARD_DB", plain)
        assert store.board_url() == "postgresql+psycopg://u@h/db"
    monkeypatch.setenv("LAB_BOARD_DB", "sqlite:////x/y.db")
    assert store.board_url() == "sqlite:////x/y.db"


# --- deleting, and what a deletion leaves ----------------------------------------------------


def tombstones(s: BoardStore) -> list[tuple]:
    with s.engine.connect() as conn:
        return sorted(tuple(r) for r in conn.execute(sa.select(store.sentence_tombstones)))


def test_a_deleted_sentence_leaves_a_tombstone_that_refuses_its_retry(boards):
    board, key = new_board(boards)
    kept = boards.submit(board.id, "The bank lends money.", "money", browser="b1", token="first").entry
    gone = boards.submit(board.id, "A rude bank sentence.", None, browser="b2", token="click").entry
    after = boards.submit(board.id, "We sat on the bank.", "river", browser="b3", token="later").entry
    with pytest.raises(NotTeacher):
        boards.delete(board.id, "not-the-key", gone.id)
    revision = boards.revision(board.id)
    assert boards.delete(board.id, key, gone.id)
    assert boards.revision(board.id) == revision + 1  # every projector redraws without it
    assert boards.entries(board.id) == [kept, after]  # the others keep their numbers
    assert tombstones(boards) == [(board.id, "b2", "click")]  # browser and token, no text
    with boards.engine.connect() as conn:
        assert "rude" not in repr(conn.execute(sa.select(store.sentences)).all())
    # the phone's late retry of the same submission is refused, and changes nothing
    caught = refusal(lambda: boards.submit(board.id, "A rude bank sentence.", None, browser="b2", token="click"))
    assert caught.reason == "deleted" and "deleted by the teacher" in caught.message
    assert boards.revision(board.id) == revision + 1 and len(boards.entries(board.id)) == 2
    # a new submission from that browser, or the same token from another, is a new sentence
    assert boards.submit(board.id, "The bank opened.", None, browser="b2", token="new").entry.number == 4
    assert boards.submit(board.id, "The bank shut.", None, browser="b4", token="click").entry.number == 5
    assert not boards.delete(board.id, key, gone.id)  # already gone


def test_clearing_leaves_tombstones_too(boards):
    board, key = new_board(boards)
    boards.submit(board.id, "The bank.", None, browser="b1", token="t")
    assert boards.clear(board.id, key) == 1
    assert tombstones(boards) == [(board.id, "b1", "t")]
    assert refusal(lambda: boards.submit(board.id, "The bank.", None, browser="b1", token="t")).reason == "deleted"
    assert boards.entries(board.id) == []


def test_deleting_a_board_deletes_its_sentences_and_tombstones(boards):
    board, key = new_board(boards)
    other, other_key = new_board(boards)
    for i in range(3):
        send(boards, board, browser=f"b{i}")
    send(boards, other)
    boards.delete(board.id, key, boards.entries(board.id)[0].id)
    with pytest.raises(NotTeacher):
        boards.delete_board(board.id, other_key)
    assert boards.delete_board(board.id, key) == 2
    assert boards.get(board.id) is None and boards.find(board.code) is None and boards.revision(board.id) is None
    assert boards.entries(board.id) == [] and tombstones(boards) == []
    assert len(boards.entries(other.id)) == 1  # another board is untouched
    assert refusal(lambda: send(boards, board)).reason == "no_board"
    assert refusal(lambda: boards.delete_board(board.id, key)).reason == "no_board"


def test_purge_takes_expired_boards_tombstones_and_with_everything_all_boards(open_store, clock):
    boards = open_store(days=1)
    old, old_key = new_board(boards)
    send(boards, old, token="x")
    boards.delete(old.id, old_key, boards.entries(old.id)[0].id)
    clock.now += DAY
    assert tombstones(boards) != [] and boards.purge() == 1 and tombstones(boards) == []
    assert boards.get(old.id) is None
    young, _ = new_board(boards)
    send(boards, young)
    assert boards.purge() == 0 and boards.get(young.id) is not None
    assert boards.purge(everything=True) == 1
    assert boards.get(young.id) is None and boards.entries(young.id) == []


def test_an_older_database_gains_the_tombstones_table(db_url):
    """A database made before tombstones existed (the same schema version): opening it adds
    the table and keeps every board."""
    engine = store.make_engine(db_url)
    old = sa.MetaData()
    for table in store.metadata.sorted_tables:
        if table.name != "sentence_tombstones":
            table.to_metadata(old)
    with engine.begin() as conn:
        old.create_all(conn)
        conn.execute(store.board_schema.insert().values(version=store.SCHEMA_VERSION))
    engine.dispose()
    s = BoardStore(db_url)
    try:
        board, key = new_board(s)
        send(s, board, token="y")
        assert s.delete(board.id, key, s.entries(board.id)[0].id)
        assert tombstones(s) == [(board.id, "b1", "y")]
    finally:
        s.dispose()


def test_the_server_purges_expired_boards_on_its_own(db_url, open_store):
    """``start_purging``'s thread, as the server runs it, with nobody opening a board."""
    import time

    boards = open_store(days=1, clock=Clock(time.time() - 2 * DAY))  # made two days ago: expired
    expired, _ = new_board(boards)
    stop = store.start_purging(every=0.05, url=db_url)
    try:
        deadline = time.monotonic() + 60
        while boards.get(expired.id) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert boards.get(expired.id) is None
    finally:
        stop.set()
        store._shared.pop(db_url).dispose()


def test_purging_makes_no_sqlite_database(tmp_path):
    path = tmp_path / "none" / "boards.sqlite3"
    url = f"sqlite:///{path}"
    assert not store.database_exists(url) and store.purge_expired(url) is None and not path.exists()
    path.parent.mkdir()
    BoardStore(url).dispose()
    assert store.database_exists(url)
    try:
        assert store.purge_expired(url) == 0
    finally:
        store._shared.pop(url).dispose()
