"""The ELMo vs BERT page, headless with AppTest: plotted values are lab's, on a small corpus
the test writes (so that the neighbours can be checked by brute force)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from lab import analysis, elmo_vs_bert, figures, quiz, reference, senses
from lab.elmo_vs_bert import MIN_OCCURRENCES
from lab.models.elmo_io import load_elmo
from lab.tokenize import split_words
from lab.vectors import INPUT_LAYER
from tests.conftest import ROOT
from ui.text import md_escape
from tests.specs import OLD_INPUT_NAMES, chart, chart_keyed, tables, ticks, use_map_dots, use_source, values

A = "The central bank raised interest rates yesterday."
B = "A fisherman rested on the river bank at sunset."

pytestmark = pytest.mark.usefixtures("small_corpus")  # tests/conftest.py: the small reference corpus


@pytest.fixture(scope="module")
def models(embedded_bert):
    return {"bert": embedded_bert, "elmo": load_elmo("embedded")}


def runs(models, a=A, b=B):
    return {"bert": elmo_vs_bert.align(models["bert"].run([a, b])),
            "elmo": models["elmo"].run([split_words(a), split_words(b)])}


def curves(models, store, wa, wb, a=A, b=B, pool="first"):
    return {f: elmo_vs_bert.model_curve(out, (0, wa), (1, wb), pool, store.baseline(models[f]).layers(pool))
            for f, out in runs(models, a, b).items()}


def run_page(**params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages/compare.py"), default_timeout=600)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def traces(at, title="at every layer of both models") -> dict[str, np.ndarray]:
    return {t["name"]: values(t["y"]) for t in chart(at, title)["data"]}


def test_plotted_values_and_baselines_are_labs(models, small_corpus):
    at = run_page()
    assert not at.exception
    assert [p.value for p in at.pills] == [2, 6]  # the two "bank"s
    want = curves(models, small_corpus, 2, 6)
    got = traces(at)
    for c in want.values():
        np.testing.assert_allclose(got[f"{c.short_label}: “bank” vs “bank”"], c.cosine, atol=1e-6)
        np.testing.assert_allclose(got[f"{c.short_label}: baseline (random words)"], c.baseline, atol=1e-9)
    # the baselines are lab's per-layer means of random word pairs from different sentences
    for f, m in models.items():
        vecs, rows, _, _ = reference.embed_words(m, small_corpus.corpus.sentences)
        pairs = analysis.random_pairs(rows, reference.BASELINE_PAIRS, seed=0)
        np.testing.assert_allclose(small_corpus.baseline(m).values, analysis.mean_pair_cosine(vecs, pairs), atol=1e-6)
    spec = chart(at, "at every layer of both models")
    assert spec["layout"]["xaxis"]["ticktext"][0] == INPUT_LAYER  # layers named at each depth, the input layers alike
    assert "all-MiniLM-L6-v2" in spec["layout"]["title"]["text"] and "ELMo-mini" in spec["layout"]["title"]["text"]


def test_selecting_words_and_the_adjusted_toggle(models, small_corpus):
    at = run_page()
    at.pills[0].set_value(4).run()  # "interest"
    at.pills[1].set_value(5).run()  # "river"
    want = curves(models, small_corpus, 4, 5)
    got = traces(at)
    for c in want.values():
        np.testing.assert_allclose(got[f"{c.short_label}: “interest” vs “river”"], c.cosine, atol=1e-6)
    at.toggle(key="_w_cmp_adjusted").set_value(True).run()
    got = traces(at)
    for c in want.values():
        adjusted = (c.cosine - c.baseline) / (1 - c.baseline)
        np.testing.assert_allclose(got[f"{c.short_label}: “interest” vs “river”"], adjusted, atol=1e-6)
        np.testing.assert_allclose(got[f"{c.short_label}: baseline (random words)"], 0.0)
    assert at.query_params["cmp_adjusted"] == "1" and at.query_params["cmp_word_a"] == "4"


def test_berts_mean_pooling_moves_its_curve_and_its_baselines(models, small_corpus):
    """A word cut into pieces: with their mean, BERT's cosines and its baselines (random words of
    the corpus, pooled the same way) both change; ELMo's, made of whole words, do not."""
    a, b = "Unaffable bankers smiled.", "The bankers were unaffable."
    at = run_page(a=a, b=b, cmp_word_a="0", cmp_word_b="3", cmp_pool="mean")
    assert not at.exception and at.segmented_control[0].value == "mean"
    got = traces(at)
    want = curves(models, small_corpus, 0, 3, a, b, pool="mean")
    first = curves(models, small_corpus, 0, 3, a, b)
    base = small_corpus.baseline(models["bert"])
    np.testing.assert_allclose(want["bert"].baseline, base.mean)
    assert not np.allclose(want["bert"].cosine, first["bert"].cosine) and not np.allclose(base.mean, base.values)
    np.testing.assert_allclose(want["elmo"].cosine, first["elmo"].cosine)
    for c in want.values():
        np.testing.assert_allclose(got[f"{c.short_label}: “Unaffable” vs “unaffable”"], c.cosine, atol=1e-6)
        np.testing.assert_allclose(got[f"{c.short_label}: baseline (random words)"], c.baseline, atol=1e-9)
    at = run_page(cmp_pool="mean")  # "bank", which the corpus holds often enough for a self-similarity
    bert = models["bert"].short_label
    np.testing.assert_allclose(traces(at, "Self-similarity of")[f"{bert}: baseline"], base.mean, atol=1e-9)


