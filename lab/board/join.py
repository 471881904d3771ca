"""The student's join page, as pure Python: its messages, the form's CSRF token and the
limit on wrong codes.

The page itself is served by ``ui.server.join`` (a plain web form, no Streamlit
session); the board page's "Show a board" form (``ui.board.find_board``) counts wrong
codes in the same ``LOOKUPS`` as the join page, so one browser's guesses count once
whichever page it uses.
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import math
import threading
import time

from lab.board import rules

# The sense option for a student who does not say: stored as no sense.
NOT_SURE = "not sure"

# --- Messages ------------------------------------------------------------------------------
# Shown by the page's JavaScript when a post gets no answer (a network error, a timeout, a
# proxy's error page): the student's own connection is the least likely cause in a room
# where the other phones cannot reach the server either, and the sentence stays in the box.
NOT_ANSWERING = ("The board's server is not answering; your sentence is kept here, "
                 "try again in a moment.")
SENDING = "Sending…"
# The database did not answer the server.
NOT_STORED = ("Your sentence was not stored: the server could not reach the board just now. "
              "Your sentence is kept here: press Submit again in a moment.")
CLOSED = "The teacher has closed this board: it takes no more sentences."
ASK_CODE = "Type the code your teacher shows (or scan the QR code on the projector)."
NO_COOKIE = ("Your browser did not send this page's cookie, so the board cannot tell your sentences "
             "from others'. Allow cookies for this site, reload the page and send your sentence again.")
BAD_FORM = ("This form was opened in another browser, or before the board's server changed: reload the "
            "page (your sentence is kept) and send it again.")
TOO_BIG = "What you sent is far too long for a sentence. Shorten it and send it again."


def not_found(code: str) -> str:
    return f"No open board has the code “{rules.format_code(code)}”. Check it with your teacher."


def accepted(number: int, approved: bool) -> str:
    where = " It waits for the teacher's approval." if not approved else ""
    return f"Accepted: your sentence is number {number} on the board.{where}"


def earlier_landed(number: int, text: str) -> str:
    """An earlier post of this form stored ``text`` and its answer was lost (a restart); the
    text in the box now is another sentence, not yet sent."""
    return (f"Your earlier sentence reached the board as number {number} before the connection dropped: "
            f"“{text}”. Press Submit again to send this one as well.")


# --- CSRF -----------------------------------------------------------------------------------
def csrf_token(secret: bytes, browser: str) -> str:
    """The form's token for ``browser`` (the ``lab_browser`` cookie's identifier): an HMAC of
    it under the server's ``secret``. A page from another site cannot read it, and a token
    copied from another browser does not match this browser's cookie."""
    return hmac.new(secret, browser.encode("utf-8"), hashlib.sha256).hexdigest()


def csrf_ok(secret: bytes, browser: str | None, token: str | None) -> bool:
    """Whether ``token`` is ``browser``'s form token (constant-time compare)."""
    if not browser or not token:
        return False
    return hmac.compare_digest(csrf_token(secret, browser), token)


# --- Wrong codes ------------------------------------------------------------------------------
# Wrong codes one browser may try in a minute before it must wait: six characters from the
# code alphabet are too many to guess, and this keeps a script from trying.
LOOKUPS_PER_MINUTE = 8
# Browsers remembered at most; the oldest are forgotten first (a minute's window needs no more).
LOOKUPS_KEPT = 10_000


class Lookups:
    """Wrong codes per browser in the last minute, in this process (thread-safe)."""

    def __init__(self, per_minute: int = LOOKUPS_PER_MINUTE, clock=time.monotonic):
        self.per_minute, self.clock = per_minute, clock
        self._misses: collections.OrderedDict[str, list[float]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def _recent(self, who: str, now: float) -> list[float]:
        return [t for t in self._misses.get(who, ()) if now - t < 60]

    def check(self, who: str) -> None:
        """Raise ``Refused`` "too_fast" when ``who`` tried ``per_minute`` wrong codes in the
        last minute, saying how long to wait."""
        now = self.clock()
        with self._lock:
            recent = self._recent(who, now)
        if len(recent) >= self.per_minute:
            wait = max(1, math.ceil(60 - (now - recent[0])))
            raise rules.Refused("too_fast", f"Too many codes that do not exist were tried from this browser. "
                                            f"Try again in {wait} s, and check the code with your teacher.")

    def miss(self, who: str) -> None:
        """Count a wrong code for ``who``."""
        now = self.clock()
        with self._lock:
            self._misses[who] = [*self._recent(who, now), now]
            self._misses.move_to_end(who)
            while len(self._misses) > LOOKUPS_KEPT:
                self._misses.popitem(last=False)


LOOKUPS = Lookups()


def find_board(store, code: str, who: str, lookups: Lookups | None = None):
    """The open board with ``code`` from ``store`` (None when there is none), counting
    ``who``'s wrong codes: after ``LOOKUPS_PER_MINUTE`` in a minute the next look-up raises
    ``Refused`` "too_fast" without looking. ``lookups``: ``LOOKUPS`` (this process's) by default."""
    lookups = lookups or LOOKUPS
    lookups.check(who)
    board = store.find(code)
    if board is None:
        lookups.miss(who)
    return board
