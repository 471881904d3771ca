"""What a class board accepts, as pure Python: limits, codes, keys, the word-use rule, CSV.

Nothing here touches a database (``lab.board.store`` does), so every rule is tested on its
own and the pages can check input before they store it.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import hmac
import io
import re
import secrets
import zoneinfo

from lab.tokenize import clean_text, split_words

# --- Limits ------------------------------------------------------------------------------
# A sentence, in characters after cleaning: a sentence, not a paragraph; it fits on a
# projector and the models read it in one short pass.
MAX_CHARS = 300
# Sentences on one board, hidden ones included: a class of 30 sending ten each; the
# projector's figure and the analysis stay quick at that size.
MAX_SENTENCES = 300
# Submissions from one browser on one board: PER_MINUTE in any 60 seconds (a student
# thinking, not a script) and PER_BOARD in all, so one person cannot fill a board.
PER_MINUTE = 5
PER_BOARD = 20
# Sense names a teacher may give: none, or MIN_SENSES to MAX_SENSES, each at most
# SENSE_CHARS characters (a legend entry, not a definition).
MAX_SENSES = 4
MIN_SENSES = 2
SENSE_CHARS = 24
# The board's word, in characters.
WORD_CHARS = 30

# Words with two well-known senses, for a teacher who wants a board in one click.
PRESETS: dict[str, tuple[str, ...]] = {
    "bank": ("money", "river"),
    "bat": ("animal", "sport"),
    "spring": ("season", "water", "coil"),
    "plant": ("factory", "living"),
    "light": ("not heavy", "brightness"),
    "rock": ("stone", "music"),
}


# --- Refusals ----------------------------------------------------------------------------
class Refused(ValueError):
    """Input a board does not take. ``reason`` is a short code a page can branch on:

    "empty", "too_long", "no_word", "closed", "full", "too_fast", "browser_limit",
    "no_board", "bad_sense", "too_many_boards", "bad_word", "bad_senses", "deleted" (a
    submission the teacher deleted, sent again).

    ``message`` is a sentence the person can act on; ``str(exc)`` is the message.
    """

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason
        self.message = message

    def __str__(self) -> str:
        return self.message


# --- Join codes --------------------------------------------------------------------------
# Upper-case letters and digits that neither look nor read alike: no 0/O/Q/D, 1/I/L, 2/Z,
# 5/S, 8/B, U/V, 6/G. 20 symbols.
CODE_ALPHABET = "34679ACEFHJKMNPRTWXY"
# 20**6 = 64,000,000 codes: with the at most few hundred open boards a server allows, a
# guessed code finds a board about once in 300,000 tries.
CODE_LENGTH = 6


def new_code() -> str:
    """A random join code (``CODE_LENGTH`` symbols of ``CODE_ALPHABET``), from ``secrets``."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(text: str) -> str:
    """A typed code as stored: upper case, spaces and dashes removed ("abc-def " -> "ABCDEF").

    Nothing else is mapped (an "O" typed for a "0" stays an "O"): the alphabet has no
    look-alikes, so a code that does not match was mistyped, not misread.
    """
    return re.sub(r"[\s\-‐‑–—]+", "", text or "").upper()


def format_code(code: str) -> str:
    """A code as shown and read aloud, in groups of three: "ACE-FHJ"."""
    code = normalise_code(code)
    return "-".join(code[i:i + 3] for i in range(0, len(code), 3))


# --- The teacher's key -------------------------------------------------------------------
def new_key() -> str:
    """The teacher's key for one board: 24 random bytes (192 bits), URL-safe text."""
    return secrets.token_urlsafe(24)


def key_hash(key: str) -> str:
    """The key's SHA-256, hex: the database stores only this, so a copy of the database
    does not hand out teacher links. (The key is random, 192 bits: a fast hash is enough.)"""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_matches(key: str | None, stored_hash: str | None) -> bool:
    """Whether ``key`` is the key whose hash is ``stored_hash`` (constant-time compare).
    A missing or empty key matches nothing."""
    if not key or not stored_hash:
        return False
    return hmac.compare_digest(key_hash(key), stored_hash)


# --- Sentences ---------------------------------------------------------------------------
def clean_sentence(text: str) -> str:
    """A student's sentence as stored: ``lab.tokenize.clean_text`` (NFC, invisible
    characters removed), runs of whitespace and newlines made one space.

    Markup is kept as text ("<b>" is five characters; pages escape it when they show it).
    Raises ``Refused`` "empty" (nothing left, or no letters) or "too_long" (over
    ``MAX_CHARS`` after cleaning).
    """
    cleaned = " ".join(clean_text(text if isinstance(text, str) else "").split())
    if not cleaned:
        raise Refused("empty", "Your sentence is empty. Type a sentence, then send it.")
    if len(cleaned) > MAX_CHARS:
        raise Refused("too_long", f"Your sentence has {len(cleaned)} characters; a board takes at most "
                                  f"{MAX_CHARS}. Shorten it to one sentence and send it again.")
    if not any(ch.isalpha() for ch in cleaned):
        raise Refused("empty", "Your sentence has no letters. Type a sentence with words in it.")
    return cleaned


def _fold(token: str) -> str:
    return token.casefold().replace("’", "'")


