"""lab.elmo_vs_bert, lab.reference, lab.quiz and the anisotropy measures, on tiny inputs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from lab import analysis, elmo_vs_bert, quiz, reference, reference_corpus, senses, views
from lab.senses import Synset
from lab.vectors import INPUT_LAYER, LayerVectors
from tests.conftest import ROOT


class FakeElmo:
    """A word-level model without TensorFlow: layer 0 is a fixed vector per word (context-free),
    layer 1 adds the mean of the sentence's layer-0 vectors (context)."""

    family, source, label, short_label = "elmo", "fake-model", "Fake ELMo (tests)", "Fake"

    def __init__(self):
        self.calls = 0

    @staticmethod
    def word_vector(word: str) -> np.ndarray:
        return np.random.default_rng(zlib.crc32(word.lower().encode())).normal(size=6).astype(np.float32)

    def run(self, tokens):
        self.calls += 1
        B, T = len(tokens), max(len(t) for t in tokens)
        layers = np.zeros((2, B, T, 6), np.float32)
        mask = np.zeros((B, T), np.int32)
        for b, sent in enumerate(tokens):
            base = np.stack([self.word_vector(w) for w in sent])
            layers[0, b, : len(sent)] = base
            layers[1, b, : len(sent)] = base + base.mean(axis=0)
            mask[b, : len(sent)] = 1
        return LayerVectors(self.label, self.short_label, self.source, [" ".join(t) for t in tokens], tokens,
                            tokens, [[[i] for i in range(len(t))] for t in tokens], layers, ["word", "context"], mask)


SENTENCES = ["the bank raised rates", "we sat on the river bank", "money in the bank today",
             "a bank of fog rolled in", "the bank closed early", "fish swim in the river",
             "interest rates went up", "bank"]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("# a comment\n" + "\n".join(SENTENCES) + "\n\n")
    return reference.load_corpus(str(path))


def test_anisotropy_measures_on_hand_made_vectors():
    np.testing.assert_allclose(analysis.adjusted([0.5, 1.0], [0.5, 0.0]), [0.0, 1.0])
    v = np.array([[[1.0, 0], [0, 1], [1, 1]]])  # (N=1, K=3, C=2)
    np.testing.assert_allclose(analysis.self_similarity(v), [(0 + 2 / np.sqrt(2)) / 3])
    with pytest.raises(ValueError):
        analysis.self_similarity(v[:, :1])
    groups = np.array([0, 0, 1, 1, 2])
    pairs = analysis.random_pairs(groups, 50, seed=3)
    assert pairs.shape == (50, 2) and (groups[pairs[:, 0]] != groups[pairs[:, 1]]).all()
    np.testing.assert_array_equal(pairs, analysis.random_pairs(groups, 50, seed=3))
    with pytest.raises(ValueError, match="two different sentences"):
        analysis.random_pairs(np.zeros(4), 3)
    vecs = np.array([[[1.0, 0], [0, 1], [1, 0]]])
    np.testing.assert_allclose(analysis.mean_pair_cosine(vecs, np.array([[0, 1], [0, 2]])), [0.5])


def test_top_k_matches_a_sort():
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(50, 5)).astype(np.float32)
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    q = rng.normal(size=5)
    idx, cos = analysis.top_k(unit, q, 8)
    want = np.argsort(-(unit @ (q / np.linalg.norm(q))))[:8]
    np.testing.assert_array_equal(idx, want)
    assert np.all(np.diff(cos) <= 0) and len(analysis.top_k(unit, q, 100)[0]) == 50


def test_align_rewords_bert_through_character_offsets(embedded_bert):
    out = elmo_vs_bert.align(embedded_bert.run(["I don't like unaffable bankers.", "銀行 bank 🏦"]))
    assert out.words[0] == ["I", "don't", "like", "unaffable", "bankers", "."]
    assert [out.tokens[0][p] for p in out.positions(0, 1)] == ["don", "'", "t"]
    assert len(out.positions(0, 3)) > 1  # un ##aff ##able
    assert out.words[1] == ["銀行", "bank", "🏦"]
    assert len(out.positions(1, 0)) == 2  # one piece per CJK character
    assert [out.tokens[1][p] for p in out.positions(1, 2)] == ["[UNK]"]


