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


def test_roc_auc_equals_counting_every_pair():
    """The rank-sum AUC is the share of (positive, negative) pairs a positive wins, ties half."""
    rng = np.random.default_rng(0)
    for n in (5, 40, 301):
        scores = rng.integers(0, 12, n) / 4.0  # many ties
        labels = rng.integers(0, 2, n)
        labels[:2] = (0, 1)
        pos, neg = scores[labels == 1], scores[labels == 0]
        counted = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (
            len(pos) * len(neg))
        assert senses.roc_auc(scores, labels) == pytest.approx(counted, abs=1e-12)


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


# --- the senses of a word's uses (the use maps) ----------------------------------------------------

SLOPE = senses.Synset("bank.n.01", ("bank",), (25,), "sloping land")
MONEY = senses.Synset("depository_financial_institution.n.01",
                      ("depository financial institution", "bank", "banking concern"), (0, 20, 0),
                      "a financial institution")
PUT_IN = senses.Synset("deposit.v.02", ("deposit", "bank"), (2, 0), "put into a bank account")
SIT = senses.Synset("sit.v.01", ("sit", "sit down"), (200, 3), "be seated")
PIGGY = senses.Synset("savings_bank.n.02", ("savings bank", "coin bank", "bank"), (0, 0, 0), "a container for money")


def test_a_use_has_its_sentences_synset_only_where_the_word_is_its_headword():
    assert senses.known_sense("bank", SLOPE, "bank") is SLOPE
    assert senses.known_sense("Bank", MONEY, "bank") is MONEY  # case-blind
    for inflected in ("banks", "banked", "banking"):
        assert senses.known_sense(inflected, SLOPE, "bank") is SLOPE
    # "he sat on the bank": an example of sit.v.01, whose lemmas hold no "bank"
    assert senses.known_sense("bank", SIT, "sit") is None
    assert senses.known_sense("sat", SIT, "sit") is None  # an irregular form is no plain inflection
    # "she deposited her salary at the bank": "bank" is a lemma of deposit.v.02, but the headword is "deposit"
    assert senses.known_sense("bank", PUT_IN, "deposit") is None
    assert senses.known_sense("deposited", PUT_IN, "deposit") is PUT_IN
    assert senses.known_sense("bank", PIGGY, "coin bank") is None  # a word inside a phrase: not the phrase's sense
    assert senses.known_sense("bankrupt", SLOPE, "bank") is None and senses.known_sense("ban", SLOPE, "bank") is None
    assert senses.known_sense("bank", None, "") is None  # a sentence of no known synset
    assert senses.known_sense("bank", SLOPE, "river") is None  # a headword that is none of its lemmas
    assert senses.forms("Bank") == {"bank", "banks", "bankes", "bankd", "banked", "banking"}
    assert MONEY.tag_count("Bank") == 20 and PUT_IN.tag_count("deposit") == 2


def test_the_legend_names_the_most_tagged_senses_first_and_groups_the_rest():
    more = [senses.Synset(f"bank.n.0{n}", ("bank",), (c,), f"sense {n}") for n, c in ((3, 2), (4, 1), (5, 1), (6, 0))]
    synsets = [SIT, more[0], SLOPE, MONEY, None, more[2], more[1], more[1], MONEY, more[3], PUT_IN, SLOPE]
    heads = ["sit", "bank", "bank", "bank", "", "bank", "bank", "bank", "bank", "bank", "deposit", "bank"]
    got = senses.sense_legend("bank", synsets, heads)
    # by tag count: bank.n.01 (25), the financial one (20), bank.n.03 (2); then bank.n.04 and bank.n.05 tie
    # at 1 and bank.n.04, with two uses, is named; bank.n.05 and bank.n.06 are "other sense"
    assert [(e.label, e.tag_count, e.uses) for e in got.legend] == [
        ("bank.n.01", 25, 2), ("depository_financial_institution.n.01", 20, 2), ("bank.n.03", 2, 1),
        ("bank.n.04", 1, 2), (senses.OTHER_SENSE, 1, 2), (senses.UNKNOWN_SENSE, 0, 3)]
    assert got.legend[0].gloss == "sloping land" and got.legend[0].synset is SLOPE
    assert [e.named for e in got.legend] == [True] * 4 + [False, False]
    assert [e.known for e in got.legend] == [True] * 5 + [False]
    assert got.of_use == (5, 2, 0, 1, 5, 4, 3, 3, 1, 4, 5, 0)
    # fewer senses than names: no "other sense"; every use known: no "sense not known"
    two = senses.sense_legend("banks", [MONEY, SLOPE, SLOPE], ["bank"] * 3)
    assert [e.label for e in two.legend] == ["bank.n.01", "depository_financial_institution.n.01"]
    assert two.of_use == (1, 0, 0)
    one = senses.sense_legend("bank", synsets, heads, named=1)
    assert [(e.label, e.uses) for e in one.legend] == [("bank.n.01", 2), (senses.OTHER_SENSE, 7),
                                                       (senses.UNKNOWN_SENSE, 3)]
    assert senses.sense_legend("bank", [], []).legend == ()
