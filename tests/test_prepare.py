"""lab.prepare (``python -m lab prepare``): the views a class will open, stored ahead."""

import os
import subprocess
import sys

import numpy as np
import pytest

from lab import prepare, sources, stored
from lab.tokenize import DEFAULT_A, DEFAULT_B, ELMO_MAX_WORDS, split_words
from lab.vectors import LayerVectors
from tests.conftest import ROOT
from tests.test_stored import SMALL_CORPUS, run_page


@pytest.fixture
def store_on(monkeypatch):
    monkeypatch.setenv("LAB_STORED_RUNS", "1")


def test_a_link_gives_its_page_sentences_and_mode():
    view = prepare.view_from_link("http://localhost:8501/bert?a=He+swung+the+bat.&b=A%20bat%20flew%20out.&proj=1")
    assert view == prepare.PageLink("bert", ("He swung the bat.", "A bat flew out."))
    assert not view.attentions
    pair = prepare.view_from_link("http://localhost:8501/attention?att_mode=pair&att_filter=ab&proj=1")
    assert pair == prepare.PageLink("attention", (DEFAULT_A, DEFAULT_B), pair=True) and pair.attentions
    batch = prepare.view_from_link("localhost:8501/attention?att_mask=0")
    assert not batch.pair, "only att_mode=pair packs the sentences as a pair"
    compare = prepare.view_from_link("http://192.168.1.5:8600/compare?b=We+sat+on+the+bank.")
    assert compare.sentences == (DEFAULT_A, "We sat on the bank.") and compare.key() == \
        prepare.PageLink("bert", compare.sentences).key(), "the ELMo vs BERT page reads the BERT page's run"


def test_a_link_is_cleaned_as_the_sidebar_cleans_it(store_on):
    typed = prepare.view_from_link("http://localhost:8501/bert?a=The%20bank%E2%80%8B%20rose.")  # a zero-width space
    assert typed.sentences[0] == "The bank rose."
    assert typed.key() == prepare.PageLink("bert", ("The bank rose.", DEFAULT_B)).key()


def test_a_link_names_its_model_source():
    view = prepare.view_from_link("http://localhost:8501/bert?bert_src=custom&bert_custom=%20/models/bert%20")
    assert view.source == "/models/bert"
    assert prepare.view_from_link("http://localhost:8501/bert", source="/other").source == "/other"
    elmo = prepare.view_from_link("http://localhost:8501/elmo?bert_src=custom&bert_custom=/b&elmo_src=custom"
                                  "&elmo_custom=/models/elmo", source="/other")
    assert (elmo.family, elmo.source) == ("elmo", "/models/elmo"), "the ELMo page's source is ELMo's"
    assert prepare.view_from_link("http://localhost:8501/elmo", "/b", elmo_source="/e").source == "/e"
    both = prepare.view_from_link("http://localhost:8501/compare?bert_src=custom&bert_custom=/b&elmo_src=custom"
                                  "&elmo_custom=/models/elmo", source="/other", elmo_source="/e")
    assert both.models() == [("bert", "/b"), ("elmo", "/models/elmo")], "the ELMo vs BERT page reads both"
    assert prepare.view_from_link("http://localhost:8501/compare", "/b", "/e").models() == [("bert", "/b"),
                                                                                            ("elmo", "/e")]


@pytest.mark.parametrize("link, why", [
    ("http://localhost:8501/", "home page"),
    ("http://localhost:8501/home", "home page"),
    ("http://localhost:8501/nowhere", "not a page"),
    ("http://localhost:8501/bert?a=%20%20", "Sentence A"),
    ("http://localhost:8501/bert?b=%E2%80%8B", "Sentence B"),
])
def test_a_link_without_a_stored_view_says_why(link, why):
    with pytest.raises(ValueError, match=why):
        prepare.view_from_link(link)