def test_model_curve_and_a_word_the_model_cannot_place():
    m = FakeElmo()
    out = m.run([["the", "bank", "rose"], ["river", "bank"]])
    c = elmo_vs_bert.model_curve(out, (0, 1), (1, 1), "first", np.array([0.2, 0.5]))
    assert c.cosine[0] == pytest.approx(1.0) and c.cosine[1] < 1.0
    np.testing.assert_allclose(c.depth, [0.0, 1.0])
    np.testing.assert_allclose(c.adjusted, (c.cosine - [0.2, 0.5]) / (1 - np.array([0.2, 0.5])))
    np.testing.assert_allclose(c.vectors_a, out.layers[:, 0, 1])
    from dataclasses import replace

    cut = replace(out, word_positions=[[[0], [], [2]], [[0], [1]]])
    with pytest.raises(ValueError, match="cannot place “bank”"):
        elmo_vs_bert.model_curve(cut, (0, 1), (1, 1), "first", np.zeros(2))


def test_store_baseline_self_similarity_and_disk_cache(corpus, tmp_path):
    m = FakeElmo()
    store = reference.ReferenceStore(corpus, tmp_path / "cache")
    base = store.baseline(m)
    vecs, rows, _, names = reference.embed_words(m, corpus.sentences)
    pairs = analysis.random_pairs(rows, reference.BASELINE_PAIRS, seed=0)
    np.testing.assert_allclose(base.values, analysis.mean_pair_cosine(vecs, pairs))
    assert base.layer_names == names == ["word", "context"]
    s = store.self_similarity(m, "Bank")
    assert s.contexts == 6 and not s.too_rare and s.values[0] == pytest.approx(1.0)
    assert store.self_similarity(m, "river").too_rare  # 2 sentences < MIN_OCCURRENCES
    assert store.self_similarity(m, "zebra").contexts == 0
    again = reference.ReferenceStore(corpus, tmp_path / "cache")  # a later start: read from disk
    calls = m.calls
    np.testing.assert_allclose(again.baseline(m).values, base.values)
    again.index(m, 1)
    built = m.calls
    assert built > calls
    fresh = reference.ReferenceStore(corpus, tmp_path / "cache")
    fresh.index(m, 1)
    assert m.calls == built  # the index came from disk


class FakeBilm(FakeElmo):
    """FakeElmo with an ELMo's three layer names, so that its LSTM layers have context-only views."""

    label, short_label = "Fake biLM (tests)", "Fake biLM"

    def run(self, tokens):
        from dataclasses import replace

        out = super().run(tokens)
        top = out.layers[1:] * 2.0 + out.layers[1:].mean(axis=-1, keepdims=True)
        return replace(out, layers=np.concatenate([out.layers, top]),
                       layer_names=[INPUT_LAYER, "lstm_outputs1", "lstm_outputs2"])


def test_store_baselines_of_context_only_views_and_of_any_mix(corpus, tmp_path):
    m = FakeBilm()
    store = reference.ReferenceStore(corpus, tmp_path / "cache")
    base = store.baseline(m)
    assert base.layer_names == [INPUT_LAYER, "lstm_outputs1", "lstm_outputs2"]
    assert list(base.views) == list(views.CONTEXT_LAYERS)
    # by hand: the whole corpus in one run (the fake has no batch effects), its views, the same pairs
    from lab.tokenize import split_words

    out = views.with_context_only(elmo_vs_bert.align(m.run([split_words(s) for s in corpus.sentences])))
    vecs, rows, _ = elmo_vs_bert.word_matrix(out)
    pairs = analysis.random_pairs(rows, reference.BASELINE_PAIRS, seed=0)
    direct = analysis.mean_pair_cosine(vecs, pairs)  # word_emb, lstm1, lstm2, context-only 1, 2
    np.testing.assert_allclose(base.values, direct[:3], atol=1e-6)
    np.testing.assert_allclose([base.views[n] for n in views.CONTEXT_LAYERS], direct[3:], atol=1e-6)
    weights = [0.4, -1.0, 2.0]
    mixed = analysis.mean_pair_cosine(analysis.scalar_mix(vecs[:3], weights, 1.3)[None].astype(np.float64), pairs)
    names = ["lstm_outputs2", views.MIX_LAYER, "context-only 1", "elsewhere"]
    got = base.at(names, weights)
    np.testing.assert_allclose(got[:3], [direct[2], mixed[0], direct[3]], atol=1e-6)
    assert np.isnan(got[3]) and np.isnan(base.at([views.MIX_LAYER])[0])  # no weights, no mix
    # a later start reads all of it from disk (the products at float32)
    calls = m.calls
    again = reference.ReferenceStore(corpus, tmp_path / "cache").baseline(m)
    assert m.calls == calls and again.views == base.views
    np.testing.assert_allclose(again.at(names[:3], weights), got[:3], atol=1e-6)


