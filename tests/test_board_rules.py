"""The class board's input rules (lab.board.rules): word use, sentences, codes, keys, CSV."""

from __future__ import annotations

import csv
import datetime as dt
import io

import pytest

from lab.board import rules
from lab.board.rules import Refused, find_use


@pytest.mark.parametrize("text, index", [
    ("The bank raised rates.", 1),
    ("BANK holidays are long.", 0),
    ("Two banks merged.", 1),
    ("The bank's doors opened.", 1),
    ("The bank’s doors opened.", 1),
    ("The banks' doors opened.", 1),  # "banks" "'" "doors"
    ("Both banks’s owners.", 1),
    ("A bank by the bank of the river.", 1),  # twice: the first
])
def test_find_use_accepts_the_word_its_plural_and_possessives(text, index):
    assert find_use(text, "bank") == index


def test_find_use_takes_y_to_ies_after_a_consonant_only():
    assert find_use("Two cities grew.", "city") == 1
    assert find_use("Two city's parks.", "city") == 1
    assert find_use("The keys were lost.", "key") == 1
    with pytest.raises(Refused):
        find_use("Two kies.", "key")  # "key" ends in a vowel and "y": no "ies"


@pytest.mark.parametrize("text", ["We sat on the riverbank.", "The banker smiled.",
                                  "A bank-holiday weekend.", "Bankrupt again.", ""])
def test_find_use_refuses_longer_words_and_compounds(text):
    with pytest.raises(Refused) as caught:
        find_use(text, "bank")
    assert caught.value.reason == "no_word"
    assert "“bank”" in str(caught.value) and "banks" in caught.value.message
    assert str(caught.value) == caught.value.message


def test_clean_sentence_cleans_and_keeps_markup_as_text():
    assert rules.clean_sentence(" The\u200b bank\n\n  <b>closed</b>\u2066. ") == "The bank <b>closed</b>."
    assert rules.clean_sentence("Cafe\u0301 bank") == "Café bank"  # NFC
    assert len(rules.clean_sentence("a" * rules.MAX_CHARS)) == rules.MAX_CHARS


@pytest.mark.parametrize("text, reason", [
    ("", "empty"), ("   \n ", "empty"), ("\u200b\u200d", "empty"), ("123 !!", "empty"),
    ("a" * (rules.MAX_CHARS + 1), "too_long"), (None, "empty"),
])
def test_clean_sentence_refuses(text, reason):
    with pytest.raises(Refused) as caught:
        rules.clean_sentence(text)
    assert caught.value.reason == reason and caught.value.message


def test_code_alphabet_has_no_look_alikes_and_codes_are_long_enough():
    alphabet = rules.CODE_ALPHABET
    assert not set(alphabet) & set("0OQD1IL2Z5S8BUV")
    assert alphabet == alphabet.upper() and alphabet.isalnum() and len(set(alphabet)) == len(alphabet)
    assert 20 <= len(alphabet) <= 30
    assert len(alphabet) ** rules.CODE_LENGTH >= 50_000_000
    codes = {rules.new_code() for _ in range(200)}
    assert len(codes) == 200
    assert all(len(c) == rules.CODE_LENGTH and set(c) <= set(alphabet) for c in codes)


def test_codes_normalise_and_format():
    assert rules.normalise_code("abc-def ") == "ABCDEF"
    assert rules.normalise_code(" a b c – d e f") == "ABCDEF"
    assert rules.normalise_code("0O") == "0O"  # nothing else is mapped
    assert rules.format_code("acefhj") == "ACE-FHJ"
    code = rules.new_code()
    assert rules.normalise_code(rules.format_code(code)) == code


def test_teacher_key_is_long_and_only_its_hash_matches():
    key = rules.new_key()
    assert len(key) * 6 >= 128 and key != rules.new_key()
    stored = rules.key_hash(key)
    assert len(stored) == 64 and key not in stored
    assert rules.key_matches(key, stored)
    assert not rules.key_matches(key + "x", stored)
    assert not rules.key_matches("", stored) and not rules.key_matches(None, stored)
    assert not rules.key_matches(key, None)


