"""The Class board and Join pages, headless with AppTest: the teacher's form and links, the
projector's maps and separation against lab's own numbers, the student's answers, and the
teacher key kept out of every page but the teacher's."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from lab import figures
from lab.board import analysis, rules
from lab.board.store import BoardStore
from lab.models.elmo_io import load_elmo
from lab.tokenize import split_words
from tests.conftest import ROOT
from tests.specs import chart_keyed, values

SENTENCES = [
    ("The bank raised interest rates again.", "money"),
    ("We sat on the river bank at dusk.", "river"),
    ("I paid the cheque into my bank account.", "money"),
    ("Fish rest near the muddy bank of the stream.", "river"),
    ("The bank lends money to small firms.", "money"),
    ("Reeds grew thick along the bank.", "river"),
    ("Her bank closed the branch in town.", None),
]


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A board database of this test's own (the pages open the same one: LAB_DATA_DIR)."""
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("LAB_BOARD_DB", raising=False)
    monkeypatch.setenv("LAB_PUBLIC_URL", "http://lab.test")  # AppTest has no browser address
    s = BoardStore()
    yield s
    s.dispose()


def page(name: str, **params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / f"{name}.py"), default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def new_board(store, hold=False):
    return store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded", hold=hold)


def fill(store, board, sentences=SENTENCES):
    return [store.submit(board.id, text, sense, browser=f"b{i}", token=f"t{i}").entry
            for i, (text, sense) in enumerate(sentences)]


def texts_of(at) -> str:
    """Everything the page shows as text or data, and every chart's JSON."""
    parts = [str(getattr(e, "value", "")) for e in at.main] + [str(getattr(e, "value", "")) for e in at.sidebar]
    parts += [e.proto.spec for e in at.get("plotly_chart")]
    parts += [c.value for c in at.code] + [m.value for m in at.markdown]
    return "\n".join(parts)


def param(at, name):
    v = at.query_params.get(name)
    return v[0] if isinstance(v, list) else v


def map_ids(at, family) -> dict[str, list[int]]:
    """The dots of a board map: trace name -> sentence ids."""
    spec = chart_keyed(at, f"board_map_{family}")
    return {t["name"]: [int(i) for i in values(t["customdata"])] for t in spec["data"]
            if t.get("customdata") is not None and len(t["customdata"])}


def test_the_teacher_makes_a_board_and_keeps_the_key_out_of_the_address_bar(store):
    at = page("board")
    at.pills(key="_board_preset").set_value("bank").run()
    assert at.text_input(key="_board_word").value == "bank"
    assert at.text_input(key="_board_senses").value == "money, river"
    at.button(key="_board_create").click().run()
    assert not at.exception
    code = param(at, "board")
    board = store.find(code)
    assert board is not None and board.word == "bank" and board.senses == ("money", "river")
    assert "key" not in at.query_params
    teacher = [c.value for c in at.code if "key=" in c.value]
    assert len(teacher) == 1 and f"board={code}" in teacher[0]
    key = teacher[0].split("key=")[1]
    assert store.is_teacher(board.id, key) and len(key) >= 22  # 128 bits or more, URL-safe
    assert any(c.value.endswith(f"/join?code={code}") for c in at.code)
    assert at.get("imgs") or at.get("image")  # the QR code
    assert at.header[0].value == "Moderation"


@pytest.mark.parametrize("word, senses, message", [
    ("river bank", "", "one word"),
    ("bank", "money", "Give 2 to 4 different sense names, or none (you gave 1)"),
    ("bank", "a, b, c, d, e", "Give 2 to 4 different sense names, or none (you gave 5)"),
])
def test_a_board_that_cannot_be_made_says_why(store, word, senses, message):
    at = page("board")
    at.text_input(key="_board_word").input(word)
    at.text_input(key="_board_senses").input(senses)
    at.button(key="_board_create").click().run()
    assert not at.exception
    assert message in " ".join(e.value for e in at.error)
    assert not param(at, "board")