def test_a_bert_has_a_baseline_per_pooling_from_the_same_word_pairs(embedded_bert, tmp_path):
    """First piece and mean of the pieces: each the mean cosine of the same random pairs of
    words, pooled that way (one model run gives both); an ELMo's words are single tokens."""
    text = tmp_path / "corpus.txt"
    text.write_text("The unaffable bankers smiled.\nA heron squawked at the kayakers.\n"
                    "We walked along the river bank.\nThe bank raised its interest rates.\n")
    store = reference.ReferenceStore(reference.load_corpus(str(text)), tmp_path / "cache")
    base = store.baseline(embedded_bert)
    sentences = store.corpus.sentences  # fewer than BASELINE_SENTENCES: all of them
    first, rows, words, _ = reference.embed_words(embedded_bert, sentences, pool="first")
    mean, rows_m, words_m, _ = reference.embed_words(embedded_bert, sentences, pool="mean")
    np.testing.assert_array_equal(rows, rows_m)
    np.testing.assert_array_equal(words, words_m)
    pairs = analysis.random_pairs(rows, reference.BASELINE_PAIRS, seed=0)
    np.testing.assert_allclose(base.values, analysis.mean_pair_cosine(first, pairs), atol=1e-6)
    np.testing.assert_allclose(base.mean, analysis.mean_pair_cosine(mean, pairs), atol=1e-6)
    assert np.abs(base.mean - base.values).max() > 1e-3  # the corpus has words of several pieces
    assert base.layers("mean") is base.mean and base.layers("first") is base.values
    np.testing.assert_allclose(base.at(base.layer_names[::-1], pool="mean"), base.mean[::-1])
    with pytest.raises(ValueError, match="pooling"):
        base.layers("max")
    again = reference.ReferenceStore(store.corpus, store.folder).baseline(embedded_bert)
    np.testing.assert_allclose(again.mean, base.mean)  # read back from disk
    elmo = store.baseline(FakeBilm())
    assert elmo.mean is None and elmo.layers("mean") is elmo.values


def test_a_baseline_stored_before_views_had_one_is_computed_again(corpus, tmp_path):
    m = FakeBilm()
    reference.ReferenceStore(corpus, tmp_path / "cache").baseline(m)
    folder = next((tmp_path / "cache").glob("*/*"))
    old = json.loads((folder / reference.BASELINE_FILE).read_text())
    del old["views"]  # as an earlier version of the app wrote it
    (folder / reference.BASELINE_FILE).write_text(json.dumps(old))
    (folder / reference.GRAMS_FILE).unlink()
    store = reference.ReferenceStore(corpus, tmp_path / "cache")
    assert not store.prepared(m.family, m.source, m.label)
    calls = m.calls
    assert list(store.baseline(m).views) == list(views.CONTEXT_LAYERS) and m.calls > calls
    assert "views" in json.loads((folder / reference.BASELINE_FILE).read_text())


def test_a_baseline_stored_before_poolings_had_one_is_computed_again(corpus, tmp_path):
    m = FakeBilm()
    reference.ReferenceStore(corpus, tmp_path / "cache").baseline(m)
    folder = next((tmp_path / "cache").glob("*/*"))
    old = json.loads((folder / reference.BASELINE_FILE).read_text())
    assert old["mean"] is None  # an ELMo's: its words are single tokens
    del old["mean"]  # as the version before wrote it
    (folder / reference.BASELINE_FILE).write_text(json.dumps(old))
    store = reference.ReferenceStore(corpus, tmp_path / "cache")
    assert not store.prepared(m.family, m.source, m.label)
    calls = m.calls
    store.baseline(m)
    assert m.calls > calls and "mean" in json.loads((folder / reference.BASELINE_FILE).read_text())


def test_self_similarity_from_running_sums_equals_the_cosine_matrix_mean():
    rng = np.random.default_rng(1)
    v = rng.normal(size=(3, 7, 5))  # (N, K, C)
    v[1, 4] = 0.0  # a zero vector: its unit row is zero, its cosines 0
    u = analysis.unit(v)
    np.testing.assert_allclose(analysis.self_similarity_from_sums(u.sum(axis=1), np.einsum("nkc,nkc->n", u, u), 7),
                               analysis.self_similarity(v), rtol=1e-12)
    with pytest.raises(ValueError):
        analysis.self_similarity_from_sums(u[:, 0], np.ones(3), 1)


class FoggyElmo(FakeElmo):
    """Cannot place "bank" in a sentence about fog, as a model cannot place a word past its
    length limit."""

    def run(self, tokens):
        from dataclasses import replace

        out = super().run(tokens)
        cut = [[[] if w == "bank" and "fog" in sent else p for w, p in zip(sent, pos)]
               for sent, pos in zip(tokens, out.word_positions)]
        return replace(out, word_positions=cut)


