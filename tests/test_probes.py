"""The layer probes: data, control task, splits, the probe itself, storage and the CLI."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from lab import probe_cli, probe_data, probes, stored
from lab.__main__ import main
from lab.probe_data import task_examples
from tests.test_stored import _model_folder

ROOT = probe_data.DATA_FILE.parents[2]


@pytest.fixture(scope="module")
def data():
    return probe_data.load_data()


# --- data ---------------------------------------------------------------------------------------


def test_the_data_file_is_what_the_script_writes(data):
    """Every row's headword is where it says, the labels are WordNet's classes, all four
    splits are there, and the file carries the WordNet licence notice."""
    assert len(data.words) == 4000
    assert set(data.pos) == {"NOUN", "VERB", "ADJ", "ADV"}
    assert all((s == "-") == (p in ("ADJ", "ADV")) for s, p in zip(data.supersense, data.pos))
    assert {s.split(".")[0] for s in data.supersense if s != "-"} == {"noun", "verb"}
    assert set(data.split) == set(probe_data.SPLITS)
    head = probe_data.DATA_FILE.read_text(encoding="utf-8")[:2000]
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in head
    assert "probe_words.tsv" in (ROOT / "lab" / "data" / "README.md").read_text(encoding="utf-8")


def test_bank_is_there_in_its_money_and_river_senses(data):
    senses = {s for w, at, s in zip(data.words, data.headword, data.supersense) if w[at].casefold() == "bank"}
    assert {"noun.group", "noun.object", "verb.possession"} <= senses


def test_words_with_several_parts_of_speech_are_in_the_test_set(data):
    pos_of: dict[str, set] = {}
    for lemma, pos in zip(data.lemma, data.pos):
        pos_of.setdefault(lemma, set()).add(pos)
    tested = {lemma for lemma, s in zip(data.lemma, data.split) if s == "test" and len(pos_of[lemma]) > 1}
    assert len(tested) >= 30


@pytest.mark.parametrize("task", probe_data.TASKS)
def test_the_control_task_keeps_one_label_per_word_type(data, task):
    ex = task_examples(data, task)
    control = probe_data.control_labels(ex)
    by_type: dict[str, set] = {}
    for t, label in zip(ex.types.tolist(), control.tolist()):
        by_type.setdefault(t, set()).add(label)
    assert all(len(labels) == 1 for labels in by_type.values())
    assert max(len(v) for v in by_type.values()) == 1 and len(by_type) > 100
    # drawn from the task's label distribution: the commonest real class is common in the control too
    train = ex.where("train")
    real = np.bincount(ex.labels[train], minlength=len(ex.classes)) / len(train)
    types = np.array(sorted(by_type))
    drawn = np.bincount([next(iter(by_type[t])) for t in types], minlength=len(ex.classes)) / len(types)
    assert np.abs(real - drawn).max() < 0.08
    assert (control != ex.labels).mean() > 0.3  # not the task itself


def test_another_seed_gives_other_control_labels(data):
    ex = task_examples(data, "pos")
    assert (probe_data.control_labels(ex, 0) != probe_data.control_labels(ex, 1)).mean() > 0.3


@pytest.mark.parametrize("task", probe_data.LEXICAL)
def test_the_word_held_out_split_has_no_test_word_in_training(data, task):
    ex = task_examples(data, task)
    train, unseen = ex.where("train"), ex.where("unseen")
    assert len(unseen) > 250
    assert not set(ex.types[unseen]) & set(ex.types[train])
    lemmas = np.array(data.lemma)
    assert not set(lemmas[ex.sentence[unseen]]) & set(lemmas[ex.sentence[train]])


def test_the_split_is_by_sentence(data):
    ex = task_examples(data, "position")  # two words of a sentence: both on one side
    side = {}
    for r, s in zip(ex.sentence.tolist(), ex.split.tolist()):
        assert side.setdefault(r, s) == s
    assert "unseen" not in set(ex.split)


def test_close_unseen_moves_shared_forms_until_none_is_left():
    words = ["dehydrated", "dehydrated", "dehydrate", "runs", "ran"]
    lemmas = ["dehydrated", "dehydrate", "dehydrate", "run", "run"]
    assert probe_data.close_unseen(words, lemmas, ["unseen", "train", "test", "train", "dev"]) == [
        "unseen", "unseen", "unseen", "train", "dev"]


def test_quarters():
    assert [probe_data.quarter(i, 8) for i in range(8)] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert probe_data.quarter(0, 1) == 0
    with pytest.raises(ValueError):
        probe_data.quarter(3, 3)


def test_a_malformed_data_file_gets_a_message(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("a sentence\t9\tword\tword\tNOUN\tnoun.act\ttrain\n", encoding="utf-8")
    with pytest.raises(ValueError, match="is not 'word'"):
        probe_data.load_data(bad)
    bad.write_text("a sentence\t0\n", encoding="utf-8")
    with pytest.raises(ValueError, match="tab-separated"):
        probe_data.load_data(bad)


# --- the probe ----------------------------------------------------------------------------------


def synthetic(seed: int = 0, M: int = 1200, C: int = 64, K: int = 5):
    """A layer where the label is linearly encoded: each class pushes the vector along its
    own direction, plus noise in every direction."""
    rng = np.random.default_rng(seed)
    weights = np.arange(K, 0, -1) ** 2  # unequal classes: the majority is not 1 / K
    y = rng.choice(K, size=M, p=weights / weights.sum())
    directions = rng.normal(size=(K, C))
    X = rng.normal(size=(M, C)) + 1.5 * directions[y]
    return X.astype(np.float32), y


def test_a_probe_finds_a_linearly_encoded_label():
    X, y = synthetic()
    probe = probes.fit(X[:800], y[:800], 5, (X[800:1000], y[800:1000]))
    assert (probe.predict(X[1000:]) == y[1000:]).mean() > 0.95
    p = probe.probabilities(X[1000:])
    assert np.allclose(p.sum(axis=1), 1, atol=1e-5)


def test_a_probe_on_shuffled_labels_stays_near_the_majority_class():
    X, y = synthetic(1)
    shuffled = np.random.default_rng(2).permutation(y)
    probe = probes.fit(X[:800], shuffled[:800], 5, (X[800:1000], shuffled[800:1000]))
    X, shuffled = X[200:], shuffled[200:]  # the test: the last 200, used by neither
    accuracy = (probe.predict(X[800:]) == shuffled[800:]).mean()
    majority = (shuffled[800:] == np.bincount(shuffled[:800]).argmax()).mean()
    assert abs(accuracy - majority) < 0.05


def test_fitting_twice_gives_the_same_weights():
    X, y = synthetic()
    a, b = probes.fit(X, y, 5), probes.fit(X, y, 5)
    assert np.array_equal(a.W, b.W) and np.array_equal(a.b, b.b)


def test_fit_refuses_mismatched_inputs():
    with pytest.raises(ValueError, match="M labels"):
        probes.fit(np.zeros((3, 2)), np.zeros(4, int), 2)


def test_the_bootstrap_resamples_sentences():
    # two sentences: one all right (3 words), one all wrong (1 word)
    correct, sentences = np.array([1, 1, 1, 0]), np.array([0, 0, 0, 1])
    s = probes.bootstrap(correct, sentences, resamples=2000)
    assert s.value == 0.75
    assert s.low == 0.0 and s.high == 1.0  # a resample of sentence 1 twice, or sentence 0 twice
    tight = probes.bootstrap(np.tile([1, 0], 500), np.arange(1000))
    assert 0.45 < tight.low < 0.5 < tight.high < 0.55
    assert np.isnan(probes.bootstrap(np.array([]), np.array([])).value)


def test_score_task_on_a_synthetic_layer():
    """Two layers: the label encoded (task far above control) and noise (near the majority)."""
    M = 600
    X, y = synthetic(3, M=M, C=32, K=4)
    rng = np.random.default_rng(4)
    types = np.array([f"w{i % 149}" for i in range(M)])  # 149 word types, about 4 uses each, in every split
    split = np.array(["test", "dev", "train", "train", "train"] * (M // 5))
    ex = probe_data.Examples("pos", np.arange(M), np.zeros(M, int), y, types, split, ("A", "B", "C", "D"))
    feats = np.stack([X, rng.normal(size=X.shape).astype(np.float32)])  # (2, M, C)
    t = probes.score_task(feats, ex)
    encoded, noise = t.scores
    assert encoded.accuracy.value > 0.9 and encoded.selectivity.excludes_zero
    assert encoded.accuracy.low <= encoded.accuracy.value <= encoded.accuracy.high
    assert abs(noise.accuracy.value - t.majority) < 0.12
    assert t.best() == 0 and t.best_contextual() == 1


# --- storage ------------------------------------------------------------------------------------


def test_the_stored_probes_fingerprint_follows_the_data_and_the_weights(tmp_path):
    folder = _model_folder(tmp_path / "model")
    key = probes.probes_key("bert", str(folder), "digest of the data")
    assert key == probes.probes_key("bert", str(folder), "digest of the data")
    assert key != probes.probes_key("bert", str(folder), "digest of other data")
    assert key != probes.probes_key("elmo", str(folder), "digest of the data")
    (folder / "variables" / "variables.data-00000-of-00001").write_bytes(b"retrained weights")
    assert key != probes.probes_key("bert", str(folder), "digest of the data")
    assert probes.probes_key("bert", str(tmp_path / "nothing here"), "digest of the data") is None


def test_the_fingerprint_follows_the_probe_code(tmp_path, monkeypatch):
    folder = _model_folder(tmp_path / "model")
    key = probes.probes_key("bert", str(folder), "d")
    monkeypatch.setattr(probes, "code_fingerprint", lambda: "another version of the probes")
    assert key != probes.probes_key("bert", str(folder), "d")
    assert {"probes.py", "probe_data.py"} <= set(probes.CODE)


def test_a_changed_data_file_has_another_digest(tmp_path, data):
    copy = tmp_path / "copy.tsv"
    text = probe_data.DATA_FILE.read_text(encoding="utf-8")
    copy.write_text(text, encoding="utf-8")
    assert probe_data.load_data(copy).digest == data.digest
    copy.write_text(text.replace("\ttrain\n", "\tdev\n", 1), encoding="utf-8")
    assert probe_data.load_data(copy).digest != data.digest


# --- with the embedded BERT: a small training, the CLI, the live grid ---------------------------


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """Probes of the embedded BERT trained on 400 of the data's sentences (a few seconds),
    stored under the full data's key in a folder of their own, as ``probes train`` stores."""
    from lab import models

    data = probe_data.load_data()
    keep = [i for i in range(len(data.words)) if i % 10 == 0]
    part = replace(data, **{f: tuple(getattr(data, f)[i] for i in keep)
                            for f in ("words", "headword", "lemma", "pos", "supersense", "split")})
    folder = tmp_path_factory.mktemp("probes")
    store = stored.RunStore(folder, max_entries=8, max_bytes=probes.STORE_BYTES)
    model = models.load("bert")
    found, trained = probes.train_and_store(model, store, part)
    assert trained and store.has(probes.probes_key("bert", model.source, data.digest))
    return folder, model, found