def test_the_projector_draws_every_visible_use_in_its_senses_colour(store):
    board, _ = new_board(store)
    entries = fill(store, board)
    at = page("board", board=board.code)
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Sentences on the board"] == "7" and metrics["With a sense"] == "6"
    for family in ("bert", "elmo"):
        dots = map_ids(at, family)
        assert dots["money"] == [e.id for e in entries if e.sense == "money"]
        assert dots["river"] == [e.id for e in entries if e.sense == "river"]
        assert dots["not sure"] == [entries[-1].id]  # named as the join page offers it
    assert not at.header or "Moderation" not in [h.value for h in at.header]
    assert not at.get("arrow_data_frame") and not at.get("data_editor")


def map_coords(at, family) -> dict[int, tuple[float, float]]:
    """The dots of a board map: sentence id -> (x, y) as drawn."""
    spec = chart_keyed(at, f"board_map_{family}")
    return {int(i): (float(x), float(y)) for t in spec["data"] if t.get("customdata") is not None
            for i, x, y in zip(values(t["customdata"]), values(t["x"]), values(t["y"]))}


def assert_same_maps(a, b) -> None:
    for family in ("bert", "elmo"):
        one, other = map_coords(a, family), map_coords(b, family)
        assert sorted(one) == sorted(other), family
        np.testing.assert_allclose([one[i] for i in sorted(one)], [other[i] for i in sorted(one)], atol=1e-6,
                                   rtol=0, err_msg=family)


def test_every_projector_draws_the_board_s_map_and_so_does_a_restarted_server(store):
    """A projector that watched the sentences arrive one by one, a second one (or a reload)
    opened afterwards, and one on a server that restarted (its caches empty: the vectors
    read again in one batch, the map replayed) draw the same coordinates, at every layer."""
    import streamlit as st

    board, _ = new_board(store)
    watcher = page("board", board=board.code)
    for i, (text, sense) in enumerate(SENTENCES):
        store.submit(board.id, text, sense, browser=f"b{i}", token=f"t{i}")
        watcher.run()
        assert not watcher.exception
    second = page("board", board=board.code)
    assert_same_maps(watcher, second)
    st.cache_resource.clear()  # a restarted server: nothing kept in this process
    restarted = page("board", board=board.code)
    assert_same_maps(watcher, restarted)
    assert len(map_coords(restarted, "elmo")) == len(SENTENCES)
    for at in (watcher, restarted):  # the layer below, and ELMo's input layer
        at.select_slider(key="_w_board_layer_bert").set_value(5)
        at.select_slider(key="_w_board_layer_elmo").set_value(0).run()
    assert_same_maps(watcher, restarted)


def test_the_maps_name_their_layers_keep_one_scale_and_say_when_the_dots_coincide(store):
    board, _ = new_board(store)
    fill(store, board)
    at = page("board", board=board.code)
    elmo = chart_keyed(at, "board_map_elmo")
    assert elmo["layout"]["title"]["text"] == "ELMo layer 2 (second LSTM)"
    assert chart_keyed(at, "board_map_bert")["layout"]["title"]["text"] == "BERT layer 6"
    slider = at.select_slider(key="_w_board_layer_elmo")
    assert slider.options == ["input layer", "layer 1 (first LSTM)", "layer 2 (second LSTM)"]
    top_range = elmo["layout"]["xaxis"]["range"], elmo["layout"]["yaxis"]["range"]
    assert not elmo["layout"].get("annotations")
    slider.set_value(0).run()
    bottom = chart_keyed(at, "board_map_elmo")
    assert bottom["layout"]["title"]["text"] == "ELMo input layer"
    assert (bottom["layout"]["xaxis"]["range"], bottom["layout"]["yaxis"]["range"]) == top_range  # one scale
    (note,) = bottom["layout"]["annotations"]
    assert "At the input layer every “bank” is the same vector" in note["text"]
    assert len(set(map_coords(at, "elmo").values())) == 1  # every dot on one point