def test_the_index_pass_leaves_every_words_self_similarity(corpus, tmp_path, monkeypatch):
    # small limits, so that the tiny corpus has frequent words, rare ones and a capped one
    monkeypatch.setattr(reference, "MIN_OCCURRENCES", 2)
    monkeypatch.setattr(reference, "SELF_SIM_CONTEXTS", 4)
    m = FoggyElmo()
    store = reference.ReferenceStore(corpus, tmp_path)
    assert store.self_similarities(m) is None  # no index built yet
    store.index(m, 1)
    table = tmp_path / reference.model_key(m) / corpus.digest[:16] / "self-similarity-first.npz"
    written = table.stat().st_mtime_ns
    store.index(m, 0)  # another layer's pass leaves the table as it is
    assert table.stat().st_mtime_ns == written
    later = reference.ReferenceStore(corpus, tmp_path)  # a later start: the table from disk
    calls = m.calls
    words = sorted({w.casefold() for ws in corpus.words for w in ws}) + ["zebra"]
    looked_up = {w: later.self_similarity(m, w.upper()) for w in words}
    frequent = {w for w in words if len(corpus.containing(w)) >= 2}
    assert m.calls == calls  # a frequent word is a lookup; a rare one needs no run either
    assert frequent == {"bank", "the", "in", "river", "rates"}
    for w, got in looked_up.items():
        want = store._compute_self_similarity(m, w, "first")  # its sentences run together, as before
        assert (got.word, got.contexts, got.used, got.too_rare) == (w.upper(), want.contexts, want.used,
                                                                     want.too_rare), w
        if not want.too_rare:
            np.testing.assert_allclose(got.values, want.values, atol=1e-6, err_msg=w)
    bank = looked_up["bank"]
    assert (bank.contexts, bank.used) == (6, 3)  # 4 sentences taken, "bank" not placed in the foggy one
    assert looked_up["zebra"].contexts == 0 and looked_up["zebra"].too_rare


def test_neighbours_are_the_true_top_k(corpus, tmp_path):
    m = FakeElmo()
    store = reference.ReferenceStore(corpus, tmp_path)
    ix = store.index(m, 1)
    query = m.run([["the", "bank", "raised", "rates"]]).layers[1, 0, 1]
    got = elmo_vs_bert.neighbours(ix, corpus.sentences, query, k=4)
    # brute force: every content word of every sentence, run alone
    cands = []
    for s, sent in enumerate(corpus.sentences):
        out = m.run([sent.split()])
        for w, word in enumerate(sent.split()):
            if reference.content_word(word):
                cands.append((analysis.cosine(out.layers[1, 0, w], query), s, word))
    want = sorted(cands, key=lambda c: -c[0])[:4]
    assert [(n.sentence, n.word) for n in got] == [(s, w) for _, s, w in want]
    np.testing.assert_allclose([n.cosine for n in got], [c for c, _, _ in want], atol=2e-3)  # float16 storage
    first = got[0]
    assert first.before + first.word + first.after == corpus.sentences[first.sentence]
    assert elmo_vs_bert.same_word(got, first.word.upper()) == sum(w.casefold() == first.word.casefold()
                                                                  for _, _, w in want)


def test_same_word_counts_the_uses_of_the_word_itself():
    found = [elmo_vs_bert.Neighbour(0.9, 0, w, "", "") for w in ("Bank", "bank", "banks", "river")]
    assert elmo_vs_bert.same_word(found, "bank") == 2 and elmo_vs_bert.same_word(found, "river") == 1
    assert elmo_vs_bert.same_word([], "bank") == 0


def test_principal_plane_is_the_projection_on_the_top_two_directions():
    rng = np.random.default_rng(4)
    # rows that vary along axis 2 (widely) and axis 4, uncorrelated, and along nothing else
    wide = rng.normal(size=40)
    wide -= wide.mean()
    narrow = rng.normal(size=40)
    narrow -= narrow.mean() + wide * (narrow @ wide) / (wide @ wide)
    x = 3.0 + np.outer(5 * wide / wide.std(), np.eye(6)[2]) + np.outer(2 * narrow / narrow.std(), np.eye(6)[4])
    coords, explained = analysis.principal_plane(x)
    centred = x - x.mean(axis=0)
    np.testing.assert_allclose(np.abs(coords[:, 0]), np.abs(centred[:, 2]), atol=1e-9)  # the widest direction first
    np.testing.assert_allclose(np.abs(coords[:, 1]), np.abs(centred[:, 4]), atol=1e-9)
    np.testing.assert_allclose(explained, [25 / 29, 4 / 29])
    total = np.sum(centred ** 2)
    np.testing.assert_allclose(explained, [np.sum(coords[:, 0] ** 2) / total, np.sum(coords[:, 1] ** 2) / total])
    assert explained[0] > explained[1] and explained.sum() <= 1
    assert coords[-1, 0] <= 0 and coords[-1, 1] <= 0  # the last row on the negative side of both
    flipped, _ = analysis.principal_plane(x, orient=0)
    assert flipped[0, 0] <= 0 and flipped[0, 1] <= 0
    np.testing.assert_allclose(np.abs(flipped), np.abs(coords))  # the same plane, turned
    coarse, kept = analysis.principal_plane(x, least=3.0)  # a spread of 2 along axis 4 counts as none
    np.testing.assert_allclose(coarse[:, 0], coords[:, 0])
    np.testing.assert_allclose(kept, [25 / 29, 0])
    assert not coarse[:, 1].any()
    same, none = analysis.principal_plane(np.ones((5, 3)))  # no spread: every row at the origin
    assert not same.any() and not none.any()
    line, shares = analysis.principal_plane(np.outer(np.arange(4.0), [1.0, 2.0]))  # one direction only
    assert not line[:, 1].any() and shares.tolist() == [1.0, 0.0]
    with pytest.raises(ValueError):
        analysis.principal_plane(np.ones(3))