def brute_force_neighbours(model, sentences, query, layer, k=8):
    """Every content word of every sentence, each sentence run alone; the k best by cosine."""
    found = []
    for s, text in enumerate(sentences):
        out = elmo_vs_bert.align(model.run([text]) if model.family == "bert" else model.run([split_words(text)]))
        for w, word in enumerate(out.words[0]):
            if reference.content_word(word) and out.positions(0, w):
                vec = analysis.pool_pieces(out.layers[layer, 0], out.positions(0, w), "first")
                found.append((analysis.cosine(vec, query), s, w))
    return sorted(found, key=lambda f: -f[0])[:k]


def neighbour_lists(at) -> list[list[str]]:
    return [m.value.split("\n") for m in at.markdown if m.value.startswith("1. `")]


def test_neighbours_are_the_true_top_8(models, small_corpus):
    at = run_page()
    lists = neighbour_lists(at)
    assert len(lists) == 2
    sentences = small_corpus.corpus.sentences
    for shown, (f, c) in zip(lists, curves(models, small_corpus, 2, 6).items()):
        top = len(c.layer_names) - 1
        want = brute_force_neighbours(models[f], sentences, c.vectors_a[top], top, k=len(sentences) * 20)
        assert len(shown) == 8
        for rank, line in enumerate(shown):
            cos = float(re.search(r"`(-?\d\.\d{3})`", line).group(1))
            assert abs(cos - want[rank][0]) < 2e-3  # the k-th best cosine, rank by rank
            # the occurrence shown is one whose true cosine is that value (the store keeps
            # float16 vectors, so two near-equal neighbours may swap places)
            rendered = []
            for true_cos, s, w in want:
                word, start, end = elmo_vs_bert.word_spans(sentences[s])[w]
                if abs(true_cos - cos) < 2e-3:
                    rendered.append(f"**{word}**{sentences[s][end:]}")
            assert any(line.endswith(r) for r in rendered), (line, rendered)
    # under each list: how many are the word itself, and the layer's baseline to read them against
    notes = [c.value for c in at.caption if "itself" in c.value]
    for note, shown, c in zip(notes, lists, curves(models, small_corpus, 2, 6).values(), strict=True):
        own = sum(line.lower().count("**bank**") for line in shown)
        assert note.startswith(f"{own} of 8 are “bank” itself.")
        assert f"at {c.layer_names[-1]}: cosine {c.baseline[-1]:.3f} on average" in note