@pytest.fixture
def stored_probes(small, monkeypatch):
    folder, model, found = small
    monkeypatch.setenv("LAB_PROBES_DIR", str(folder))
    return model, found


def test_the_small_probes_learn_something(small):
    _, _, found = small
    pos = found.tasks["pos"]
    assert len(pos.scores) == len(found.layer_names) == 7
    best = pos.scores[pos.best_contextual()]
    assert best.accuracy.value > pos.majority


def test_a_stored_probe_is_read_back_equal(stored_probes):
    model, found = stored_probes
    back = probes.read("bert", model.source)
    assert back is not None and back.layer_names == found.layer_names
    assert np.array_equal(back.tasks["pos"].probes[3].W, found.tasks["pos"].probes[3].W)


def test_probe_json_is_the_live_grid(stored_probes, capsys):
    model, found = stored_probes
    assert main(["probe", "--model", "bert", "--task", "pos", "--json", "I bank with them.",
                 "They sat on the river bank."]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert first["model"] == "bert" and first["task"] == "pos"
    assert first["layers"][0] == "input (layer 0)" and len(first["layers"]) == 7
    assert [w["word"] for w in first["words"]] == ["I", "bank", "with", "them", "."]
    grid = probes.live(found, model, "I bank with them.", "pos")
    assert first == grid.as_json("bert")
    for w in ("I", "with", "them", "."):
        word = next(x for x in first["words"] if x["word"] == w)
        assert word["guesses"] == [{"label": None, "p": None}] * 7
    bank = next(x for x in first["words"] if x["word"] == "bank")
    assert all(g["label"] in ("NOUN", "VERB", "ADJ", "ADV") and 0 < g["p"] <= 1 for g in bank["guesses"])


def test_the_projectors_rows_are_the_tables_numbers(small):
    _, _, found = small
    for task in probe_data.TASKS:
        full = [r for r in probes.table_rows(found) if r["task"] == task]
        short = probes.short_rows(found, task)
        assert [r["layer"] for r in short] == [r["layer"] for r in full] == list(found.layer_names)
        for s, f in zip(short, full):
            for col, source in (("accuracy", "accuracy"), ("control", "control"), ("selectivity", "selectivity"),
                                ("unseen", "unseen words")):
                assert s[col] == "-" if f[source] == "-" else float(s[col]) == float(f[source].split(" [")[0])
            assert s["selectivity"][0] in "+-"


def test_a_grid_shows_the_first_words_read_in_the_whole_sentence(stored_probes):
    model, found = stored_probes
    whole = probes.live(found, model, "The bank by the river flooded after the rain.", "pos")
    head = whole.first(3)
    assert head.words == whole.words[:3] and head.labels == whole.labels[:3]
    np.testing.assert_array_equal(head.probabilities, whole.probabilities[:, :3])
    assert whole.first(100).words == whole.words


def test_probe_prints_a_grid(stored_probes, capsys):
    assert main(["probe", "--model", "bert", "--task", "supersense", "the river bank"]) == 0
    out = capsys.readouterr().out
    assert "layer 6" in out and "noun." in out and "bank" in out


def test_probes_report_prints_the_table(stored_probes, capsys):
    assert main(["probes", "report", "--model", "bert"]) == 0
    out = capsys.readouterr().out
    assert "selectivity" in out and "supersense" in out and "position" in out and "[" in out


@pytest.mark.parametrize("args, message", [
    (["probe", "--model", "bert", "--task", "pos", ""], "sentence 1: the sentence cannot be read: it is empty"),
    (["probe", "--model", "bert", "--task", "pos", "ok then", "?!"], "sentence 2"),
    (["probe", "--model", "bert", "--task", "pos", "\u200b\u200b"], "empty"),
    (["probes", "report", "--model", "bert", "--model", "elmo", "--source", "x"], "--source needs a single --model"),
])
def test_awkward_input_gets_a_message(stored_probes, capsys, args, message):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_no_stored_probes_says_which_command_makes_them(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LAB_PROBES_DIR", str(tmp_path))
    assert main(["probe", "--model", "elmo", "--task", "pos", "a sentence"]) == 2
    assert "python -m lab probes train --model elmo" in capsys.readouterr().err
    assert main(["probes", "report", "--model", "bert"]) == 1
    assert "python -m lab probes train --model bert" in capsys.readouterr().err


def test_an_unknown_task_is_refused(capsys):
    with pytest.raises(SystemExit):
        main(["probe", "--model", "bert", "--task", "syntax", "a sentence"])
    assert "invalid choice" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown task"):
        probe_data.check_task("syntax")


def test_the_train_command_names_the_source():
    assert probes.train_command("bert", "embedded") == "python -m lab probes train --model bert"
    assert probes.train_command("elmo", "/m/my elmo") == "python -m lab probes train --model elmo --source '/m/my elmo'"


def test_the_progress_bar_reports_tenths(capsys):
    import io

    out = io.StringIO()
    bar = probe_cli.progress_bar("BERT", out=out)
    for f in np.linspace(0, 1, 101):
        bar(float(f), "working")
    lines = out.getvalue().splitlines()
    assert len(lines) == 11 and "100%" in lines[-1] and "#" * 30 in lines[-1]


# --- the page -----------------------------------------------------------------------------------


def run_page(**params):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app_pages" / "probes.py"), default_timeout=600)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def test_the_page_plots_the_stored_numbers(stored_probes):
    from tests.specs import chart_keyed, values

    _, found = stored_probes
    at = run_page(a="I bank with them.")
    assert not at.exception
    spec = chart_keyed(at, "probe_chart_supersense")
    traces = {t["name"]: t for t in spec["data"]}
    t = found.tasks["supersense"]
    short = found.short_label
    got = values(traces[f"{short}: accuracy"]["y"])
    assert np.allclose(got, [s.accuracy.value for s in t.scores])
    high = values(traces[f"{short}: accuracy"]["error_y"]["array"]) + got
    assert np.allclose(high, [s.accuracy.high for s in t.scores])
    assert np.allclose(values(traces[f"{short}: control task"]["y"]), [s.control.value for s in t.scores])
    assert np.allclose(values(traces[f"{short}: on unseen words"]["y"]), [s.unseen.value for s in t.scores])
    majority = next(v for k, v in traces.items() if k.startswith("majority class"))
    assert np.allclose(values(majority["y"]), t.majority)
    text = " ".join(m.value for m in at.markdown)
    assert probes.summary(found, "supersense") in text.replace("\\", "")
    # ELMo has no stored probes here: the page says which command makes them
    assert any("python -m lab probes train --model elmo" in i.value for i in at.info)


def test_the_live_grid_equals_the_cli(stored_probes, capsys):
    from tests.specs import chart_keyed, values

    sentence = "I bank with them."
    assert main(["probe", "--model", "bert", "--task", "pos", "--json", sentence]) == 0
    cli = json.loads(capsys.readouterr().out)
    at = run_page(a=sentence, probe_task="pos")
    assert not at.exception
    grid = chart_keyed(at, "probe_grid_bert")["data"][0]
    cells = grid["text"]
    assert len(cells) == len(cli["words"])
    for row, hover, word in zip(cells, grid["customdata"], cli["words"]):
        assert row == ["–" if g["label"] is None else g["label"] for g in word["guesses"]]
        for h, g in zip(hover, word["guesses"]):  # the whole label and its probability
            if g["label"] is None:
                assert h.endswith("outside the task's classes")
            else:
                label, p = h.rsplit(": ", 1)[1].rstrip(")").split(" (p = ")
                assert label == g["label"] and abs(float(p) - g["p"]) <= 0.0051
    assert [grid_label for grid_label in chart_keyed(at, "probe_grid_bert")["layout"]["yaxis"]["ticktext"]] == [
        w["word"] for w in cli["words"]]
    assert values(grid["z"]).size == len(cli["words"]) * len(cli["layers"])
    # the word table under it: "bank" (the first open-class word) at every layer, its guess the grid's
    table = at.dataframe[-1].value
    assert list(table["guess"]) == [g["label"] for g in cli["words"][1]["guesses"]]
    assert np.allclose(table["p"].astype(float), [g["p"] for g in cli["words"][1]["guesses"]], atol=1e-3)


def test_the_quiz_hides_the_charts_until_revealed(stored_probes):
    at = run_page(quiz="1")
    assert not at.exception
    assert not [c for c in at.get("plotly_chart") if c.key.startswith("probe_chart")]
    assert any("know the part of speech best" in m.value for m in at.markdown)
    at.button(key="_quiz_reveal_probes").click().run()
    assert [c for c in at.get("plotly_chart") if c.key.startswith("probe_chart")]


@pytest.mark.parametrize("a, message", [("", "empty"), ("?!", "no letters or digits"), ("\u200b", "empty")])
def test_an_unusable_sentence_gets_a_message_on_the_page(stored_probes, a, message):
    at = run_page(a=a)
    assert not at.exception
    assert any(message in w.value for w in at.warning)


@pytest.mark.parametrize("params, message", [
    ({"probe_task": "semantics"}, "is not one of"),
    ({"probe_word": "abc"}, "is not a whole number"),
    ({"probe_word": "999"}, "it is not one of its 8 choices"),
    ({"probe_selectivity": "maybe"}, "is not on or off"),
    ({"a": "bank " * 400}, "the grid shows the first 40"),
])
def test_an_awkward_link_gets_a_message_and_the_page_still_draws(stored_probes, params, message):
    """A link's value the page cannot show is named and replaced by the default: the charts
    and the live grid are still drawn, never a traceback."""
    at = run_page(**params)
    assert not at.exception, [e.value for e in at.exception]
    assert message in "\n".join(str(e.value) for kind in ("info", "warning", "caption") for e in at.get(kind))
    keys = [c.key for c in at.get("plotly_chart")]
    assert "probe_grid_bert" in keys and any(k.startswith("probe_chart") for k in keys)


def test_without_stored_probes_the_page_says_which_command_makes_them(tmp_path, monkeypatch):
    monkeypatch.setenv("LAB_PROBES_DIR", str(tmp_path))
    at = run_page()
    assert not at.exception
    shown = " ".join(i.value for i in at.info)
    assert "python -m lab probes train --model bert" in shown and "python -m lab probes train --model elmo" in shown
    assert not at.get("plotly_chart")


def test_prepare_leaves_stored_probes_and_skips_a_model_without_files(small, tmp_path):
    from lab import prepare

    folder, model, _ = small
    store = stored.RunStore(folder, max_entries=8, max_bytes=probes.STORE_BYTES)
    loads = []
    done = prepare.prepare_probes([("bert", model.source), ("elmo", str(tmp_path / "no such model"))],
                                  lambda f, s: loads.append((f, s)), store)
    assert [d[2] for d in done] == [prepare.PRESENT, prepare.SKIPPED] and loads == []
    assert "no files" in done[1][3]


def test_a_probes_link_says_prepare_stores_them():
    from lab import prepare

    with pytest.raises(ValueError, match="stored probes"):
        prepare.view_from_link("http://localhost:8501/probes?a=I+bank+with+them.")


# --- the class board ----------------------------------------------------------------------------


def test_every_preset_is_mapped_or_says_why(data):
    from lab import probe_views
    from lab.board.rules import PRESETS

    classes = set(data.supersense)
    for word, senses in PRESETS.items():
        mapping, why = probe_views.board_mapping(word, senses)
        if mapping is None:
            assert word in probe_views.NO_SUPERSENSES and "no supersense mapping" in why
        else:
            assert set(mapping) == set(senses) and set(mapping.values()) <= classes
    assert probe_views.board_mapping("bank", ("money", "river"))[0] == {"money": "noun.group", "river": "noun.object"}
    mapping, why = probe_views.board_mapping("bank", ("money", "snow"))
    assert mapping is None and "no mapping" in why
    assert probe_views.board_mapping("cell", ())[0] is None


def test_the_board_probe_scores_the_labelled_uses(small):
    from lab import probe_views
    from lab.board.maps import use_vectors
    from lab.elmo_vs_bert import align

    _, model, found = small
    texts = ["I paid the cheque into the bank.", "We sat on the bank of the river.", "The bank lent us money.",
             "Reeds grew along the bank."]
    uses = [6, 3, 1, 3]
    senses = ["money", "river", None, "river"]
    vectors = use_vectors(align(model.run(texts)), uses)
    mapping = probe_views.PRESET_SUPERSENSES["bank"]
    result = probe_views.board_probe(found, vectors, senses, mapping)
    assert result.used == 3 and len(result.accuracy) == len(found.layer_names)
    t = found.tasks["supersense"]
    for n, probe in enumerate(t.probes):
        guess = [t.classes[k] for k in probe.predict(vectors[n, [0, 1, 3]])]
        assert result.guesses[n] == guess
        assert result.accuracy[n] == np.mean([g == w for g, w in zip(guess, ["noun.group", "noun.object",
                                                                            "noun.object"])])
    with pytest.raises(ValueError, match="vectors"):
        probe_views.board_probe(found, vectors[:2], senses, mapping)


def test_the_board_tests_the_probe_on_the_rooms_sentences(stored_probes, tmp_path, monkeypatch):
    from lab import probe_views
    from lab.board import maps
    from lab.board.store import BoardStore
    from tests.specs import chart_keyed, values
    from tests.test_page_board import fill, new_board, page

    model, found = stored_probes
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("LAB_BOARD_DB", raising=False)
    monkeypatch.setenv("LAB_PUBLIC_URL", "http://lab.test")
    boards = BoardStore()
    try:
        board, _ = new_board(boards)
        entries = fill(boards, board)
        at = page("board", board=board.code)
        assert not at.exception
        (trace,) = [t for t in chart_keyed(at, "board_probe")["data"] if t["name"].startswith(found.short_label)]
        vectors = maps.use_vectors(model.run([e.text for e in entries]), [e.use_index for e in entries])
        want = probe_views.board_probe(found, vectors, [e.sense for e in entries],
                                       probe_views.PRESET_SUPERSENSES["bank"])
        assert want.used == 6
        np.testing.assert_allclose(values(trace["y"]), want.accuracy, atol=1e-6)
        assert "python -m lab probes train --model elmo" in " ".join(c.value for c in at.caption)
    finally:
        boards.dispose()