def test_use_map_places_the_corpus_uses_of_a_word_and_yours(corpus, tmp_path):
    m = FakeElmo()
    store = reference.ReferenceStore(corpus, tmp_path)
    ix = store.index(m, 1)
    out = m.run([["the", "Bank", "raised", "rates"], ["we", "sat", "on", "the", "river", "bank"]])
    a, b = out.layers[1, 0, 1], out.layers[1, 1, 5]
    got = elmo_vs_bert.use_map(ix, corpus, "BANK", a, b, fewest=2)
    uses = [(s, w) for s, sent in enumerate(corpus.sentences) for w, word in enumerate(sent.split()) if word == "bank"]
    assert list(zip(got.sentences, got.words)) == uses  # every use of the word, case aside, and nothing else
    assert got.points.shape == (len(uses), 2) and got.yours.shape == (2, 2) and got.layer_name == "context"
    # the plane of the unit vectors (stored as float16): distances between uses survive
    rows = [int(np.flatnonzero((ix.rows == s) & (ix.words == w))[0]) for s, w in uses]
    units = np.vstack([ix.unit[rows].astype(np.float64), analysis.unit(np.stack([a, b]))])
    coords, explained = analysis.principal_plane(units, orient=len(rows))
    np.testing.assert_allclose(np.vstack([got.points, got.yours]), coords)
    np.testing.assert_allclose(got.explained, explained)
    assert got.yours[0, 0] <= 0  # A's use on the left, whatever the layer
    assert elmo_vs_bert.use_map(ix, corpus, "bank", a, b, fewest=len(uses) + 1) is None  # too few uses
    # a context-free layer gives every use one vector: no spread, only float16 rounding
    flat = elmo_vs_bert.use_map(store.index(m, 0), corpus, "bank", out.layers[0, 0, 1], out.layers[0, 1, 5], fewest=2)
    assert not flat.points.any() and not flat.yours.any() and not flat.explained.any()
    assert elmo_vs_bert.use_map(ix, corpus, "zebra", a, b, fewest=1) is None


def test_a_corpus_line_keeps_the_sentences_synset_and_headword(tmp_path):
    slope = Synset("bank.n.01", ("bank",), (25,), "sloping land (especially the slope beside a body of water)")
    money = Synset("depository_financial_institution.n.01", ("depository financial institution", "bank"), (0, 20),
                   "a financial institution that accepts deposits")
    line = reference_corpus.corpus_line("he cashed a check at the bank", money, "bank")
    assert line == ("he cashed a check at the bank\tdepository_financial_institution.n.01\tbank\t"
                    "depository_financial_institution:0 bank:20\ta financial institution that accepts deposits")
    assert reference_corpus.parse_line(line) == ("he cashed a check at the bank", money, "bank")
    assert reference_corpus.corpus_line("the bank  was closed") == "the bank  was closed"
    assert reference_corpus.parse_line("the bank  was closed\n") == ("the bank was closed", None, "")  # no known sense
    with pytest.raises(ValueError, match="5 tab-separated columns sentence, synset, headword, lemmas, gloss"):
        reference_corpus.parse_line("the bank\tbank.n.01\tbank")
    with pytest.raises(ValueError, match="lemmas as bank:25"):
        reference_corpus.parse_line("the bank\tbank.n.01\tbank\tbank=25\tsloping land")
    path = tmp_path / "corpus.tsv"
    path.write_text("# a comment\n" + "\n".join([
        reference_corpus.corpus_line("they pulled the canoe up on the bank", slope, "bank"),
        "she sat on the bank of the river",
        reference_corpus.corpus_line("that bank holds the mortgage on my home", money, "bank")]) + "\n")
    corpus = reference.load_corpus(str(path))
    assert corpus.sentences[1] == "she sat on the bank of the river" and len(corpus.sentences) == 3
    assert corpus.synsets == (slope, None, money) and corpus.headwords == ("bank", "", "bank")