def test_the_maps_place_every_use_of_the_word_and_yours(models, small_corpus):
    at = run_page()
    corpus = small_corpus.corpus
    uses = [(s, w) for s, words in enumerate(corpus.words) for w, word in enumerate(words) if word.lower() == "bank"]
    for f, c in curves(models, small_corpus, 2, 6).items():
        top = len(c.layer_names) - 1
        spec = chart_keyed(at, f"cmp_uses_{f}")
        a, b = spec["data"][-2:]
        dots = use_map_dots(spec)
        assert [d["sentence"] for d in dots] == [s for s, _ in uses] and len(uses) >= MIN_OCCURRENCES  # each use once
        want = elmo_vs_bert.use_map(small_corpus.index(models[f], top), corpus, "bank",
                                    c.vectors_a[top], c.vectors_b[top])
        np.testing.assert_allclose([[d["x"], d["y"]] for d in dots], want.points, atol=1e-9)
        np.testing.assert_allclose([values(a["x"])[0], values(a["y"])[0], values(b["x"])[0], values(b["y"])[0]],
                                   want.yours.ravel(), atol=1e-9)
        assert f"The {len(uses)} uses of “bank” at {c.layer_names[top]}" in spec["layout"]["title"]["text"]
        assert all("<b>bank</b>" in t.lower() for d in spec["data"][:-2] for t in d["text"])  # the word in bold
    # ELMo's character layer: every "bank" is one vector, which the map and a line say
    at = run_page(cmp_layer_elmo="0")
    flat = chart_keyed(at, "cmp_uses_elmo")
    assert not any(d["x"] or d["y"] for d in use_map_dots(flat))
    assert "no spread" in flat["layout"]["xaxis"]["title"]["text"]
    said = f"At {md_escape(INPUT_LAYER)} every use of “bank” is one and the same vector"  # Markdown source
    assert any(c.value.startswith(said) for c in at.caption)
    # a word the corpus holds too rarely gets a line, not a map
    at = run_page(a="A zebra grazed near the bank.", b="The zebra slept.")
    assert not at.exception
    assert sum("“zebra” has fewer than" in c.value for c in at.caption) == 2
    assert not [c for c in at.caption if c.value.startswith("The maps:")]  # no map to explain
    assert not [c for c in at.get("plotly_chart") if (c.key or "").startswith("cmp_uses")]


# The senses of "bank" in tests/fixtures/small_corpus.txt, from each sentence's synset and headword
# there: the legend (WordNet's tag counts of "bank": 25, 20, 2, 2; then 1 and 0, together) and
# each sentence's entry in it
BANK_LEGEND = ["sloping land (especially the slope …", "a financial institution that accepts …",
               "a long ridge or pile", "tip laterally", "other sense", "sense not known"]
BANK_COLOURS = [*figures.SENSE_COLOURS[:4], figures.SENSE_COLOURS[-1], figures.USES]
BANK_SENSES = {
    "The bank approved the loan.": 1,  # depository_financial_institution.n.01
    "She deposited her salary at the bank.": 5,  # deposit.v.02: "bank" is a lemma, "deposit" the headword
    "The bank raised its interest rates.": 1,
    "We walked along the river bank.": 0,  # bank.n.01
    "The boat drifted towards the muddy bank.": 0,
    "He opened an account at a small bank.": 5,  # no synset
    "Money flows through the central bank.": 5,  # central_bank.n.01: "bank" is no lemma of it
    "Deposits at the bank grew last year.": 5,
    "A heron stood on the grassy bank.": 0,
    "The unaffable ferryman scolded the kayakers near the bank.": 5,  # call_on_the_carpet.v.01: no "bank"
    "The pilot had to bank the plane sharply.": 3,  # bank.v.01
    "A huge bank of earth blocked the road.": 2,  # bank.n.03
    "He operated a bank of switches in the control room.": 4,  # bank.n.04 (tag count 1)
    "You can bank on his help.": 4,  # trust.v.01 (tag count of "bank" 0)
}


def assert_dots_show_their_senses(spec: dict, sentences) -> None:
    """Every dot of a use map of "bank" on the small corpus has its sentence's sense: its
    colour and legend entry (BANK_SENSES), the legend in BANK_LEGEND's order."""
    dots = use_map_dots(spec)
    assert sorted(sentences[d["sentence"]] for d in dots) == sorted(BANK_SENSES)  # every use, once
    for d in dots:
        k = BANK_SENSES[sentences[d["sentence"]]]
        assert (d["name"], d["colour"]) == (BANK_LEGEND[k], BANK_COLOURS[k]), sentences[d["sentence"]]
    ranked = sorted((t for t in spec["data"] if "customdata" in t), key=lambda t: t["legendrank"])
    assert [t["name"] for t in ranked] == BANK_LEGEND