class CountingModel:
    """Gives a small run per call and counts the calls."""

    def __init__(self):
        self.calls = []

    def run(self, sentences, pair=False):
        self.calls.append((tuple(sentences), pair))
        rng = np.random.default_rng(len(self.calls))
        return LayerVectors("m", "m", sources.EMBEDDED, list(sentences), [["a"]] * 2, [["a"]] * 2, [[[0]]] * 2,
                            rng.normal(size=(2, 2, 1, 4)).astype(np.float32), ["0", "1"],
                            np.ones((2, 1), np.int32), attentions=np.ones((1, 2, 1, 1, 1), np.float32))


def test_prepare_stores_what_is_missing_and_loads_the_model_only_then(tmp_path, store_on):
    store = stored.RunStore(tmp_path)
    model, loads = CountingModel(), []

    def load(family, source):
        loads.append((family, source))
        return model

    views = prepare.default_views()[:3]  # BERT's (ELMo's: test_prepare_stores_the_elmo_page_with_its_model_facts)
    done = prepare.prepare(views + views[:1], load, store)
    assert [status for _, status, _ in done] == [prepare.STORED] * 3 + [prepare.PRESENT]
    assert loads == [("bert", sources.EMBEDDED)] and len(model.calls) == 3
    assert model.calls[2] == ((DEFAULT_A, DEFAULT_B), True), "the attention page's pair view runs as a pair"
    again = prepare.prepare(views, load, store)
    assert [status for _, status, _ in again] == [prepare.PRESENT] * 3 and loads == [("bert", sources.EMBEDDED)]
    bert_view = store.get(views[0].key())
    assert bert_view.attentions is None and store.get(views[1].key()).attentions is not None


class CountingElmo:
    """An ELMo's face as the ELMo page reads it: runs of word tokens, counted, and its facts."""

    label, short_label, chars_per_token, supports_state = "Counting ELMo", "Counting", 50, True
    mix_weights = (np.zeros(3, np.float32), 1.0)

    def __init__(self):
        self.calls = []

    def run(self, tokens):
        self.calls.append(tuple(map(tuple, tokens)))
        T = max(map(len, tokens))
        return LayerVectors(self.label, self.short_label, sources.EMBEDDED, [" ".join(t) for t in tokens],
                            [list(t) for t in tokens], [list(t) for t in tokens],
                            [[[i] for i in range(len(t))] for t in tokens], np.ones((3, len(tokens), T, 4), np.float32),
                            ["word_emb", "lstm_outputs1", "lstm_outputs2"], np.ones((len(tokens), T), np.int32))

    def info(self):
        return {"backend": "counting", "parameters": 7}


def test_prepare_stores_the_elmo_page_with_its_model_facts(tmp_path, store_on):
    store, model, loads = stored.RunStore(tmp_path), CountingElmo(), []
    view = prepare.default_views()[3]
    assert (view.page, view.family, view.source) == ("elmo", "elmo", sources.EMBEDDED)
    load = lambda family, source: loads.append((family, source)) or model  # noqa: E731 - a stand-in loader, one line
    assert [status for _, status, _ in prepare.prepare([view], load, store)] == [prepare.STORED]
    assert loads == [("elmo", sources.EMBEDDED)]
    assert model.calls == [(tuple(split_words(DEFAULT_A)), tuple(split_words(DEFAULT_B)))]
    # what the page then reads without loading its model: the run of its words, and the facts
    never = lambda: pytest.fail("computed what was prepared")  # noqa: E731 - a stand-in, one line
    run = stored.elmo_run(type("Never", (), {"run": lambda self, t: never()})(), sources.EMBEDDED,
                          view.words(), store=store, keep=False)
    assert run.tokens == [split_words(DEFAULT_A), split_words(DEFAULT_B)]
    facts = stored.model_facts(None, "elmo", sources.EMBEDDED, store=store, keep=False)
    assert (facts.label, facts.short_label, facts.chars_per_token, facts.supports_state) == \
        ("Counting ELMo", "Counting", 50, True)
    assert facts.info == {"backend": "counting", "parameters": 7} and facts.mix_weights[1] == 1.0
    assert [status for _, status, _ in prepare.prepare([view], load, store)] == [prepare.PRESENT]
    assert len(model.calls) == 1