def test_the_shipped_corpus_keeps_each_sentences_synset():
    corpus = reference.load_corpus(str(reference_corpus.CORPUS_FILE))
    assert len(corpus.sentences) == 4000 and None not in corpus.synsets
    assert all(h in s.lemmas for s, h in zip(corpus.synsets, corpus.headwords))  # the headword: one of its lemmas
    of = dict(zip(corpus.sentences, zip(corpus.synsets, corpus.headwords)))
    # WordNet 3.0's names and tag counts, as NLTK gives them (wn.lemma("bank.n.01.bank").count() == 25)
    assert of["they pulled the canoe up on the bank"] == (
        Synset("bank.n.01", ("bank",), (25,), "sloping land (especially the slope beside a body of water)"), "bank")
    money, head = of["he cashed a check at the bank"]
    assert money.name == "depository_financial_institution.n.01" and money.tag_count("bank") == 20 and head == "bank"
    assert of["the pilot had to bank the aircraft"][0].name == "bank.v.01"
    assert of["the coin bank was empty"][1] == "coin bank"  # the lemma the sentence uses, a phrase here
    # with the sentences written for the project (at the end), eight uses of each of bank's two commonest senses
    uses = [i for i in corpus.containing("bank") for w in corpus.words[i] if w == "bank"]
    legend = senses.sense_legend("bank", [corpus.synsets[i] for i in uses], [corpus.headwords[i] for i in uses])
    assert [(e.label, e.uses) for e in legend.legend[:2]] == [("bank.n.01", 8),
                                                              ("depository_financial_institution.n.01", 8)]
    assert corpus.sentences[-1] == "a teller at the bank counted the notes twice"


WORDNET = Path("/usr/share/wordnet")


@pytest.mark.skipif(not (WORDNET / "cntlist.rev").is_file(), reason="needs Debian's wordnet-base installed")
def test_the_build_tool_makes_the_shipped_corpus(tmp_path):
    out = tmp_path / "corpus.tsv"
    subprocess.run([sys.executable, str(ROOT / "tools" / "build_reference_corpus.py"), "--wordnet", str(WORDNET),
                    "--out", str(out)], check=True, capture_output=True)
    assert out.read_bytes() == reference_corpus.CORPUS_FILE.read_bytes()


def test_the_use_map_gives_each_use_the_sense_of_its_sentences_synset(tmp_path):
    """A use of "bank" in an example of a sense of "bank" has that sense; one in an example of
    another word's sense (sit.v.01, deposit.v.02), or of none, has no known sense."""
    slope = Synset("bank.n.01", ("bank",), (25,), "sloping land")
    money = Synset("depository_financial_institution.n.01", ("depository financial institution", "bank"), (0, 20),
                   "a financial institution")
    put_in = Synset("deposit.v.02", ("deposit", "bank"), (2, 0), "put into a bank account")
    sit = Synset("sit.v.01", ("sit",), (200,), "be seated")
    rows = [("the bank raised rates", money, "bank"), ("we sat on the river bank", sit, "sit"),
            ("fish swim near the bank", slope, "bank"), ("she deposited cash at the bank", put_in, "deposit"),
            ("the bank closed early", money, "bank"), ("a bank of the river", None, ""),
            ("banks and the bank", slope, "bank")]
    path = tmp_path / "corpus.tsv"
    path.write_text("\n".join(reference_corpus.corpus_line(*r) for r in rows) + "\n")
    corpus = reference.load_corpus(str(path))
    m = FakeElmo()
    ix = reference.ReferenceStore(corpus, tmp_path / "cache").index(m, 1)
    out = m.run([["the", "bank"], ["the", "bank"]])
    got = elmo_vs_bert.use_map(ix, corpus, "bank", out.layers[1, 0, 1], out.layers[1, 1, 1], fewest=2)
    assert got.sentences == [0, 1, 2, 3, 4, 5, 6]  # "banks" is another word: one use in the last sentence
    assert [(e.label, e.tag_count, e.uses) for e in got.senses.legend] == [
        ("bank.n.01", 25, 2), ("depository_financial_institution.n.01", 20, 2), ("sense not known", 0, 3)]
    assert got.senses.of_use == (1, 2, 0, 2, 1, 2, 0)


def test_in_context_cuts_long_sides_at_a_space():
    sentence = "one two three four five six seven bank eight nine ten eleven twelve thirteen"
    before, word, after = elmo_vs_bert.in_context(sentence, 7, room=12)
    assert word == "bank" and before == "… six seven " and after == " eight nine …"
    assert elmo_vs_bert.in_context("the bank", 1) == ("the ", "bank", "")  # short sides stay whole
    assert elmo_vs_bert.in_context(sentence, 7, room=None) == (sentence[:34], "bank", sentence[38:])  # whole