def test_each_dot_has_the_colour_of_its_sentences_sense(small_corpus):
    at = run_page()
    for f in ("bert", "elmo"):
        spec = chart_keyed(at, f"cmp_uses_{f}")
        assert_dots_show_their_senses(spec, small_corpus.corpus.sentences)
        hover = {small_corpus.corpus.sentences[int(s)]: t["hovertemplate"]
                 for t in spec["data"] if "customdata" in t for s in values(t["customdata"])}
        assert "depository_financial_institution.n.01: a financial institution" in hover["The bank approved the loan."]
        assert "<i>sense not known</i>" in hover["She deposited her salary at the bank."]
    assert any("A dot's colour is the word's WordNet sense" in c.value for c in at.caption)


def test_self_similarity_and_a_word_absent_from_the_corpus(models, small_corpus):
    at = run_page()
    got = traces(at, "Self-similarity of")
    for f, m in models.items():
        s = small_corpus.self_similarity(m, "bank")
        assert not s.too_rare
        np.testing.assert_allclose(got[f"{m.short_label}: self-similarity of “bank” ({s.used} sentences)"], s.values,
                                   atol=1e-9)
    at = run_page(a="A zebra grazed near the bank.", b="The zebra slept.")
    assert not at.exception
    assert any("“zebra” is too rare in the reference corpus" in i.value and "0 sentence(s)" in i.value
               for i in at.info)


@pytest.mark.parametrize("family, pool", [("bert", "first"), ("bert", "mean"), ("elmo", "first")])
def test_the_self_similarity_table_is_each_words_own_run(models, small_corpus, family, pool):
    """The table an index's pass leaves (what the page reads after its first view) against
    each frequent word's sentences run on their own, on the real models."""
    m = models[family]
    small_corpus.index(m, 1, pool)
    table = small_corpus.self_similarities(m, pool)
    corpus = small_corpus.corpus
    frequent = {w.casefold() for ws in corpus.words for w in ws
                if len(corpus.containing(w)) >= elmo_vs_bert.MIN_OCCURRENCES}
    assert {"bank", "the"} <= frequent and set(table.rows) == frequent
    for w in sorted(frequent):
        got, want = table.get(w), small_corpus._compute_self_similarity(m, w, pool)
        assert (got.contexts, got.used) == (want.contexts, want.used) and not got.too_rare, w
        np.testing.assert_allclose(got.values, want.values, atol=2e-6, err_msg=w)  # float32 runs, batched apart


def quiz_answer(models, store, wa, wb, a=A, b=B) -> str:
    cs = curves(models, store, wa, wb, a, b)
    words = (split_words(a)[wa], split_words(b)[wb])
    return quiz.least_alike(words, {c.short_label: (c.layer_names, c.cosine) for c in cs.values()}).right


@pytest.mark.parametrize("params", [{"quiz": "1"}, {"quiz": "1", "proj": "1"}])
def test_quiz_hides_every_value_until_reveal(models, small_corpus, params):
    at = run_page(**params)
    assert not at.exception
    assert at.sidebar.toggle[1].value is True  # the quiz switch, from the URL
    assert not at.get("plotly_chart") and not at.dataframe and not at.table and not at.metric
    shown = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert not re.search(r"\d\.\d{3}", shown)
    assert "least alike" in at.radio[0].label or "least alike" in shown
    # says what else waits (on a projector in the Reveal button's tooltip, to keep one line)
    assert any("sections 2 to 4" in said for said in [c.value for c in at.caption] + [b.help for b in at.button])
    assert [h.value for h in at.header] == ["1 · One word, both models"]
    at.button(key="_quiz_reveal_compare").click().run()
    right = md_escape(quiz_answer(models, small_corpus, 2, 6))
    assert any(f"Right answer: **{right}**" in s.value for s in at.success)
    assert f"{right} ✓" in at.radio[0].options  # the right choice is marked
    assert at.get("plotly_chart") and [h.value[0] for h in at.header] == ["1", "2", "3", "4"]


