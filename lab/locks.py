"""One process computes a cache entry while the others wait for it, then read what it wrote.

Several app servers on one host (behind nginx, say) and ``python -m lab prepare`` share
``LAB_CACHE_DIR``. An entry they all lack (a model's baselines over the reference corpus: a
minute of CPU; a stored run: seconds) would otherwise be computed by each of them at once.
A store asks for it in three steps:

    value = read(path)                      # no lock: a present entry is only read
    if value is None:
        with entry_lock(path):              # one process, and one thread, at a time
            value = read(path)              # written by another while this one waited?
            if value is None:
                value = compute()
                write(path, value)          # whole or not at all (a temporary file, renamed)

The lock covers computing and writing one entry: reading never waits, and different entries
are computed in parallel. It is an ``fcntl.flock`` on ``<entry>.lock`` beside the entry.
The kernel releases it when the process ends, however it ends, so a server killed in the
middle of a computation leaves no stale lock: the next one to ask computes the entry.

For one host's local disk only, not a network file system. Over NFS, Linux turns ``flock``
into the server's byte-range locks (before 2.6.12, and still on a mount with ``nolock`` or
``local_lock``, it stays local to each client), which rest on the lock daemon or a lease
and can be lost when the network or the server falters: servers on two hosts could then
both compute and write. The stores' renames still keep each file whole; the waiting is
what would not hold.
"""

from __future__ import annotations

import fcntl
import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


class _Held:
    """One lock file's holders in this process: ``flock`` belongs to an open file, not to a
    thread, so threads first queue on ``lock`` (re-entrant: a thread already inside passes)."""

    def __init__(self):
        self.lock = threading.RLock()
        self.depth = 0  # how deep the holding thread is in nested ``entry_lock``s of this path
        self.fd: int | None = None
        self.users = 0  # threads inside or waiting: the entry is dropped at 0


_guard = threading.Lock()
_held: dict[str, _Held] = {}


def lock_path(path: str | Path) -> Path:
    """The lock file of the entry at ``path``: ``<entry>.lock`` beside it."""
    path = Path(path)
    return path.with_name(path.name + ".lock")


@contextmanager
def entry_lock(path: str | Path) -> Iterator[None]:
    """Hold the lock of the cache entry at ``path`` (a file that need not exist yet) across
    processes of this host and threads of this one; re-entrant within a thread.

    Inside, check again whether the entry exists before computing it. The lock file is
    removed on release, while still held (a waiter that then gets the removed file's lock
    sees that and takes the new one), so an entry leaves no file behind. Where the lock file
    cannot be created (a read-only cache folder), the block runs unlocked: nothing can be
    written there for another process to wait for.
    """
    file = lock_path(path)
    name = os.path.abspath(file)
    with _guard:
        held = _held.setdefault(name, _Held())
        held.users += 1
    try:
        with held.lock:
            if held.depth == 0:
                held.fd = _acquire(file)
            held.depth += 1
            try:
                yield
            finally:
                held.depth -= 1
                if held.depth == 0 and held.fd is not None:
                    _release(file, held.fd)
                    held.fd = None
    finally:
        with _guard:
            held.users -= 1
            if held.users == 0:
                del _held[name]


def _acquire(file: Path) -> int | None:
    """An open descriptor of ``file`` holding its exclusive flock (waits for it); None where
    the file cannot be created."""
    while True:
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # The holder before us may have removed the file as it released it: its lock is
            # then no one's, and the one to hold is that of the file now at the path.
            mine, now = os.fstat(fd), os.stat(file)
            if (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino):
                return fd
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _release(file: Path, fd: int) -> None:
    """Remove ``file`` (still holding its lock, so no one else holds it) and let go."""
    try:
        file.unlink(missing_ok=True)
    finally:
        os.close(fd)  # closing the last descriptor of the open file releases the flock
