"""The shipped ELMo-mini: files, size, held-out perplexity, and word senses by context."""

import numpy as np
import pytest

from lab.models.elmo_io import ASSETS, ElmoRunner, HubElmoRunner, embedded_metrics, load_elmo
from lab.tokenize import split_words
from tests.elmo_pairs import SENSES, layer_aucs, roc_auc, sense_pairs


@pytest.fixture(scope="module")
def mini():
    return load_elmo("embedded")


def test_roc_auc_helper():
    assert roc_auc([0.9, 0.8, 0.1, 0.2], [1, 1, 0, 0]) == 1.0
    assert roc_auc([0.1, 0.2, 0.9, 0.8], [1, 1, 0, 0]) == 0.0
    assert roc_auc([0.5, 0.5], [1, 0]) == 0.5


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
    pairs = sense_pairs()
    labels = [same for *_, same in pairs]
    assert len(SENSES) >= 10 and sum(labels) >= 20 and len(pairs) - sum(labels) >= 20
    aucs = layer_aucs(mini)
    print("ROC AUC by layer:", {k: round(v, 3) for k, v in aucs.items()})
    return aucs


def test_sense_pair_aucs_are_the_recorded_ones(sense_aucs):
    assert sense_aucs["word_emb"] == 0.5  # context-free: every pair of one word has cosine 1
    recorded = embedded_metrics()["sense_pair_auc"]["by_layer"]
    for name, value in recorded.items():
        assert abs(sense_aucs[name] - value) < 1e-6, name


@pytest.mark.xfail(
    strict=False,
    reason="Known shortfall (issue #3): ELMo-mini, trained ~30 min on 2 CPU cores on WordNet "
    "text, ranks these pairs at ROC AUC 0.57 at its best layer; eight training designs tried on "
    "this machine (up to an hour; sense classes in the text, word dropout) stayed "
    "between 0.48 and 0.64 (MODEL_CARD.md). Its vectors follow local syntax more than sense.",
)
def test_best_layer_separates_senses(sense_aucs):
    assert max(sense_aucs["lstm_outputs1"], sense_aucs["lstm_outputs2"]) >= 0.75