def test_clean_word_and_senses():
    assert rules.clean_word("  Bank ") == "bank"
    assert rules.clean_word("o'clock") == "o'clock"
    for bad in ["", "two words", "bank1", "-bank", "a" * (rules.WORD_CHARS + 1), "bank!"]:
        with pytest.raises(ValueError) as caught:
            rules.clean_word(bad)
        assert str(caught.value)
    assert rules.clean_senses([" money ", "", "River", "river", "MONEY"]) == ("money", "River")
    assert rules.clean_senses([]) == () and rules.clean_senses(None) == ()
    for bad in [["one"], ["a", "b", "c", "d", "e"], ["a", "x" * (rules.SENSE_CHARS + 1)]]:
        with pytest.raises(ValueError) as caught:
            rules.clean_senses(bad)
        assert str(caught.value)


def test_presets_are_valid_boards():
    assert {"bank", "bat", "spring", "plant", "light", "rock"} <= set(rules.PRESETS)
    assert rules.PRESETS["bank"] == ("money", "river")
    for word, senses in rules.PRESETS.items():
        assert rules.clean_word(word) == word and rules.clean_senses(senses) == senses


def test_csv_neutralises_formulas_and_reads_back():
    sentences = ['=HYPERLINK("http://x","bank")', "+1 bank", "-2 bank", "@SUM(A1) bank",
                 "\tbank", "\rbank", "＝bank", "The bank, “quoted”, café."]
    rows = [{"number": i + 1, "sentence": s, "sense": "=cmd" if i == 0 else None,
             "time": 1_800_000_000.5, "hidden": i == 1} for i, s in enumerate(sentences)]
    data = rules.csv_bytes(rows)
    assert data.startswith(b"\xef\xbb\xbf")
    read = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    assert list(read[0]) == ["number", "sentence", "sense", "time", "hidden"]
    assert [r["sentence"] for r in read[:7]] == ["'" + s for s in sentences[:7]]
    assert read[7]["sentence"] == sentences[7]  # ordinary text untouched
    assert read[0]["sense"] == "'=cmd" and read[1]["sense"] == ""
    assert read[0]["time"] == "2027-01-15T08:00:00+00:00"
    assert [r["hidden"] for r in read[:2]] == ["no", "yes"]
    assert [r["number"] for r in read] == [str(i + 1) for i in range(len(sentences))]


def test_csv_has_a_held_column_when_rows_have_one():
    data = rules.csv_bytes([{"number": 1, "sentence": "bank", "sense": "money", "time": 0, "hidden": False,
                             "held": True}])
    read = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    assert read == [{"number": "1", "sentence": "bank", "sense": "money", "time": "1970-01-01T00:00:00+00:00",
                     "hidden": "no", "held": "yes"}]
    assert rules.csv_bytes([]).decode("utf-8-sig").strip() == ",".join(rules.CSV_COLUMNS)


def test_limits_are_the_documented_numbers():
    assert (rules.MAX_CHARS, rules.MAX_SENTENCES, rules.PER_MINUTE, rules.PER_BOARD) == (300, 300, 5, 20)
    assert (rules.MIN_SENSES, rules.MAX_SENSES, rules.SENSE_CHARS, rules.WORD_CHARS) == (2, 4, 24, 30)
    assert rules.CODE_LENGTH >= 6


def test_times_carry_their_date_and_offset():
    t = 1_800_000_000.5  # 2027-01-15 08:00:00.5 UTC
    assert rules.iso_time(t) == "2027-01-15T08:00:00+00:00"
    assert rules.iso_time(t, "Europe/Paris") == "2027-01-15T09:00:00+01:00"
    assert rules.iso_time(t, "America/New_York") == "2027-01-15T03:00:00-05:00"
    assert rules.iso_time(t + 183 * 86400, "Europe/Paris") == "2027-07-17T10:00:00+02:00"  # summer time
    assert rules.iso_time(t, "Not/AZone") == rules.iso_time(t, None) == rules.iso_time(t, "")
    assert rules.iso_time(dt.datetime(2027, 1, 15, 8, 0)) == "2027-01-15T08:00:00+00:00"  # naive: UTC
    assert rules.iso_time(None) == "" and rules.iso_time("yesterday") == "yesterday"
    data = rules.csv_bytes([{"number": 1, "sentence": "bank", "time": t, "hidden": False}], "Asia/Kolkata")
    assert "2027-01-15T13:30:00+05:30" in data.decode("utf-8-sig")
