"""lab.senses: the sense pairs as data, ROC AUC, the best-layer rules, anisotropy."""

import numpy as np
import pytest

from lab import senses
from lab.tokenize import split_words


def test_the_pairs_are_data_in_lab():
    words = senses.senses()
    assert len(words) == 12 and all(len(by_sense) == 2 for by_sense in words.values())
    pairs = senses.sense_pairs()
    labels = [same for *_, same in pairs]
    assert len(pairs) == 72 and sum(labels) == 24
    for word, a, b, _ in pairs:
        assert word in a.lower() and word in b.lower()


def test_the_dev_pairs_are_other_words_in_the_same_layout():
    test, dev = senses.senses(), senses.senses(senses.DEV_PAIRS_FILE)
    assert len(dev) == 12 and not set(dev) & set(test)  # choosing on them leaves the test pairs unseen
    assert all(len(by_sense) == 2 and all(len(s) == 2 for s in by_sense.values()) for by_sense in dev.values())
    pairs = senses.sense_pairs(senses.DEV_PAIRS_FILE)
    assert len(pairs) == 72 and sum(same for *_, same in pairs) == 24
    for word, a, b, _ in pairs:  # the word once per sentence, as layer_vectors finds it
        for s in (a, b):
            assert [w.lower() for w in split_words(s)].count(word) == 1, (word, s)
    assert senses.sense_pairs() != pairs and len(senses.sense_pairs()) == 72


def test_roc_auc():
    assert senses.roc_auc([0.9, 0.8, 0.1, 0.2], [1, 1, 0, 0]) == 1.0
    assert senses.roc_auc([0.1, 0.2, 0.9, 0.8], [1, 1, 0, 0]) == 0.0
    assert senses.roc_auc([0.5, 0.5], [1, 0]) == 0.5
    assert senses.roc_auc([0.3, 0.9, 0.5], [1, 1, 0]) == 0.5


def test_best_layers():
    by_layer = {"word_emb": 0.5, "lstm_outputs1": 0.7, "lstm_outputs2": 0.6, "elmo": 0.72,
                "context1": 0.81, "context2": 0.79}
    assert senses.best_sense_auc(by_layer) == 0.72  # word_emb and the context views do not count
    assert senses.best_context_auc(by_layer) == 0.81
    assert senses.best_layer(by_layer, senses.CONTEXT) == "context1"
    assert (senses.SENSE_AUC_TARGET, senses.CONTEXT_AUC_TARGET) == (0.75, 0.80)


def test_anisotropy():
    same = [np.array([[1.0, 0.0], [2.0, 0.0]]), np.array([[3.0, 0.0]])]
    assert senses.anisotropy(same, 50) == pytest.approx(1.0)
    opposite = [np.array([[1.0, 0.0]]), np.array([[-1.0, 0.0]])]
    assert senses.anisotropy(opposite, 50) == pytest.approx(-1.0)  # pairs never take both tokens from one sentence
    rng = np.random.default_rng(1)
    spread = [rng.normal(size=(5, 64)) for _ in range(30)]
    assert abs(senses.anisotropy(spread)) < 0.05
    assert senses.anisotropy(spread, seed=3) == senses.anisotropy(spread, seed=3)
    with pytest.raises(ValueError):
        senses.anisotropy([np.ones((3, 2))])


def test_row_cosines():
    a = np.array([[1.0, 0.0], [0.0, 0.0]])
    b = np.array([[1.0, 1.0], [1.0, 0.0]])
    np.testing.assert_allclose(senses.row_cosines(a, b), [1 / np.sqrt(2), 0.0])