def test_the_separation_chart_plots_labs_aucs(store, embedded_bert):
    board, _ = new_board(store)
    entries = fill(store, board)
    at = page("board", board=board.code)
    spec = chart_keyed(at, "board_separation")
    texts, uses = [e.text for e in entries], [e.use_index for e in entries]
    senses = [e.sense for e in entries]
    runs = {"BERT": analysis.use_vectors(embedded_bert.run(texts), uses),
            "ELMo": analysis.use_vectors(load_elmo("embedded").run([split_words(t) for t in texts]), uses)}
    for name, vectors in runs.items():
        expected = analysis.separation(vectors, senses, [str(i) for i in range(len(vectors))]).auc
        (trace,) = [t for t in spec["data"] if t.get("name", "").startswith(name)]
        np.testing.assert_allclose(values(trace["y"]), expected, atol=1e-6)
    assert all(0.0 <= v <= 1.0 for t in spec["data"] for v in values(t["y"]))
    y_title = spec["layout"]["yaxis"]["title"]["text"].replace("<br>", " ")
    assert y_title == "How often a money sentence and a river sentence are told apart"
    # one title, the chart's: no heading repeats it
    assert analysis.told_apart(["money", "river"])[0] in " ".join(c.value for c in at.caption)
    assert figures.SEPARATION_TITLE not in [h.value for h in at.subheader]


def test_too_few_labelled_sentences_say_how_many_more(store):
    board, _ = new_board(store)
    fill(store, board, SENTENCES[:3])  # money 2, river 1
    at = page("board", board=board.code)
    assert "3 more sentences with a sense are needed" in " ".join(i.value for i in at.info)
    assert not [c for c in at.get("plotly_chart") if c.key == "board_separation"]


def test_quiz_mode_asks_before_the_separation_chart(store):
    board, _ = new_board(store)
    fill(store, board)
    at = page("board", board=board.code, quiz="1")
    assert "sorted most like our senses" in " ".join(m.value for m in at.markdown)
    assert not [c for c in at.get("plotly_chart") if c.key == "board_separation"]
    at.button(key="_quiz_reveal_board").click().run()
    assert [c for c in at.get("plotly_chart") if c.key == "board_separation"]


def test_the_teacher_link_opens_moderation_and_hiding_leaves_the_maps(store):
    board, key = new_board(store)
    entries = fill(store, board)
    at = page("board", board=board.code, key=key)
    assert not at.exception and "key" not in at.query_params
    assert param(at, "board") == board.code
    assert "Moderation" in [h.value for h in at.header]
    store.set_hidden(board.id, key, entries[0].id, True)
    at.run()
    assert entries[0].id not in sum(map_ids(at, "bert").values(), [])
    assert {m.label: m.value for m in at.metric}["Sentences on the board"] == "6"


def test_a_wrong_key_gives_the_projector_view_only(store):
    board, key = new_board(store)
    fill(store, board)
    at = page("board", board=board.code, key=key[:-2] + "xx")
    assert not at.exception and "key" not in at.query_params
    assert "does not belong to this board" in " ".join(w.value for w in at.warning)
    assert "Moderation" not in [h.value for h in at.header]
    assert key not in texts_of(at)


def test_the_key_is_on_no_projector_or_student_page(store):
    board, key = new_board(store)
    fill(store, board)
    for at in (page("board", board=board.code), page("join", code=board.code)):
        assert not at.exception
        assert key not in texts_of(at)
        assert key not in json.dumps(dict(at.query_params))


def test_html_in_a_sentence_stays_text(store):
    board, key = new_board(store)
    fill(store, board, [('<b>bank</b> <img src=x onerror="alert(1)"> by the river', "river")])
    at = page("board", board=board.code)
    spec = chart_keyed(at, "board_map_bert")
    hover = json.dumps([t.get("text") for t in spec["data"]])
    assert "<img" not in hover and "&lt;img" in hover and "<b>" not in hover


def test_an_unknown_board_says_so(store):
    at = page("board", board="ACEFHK")
    assert "No board has the code" in " ".join(w.value for w in at.warning)
    assert at.button(key="_board_create")


# --- the student's page ---------------------------------------------------------------------


def submit(at, text, sense=None):
    at.text_area[0].input(text)
    if sense is not None:
        at.radio[0].set_value(sense)
    return at.button[0].click().run()


def answers(at) -> tuple[list[str], list[str]]:
    return [s.value for s in at.success], [e.value for e in at.error]