def test_the_compare_view_stores_both_models_and_the_reference_corpus_once(tmp_path, store_on, embedded_bert):
    """The ELMo vs BERT page's view: both models' runs, facts and sense tests in the run
    store, their baselines and top-layer neighbour index in the reference cache; what is
    missing of either is computed again, and nothing else."""
    from lab import reference
    from lab.models.elmo_io import load_elmo

    store = stored.RunStore(tmp_path / "runs")
    corpus = reference.ReferenceStore(reference.load_corpus(str(SMALL_CORPUS)), tmp_path / "cache")
    models, loads = {"bert": embedded_bert, "elmo": load_elmo("embedded")}, []
    load = lambda family, source: loads.append(family) or models[family]  # noqa: E731 - a stand-in loader, one line
    view = prepare.default_views()[4]
    assert view.page == "compare" and not view.is_stored(store, corpus)
    assert [s for _, s, _ in prepare.prepare([view], load, store, corpus)] == [prepare.STORED]
    assert loads == ["bert", "elmo"] and len(store.keys()) == 6
    for family, m in models.items():
        assert corpus.prepared(family, sources.EMBEDDED, m.label)
        top = corpus.baseline(m).layer_names[-1]
        assert corpus.index(m, len(corpus.baseline(m).layer_names) - 1).layer_name == top
        facts = stored.model_facts(lambda: pytest.fail("computed stored facts"), family, sources.EMBEDDED, store=store)
        assert facts.label == m.label
        test = stored.sense_test(None, family, sources.EMBEDDED, store=store)  # read, so never run
        assert test.short_label == m.short_label and 0.5 < test.auc.max() <= 1.0
    assert stored.sense_key("elmo", sources.EMBEDDED, "mean") == stored.sense_key("elmo", sources.EMBEDDED), \
        "an ELMo word is one token: both poolings share one sense test"
    again = prepare.prepare([view], lambda f, s: pytest.fail("loaded a model for a stored view"), store, corpus)
    assert again[0][1] == prepare.PRESENT
    for path in (tmp_path / "cache").rglob("layer*-first.npz"):  # a cache folder cleared, then a new command
        path.unlink()
    corpus = reference.ReferenceStore(corpus.corpus, tmp_path / "cache")
    assert not view.is_stored(store, corpus) and view.is_stored(store, None)
    assert prepare.prepare([view], load, store, corpus)[0][1] == prepare.STORED and view.is_stored(store, corpus)
    assert len(store.keys()) == 6


def test_a_long_sentence_is_prepared_as_the_elmo_page_cuts_it():
    long = " ".join(["word"] * (ELMO_MAX_WORDS + 20)) + "."
    view = prepare.view_from_link(f"http://localhost:8501/elmo?a={long.replace(' ', '+')}")
    assert len(view.words()[0]) == ELMO_MAX_WORDS and view.words()[1] == tuple(split_words(DEFAULT_B))


def test_a_view_without_a_key_is_skipped_with_a_reason(tmp_path, store_on):
    done = prepare.prepare([prepare.PageLink("bert", ("A.", "B."), source=str(tmp_path / "missing"))],
                           lambda f, s: pytest.fail("loaded a model for a view it cannot store"),
                           stored.RunStore(tmp_path))
    assert done[0][1] == prepare.SKIPPED and "no files" in done[0][2]


