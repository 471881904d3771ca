"""The class board's downloads (lab.board.exports): the CSV and each model's .npz hold the
same rows, hidden and held sentences included, with the word's token positions, within the
export contract of ``python -m lab export``."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from lab.board import exports, rules
from lab.board.store import Entry
from lab.tokenize import split_words
from tests.specs import vectors_file

T0 = 1_800_000_000.0  # 2027-01-15 08:00:00 UTC
WORD = "spelunking"  # BERT reads it in four pieces: sp ##el ##unk ##ing
SENTENCES = [  # (text, sense, hidden, approved)
    ("Spelunking is fun in summer.", "caves", False, True),
    ('=HYPERLINK("http://x") we went spelunking <img src=x onerror=alert(1)>', None, True, True),
    ("+44 said Spelunking's hard.", "sport", False, False),
    ("@bank -1 spelunking again", None, False, True),
]


def entries() -> list[Entry]:
    return [Entry(id=10 + i, number=i + 1, text=rules.clean_sentence(text), sense=sense,
                  use_index=rules.find_use(rules.clean_sentence(text), WORD), created=T0 + 60 * i, hidden=hidden,
                  approved=approved)
            for i, (text, sense, hidden, approved) in enumerate(SENTENCES)]


@pytest.fixture(scope="module")
def runs(embedded_bert):
    from lab.models.elmo_io import load_elmo

    texts = [e.text for e in entries()]
    return {"bert": embedded_bert.run(texts), "elmo": load_elmo("embedded").run([split_words(t) for t in texts])}


def read_csv(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))


@pytest.mark.parametrize("family", ["bert", "elmo"])
def test_the_npz_rows_are_the_csvs(runs, family):
    rows = entries()
    out = runs[family]
    z = vectors_file(exports.npz_bytes(out, rows, WORD, "Europe/Paris"), out, extra=exports.BOARD_KEYS)
    table = read_csv(exports.csv_bytes(rows, "Europe/Paris"))
    assert len(table) == len(z["number"]) == len(z["tokens"]) == len(SENTENCES)  # hidden and held too
    assert z["number"].dtype == np.int32 and z["number"].tolist() == [int(r["number"]) for r in table] == [1, 2, 3, 4]
    assert z["sentence"].tolist() == [e.text for e in rows]
    assert [r["sentence"].removeprefix("'") for r in table] == [e.text for e in rows]
    assert z["sense"].tolist() == [r["sense"] for r in table] == ["caves", "", "sport", ""]
    assert z["time"].tolist() == [r["time"] for r in table]
    assert table[0]["time"] == "2027-01-15T09:00:00+01:00"  # the date, and the teacher's offset
    assert z["hidden"].dtype == bool and z["hidden"].tolist() == [r["hidden"] == "yes" for r in table]
    assert z["held"].tolist() == [r["held"] == "yes" for r in table] == [False, False, True, False]
    assert z["hidden"].tolist() == [False, True, False, False]
    assert str(z["word"]) == WORD


def test_the_word_span_holds_the_words_tokens(runs):
    rows = entries()
    for family, pieces in [("bert", ["sp", "##el", "##unk", "##ing"]), ("elmo", None)]:
        z = exports.arrays(runs[family], rows, WORD)
        span = z["word_span"]
        assert span.dtype == np.int32 and span.shape == (len(rows), 2)
        for b, (first, last) in enumerate(span):
            tokens = z["tokens"][b, first:last + 1].tolist()
            if family == "bert":  # all the word's pieces, and only them: "Spelunking's" is one word
                assert tokens == pieces + (["'", "s"] if b == 2 else [])
            else:  # ELMo reads words: one position, the word as written
                assert first == last and tokens[0] == split_words(rows[b].text)[rows[b].use_index]
                assert tokens[0].casefold().startswith(WORD)


def test_a_word_the_model_has_no_token_for_spans_minus_one(runs):
    spans = exports.word_spans(runs["elmo"], [0, 99, 1, 2])  # row 1 has no word 99
    assert spans[1].tolist() == [-1, -1] and (spans[[0, 2, 3]] >= 0).all()
    with pytest.raises(ValueError, match="3 uses for 4 rows"):
        exports.word_spans(runs["elmo"], [0, 1, 2])


def test_a_run_of_other_sentences_is_refused(runs):
    with pytest.raises(ValueError, match="not the board's"):
        exports.arrays(runs["bert"], entries()[:3], WORD)


def test_markup_and_formulas_stay_text_in_the_csv():
    table = read_csv(exports.csv_bytes(entries()))
    assert [r["sentence"][:2] for r in table] == ["Sp", "'=", "'+", "'@"]
    assert "<img src=x onerror=alert(1)>" in table[1]["sentence"]  # text, for a spreadsheet as for a reader
    assert table[0]["time"] == "2027-01-15T08:00:00+00:00"  # no zone given: UTC, with its offset