def word_forms(word: str) -> frozenset[str]:
    """The tokens that count as a use of ``word`` (case-folded; see ``find_use``)."""
    w = _fold(word)
    forms = {w, w + "s", w + "es"}
    if len(w) >= 2 and w.endswith("y") and w[-2] not in "aeiouy":
        forms.add(w[:-1] + "ies")  # city -> cities
    return frozenset(forms | {f + "'s" for f in forms})


def find_use(text: str, word: str) -> int:
    """The index, into ``lab.tokenize.split_words(text)``, of the use of ``word``.

    The rule: case does not matter. A token is a use when it is the word, its plural (the
    word + "s", + "es", or "y" -> "ies" after a consonant: "city" -> "cities"), or either
    of those with a possessive "'s" or "’s" ("bank's", "banks's"); "banks'" counts too
    (the tokenizer reads it as "banks" and "'"). Longer words and hyphenated compounds do
    not ("riverbank", "banker", "bank-holiday"). When the word appears more than once, the
    first use is the one drawn.

    Raises ``Refused`` "no_word" with a message that names the word.
    """
    forms = word_forms(word)
    for i, token in enumerate(split_words(text)):
        if _fold(token) in forms:
            return i
    plural = word[:-1] + "ies" if word[:-1] + "ies" in forms else word + "s"
    raise Refused("no_word", f"Your sentence does not use “{word}” as a word. Write a sentence with "
                             f"“{word}” in it ({plural} and {word}'s count too).")


# --- A teacher's word and senses ---------------------------------------------------------
# One word of letters; apostrophes and hyphens only between letters ("o'clock", "well-being").
_WORD = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*")


def clean_word(text: str) -> str:
    """The board's word: one word of letters (inner apostrophes and hyphens allowed), at
    most ``WORD_CHARS`` characters, lower case. Raises ``Refused`` "bad_word" otherwise."""
    word = clean_text(text if isinstance(text, str) else "").strip()
    if not word:
        raise Refused("bad_word", "Type the word the class will write sentences with, e.g. “bank”.")
    if len(word) > WORD_CHARS:
        raise Refused("bad_word", f"“{word[:WORD_CHARS]}…” is longer than {WORD_CHARS} characters. "
                                  "Type one word.")
    if not _WORD.fullmatch(word):
        raise Refused("bad_word", f"“{word}” is not one word of letters. Type a single word, "
                                  "without spaces, digits or punctuation, e.g. “bank”.")
    return word.lower()


def clean_senses(names) -> tuple[str, ...]:
    """The board's sense names: each stripped (whitespace collapsed), empty ones dropped,
    repeats dropped regardless of case (the first spelling kept). None, or
    ``MIN_SENSES``..``MAX_SENSES`` of at most ``SENSE_CHARS`` characters each.
    Raises ``Refused`` "bad_senses" otherwise."""
    kept: list[str] = []
    seen: set[str] = set()
    for name in names or ():
        name = " ".join(clean_text(str(name)).split())
        if not name or name.casefold() in seen:
            continue
        if len(name) > SENSE_CHARS:
            raise Refused("bad_senses", f"The sense name “{name}” is longer than {SENSE_CHARS} characters. "
                                        "Give each sense a short name, e.g. “money” or “river”.")
        seen.add(name.casefold())
        kept.append(name)
    if kept and not MIN_SENSES <= len(kept) <= MAX_SENSES:
        raise Refused("bad_senses", f"Give {MIN_SENSES} to {MAX_SENSES} different sense names, or none "
                                    f"(you gave {len(kept)}).")
    return tuple(kept)


# --- CSV export --------------------------------------------------------------------------
CSV_COLUMNS = ("number", "sentence", "sense", "time", "hidden")

# What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection"), full-width
# forms included: such a cell is written with a leading single quote, shown as text.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠")


def spreadsheet_text(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows as text: a leading ``'`` where it would
    read a formula."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return spreadsheet_text(str(value))


def time_zone(name: str | None) -> dt.tzinfo:
    """The IANA time zone ``name`` (a browser's, e.g. "Europe/Paris"); UTC when it is
    missing or unknown."""
    if name:
        try:
            return zoneinfo.ZoneInfo(name)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            pass
    return dt.timezone.utc


def iso_time(value, zone: str | None = None) -> str:
    """Epoch seconds (or a datetime) as ISO 8601 in ``zone`` (``time_zone``), to the second,
    with the date and the zone's offset: "2026-12-01T10:30:00+01:00". A naive datetime is
    read as UTC; text is returned as it is; None gives ""."""
    if value is None or value == "":
        return ""
    if isinstance(value, (int, float)):
        value = dt.datetime.fromtimestamp(value, dt.timezone.utc)
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(time_zone(zone)).isoformat(timespec="seconds")
    return str(value)


def csv_bytes(rows: list[dict], zone: str | None = None) -> bytes:
    """A board's sentences as CSV: columns number, sentence, sense, time, hidden (and
    held, when any row has it). ``time`` may be epoch seconds or a datetime and is written
    as ISO 8601 with its date and offset in ``zone`` (``iso_time``); booleans as yes/no.

    UTF-8 with a byte-order mark, so spreadsheets read accents; every cell that a
    spreadsheet would read as a formula gets a leading ``'``.
    """
    columns = list(CSV_COLUMNS) + (["held"] if any("held" in row for row in rows) else [])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(iso_time(row.get(c), zone) if c == "time" else row.get(c)) for c in columns])
    return out.getvalue().encode("utf-8-sig")
