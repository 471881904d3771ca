"""The shipped ELMo-mini: files, size, held-out perplexity, and word senses by context."""

import numpy as np
import pytest

from lab.models.elmo_io import ASSETS, ElmoRunner, HubElmoRunner, load_elmo
from lab.sources import embedded_metrics
from lab.tokenize import split_words
from lab import senses
from lab.elmo_training.record import BANK_PAIR, COMMON_WORDS, word_vectors


@pytest.fixture(scope="module")
def mini():
    return load_elmo("embedded")


def test_the_embedded_files_are_there_and_small():
    for name in ("options.json", "weights.hdf5", "metrics.json", "MODEL_CARD.md", "saved_model/saved_model.pb"):
        assert (ASSETS / name).is_file(), name
    size = sum(p.stat().st_size for p in (ASSETS / "saved_model").rglob("*") if p.is_file())
    assert size <= 30 * 2**20
    total = sum(p.stat().st_size for p in ASSETS.rglob("*") if p.is_file())
    assert total <= 40 * 2**20


def test_embedded_runner(mini):
    assert isinstance(mini, ElmoRunner) and mini.supports_state
    assert mini.label.startswith("ELMo-mini (embedded, trained here")
    info = mini.info()
    assert info["parameters"] == embedded_metrics()["parameters"]
    assert mini.mix_weights is None  # no downstream task: the mix is uniform, not learned
    out = mini.run([split_words("The bank raised its rates.")])
    assert out.elmo.elmo.shape == (1, 6, 256) and out.elmo.word_emb.shape == (1, 6, 128)


def test_shipped_saved_model_matches_the_in_memory_model(mini):
    hub_runner = load_elmo(str(ASSETS / "saved_model"))
    assert isinstance(hub_runner, HubElmoRunner)
    tokens = [split_words("He sat on the bank of the river."), split_words("Banks lend money.")]
    a, b = mini.run(tokens), hub_runner.run(tokens)
    np.testing.assert_allclose(a.layers, b.layers, atol=1e-5)
    np.testing.assert_allclose(a.elmo.default, b.elmo.default, atol=1e-5)


def test_heldout_perplexity_beats_unigram_clearly():
    m = embedded_metrics()
    print(f"held-out perplexity: forward {m['ppl_forward']:.1f}, backward {m['ppl_backward']:.1f}, "
          f"unigram {m['ppl_unigram']:.1f}")
    assert m["corpus"]["held_out_tokens"] > 10_000
    assert m["ppl_forward"] < 0.5 * m["ppl_unigram"]
    assert m["ppl_backward"] < 0.5 * m["ppl_unigram"]
    card = (ASSETS / "MODEL_CARD.md").read_text()
    assert f"{m['ppl_forward']:.1f}" in card and f"{m['ppl_unigram']:.1f}" in card


@pytest.fixture(scope="module")
def sense_aucs(mini) -> dict[str, float]:
    aucs = senses.layer_aucs(mini)
    print("ROC AUC by layer:", {k: round(v, 3) for k, v in aucs.items()})
    return aucs


def test_sense_pair_aucs_are_the_recorded_ones(sense_aucs):
    assert sense_aucs["word_emb"] == 0.5  # context-free: every pair of one word has cosine 1
    recorded = embedded_metrics()["sense_pair_auc"]
    assert set(recorded["by_layer"]) == set(senses.LAYERS) and recorded["pairs"] == 72
    for name, value in recorded["by_layer"].items():
        assert abs(sense_aucs[name] - value) < 1e-6, name
    assert recorded["best_standard"]["auc"] == senses.best_sense_auc(recorded["by_layer"])
    assert recorded["best_context"]["auc"] == senses.best_context_auc(recorded["by_layer"])


def test_beats_the_earlier_versions(sense_aucs):
    assert senses.best_sense_auc(sense_aucs) > 0.679  # v2's best standard output (v1: 0.567)
    assert senses.best_context_auc(sense_aucs) > 0.694  # v2's best context-only view


def test_best_layers_separate_senses(sense_aucs):
    """A floor against regressions. ELMo-mini v3 ships short of the targets
    (``senses.SENSE_AUC_TARGET`` / ``CONTEXT_AUC_TARGET``) and stands as shipped, so its best
    standard output and its best context-only view must rank the 72 sense pairs no worse
    than 0.01 below v3's figures (0.692 and 0.745, its model card). The figures are written
    here, not read from ``metrics.json``: a retrained model ships its own metrics, and a
    worse one must fail here."""
    assert senses.best_sense_auc(sense_aucs) >= 0.692 - 0.01  # v3's lstm_outputs2
    assert senses.best_context_auc(sense_aucs) >= 0.745 - 0.01  # v3's context2


# Written for this test before the model was trained: (word, closer, farther).
TRIPLES = [
    ("river", "stream", "money"),
    ("dog", "cat", "music"),
    ("king", "queen", "water"),
    ("money", "cash", "tree"),
    ("red", "blue", "run"),
    ("doctor", "nurse", "river"),
    ("car", "truck", "flower"),
    ("happy", "glad", "stone"),
    ("music", "song", "disease"),
    ("city", "town", "animal"),
]


def test_word_emb_has_meaning(mini):
    words = sorted({w for t in TRIPLES for w in t})
    v = dict(zip(words, word_vectors(mini, words)))
    cos = lambda a, b: float(v[a] @ v[b] / np.linalg.norm(v[a]) / np.linalg.norm(v[b]))  # noqa: E731 - a one-line helper
    failed = [(w, c, f, round(cos(w, c), 3), round(cos(w, f), 3)) for w, c, f in TRIPLES if cos(w, c) <= cos(w, f)]
    assert not failed


def test_recorded_meaning_figures():
    m = embedded_metrics()
    an = m["anisotropy"]
    assert an["pairs"] == 1000 and set(an["elmo_mini"]) == set(senses.LAYERS)
    assert list(an["bert"]) == ["embeddings"] + [f"layer {i}" for i in range(1, 7)]
    assert all(-1 <= x <= 1 for x in list(an["elmo_mini"].values()) + list(an["bert"].values()))
    assert list(m["neighbours"]) == list(COMMON_WORDS) and all(len(n) == 5 for n in m["neighbours"].values())
    bank = m["bank_pair"]
    assert (bank["sentence_a"], bank["sentence_b"], bank["word"]) == BANK_PAIR
    assert bank["best_standard"]["layer"] == m["sense_pair_auc"]["best_standard"]["layer"]
    assert bank["best_context"]["layer"] == m["sense_pair_auc"]["best_context"]["layer"]
    card = (ASSETS / "MODEL_CARD.md").read_text()
    assert "learned only from the language-modelling" in card and "Anisotropy" in card
    assert f"{bank['best_context']['cosine']:.3f}" in card


def test_the_card_is_written_from_the_recorded_figures(tmp_path):
    """The shipped card is exactly what the card writer makes of the shipped metrics.json:
    no figure typed by hand, and no template text left unfilled."""
    from lab.elmo_training.record import write_model_card

    write_model_card(tmp_path, embedded_metrics())
    written = (tmp_path / "MODEL_CARD.md").read_text()
    assert written == (ASSETS / "MODEL_CARD.md").read_text()
    assert "{" not in written and "}" not in written


def test_recorded_bank_pair_is_the_model_s(mini):
    bank = embedded_metrics()["bank_pair"]
    got = senses.word_cosines(mini, *BANK_PAIR)
    for name, value in bank["cosine_by_layer"].items():
        assert abs(got[name] - value) < 1e-5, name
