"""``python -m lab fetch``: download TF Hub models once, for a classroom with no network.

    python -m lab fetch [--dir DIR] [HANDLE ...]

Each handle (default: the ELMo v3, BERT-base uncased and BERT preprocessor presets of
``lab.sources.PRESETS``) is downloaded by ``tensorflow_hub``'s own compressed-download
resolver: it requests ``HANDLE?tf-hub-format=compressed``, a ``.tar.gz`` of the
SavedModel folder, and extracts it to ``DIR/sha1(HANDLE)`` (plus
``DIR/sha1(HANDLE).descriptor.txt``), which is the TF Hub cache layout. With
``TFHUB_CACHE_DIR=DIR``, ``hub.load(HANDLE)`` then reads that folder and touches no
network. Each model is then loaded through the app's own loaders (``load_elmo``;
``load_bert`` with the encoder's preprocessor), its size on disk is printed, and at the end
the environment lines that point the app at the folder.

A handle that cannot be fetched or loaded fails alone, with one line on stderr saying
why in words (``lab.sources.failure_sentence``); the others carry on, only what was
fetched is checked, and the command exits 1 at the end. Downloads give up when no data comes
for ``--timeout`` seconds, or when one takes longer than ``--max-time`` seconds.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lab import sources

DEFAULT_DIR = "hub"
log = logging.getLogger(__name__)

# What a fetched SavedModel turned out to be; decides how it is checked.
ELMO, BERT, PREPROCESS, UNKNOWN = "ELMo", "BERT encoder", "BERT preprocessor", "unknown family"


@dataclass
class Fetched:
    """One handle's outcome: its cache folder, what it is, its size, or why it failed."""

    handle: str
    folder: Path | None = None
    kind: str = ""
    size: int = 0  # bytes on disk
    preprocess: str = ""  # for a BERT encoder: the preprocessor handle it was checked with
    checked: str = ""  # what the check ran, for the report
    error: str = ""


def default_handles() -> list[str]:
    """ELMo v3, BERT-base uncased and its preprocessor, as the presets name them."""
    elmo = next(p for p in sources.PRESETS if p.family == "elmo")
    bert = next(p for p in sources.PRESETS if p.family == "bert" and "L-12_H-768" in p.handle)
    return [elmo.handle, bert.handle, bert.preprocess]


def with_preprocessors(handles: list[str]) -> list[str]:
    """The handles, each preset BERT encoder followed by its preprocessor unless listed."""
    out: list[str] = []
    for h in handles:
        if h not in out:
            out.append(h)
        preset = _preset(h)
        if preset and preset.preprocess and preset.preprocess not in handles + out:
            out.append(preset.preprocess)
    return out


def _preset(handle: str) -> sources.Preset | None:
    return next((p for p in sources.PRESETS if p.handle == handle), None)


def readable_size(n: int) -> str:
    """Bytes as a person reads them: ``"950 B"``, ``"12.3 kB"``, ``"357.6 MB"``, ``"1.20 GB"``."""
    if n < 1000:
        return f"{n} B"
    if n < 1_000_000:
        return f"{n / 1e3:.1f} kB"
    if n < 1_000_000_000:
        return f"{n / 1e6:.1f} MB"
    return f"{n / 1e9:.2f} GB"


def folder_size(folder: Path) -> int:
    """Bytes of all files under ``folder``."""
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


# ---------------------------------------------------------------------------------------
# Download: tensorflow_hub's resolver, with a bounded, counted response
# ---------------------------------------------------------------------------------------


class TooLong(sources.GaveUp):
    """A download that went on past ``--max-time``."""


class _BoundedResponse:
    """A response that counts bytes for the progress line and gives up after a deadline.

    ``tensorflow_hub`` streams it into ``tarfile`` through ``read`` alone. The socket
    timeout (given to ``urlopen``) bounds a stall; this bounds the whole download.
    """

    def __init__(self, response, deadline: float, max_time: float, progress: Callable[[int], None]):
        self._response, self._deadline, self._max_time = response, deadline, max_time
        self._progress, self.received = progress, 0

    def read(self, n: int = -1) -> bytes:
        if time.monotonic() > self._deadline:
            raise TooLong(f"the download took longer than {self._max_time:g} s (--max-time)")
        data = self._response.read(n)
        self.received += len(data)
        self._progress(self.received)
        return data

    def close(self) -> None:
        self._response.close()


