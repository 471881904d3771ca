"""Shared test set-up: the repo on sys.path, quiet TensorFlow, shared fixtures."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# No start-up warm-up in the page tests (AppTest runs app.py in this process): every BERT
# number then comes from the compiled programs the tests compute with. The browser tests'
# server, and tests/test_warmup.py, run it.
os.environ["LAB_WARMUP"] = "0"
# Nor runs stored on disk by earlier runs (lab.stored): every number a test checks is
# computed in the test (tests/test_stored.py turns them on in a folder of its own).
os.environ["LAB_STORED_RUNS"] = "0"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Browser fixtures (app_server, browser, page) for the @pytest.mark.browser tests, and a
# throwaway PostgreSQL cluster (postgres, postgres_url, fresh_postgres_url) for the boards.
pytest_plugins = ["tests.browser", "tests.postgres"]

TOY_VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "!", "?", "'",
    "the", "a", "bank", "river", "central", "raised", "interest", "rate", "##s", "yesterday",
    "fish", "##er", "##man", "rest", "##ed", "on", "at", "sun", "##set", "un",
    "##aff", "##able", "cafe", "naive", "deposit", "money", "in", "of", "we", "sat",
]


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: real-browser tests (Playwright + Chromium)")


SMALL_CORPUS = ROOT / "tests" / "fixtures" / "small_corpus.txt"  # also the browser tests' corpus


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture(autouse=True)
def failed_views():
    """The failures a page or section showed the app's message for (``ui.errors``), as log
    records. A page that fails raises nothing a test sees (``at.exception`` stays empty), so
    any test that leaves one here fails with its traceback; a test that provokes failures
    reads them and empties the list."""
    handler = _Records()
    logger = logging.getLogger("ui.errors")
    logger.addHandler(handler)
    yield handler.records
    logger.removeHandler(handler)
    if handler.records:
        pytest.fail("a view failed and showed the app's message:\n"
                    + "\n".join(logging.Formatter().format(r) for r in handler.records), pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def reference_corpus_for_every_test(tmp_path_factory):
    """Every page a test runs reads its anisotropy baselines from the small corpus, in a
    cache folder of the session (never the shipped corpus's minutes, nor ~/.cache);
    ``small_corpus`` gives a module a fresh folder of its own."""
    mp = pytest.MonkeyPatch()
    mp.setenv("LAB_REFERENCE_CORPUS", str(SMALL_CORPUS))
    mp.setenv("LAB_CACHE_DIR", str(tmp_path_factory.mktemp("session_reference") / "cache"))
    yield
    mp.undo()


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    """The reference corpus for a module's tests: a small one (baselines and indices in
    seconds, not the shipped corpus's minutes) in a fresh cache folder, also set for the
    app and the command line (``LAB_REFERENCE_CORPUS``, ``LAB_CACHE_DIR``). Yields its
    ``ReferenceStore``."""
    from lab import reference

    folder = tmp_path_factory.mktemp("reference")
    mp = pytest.MonkeyPatch()
    mp.setenv("LAB_REFERENCE_CORPUS", str(SMALL_CORPUS))
    mp.setenv("LAB_CACHE_DIR", str(folder / "cache"))
    yield reference.ReferenceStore(reference.load_corpus(str(SMALL_CORPUS)), folder / "cache")
    mp.undo()


@pytest.fixture(scope="session")
def embedded_bert():
    from lab.models.bert_io import load_bert

    return load_bert("embedded")


@pytest.fixture
def unloadable_models(monkeypatch):
    """Make every model load fail: ``unloadable_models(message)`` has ``lab.models.load``
    raise ``SourceError(message.format(family=...))``. The app's cached models and their
    facts (what earlier tests' pages read) are cleared first, and again afterwards, so the
    next test loads the real models."""
    from lab import models as lab_models, sources
    from ui import model_cache

    def clear():
        model_cache.load.clear()
        model_cache._facts.clear()

    def use(message: str) -> None:
        def broken(family, source):
            raise sources.SourceError(message.format(family=family))

        monkeypatch.setattr(lab_models, "load", broken)
        clear()

    yield use
    clear()


@pytest.fixture
def downloads(monkeypatch):
    """What a click on a page's download button serves, in AppTest: ``downloads(at, key)``
    is the bytes of the button ``key``. A button given a function (deferred data) hands it
    to Streamlit's media file manager, which AppTest drops after each run; this fixture
    keeps each function as it is registered."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    functions = {}
    register = MediaFileManager.add_deferred

    def keep(self, data_callable, *args, **kwargs):
        file_id = register(self, data_callable, *args, **kwargs)
        functions[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", keep)
    return lambda at, key: functions[at.get_by_key(key).proto.deferred_file_id]()


@pytest.fixture(scope="session")
def toy_vocab_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("toy") / "vocab.txt"
    path.write_text("\n".join(TOY_VOCAB) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def hub_bert_dirs(tmp_path_factory, toy_vocab_file):
    """A tiny BERT saved as TF Hub-style preprocessor + encoder SavedModels."""
    from tests.hub_models import save_tiny_hub_bert

    return save_tiny_hub_bert(tmp_path_factory.mktemp("hub_bert"), toy_vocab_file)


def shared_fixture(*parts: str) -> Path:
    """A path in ../shared/fixtures, or a skip saying why it is missing."""
    path = SHARED.joinpath("fixtures", *parts)
    if not SHARED.exists():
        pytest.skip(f"../shared is absent beside the repo ({SHARED}); parity fixtures live there")
    if not path.exists():
        pytest.skip(f"missing shared fixture {path}")
    return path
