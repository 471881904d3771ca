"""Class boards and their sentences in a database: SQLite on one server, PostgreSQL when
several servers serve one room. One code path (SQLAlchemy Core) for both.

Every change is one transaction that starts by writing the board's row: on PostgreSQL that
takes the row's lock, on SQLite the database's write lock (``BEGIN IMMEDIATE``). So the
checks a submission passes (limits, numbering, a repeated click) and its insert happen one
submission at a time per board, on any number of servers, and a refused submission rolls
back without moving the board's revision.

The teacher's key is never stored, only its SHA-256 (``lab.board.rules.key_hash``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.exc import IntegrityError

from lab.board import rules
from lab.board.rules import Refused

SCHEMA_VERSION = 1

# How long a SQLite connection waits for another's write lock before it fails (seconds).
SQLITE_BUSY_SECONDS = 10
# ``find`` deletes expired boards at most this often (seconds); ``create`` always does.
PURGE_EVERY = 300
# The window of ``rules.PER_MINUTE``, seconds.
MINUTE = 60.0

# PostgreSQL advisory-lock keys (any 64-bit numbers no other code uses): one for schema
# upgrades, one for making boards (counting open boards and choosing a free code).
_SCHEMA_LOCK = 0x4C41_4230_0001
_CREATE_LOCK = 0x4C41_4230_0002

# --- Tables ------------------------------------------------------------------------------
metadata = sa.MetaData()

board_schema = sa.Table(
    "board_schema", metadata,
    sa.Column("version", sa.Integer, nullable=False),
)

boards = sa.Table(
    "boards", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("code", sa.String(16), nullable=False, unique=True),
    sa.Column("word", sa.String(64), nullable=False),
    sa.Column("senses", sa.String(512), nullable=False),  # JSON list of names
    sa.Column("bert_source", sa.String(1000), nullable=False),
    sa.Column("elmo_source", sa.String(1000), nullable=False),
    sa.Column("pool", sa.String(32), nullable=False),
    sa.Column("key_hash", sa.String(64), nullable=False),
    sa.Column("created", sa.Double, nullable=False),  # epoch seconds
    sa.Column("expires", sa.Double, nullable=False, index=True),
    sa.Column("is_open", sa.Boolean, nullable=False),
    sa.Column("hold", sa.Boolean, nullable=False),
    sa.Column("revision", sa.Integer, nullable=False),
    sa.Column("next_number", sa.Integer, nullable=False),  # the next sentence's number
)

sentences = sa.Table(
    "sentences", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("board_id", sa.Integer, sa.ForeignKey("boards.id", ondelete="CASCADE"), nullable=False),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("text", sa.String(4 * rules.MAX_CHARS), nullable=False),
    sa.Column("sense", sa.String(64), nullable=True),
    sa.Column("use_index", sa.Integer, nullable=False),
    sa.Column("created", sa.Double, nullable=False),
    sa.Column("hidden", sa.Boolean, nullable=False),
    sa.Column("approved", sa.Boolean, nullable=False),
    sa.Column("browser", sa.String(128), nullable=False),
    sa.Column("token", sa.String(128), nullable=False),
    # a token is one browser's: the join page keeps it in the page's address (it survives a
    # reconnect), and an address copied to another browser must not make its sentence a repeat
    sa.UniqueConstraint("board_id", "browser", "token", name="uq_sentences_token"),
    sa.UniqueConstraint("board_id", "number", name="uq_sentences_number"),
    sa.Index("ix_sentences_browser", "board_id", "browser", "created"),
)

# Secrets every server of one database shares (the join form's CSRF key): made once, kept
# across restarts, so a form served before a restart, or by another server, still posts.
board_secrets = sa.Table(
    "board_secrets", metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("value", sa.String(128), nullable=False),  # hex
)

# What is left of a sentence the teacher deleted: its browser and token, never its text, so
# that the same submission sent again (a phone's retry after no answer) is refused rather
# than stored again. A table of its own, so that ``upgrade``'s ``create_all`` adds it to a
# database made before it existed.
sentence_tombstones = sa.Table(
    "sentence_tombstones", metadata,
    sa.Column("board_id", sa.Integer, sa.ForeignKey("boards.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("browser", sa.String(128), primary_key=True),
    sa.Column("token", sa.String(128), primary_key=True),
)


# --- Where the database is ---------------------------------------------------------------
def data_dir() -> Path:
    """``LAB_DATA_DIR``, or ``~/.local/share/context-lab``; made when missing."""
    path = Path(os.environ.get("LAB_DATA_DIR") or Path.home() / ".local" / "share" / "context-lab")
    path.mkdir(parents=True, exist_ok=True)
    return path


def board_url() -> str:
    """The boards' database: ``LAB_BOARD_DB`` when set, else a SQLite file in ``data_dir()``.

    A plain ``postgresql://`` or ``postgres://`` URL is given the psycopg 3 driver
    (``postgresql+psycopg://``): SQLAlchemy reads a plain one as psycopg2, which the app
    does not install.
    """
    url = os.environ.get("LAB_BOARD_DB", "").strip()
    if not url:
        return f"sqlite:///{data_dir() / 'boards.sqlite3'}"
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain):]
    return url


def _wal(cursor) -> None:
    """Put the database in WAL mode (it stays so, in the file). SQLite does not wait for a
    busy timeout while another connection switches a new file to WAL, so when several
    servers or threads open a new database at once, retry for that long."""
    deadline = time.monotonic() + SQLITE_BUSY_SECONDS
    while True:
        try:
            if cursor.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def make_engine(url: str) -> sa.Engine:
    """An engine for ``url``; for SQLite, one set up for several writers:

    WAL (readers never wait for the writer), a busy timeout, foreign keys on, and SQLite's
    own transaction handling switched off so that SQLAlchemy emits the BEGIN: ``BEGIN
    IMMEDIATE`` on a connection with the ``lab_write`` execution option (it takes the
    write lock at once, so a transaction that reads and then writes never fails to upgrade
    its lock), a plain ``BEGIN`` otherwise (SQLAlchemy's documented recipe, "Serializable
    isolation / Savepoints / Transactional DDL").
    """
    engine = sa.create_engine(url, pool_pre_ping=True)
    if engine.dialect.name != "sqlite":
        return engine

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_SECONDS * 1000}")
        _wal(cursor)
        cursor.execute("PRAGMA synchronous = NORMAL")  # durable in WAL mode but for power loss
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):
        write = conn.get_execution_options().get("lab_write")
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


@contextlib.contextmanager
def _write(engine: sa.Engine, lock: int | None = None):
    """A write transaction: SQLite's write lock from its first statement; on PostgreSQL,
    ``lock`` names an advisory lock held until the transaction ends."""
    with engine.connect() as conn:
        conn.execution_options(lab_write=True)
        with conn.begin():
            if lock is not None and conn.dialect.name == "postgresql":
                conn.execute(sa.select(sa.func.pg_advisory_xact_lock(lock)))
            yield conn


def upgrade(engine: sa.Engine) -> None:
    """Create the tables and record ``SCHEMA_VERSION``, once, however many servers start
    together: each does it under one lock (PostgreSQL's advisory lock ``_SCHEMA_LOCK``,
    SQLite's write lock), and finds the work done when its turn comes.

    Raises RuntimeError for a database written by a newer schema than this code knows.
    ``engine`` comes from ``make_engine``.
    """
    with _write(engine, _SCHEMA_LOCK) as conn:
        found = None
        if sa.inspect(conn).has_table(board_schema.name):
            found = conn.scalar(sa.select(sa.func.max(board_schema.c.version)))
        if found is not None and found > SCHEMA_VERSION:
            raise RuntimeError(f"this board database was written by a newer Context Lab (schema {found}); "
                               f"upgrade the app (it knows schema {SCHEMA_VERSION} and older)")
        metadata.create_all(conn)
        if found is None:
            conn.execute(board_schema.insert().values(version=SCHEMA_VERSION))
        elif found < SCHEMA_VERSION:  # no older schema exists yet: nothing to migrate
            conn.execute(board_schema.update().values(version=SCHEMA_VERSION))


# --- What the store returns --------------------------------------------------------------
@dataclass(frozen=True)
class Board:
    """One board. ``created`` and ``expires`` are epoch seconds; ``revision`` moves on
    every change to the board or its sentences (the projector redraws when it does)."""

    id: int
    code: str
    word: str
    senses: tuple[str, ...]
    bert_source: str
    elmo_source: str
    pool: str
    created: float
    expires: float
    is_open: bool
    hold: bool
    revision: int

    def is_expired(self, now: float) -> bool:
        return self.expires <= now


@dataclass(frozen=True)
class Entry:
    """One sentence on a board. ``number`` is its arrival number on the board (from 1);
    ``use_index`` indexes ``lab.tokenize.split_words(text)``; ``sense`` is None when the
    student did not say; ``approved`` is False while a held sentence waits for the teacher."""

    id: int
    number: int
    text: str
    sense: str | None
    use_index: int
    created: float
    hidden: bool
    approved: bool

    def as_row(self) -> dict:
        """The entry as a row of ``rules.csv_bytes`` (``held``: not yet approved)."""
        return {"number": self.number, "sentence": self.text, "sense": self.sense, "time": self.created,
                "hidden": self.hidden, "held": not self.approved}


@dataclass(frozen=True)
class Submitted:
    """What ``submit`` stored; ``repeated`` when the same token was sent before (a double
    click), in which case ``entry`` is the sentence stored the first time."""

    entry: Entry
    repeated: bool


class NotTeacher(PermissionError):
    """A teacher operation without this board's key."""

    def __init__(self, message: str = ("Only the teacher who made this board can change it. Open the board "
                                       "from the teacher link you were given when you made it.")):
        super().__init__(message)


class _Repeated(Exception):
    """Raised inside a submission's transaction to roll it back and return ``entry``."""

    def __init__(self, entry: Entry):
        self.entry = entry


def _board(row) -> Board:
    return Board(id=row.id, code=row.code, word=row.word, senses=tuple(json.loads(row.senses)),
                 bert_source=row.bert_source, elmo_source=row.elmo_source, pool=row.pool,
                 created=row.created, expires=row.expires, is_open=bool(row.is_open), hold=bool(row.hold),
                 revision=row.revision)


def _entry(row) -> Entry:
    return Entry(id=row.id, number=row.number, text=row.text, sense=row.sense, use_index=row.use_index,
                 created=row.created, hidden=bool(row.hidden), approved=bool(row.approved))


def _env_number(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not a number; set it to a number or unset it") from None
    if not number > 0:
        raise ValueError(f"{name}={value!r} must be above 0")
    return number


def _identifier(name: str, value: str) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= 128:
        raise ValueError(f"{name} must be text of 1 to 128 characters")
    return value


# --- The store ---------------------------------------------------------------------------
class BoardStore:
    """The boards of one database, shared by every server that opens it.

    Args:
        url: a SQLAlchemy URL (``board_url()`` when None).
        days: how long a board lives (``LAB_BOARD_DAYS``, else 30).
        max_open: how many unexpired boards the database holds at once
            (``LAB_BOARD_MAX_OPEN``, else 200), counted in the database, so the cap holds
            for all servers together.
        clock: epoch seconds; tests pass their own.
    """

    def __init__(self, url: str | None = None, *, days: float | None = None, max_open: int | None = None,
                 clock=time.time):
        self.url = url or board_url()
        self.days = days if days is not None else _env_number("LAB_BOARD_DAYS", 30)
        self.max_open = int(max_open if max_open is not None else _env_number("LAB_BOARD_MAX_OPEN", 200))
        self.clock = clock
        self.engine = make_engine(self.url)
        upgrade(self.engine)
        self._purged_at = -math.inf
        self._secrets: dict[str, bytes] = {}

    def dispose(self) -> None:
        self.engine.dispose()

    def secret(self, name: str) -> bytes:
        """The database's secret ``name``: 32 random bytes made by the first server that asks,
        the same for every server and after every restart (kept in ``board_secrets``)."""
        kept = self._secrets.get(name)
        if kept is not None:
            return kept
        with self.engine.connect() as conn:
            value = conn.scalar(sa.select(board_secrets.c.value).where(board_secrets.c.name == name))
        if value is None:
            try:
                with _write(self.engine) as conn:
                    value = conn.scalar(sa.select(board_secrets.c.value).where(board_secrets.c.name == name))
                    if value is None:
                        value = secrets.token_hex(32)
                        conn.execute(board_secrets.insert().values(name=name, value=value))
            except IntegrityError:  # another server made it first: read that one
                with self.engine.connect() as conn:
                    value = conn.scalar(sa.select(board_secrets.c.value).where(board_secrets.c.name == name))
        self._secrets[name] = bytes.fromhex(value)
        return self._secrets[name]

    # --- boards ---
    def create(self, word: str, senses=(), *, bert_source: str, elmo_source: str, pool: str = "first",
               hold: bool = False) -> tuple[Board, str]:
        """A new board, open, with a fresh code; returns it and the teacher's key (the only
        time the key exists in clear: the database keeps its hash).

        Expired boards are deleted first. Raises ``Refused`` "bad_word" / "bad_senses" for
        the teacher's input, "too_many_boards" when ``max_open`` unexpired boards exist.
        """
        word = rules.clean_word(word)
        senses = rules.clean_senses(senses)
        settings = {"bert_source": str(bert_source), "elmo_source": str(elmo_source), "pool": str(pool)}
        for name, value in settings.items():  # PostgreSQL refuses longer text; SQLite would keep it
            if len(value) > boards.c[name].type.length:
                raise ValueError(f"{name} is longer than {boards.c[name].type.length} characters")
        key = rules.new_key()
        now = self.clock()
        with _write(self.engine, _CREATE_LOCK) as conn:
            self._purge(conn, now)
            open_now = conn.scalar(sa.select(sa.func.count()).select_from(boards).where(boards.c.expires > now))
            if open_now >= self.max_open:
                raise Refused("too_many_boards", f"There are already {open_now} open boards, the most this "
                                                 "Context Lab keeps at once. Try again when older boards "
                                                 "expire, or ask whoever runs it to raise LAB_BOARD_MAX_OPEN.")
            for _ in range(50):  # 64 million codes, a few hundred taken: a repeat is rare
                code = rules.new_code()
                if conn.scalar(sa.select(boards.c.id).where(boards.c.code == code)) is None:
                    break
            else:
                raise RuntimeError("no free board code found")
            board_id = conn.execute(boards.insert().values(
                code=code, word=word, senses=json.dumps(list(senses)), **settings,
                key_hash=rules.key_hash(key), created=now,
                expires=now + self.days * 86400, is_open=True, hold=bool(hold), revision=0, next_number=1,
            ).returning(boards.c.id)).scalar_one()
            board = _board(conn.execute(sa.select(boards).where(boards.c.id == board_id)).one())
        return board, key

    def renew(self, board_id: int, key: str) -> tuple[Board, str]:
        """A new board (new code, new key, no sentences) with an old board's word, senses,
        models and hold setting; teacher only. The old board stays until it expires."""
        old = self.get(board_id)
        if old is None:
            raise Refused("no_board", "That board no longer exists. Make a new one.")
        if not self.is_teacher(board_id, key):
            raise NotTeacher()
        return self.create(old.word, old.senses, bert_source=old.bert_source, elmo_source=old.elmo_source,
                           pool=old.pool, hold=old.hold)

    def find(self, code: str) -> Board | None:
        """The unexpired board with this join code (as typed: see ``rules.normalise_code``)."""
        now = self.clock()
        if now - self._purged_at >= PURGE_EVERY:
            self.purge(now)
        code = rules.normalise_code(code)
        if not code:
            return None
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(boards).where(boards.c.code == code, boards.c.expires > now)).first()
        return _board(row) if row else None

    def get(self, board_id: int) -> Board | None:
        """The board with this id, expired or not, until ``purge`` deletes it (a teacher's
        page can then say it expired and offer ``renew``)."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(boards).where(boards.c.id == board_id)).first()
        return _board(row) if row else None

    def revision(self, board_id: int) -> int | None:
        """The board's revision (None when there is no such board): one primary-key read,
        cheap enough for a projector to ask every second."""
        with self.engine.connect() as conn:
            return conn.scalar(sa.select(boards.c.revision).where(boards.c.id == board_id))

    def open_count(self) -> int:
        """Unexpired boards in the database, on all servers."""
        with self.engine.connect() as conn:
            return conn.scalar(sa.select(sa.func.count()).select_from(boards)
                               .where(boards.c.expires > self.clock()))

    def purge(self, now: float | None = None, *, everything: bool = False) -> int:
        """Delete expired boards (with ``everything``, every board) with their sentences and
        tombstones; returns how many boards went."""
        now = self.clock() if now is None else now
        with _write(self.engine) as conn:
            return self._purge(conn, now, everything)

    def _purge(self, conn, now: float, everything: bool = False) -> int:
        self._purged_at = now
        gone = boards.c.expires <= now if not everything else sa.true()
        self._delete_boards(conn, gone)
        return conn.execute(boards.delete().where(gone)).rowcount

    @staticmethod
    def _delete_boards(conn, which) -> None:
        """Delete what belongs to the boards ``which`` selects (not the boards' rows): done
        here rather than left to ``ON DELETE CASCADE``, which SQLite applies only with its
        foreign keys switched on."""
        chosen = sa.select(boards.c.id).where(which)
        for table in (sentences, sentence_tombstones):
            conn.execute(table.delete().where(table.c.board_id.in_(chosen)))

    # --- students ---
    def submit(self, board_id: int, text: str, sense: str | None, *, browser: str, token: str) -> Submitted:
        """Store a student's sentence, or raise ``Refused`` saying why not.

        ``browser`` identifies the student's browser (the per-browser limits count it);
        ``token`` identifies this one submission of this browser: sending it again (a double
        click, a retry after a lost answer) stores nothing and returns the first one with
        ``repeated=True``.
        The checks, in order: no_board (missing or expired), closed, full (``MAX_SENTENCES``
        stored, hidden ones included), too_fast (``PER_MINUTE`` from this browser in the
        last minute), browser_limit (``PER_BOARD`` from this browser), bad_sense (not one
        of the board's senses; None or "" means not said), then the text
        (``rules.clean_sentence``, ``rules.find_use``). The cleaned text is stored; it
        waits for the teacher's approval when the board is on hold.
        """
        browser = _identifier("browser", browser)
        token = _identifier("token", token)
        now = self.clock()
        try:
            with _write(self.engine) as conn:
                # First, the board's row: this write serialises submissions to the board.
                row = conn.execute(
                    boards.update().where(boards.c.id == board_id)
                    .values(revision=boards.c.revision + 1, next_number=boards.c.next_number + 1)
                    .returning(boards)).first()
                if row is None:
                    raise Refused("no_board", "This board no longer exists. Ask your teacher for the new code.")
                same = conn.execute(sa.select(sentences).where(sentences.c.board_id == board_id,
                                                               sentences.c.browser == browser,
                                                               sentences.c.token == token)).first()
                if same is not None:
                    raise _Repeated(_entry(same))
                if conn.scalar(sa.select(sa.func.count()).select_from(sentence_tombstones).where(
                        sentence_tombstones.c.board_id == board_id, sentence_tombstones.c.browser == browser,
                        sentence_tombstones.c.token == token)):
                    raise Refused("deleted", "This sentence was deleted by the teacher: it is not on the board. "
                                             "Write a new one if you like.")
                board = _board(row)
                self._check_board(conn, board, browser, now)
                sense = self._check_sense(board, sense)
                cleaned = rules.clean_sentence(text)
                use = rules.find_use(cleaned, board.word)
                number = row.next_number - 1
                entry_id = conn.execute(sentences.insert().values(
                    board_id=board_id, number=number, text=cleaned, sense=sense, use_index=use, created=now,
                    hidden=False, approved=not board.hold, browser=browser, token=token,
                ).returning(sentences.c.id)).scalar_one()
        except _Repeated as repeated:
            return Submitted(repeated.entry, repeated=True)
        except IntegrityError:
            # Another server stored this token between our check and insert (the board's
            # row lock makes this all but impossible): return what it stored.
            with self.engine.connect() as conn:
                same = conn.execute(sa.select(sentences).where(sentences.c.board_id == board_id,
                                                               sentences.c.browser == browser,
                                                               sentences.c.token == token)).first()
            if same is None:
                raise
            return Submitted(_entry(same), repeated=True)
        return Submitted(Entry(id=entry_id, number=number, text=cleaned, sense=sense, use_index=use, created=now,
                               hidden=False, approved=not board.hold), repeated=False)

    @staticmethod
    def _check_board(conn, board: Board, browser: str, now: float) -> None:
        if board.is_expired(now):
            raise Refused("no_board", "This board has expired. Ask your teacher for the new code.")
        if not board.is_open:
            raise Refused("closed", "The teacher has closed this board: it takes no more sentences.")
        count = sa.select(sa.func.count()).select_from(sentences).where(sentences.c.board_id == board.id)
        if conn.scalar(count) >= rules.MAX_SENTENCES:
            raise Refused("full", f"This board is full ({rules.MAX_SENTENCES} sentences). "
                                  "Ask your teacher to clear it or to make a new one.")
        mine = sentences.c.board_id == board.id, sentences.c.browser == browser
        recent = conn.scalars(sa.select(sentences.c.created).where(*mine, sentences.c.created > now - MINUTE)
                              .order_by(sentences.c.created)).all()
        if len(recent) >= rules.PER_MINUTE:
            wait = max(1, math.ceil(recent[len(recent) - rules.PER_MINUTE] + MINUTE - now))
            raise Refused("too_fast", f"You sent {len(recent)} sentences in the last minute. "
                                      f"Try again in {wait} seconds.")
        if conn.scalar(count.where(sentences.c.browser == browser)) >= rules.PER_BOARD:
            raise Refused("browser_limit", f"You have sent {rules.PER_BOARD} sentences to this board, "
                                           "the most one person can. Thank you!")

    @staticmethod
    def _check_sense(board: Board, sense: str | None) -> str | None:
        sense = " ".join((sense or "").split())
        if not sense:
            return None
        for name in board.senses:
            if name.casefold() == sense.casefold():
                return name
        choices = " or ".join(f"“{name}”" for name in board.senses) or "none (this board has no senses)"
        raise Refused("bad_sense", f"“{sense}” is not one of this board's senses. Choose {choices}.")

    def entries(self, board_id: int, *, hidden: bool = True, held: bool = True) -> list[Entry]:
        """The board's sentences in arrival order; ``hidden=False`` leaves out the ones the
        teacher hid, ``held=False`` the ones waiting for approval."""
        query = sa.select(sentences).where(sentences.c.board_id == board_id).order_by(sentences.c.number)
        if not hidden:
            query = query.where(sentences.c.hidden == sa.false())
        if not held:
            query = query.where(sentences.c.approved == sa.true())
        with self.engine.connect() as conn:
            return [_entry(row) for row in conn.execute(query)]

    def visible(self, board_id: int) -> list[Entry]:
        """What the projector draws: sentences neither hidden nor waiting for approval."""
        return self.entries(board_id, hidden=False, held=False)

    # --- the teacher ---
    def is_teacher(self, board_id: int, key: str | None) -> bool:
        with self.engine.connect() as conn:
            stored = conn.scalar(sa.select(boards.c.key_hash).where(boards.c.id == board_id))
        return rules.key_matches(key, stored)

    @contextlib.contextmanager
    def _teacher(self, board_id: int, key: str | None):
        """A write transaction for the board's teacher that moves its revision; NotTeacher
        (and nothing written) without the key."""
        with _write(self.engine) as conn:
            stored = conn.scalar(sa.select(boards.c.key_hash).where(boards.c.id == board_id))
            if stored is None:
                raise Refused("no_board", "That board no longer exists. Make a new one.")
            if not rules.key_matches(key, stored):
                raise NotTeacher()
            conn.execute(boards.update().where(boards.c.id == board_id).values(revision=boards.c.revision + 1))
            yield conn

    def _set_entry(self, board_id: int, key: str | None, entry_id: int, **values) -> bool:
        with self._teacher(board_id, key) as conn:
            return conn.execute(sentences.update().where(sentences.c.board_id == board_id,
                                                         sentences.c.id == entry_id).values(**values)).rowcount > 0

    def set_hidden(self, board_id: int, key: str | None, entry_id: int, hidden: bool) -> bool:
        """Hide a sentence from the projector (it stays in the teacher's list and the CSV),
        or show it again. False when the board has no such sentence (say, cleared)."""
        return self._set_entry(board_id, key, entry_id, hidden=bool(hidden))

    def approve(self, board_id: int, key: str | None, entry_id: int, approved: bool = True) -> bool:
        """Let a held sentence onto the projector (or take it back off). False when the
        board has no such sentence."""
        return self._set_entry(board_id, key, entry_id, approved=bool(approved))

    def set_hold(self, board_id: int, key: str | None, hold: bool) -> None:
        """Hold new sentences for approval, or stop holding them. Stopping approves nothing
        already waiting: the teacher approves those one by one (``approve``)."""
        with self._teacher(board_id, key) as conn:
            conn.execute(boards.update().where(boards.c.id == board_id).values(hold=bool(hold)))

    def set_open(self, board_id: int, key: str | None, is_open: bool) -> None:
        """Close the board to new sentences (what is on it stays), or open it again."""
        with self._teacher(board_id, key) as conn:
            conn.execute(boards.update().where(boards.c.id == board_id).values(is_open=bool(is_open)))

    def clear(self, board_id: int, key: str | None) -> int:
        """Delete the board's sentences (the board, its code and settings stay), each leaving
        a tombstone (``delete``); numbering and the per-browser limits start over. Returns
        how many went."""
        with self._teacher(board_id, key) as conn:
            gone = self._bury(conn, sentences.c.board_id == board_id)
            conn.execute(boards.update().where(boards.c.id == board_id).values(next_number=1))
            return gone

    def delete(self, board_id: int, key: str | None, entry_id: int) -> bool:
        """Delete one sentence for good (``set_hidden`` only hides it). What stays is its
        tombstone: the browser and token it came with, not its text, so a late retry of the
        same submission is refused ("deleted") instead of stored again. The other sentences
        keep their numbers. False when the board has no such sentence."""
        with self._teacher(board_id, key) as conn:
            return self._bury(conn, sentences.c.board_id == board_id, sentences.c.id == entry_id) > 0

    @staticmethod
    def _bury(conn, *which) -> int:
        """Delete the sentences ``which`` selects, leaving their tombstones; how many went.
        No sentence has a tombstone already: ``submit`` refuses a buried token, under the
        same board-row lock as this."""
        chosen = sa.select(sentences.c.board_id, sentences.c.browser, sentences.c.token).where(*which)
        conn.execute(sentence_tombstones.insert().from_select(["board_id", "browser", "token"], chosen))
        return conn.execute(sentences.delete().where(*which)).rowcount

    def delete_board(self, board_id: int, key: str | None) -> int:
        """Delete the board, its sentences and their tombstones for good; teacher only. Its
        code then finds nothing, and every projector says the board is gone. Returns how many
        sentences went."""
        with self._teacher(board_id, key) as conn:
            gone = conn.scalar(sa.select(sa.func.count()).select_from(sentences)
                               .where(sentences.c.board_id == board_id))
            self._delete_boards(conn, boards.c.id == board_id)
            conn.execute(boards.delete().where(boards.c.id == board_id))
            return gone


# --- One store per process ---------------------------------------------------------------
_shared: dict[str, BoardStore] = {}
_shared_lock = threading.Lock()


def shared_store(url: str | None = None) -> BoardStore:
    """This process's store for ``url`` (``board_url()`` when None), made once and shared by
    the Streamlit pages and the server's own routes, so that both count limits and purge in
    one place and hold one connection pool. Raises what ``BoardStore`` raises for a
    database that cannot open (and tries again on the next call)."""
    url = url or board_url()
    with _shared_lock:
        if url not in _shared:
            _shared[url] = BoardStore(url)
        return _shared[url]


# --- Purging while the server runs -------------------------------------------------------
def database_exists(url: str | None = None) -> bool:
    """Whether the boards' database is there to open: a SQLite file that exists, or any
    other URL (a server's database; opening it says whether it answers). Purging a SQLite
    database that was never made would make it."""
    url = sa.engine.make_url(url or board_url())
    if url.get_backend_name() != "sqlite":
        return True
    return bool(url.database) and url.database != ":memory:" and Path(url.database).is_file()


def where(url: str | None = None) -> str:
    """The database as a person finds it: a SQLite file's path, or the URL without its
    password."""
    url = sa.engine.make_url(url or board_url())
    if url.get_backend_name() == "sqlite":
        return url.database or ":memory:"
    return url.render_as_string(hide_password=True)


def purge_expired(url: str | None = None) -> int | None:
    """Delete the expired boards of ``url``'s database (``board_url()``) through this
    process's store; None, and nothing made, when there is no database yet."""
    url = url or board_url()
    if not database_exists(url):
        return None
    return shared_store(url).purge()


def start_purging(every: float = PURGE_EVERY, url: str | None = None) -> threading.Event:
    """Purge expired boards now and every ``every`` seconds, in a daemon thread, while the
    server runs: a board is gone ``LAB_BOARD_DAYS`` after it was made even when nobody
    opens a board. A database that cannot be reached is logged and tried again next time.
    Set the returned event to stop the thread."""
    log = logging.getLogger(__name__)
    stop = threading.Event()

    def run() -> None:
        while True:
            try:
                gone = purge_expired(url)
                if gone:
                    log.info("purged %d expired board(s)", gone)
            except Exception as exc:  # noqa: BLE001 - a database down now may answer next time
                log.warning("could not purge expired boards: %s", str(exc).splitlines()[0] if str(exc) else exc)
            if stop.wait(every):
                return

    threading.Thread(target=run, name="board-purge", daemon=True).start()
    return stop