def test_quiz_switch_in_the_sidebar_hides_the_chart():
    at = run_page()
    assert at.get("plotly_chart")
    at.sidebar.toggle[1].set_value(True).run()
    assert not at.get("plotly_chart") and at.query_params["quiz"] == "1"


@pytest.mark.parametrize("a, b, expect", [
    ("", B, "empty"),
    (A, "   ", "empty"),
    ("🏦🙂 !!", B, "no letters or digits"),
])
def test_bad_input_gives_a_message(a, b, expect):
    at = run_page(a=a, b=b)
    assert not at.exception
    assert any(expect in w.value for w in at.warning)
    assert not at.get("plotly_chart")


def test_a_word_only_elmo_can_place(models, small_corpus):
    """Past BERT's 510 pieces a word has no BERT vector; ELMo (first 150 words) still has it."""
    a = "bank " + "銀行銀行 " * 140 + "bank"
    at = run_page(a=a, b="The river bank.", cmp_word_a="141")
    assert not at.exception
    assert any("cannot place “bank”" in w.value for w in at.warning)
    got = traces(at)
    assert list(got) == ["ELMo-mini (embedded): “bank” vs “bank”", "ELMo-mini (embedded): baseline (random words)"]


def test_a_tf_hub_bert_places_its_words_beside_elmo(hub_bert_dirs, monkeypatch, small_corpus):
    """A TF Hub BERT's preprocessor reports no character offsets; the page places its words
    all the same (lab.models.bert_io.HubBert._spans), and reads them against its own baseline."""
    from lab.models.bert_io import load_bert

    enc_dir, pre_dir, _ = hub_bert_dirs
    monkeypatch.setenv("LAB_BERT_PREPROCESS", str(pre_dir))
    at = use_source(run_page(), "bert", enc_dir)
    assert not at.exception and not at.error
    assert not [w.value for w in at.warning if "cannot place" in w.value]
    hub = load_bert(str(enc_dir), str(pre_dir))
    want = elmo_vs_bert.model_curve(elmo_vs_bert.align(hub.run([A, B])), (0, 2), (1, 6), "first",
                                    small_corpus.baseline(hub).values)
    got = traces(at)
    assert want.short_label.startswith("TF Hub BERT")
    np.testing.assert_allclose(got[f"{want.short_label}: “bank” vs “bank”"], want.cosine, atol=1e-6)
    np.testing.assert_allclose(got[f"{want.short_label}: baseline (random words)"], want.baseline, atol=1e-9)


@pytest.mark.parametrize("text", ["bank " * 1200, "<script>alert('bank')</script> 🏦 銀行 bank", "銀行 の bank"])
def test_long_emoji_cjk_and_script_input(text):
    at = run_page(a=text)
    assert not at.exception
    assert at.pills and at.get("plotly_chart")
    assert not any("<script>" in m.value for m in at.markdown)  # escaped wherever it is shown
    if len(text) > 5000:
        assert any("longer than 5,000 characters" in i.value for i in at.info)


def test_the_sense_test_section(models):
    at = run_page()
    got = traces(at, "Same or different sense?")
    pairs = senses.sense_pairs()
    sentences = list(dict.fromkeys(s for p in pairs for s in p[1:3]))
    outs = {"bert": elmo_vs_bert.align(models["bert"].run(sentences)),
            "elmo": models["elmo"].run([split_words(s) for s in sentences])}
    for f, out in outs.items():
        t = elmo_vs_bert.run_sense_test(models[f], pairs, senses.roc_auc)  # what the page runs, 8 sentences a call
        np.testing.assert_allclose(got[f"{t.short_label}: ROC AUC"], t.auc, atol=1e-9)
        # and the same as one run of all 48 sentences (other batch shapes: float32 rounding apart)
        whole = elmo_vs_bert.sense_test(out, sentences, pairs, senses.roc_auc)
        np.testing.assert_allclose(t.cosines, whole.cosines, atol=1e-5)
        np.testing.assert_allclose(t.auc, whole.auc, atol=2 / (t.labels.sum() * (1 - t.labels).sum()))
        wrong = next(d for d in tables(at) if "truth" in d.columns  # a plain table: long sentences wrap
                     and d["cosine"].astype(float).tolist() == [round(float(t.cosines[i, t.best]), 4) for i in t.wrong])
        assert wrong["word"].tolist() == [t.pairs[i][0] for i in t.wrong]
        assert list(wrong.columns[:4]) == ["word", "truth", "cosine", "its cosine is"]  # before the long sentences
        at_best, same = t.cosines[:, t.best], t.labels == 1
        for i, why in zip(t.wrong, wrong["its cosine is"]):  # the share of the other group it is ranked against
            share = (at_best[~same] >= at_best[i]).mean() if same[i] else (at_best[same] <= at_best[i]).mean()
            assert why == f"at or {'below' if same[i] else 'above'} {share:.0%} of " \
                          f"{'different' if same[i] else 'same'}-sense pairs"
    assert any("your pair's cosine" in m.value and "of the same-sense pairs" in m.value for m in at.markdown)