def test_memory_budget_drops_the_least_recent_layer(corpus, tmp_path):
    m = FakeElmo()
    store = reference.ReferenceStore(corpus, tmp_path, budget=1)
    store.index(m, 0)
    store.index(m, 1)
    assert len(store._indices) == 1 and store.memory_bytes > 0


def test_model_key_follows_the_weights(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "weights.bin").write_bytes(b"1234")
    m = FakeElmo()
    m.source = str(folder)
    first = reference.model_key(m)
    (folder / "weights.bin").write_bytes(b"123456")
    assert reference.model_key(m) != first


def test_most_wrong_says_what_each_pair_is_ranked_against():
    # best layer 1: same-sense cosines 0.9, 0.3; different-sense 0.8, 0.2, 0.35
    cos = np.array([[0.1, 0.9], [0.1, 0.3], [0.1, 0.8], [0.1, 0.2], [0.1, 0.35]])
    labels = np.array([1, 1, 0, 0, 0])
    pairs = [(w, f"{w} one", f"{w} two", int(lab)) for w, lab in zip("abcde", labels)]
    t = elmo_vs_bert.SenseTest("m", "m", ["x", "y"], elmo_vs_bert.depth(2), np.array([0.5, 0.7]), cos, labels, pairs,
                          best=1, wrong=[2, 1, 4])
    got = elmo_vs_bert.most_wrong(t)
    assert [(w.word, w.sentence_1, w.sentence_2, w.same_sense) for w in got] == [
        ("c", "c one", "c two", False), ("b", "b one", "b two", True), ("e", "e one", "e two", False)]
    assert [w.cosine for w in got] == [0.8, 0.3, 0.35]
    # c (different, 0.8) is at or above one same-sense pair of two (0.3); b (same, 0.3) at or
    # below two different-sense pairs of three (0.8, 0.35); e (different, 0.35) above 0.3
    assert [w.against for w in got] == [0.5, pytest.approx(2 / 3), 0.5]
    assert [w.why for w in got] == ["at or above 50% of same-sense pairs", "at or below 67% of different-sense pairs",
                                    "at or above 50% of same-sense pairs"]


def test_sense_test_scores_and_ranks_the_wrong_pairs():
    labels = np.array([1, 1, 0, 0])
    np.testing.assert_allclose(elmo_vs_bert.wrongness(np.array([0.9, 0.2, 0.5, 0.1]), labels), [0, 0.5, 0.5, 0])
    pairs = [("bank", "the bank rose", "bank loans", 1), ("bank", "the bank rose", "river bank", 0),
             ("bat", "a bat flew", "bat swung", 0), ("bat", "a bat flew", "the bat flew", 1)]
    m = FakeElmo()
    sentences = list(dict.fromkeys(s for p in pairs for s in p[1:3]))
    out = m.run([s.split() for s in sentences])

    def auc(scores, labels):  # Mann-Whitney, ties half: the test's own reference
        pos, neg = scores[labels == 1], scores[labels == 0]
        return ((pos[:, None] > neg).sum() + 0.5 * (pos[:, None] == neg).sum()) / (len(pos) * len(neg))

    t = elmo_vs_bert.sense_test(out, sentences, pairs, auc)
    assert t.cosines.shape == (4, 2) and t.auc[0] == pytest.approx(auc(t.cosines[:, 0], t.labels))
    assert t.best == int(np.argmax(t.auc))
    assert all(elmo_vs_bert.wrongness(t.cosines[:, t.best], t.labels)[i] > 0 for i in t.wrong)
    curve = elmo_vs_bert.model_curve(m.run([["the", "bank"], ["a", "bank"]]), (0, 1), (1, 1), "first", np.zeros(2))
    p = elmo_vs_bert.placed(t, curve)
    assert p.cosine == curve.cosine[t.best]
    assert p.above_same == np.mean(t.cosines[t.labels == 1, t.best] < p.cosine)
    groups = elmo_vs_bert.at_best(t)
    assert sorted(groups["same sense"][1]) == ["bank", "bat"] and len(groups["different sense"][0]) == 2