def test_a_student_joins_and_submits(store):
    board, _ = new_board(store)
    at = page("join", code=board.code)
    assert not at.exception
    assert "Write a sentence with “bank”" in at.markdown[0].value
    assert at.radio[0].options == ["money", "river", "not sure"]
    assert at.text_area[0].max_chars == rules.MAX_CHARS  # the box stops longer text (the store refuses it too)
    submit(at, "We sat on the river bank.", "river")
    assert answers(at) == (["Accepted: your sentence is number 1 on the board."], [])
    (entry,) = store.entries(board.id)
    assert (entry.text, entry.sense, split_words(entry.text)[entry.use_index]) == ("We sat on the river bank.",
                                                                                  "river", "bank")
    submit(at, "The banks' vaults were full.", "not sure")
    assert answers(at)[0] == ["Accepted: your sentence is number 2 on the board."]
    assert store.entries(board.id)[1].sense is None
    assert not at.get("plotly_chart")  # a student's page computes no maps


@pytest.mark.parametrize("text, reason", [
    ("We sat on the riverbank.", "does not use “bank” as a word"),
    ("   ", "Your sentence is empty"),
])
def test_a_refused_sentence_says_why(store, text, reason):
    board, _ = new_board(store)
    at = page("join", code=board.code)
    submit(at, text)
    ok, errors = answers(at)
    assert not ok and len(errors) == 1 and reason in errors[0]
    assert store.entries(board.id) == []


def test_a_closed_board_takes_no_sentences(store):
    board, key = new_board(store)
    store.set_open(board.id, key, False)
    at = page("join", code=board.code)
    assert "closed this board" in " ".join(w.value for w in at.warning)
    assert not at.text_area


def test_too_many_from_one_browser(store):
    board, _ = new_board(store)
    at = page("join", code=board.code)
    for i in range(rules.PER_MINUTE):
        submit(at, f"Bank number {i} is by the river.")
        assert answers(at)[0], answers(at)
    submit(at, "One more bank.")
    ok, errors = answers(at)
    assert not ok and f"You sent {rules.PER_MINUTE} sentences in the last minute" in errors[0]
    assert len(store.entries(board.id)) == rules.PER_MINUTE


def test_a_held_sentence_waits_for_approval(store):
    board, key = new_board(store, hold=True)
    at = page("join", code=board.code)
    submit(at, "The bank was closed.")
    assert "waits for the teacher's approval" in answers(at)[0][0]
    projector = page("board", board=board.code)
    assert {m.label: m.value for m in projector.metric}["Sentences on the board"] == "0"


def test_a_wrong_code_says_so_and_asks_again(store):
    at = page("join", code="ACEFHK")
    assert "No open board has the code" in answers(at)[1][0]
    assert at.text_input[0].label == "Board code"


def test_a_retry_after_a_lost_answer_is_not_stored_twice(store):
    """A server that stored a sentence and restarted before answering: the student's page
    reconnects (a new session, the same address and cookie) and sends it again."""
    board, _ = new_board(store)
    first = AppTest.from_file(str(ROOT / "app_pages" / "join.py"), default_timeout=300)
    first.query_params["code"] = board.code
    first.run()
    token = param(first, "sub")
    assert token, "the submission's token is in the page's address"
    store.submit(board.id, "We sat by the bank.", "river", browser="s:one-browser", token=token)  # no answer
    again = AppTest.from_file(str(ROOT / "app_pages" / "join.py"), default_timeout=300)
    again.query_params["code"], again.query_params["sub"] = board.code, token
    again.session_state["_browser_id"] = "one-browser"  # the same browser (its cookie, in a browser)
    again.run()
    submit(again, "We sat by the bank.", "river")
    assert answers(again) == (["Accepted: your sentence is number 1 on the board."], [])
    assert len(store.entries(board.id)) == 1
    assert param(again, "sub") != token  # the next submission gets a token of its own
    # the same retry with other text: the earlier one is named, and this one sent on request
    store.submit(board.id, "The bank paid interest.", "money", browser="s:one-browser", token=param(again, "sub"))
    submit(again, "A heron stood on the bank.", "river")
    ok, errors = answers(again)
    assert not ok and "reached the board as number 2" in errors[0] and "The bank paid interest." in errors[0]
    submit(again, "A heron stood on the bank.", "river")
    assert answers(again)[0] == ["Accepted: your sentence is number 3 on the board."]
    assert [e.text for e in store.entries(board.id)][-1] == "A heron stood on the bank."