def _resolver(timeout: float, max_time: float, progress: Callable[[int], None]):
    """tensorflow_hub's ``HttpCompressedFileResolver``, its ``urlopen`` bounded."""
    from tensorflow_hub import compressed_module_resolver

    class Bounded(compressed_module_resolver.HttpCompressedFileResolver):
        def _call_urlopen(self, request):
            deadline = time.monotonic() + max_time
            response = urllib.request.urlopen(request, context=self._context, timeout=timeout)
            return _BoundedResponse(response, deadline, max_time, progress)

        def _lock_file_timeout_sec(self):
            # A lock left by a killed fetch is taken over once its download has stood still
            # this long (the hub's default is 10 minutes).
            return timeout

    return Bounded()


def download(handle: str, timeout: float, max_time: float, progress: Callable[[int], None]) -> Path:
    """Fetch ``handle`` into ``TFHUB_CACHE_DIR`` (unless there already) and return its folder."""
    if not handle.startswith(("http://", "https://")):
        raise sources.SourceError(f"Cannot fetch {handle}: it is not a web address. Give a TF Hub or "
                                  "Kaggle model's https:// handle; a local folder needs no fetching.")
    return Path(_resolver(timeout, max_time, progress)(handle))


def _failed(item: Fetched, exc: BaseException, timeout: float) -> None:
    """Note why ``item`` failed, in words; the exception itself goes to the log (shown with
    ``--verbose``)."""
    log.debug("%s failed", item.handle, exc_info=exc)
    item.error = sources.failure_sentence(item.handle, exc, timeout)


# ---------------------------------------------------------------------------------------
# Check: what each folder is, and that the app's loaders run it
# ---------------------------------------------------------------------------------------


def kind_of(handle: str) -> str:
    """ELMo, BERT encoder, BERT preprocessor or unknown: from the presets, else by loading."""
    if handle in {p.preprocess for p in sources.PRESETS}:
        return PREPROCESS
    preset = _preset(handle)
    if preset:
        return ELMO if preset.family == "elmo" else BERT
    with contextlib.suppress(ImportError):
        import tensorflow_text  # noqa: F401 - registers the ops a BERT preprocessor uses
    module = sources.hub_load(handle)
    if hasattr(module, "tokenize") and hasattr(module, "bert_pack_inputs"):
        return PREPROCESS
    if {"tokens", "default"} <= set(getattr(module, "signatures", {})):
        return ELMO
    if _takes_word_ids(module):
        return BERT
    return UNKNOWN


def _takes_word_ids(module) -> bool:
    """True when the module's ``__call__`` takes a dict with ``input_word_ids`` (a BERT encoder)."""
    for fn in getattr(getattr(module, "__call__", None), "concrete_functions", None) or []:
        args, kwargs = fn.structured_input_signature
        if any(isinstance(a, dict) and "input_word_ids" in a for a in (*args, *kwargs.values())):
            return True
    return False


def check(item: Fetched, preprocessors: list[str]) -> str:
    """Load ``item`` the way the app does and run one sentence; return what ran."""
    if item.kind == ELMO:
        from lab.models.elmo_io import load_elmo

        out = load_elmo(item.handle).run([["The", "bank", "."]])
        return f"load_elmo runs it: {len(out.layer_names)} layers of width {out.layers.shape[-1]}"
    if item.kind == BERT:
        from lab.models.bert_io import load_bert

        preset = _preset(item.handle)
        item.preprocess = preset.preprocess if preset else next(iter(preprocessors), "")
        if not item.preprocess:
            raise sources.SourceError("a BERT encoder needs its preprocessor, and none of the "
                                      "handles loaded as one: add the preprocessor's handle")
        if item.preprocess not in preprocessors:
            raise sources.SourceError(f"its preprocessor {item.preprocess} was not fetched")
        out = load_bert(item.handle, item.preprocess).run(["The bank."])
        return (f"load_bert runs it with {item.preprocess}: {len(out.layer_names)} layers "
                f"of width {out.layers.shape[-1]}")
    module = sources.hub_load(item.handle)
    if item.kind == PREPROCESS:
        import tensorflow as tf

        pieces = module.tokenize(tf.constant(["The bank."]))
        return f"hub.load runs its tokenize ({pieces.flat_values.shape[0]} pieces for 'The bank.')"
    return "hub.load reads it (family unknown: not checked with the app's loaders)"