def test_the_sense_test_run_in_batches_equals_one_run_of_every_sentence():
    pairs = [("bank", "the bank rose", "bank loans", 1), ("bank", "the bank rose", "river bank", 0),
             ("bat", "a bat flew", "bat swung", 0), ("bat", "a bat flew", "the bat flew", 1),
             ("bat", "a bat flew", "no such word here", 1)]  # a pair it cannot place is left out
    sentences = list(dict.fromkeys(s for p in pairs for s in p[1:3]))
    m = FakeElmo()
    whole = elmo_vs_bert.sense_test(m.run([s.split() for s in sentences]), sentences, pairs, senses_auc)
    for batch in (1, 2, 3, 8):
        m.calls = 0
        t = elmo_vs_bert.run_sense_test(m, pairs, senses_auc, batch=batch)
        assert m.calls == -(-len(sentences) // batch)  # one model call per batch
        np.testing.assert_array_equal(t.cosines, whole.cosines)
        np.testing.assert_array_equal(t.auc, whole.auc)
        assert (t.pairs, t.best, t.wrong, t.layer_names) == (whole.pairs, whole.best, whole.wrong, whole.layer_names)
    assert len(whole.pairs) == 4
    with pytest.raises(ValueError, match="too few sense pairs"):
        elmo_vs_bert.run_sense_test(m, pairs[:1], senses_auc)


def senses_auc(scores, labels):
    pos, neg = scores[labels == 1], scores[labels == 0]
    return ((pos[:, None] > neg).sum() + 0.5 * (pos[:, None] == neg).sum()) / (len(pos) * len(neg))


def test_quiz_question_comes_from_the_numbers():
    q = quiz.least_alike(("bank", "bank"), {"BERT": (["emb", "l1", "l2"], [0.9, 0.3, 0.5])})
    assert q.right == "l1" and "the two “bank”s" in q.text and q.choices == ("emb", "l1", "l2")
    q2 = quiz.least_alike(("bank", "river"), {"BERT": (["emb", "l1"], [0.9, 0.3]), "ELMo": (["w", "top"], [0.8, 0.1])})
    assert q2.right == "ELMo · top" and len(q2.choices) == 4 and "“river” (sentence B)" in q2.text
    with pytest.raises(ValueError):
        quiz.least_alike(("a", "b"), {"M": (["x"], [0.1, 0.2])})


def test_baseline_command_prints_layers_and_self_similarities(tmp_path, monkeypatch, capsys):
    from lab.__main__ import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES) + "\n")
    monkeypatch.setenv("LAB_REFERENCE_CORPUS", str(corpus))
    monkeypatch.setenv("LAB_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["baseline", "--model", "elmo", "--words", "bank", "zebra"]) == 0
    out = capsys.readouterr().out
    assert "8 sentences" in out and "ELMo-mini" in out
    names = [INPUT_LAYER, "lstm_outputs1", "lstm_outputs2"]
    rows = [line.split() for line in out.splitlines() if line.startswith(tuple(names))]
    assert [next(n for n in names if " ".join(r).startswith(n)) for r in rows] == names
    assert all(r[-2] == "too" and r[-1] == "rare" for r in rows)  # zebra: not in the corpus
    assert "bank 6 of 6" in out and "zebra 0 of 0" in out
    assert "neighbour index" not in out
    views_line = next(line for line in out.splitlines() if line.startswith("baselines of views: "))
    assert re.fullmatch(r"baselines of views: context-only 1 -?\d\.\d{3}, context-only 2 -?\d\.\d{3}", views_line)
    # --index: the top layer's index and the self-similarity table, which then answers
    assert main(["baseline", "--model", "elmo", "--index", "--words", "bank"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"neighbour index of lstm_outputs2, \d+ words .* self-similarity of 2 words", out), out
    store = reference.ReferenceStore(reference.load_corpus(str(corpus)), tmp_path / "cache")
    from lab.models.elmo_io import load_elmo

    table = store.self_similarities(load_elmo("embedded"))
    assert set(table.rows) == {"bank", "the"} and "bank 6 of 6" in out  # the words in 5 sentences or more


def test_a_word_bert_cannot_place_says_why(embedded_bert):
    # "bank🏦" is one unknown piece to BERT, spanning the word and the emoji: no piece of its own
    out = elmo_vs_bert.align(embedded_bert.run(["I went to the bank🏦 today.", "We sat on the river bank."]))
    w = out.words[0].index("bank")
    assert not out.positions(0, w)
    with pytest.raises(ValueError, match="read it together with the characters next to it as one token"):
        elmo_vs_bert.model_curve(out, (0, w), (1, 5), "first", np.zeros(len(out.layer_names)))
    # past BERT's 510 pieces: cut off
    out = elmo_vs_bert.align(embedded_bert.run([" ".join(["word"] * 600) + " bank", "bank"]))
    assert not out.positions(0, 600)
    with pytest.raises(ValueError, match="cut off at the model's length limit"):
        elmo_vs_bert.model_curve(out, (0, 600), (1, 0), "first", np.zeros(len(out.layer_names)))