def test_a_stored_run_is_read_even_where_it_would_not_be_written(tmp_path, store_on):
    """A shared server writes only the default sentences' runs, but reads what was prepared."""
    store, model = stored.RunStore(tmp_path), CountingModel()
    typed = ("My own sentence.", "Another one.")
    first = stored.bert_run(model, sources.EMBEDDED, typed, store=store, keep=False)
    assert store.keys() == [] and len(model.calls) == 1
    prepare.prepare([prepare.PageLink("bert", typed)], lambda f, s: model, store)
    assert len(model.calls) == 2
    read = stored.bert_run(model, sources.EMBEDDED, typed, attentions=False, store=store, keep=False)
    assert len(model.calls) == 2, "computed a run that was stored"
    assert not np.array_equal(read.layers, first.layers), "this run came from the store, not the first call"


def test_the_command_prepares_the_views_fresh_bert_and_elmo_pages_draw_without_tensorflow(tmp_path):
    """``python -m lab prepare`` (a fresh interpreter, the real models) stores what a fresh
    server's BERT, ELMo and ELMo vs BERT pages then draw without importing TensorFlow, with
    the numbers a server that computes the view shows."""
    env = dict(os.environ, LAB_STORED_RUNS="1", LAB_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT),
               LAB_REFERENCE_CORPUS=str(SMALL_CORPUS))
    done = subprocess.run([sys.executable, "-m", "lab", "prepare", "http://localhost:8501/home"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, "a link it cannot prepare makes the command fail"
    assert "5 views stored, 0 already stored, 0 not stored" in done.stdout
    assert "probes: stored 2, already stored 0, not stored 0" in done.stdout  # both models' layer probes
    assert "skipped http://localhost:8501/home: the home page runs no model" in done.stderr
    assert "the reference corpus through BERT" in done.stderr and "the reference corpus through ELMo" in done.stderr
    # four runs, both models' facts and sense tests (the ELMo vs BERT page's runs are the BERT and ELMo pages')
    assert len(list((tmp_path / "runs").glob("*.pkl"))) == 8
    for page in ("bert", "elmo", "compare"):
        prepared = run_page(str(tmp_path), page)
        assert prepared["errors"] == [] and not prepared["tensorflow"], f"the prepared {page} view was not read"
        computed = run_page(str(tmp_path / "elsewhere"), page)
        assert computed["tensorflow"]
        for when in ("first", "clicked"):  # the ELMo vs BERT page's: one curve a model, each its own length
            np.testing.assert_allclose(np.hstack(prepared[when]), np.hstack(computed[when]), atol=1e-6)
        assert prepared["markdown"] == computed["markdown"]
    again = subprocess.run([sys.executable, "-m", "lab", "prepare"], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 0 and "0 views stored, 5 already stored" in again.stdout
    assert "probes: stored 0, already stored 2" in again.stdout and "loading" not in again.stderr


def test_info_says_whether_the_default_views_are_stored(tmp_path, monkeypatch, capsys, store_on):
    from lab.__main__ import main

    monkeypatch.setenv("LAB_RUNS_DIR", str(tmp_path))
    monkeypatch.delenv("LAB_BERT_SOURCE", raising=False)
    assert main(["info"]) == 0
    assert f"stored runs: 0 in {tmp_path}; the default views: 0 of 5 stored (python -m lab prepare" in \
        capsys.readouterr().out
    prepare.prepare(prepare.default_views()[:1], lambda f, s: CountingModel(), stored.RunStore(tmp_path))
    assert main(["info"]) == 0
    assert "stored runs: 1 in" in (out := capsys.readouterr().out) and "the default views: 1 of 5 stored" in out
    monkeypatch.setenv("LAB_REFERENCE_CORPUS", str(tmp_path / "missing.txt"))  # the runs are counted all the same
    assert main(["info"]) == 0
    assert "the default views: 1 of 5 stored" in (out := capsys.readouterr().out)
    assert "the reference corpus cannot be read (" in out and "missing.txt" in out
    monkeypatch.setenv("LAB_STORED_RUNS", "0")
    assert main(["info"]) == 0
    assert "stored runs: off" in capsys.readouterr().out