def env_lines(cache_dir: Path, done: list[Fetched]) -> list[str]:
    """``export`` lines for the app: the cache folder and the first model of each family."""
    lines = [f"export TFHUB_CACHE_DIR={shlex.quote(str(cache_dir))}"]
    elmo = next((f for f in done if f.kind == ELMO), None)
    bert = next((f for f in done if f.kind == BERT), None)
    if elmo:
        lines.append(f"export LAB_ELMO_SOURCE={shlex.quote(elmo.handle)}")
    if bert:
        lines.append(f"export LAB_BERT_SOURCE={shlex.quote(bert.handle)}")
        lines.append(f"export LAB_BERT_PREPROCESS={shlex.quote(bert.preprocess)}")
    return lines


@contextlib.contextmanager
def _cache_dir(path: Path):
    """Point ``tensorflow_hub`` at ``path`` for the duration, then put the setting back."""
    before = os.environ.get("TFHUB_CACHE_DIR")
    os.environ["TFHUB_CACHE_DIR"] = str(path)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TFHUB_CACHE_DIR", None)
        else:
            os.environ["TFHUB_CACHE_DIR"] = before


# ---------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------


def _progress_printer(out, tty: bool) -> Callable[[int], None]:
    """A running byte count on a terminal (at most every half second); silent otherwise."""
    if not tty:
        return lambda received: None
    last = [0.0]

    def show(received: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.5:
            last[0] = now
            out.write(f"\r      {readable_size(received)} ...")
            out.flush()

    return show


def _download_all(items: list[Fetched], timeout: float, max_time: float, out, err, say) -> None:
    tty = getattr(out, "isatty", lambda: False)()
    back = "\r" if tty else ""  # over the running byte count
    for i, item in enumerate(items, 1):
        say(f"[{i}/{len(items)}] {item.handle}")
        cached = sources.is_cached(item.handle)
        start = time.monotonic()
        try:
            item.folder = download(item.handle, timeout, max_time, _progress_printer(out, tty))
        except Exception as exc:  # noqa: BLE001 - one handle fails, the others go on
            _failed(item, exc, timeout)
            if tty:
                out.write("\r" + " " * 30 + "\r")  # the byte count, rubbed out
            print(f"error: {item.error}", file=err, flush=True)
            continue
        item.size = folder_size(item.folder)
        how = "already there, not downloaded again" if cached else \
            f"downloaded in {time.monotonic() - start:.0f} s"
        say(f"{back}      {readable_size(item.size)} on disk, {how}: {item.folder}")


def _check_all(items: list[Fetched], timeout: float, err, say) -> None:
    for item in items:
        try:
            item.kind = kind_of(item.handle)
        except Exception as exc:  # noqa: BLE001 - a model that does not load fails alone
            _failed(item, exc, timeout)
    preprocessors = [f.handle for f in items if f.kind == PREPROCESS and not f.error]
    for item in items:
        try:
            if not item.error:
                item.checked = check(item, preprocessors)
        except Exception as exc:  # noqa: BLE001 - a check that fails marks its model, the others go on
            _failed(item, exc, timeout)
        say(f"  {item.kind or 'not loaded':17s} {readable_size(item.size):>9s}  {item.handle}")
        if item.error:
            print(f"error: {item.error}", file=err, flush=True)
        else:
            say(f"  {'':17s} {'':9s}  ok, {item.checked}")


def fetch(handles: list[str], cache_dir: Path, timeout: float = 60.0, max_time: float = 3600.0,
          out=None, err=None) -> list[Fetched]:
    """Download each handle into ``cache_dir`` and check what came; print progress to
    ``out`` and each failure, once, to ``err``."""
    out, err = out or sys.stdout, err or sys.stderr
    say = lambda text: print(text, file=out, flush=True)  # noqa: E731 - a one-line helper
    items = [Fetched(h) for h in with_preprocessors(handles)]
    cache_dir.mkdir(parents=True, exist_ok=True)
    say(f"Fetching {len(items)} TF Hub handle(s) into {cache_dir} (TF Hub cache layout)")
    with _cache_dir(cache_dir):
        _download_all(items, timeout, max_time, out, err, say)
        fetched = [f for f in items if not f.error]
        if fetched:
            say(f"Checking that each loads through the app's loaders (read from {cache_dir}, no network)")
            _check_all(fetched, timeout, err, say)
    good = [f for f in items if not f.error]
    say(f"{readable_size(sum(f.size for f in good))} on disk in {cache_dir} "
        f"({len(good)} of {len(items)} handle(s) ready)")
    if good:
        say("To run the app on them with no network, set:")
        for line in env_lines(cache_dir, good):
            say(f"  {line}")
    return items