def _meaning(key: str, name: str, shorts: dict[str, str]) -> str:
    """What a trace of the chart ``key`` stands for, read from its name (and, for your two
    uses on a model's map, from the map's model)."""
    for short, family in shorts.items():
        if name.startswith(f"{short}: "):
            return family
    if key.startswith("cmp_uses_") and name[:3] in ("A: ", "B: "):
        return key.removeprefix("cmp_uses_")
    if name in figures.PAIR_COLOURS or name == "chance":
        return name
    if key.startswith("cmp_uses_"):  # the corpus's uses, by sense (the same senses on both maps)
        return f"uses of the sense {name}"
    raise AssertionError(f"{key}: no meaning for the trace {name!r}")


def _colours(trace: dict) -> set[str]:
    found = {trace.get("line", {}).get("color"), trace.get("marker", {}).get("color")}
    return {c for c in found if isinstance(c, str)}


def test_a_colour_means_one_thing_in_every_chart_of_the_page(models):
    """BERT's colour is BERT's everywhere (its lines, its stars), ELMo's ELMo's; the sense
    pairs, chance and each sense of the corpus's uses have colours of their own; A and B are
    letters."""
    at = run_page()
    shorts = {m.short_label: f for f, m in models.items()}
    meanings: dict[str, set[str]] = {}
    charts = {c.key: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    assert {"cmp_curves", "cmp_self", "cmp_uses_bert", "cmp_uses_elmo", "cmp_senses", "cmp_own"} <= set(charts)
    for key, spec in charts.items():
        for trace in spec["data"]:
            for colour in _colours(trace):
                meanings.setdefault(colour, set()).add(_meaning(key, trace["name"], shorts))
    assert {c: m for c, m in meanings.items() if len(m) > 1} == {}
    for family, index in figures.MODEL_COLOURS.items():
        assert meanings[figures.OKABE_ITO[index]] == {family}
    stars = [t for key in ("cmp_uses_bert", "cmp_uses_elmo") for t in charts[key]["data"]
             if t["marker"].get("symbol") == "star"]
    assert [t["text"] for t in stars] == [["A"], ["B"]] * 2  # A and B: by letter, in the map's model colour


def test_the_input_layer_has_one_name_on_every_depth_axis():
    at = run_page()
    for key in ("cmp_curves", "cmp_self", "cmp_senses"):
        spec = chart_keyed(at, key)
        assert spec["layout"]["xaxis"]["ticktext"][0] == INPUT_LAYER, key  # both models' input layers: one tick
    for c in at.get("plotly_chart"):
        assert not OLD_INPUT_NAMES & set(ticks(json.loads(c.proto.spec))), c.key
    assert INPUT_LAYER in [o for s in at.selectbox for o in s.options]  # the neighbours' layer menus


def test_an_embedded_model_that_cannot_be_loaded_says_so(unloadable_models):
    # both models are asked for lazily (stored runs, facts and sense tests can answer
    # first): here nothing is stored and loading fails, so the page says why and stops
    unloadable_models("The embedded {family} model is damaged: reinstall the app.")
    at = run_page()
    assert not at.exception
    assert [e.value for e in at.error] == ["The embedded bert model is damaged: reinstall the app."]
    assert not at.pills and not at.get("plotly_chart")
