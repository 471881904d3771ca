"""The Class board page, headless with AppTest: the teacher's form and links, the
projector's maps and separation against lab's own numbers, the students' view, and the
teacher key kept out of every page but the teacher's. (The students' join page is a plain
form: tests/test_join_route.py.)"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from lab import figures
from lab.board import links, maps
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


def drawn(element) -> str:
    """What an element draws: its value, an HTML element's without its scripts."""
    text = str(getattr(element, "value", ""))
    return re.sub(r"<script\b.*?</script>", "", text, flags=re.S) if element.type == "html" else text


def texts_of(at) -> str:
    """Everything the page shows as text or data, and every chart's JSON."""
    parts = [drawn(e) for e in at.main] + [drawn(e) for e in at.sidebar]
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
    assert "key" not in at.query_params and param(at, "board_view") == "teacher"
    (key,) = at.session_state["_board_keys"].values()
    assert store.is_teacher(board.id, key) and len(key) >= 22  # 128 bits or more, URL-safe
    # the teacher link is never drawn: a copy button, a file to save, both folded away
    assert key not in texts_of(at)
    (panel,) = [e for e in at.get("expander") if e.label.startswith("Teacher link")]
    assert not panel.proto.expanded
    assert [b.proto.label for b in at.get("download_button") if b.proto.id.endswith("_board_save_link")] == [
        "Save the teacher link (.txt)"]
    # the browser is asked, once, to keep the key (the teacher link's route sets the cookie)
    scripts = [h.value for h in at.get("html") if "fetch(" in h.value]
    assert len(scripts) == 1 and f'"/teach" + "?board={code}&key={key}"' in scripts[0]
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
    runs = {"BERT": maps.use_vectors(embedded_bert.run(texts), uses),
            "ELMo": maps.use_vectors(load_elmo("embedded").run([split_words(t) for t in texts]), uses)}
    for name, vectors in runs.items():
        expected = maps.separation(vectors, senses, [str(i) for i in range(len(vectors))]).auc
        (trace,) = [t for t in spec["data"] if t.get("name", "").startswith(name)]
        np.testing.assert_allclose(values(trace["y"]), expected, atol=1e-6)
    assert all(0.0 <= v <= 1.0 for t in spec["data"] for v in values(t["y"]))
    y_title = spec["layout"]["yaxis"]["title"]["text"].replace("<br>", " ")
    assert y_title == "How often a money sentence and a river sentence are told apart"
    # one title, the chart's: no heading repeats it
    assert maps.told_apart(["money", "river"])[0] in " ".join(c.value for c in at.caption)
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


def test_present_turns_the_teachers_tab_into_the_projectors_view_and_back(store):
    """One screen: after *Present* the teacher's tab shows what the projector link shows
    (the hidden and held sentences left out), in projector mode as that link opens, and
    nothing of the teacher's: no key, in any element or script, no teacher link, no
    moderation, no downloads. One click back, projector mode off again."""
    board, key = new_board(store, hold=True)
    entries = fill(store, board)
    for e in entries[:-1]:
        store.approve(board.id, key, e.id)
    store.set_hidden(board.id, key, entries[0].id, True)  # hidden; entries[-1] still held
    at = page("board", board=board.code, key=key)
    assert "Moderation" in [h.value for h in at.header]
    at.button(key="_board_present").click().run()
    assert not at.exception
    assert param(at, "board_view") == "present" and param(at, "board") == board.code
    assert param(at, "proj") == "1" and at.toggle(key="_w_proj").value
    assert "key" not in at.query_params and key not in json.dumps(dict(at.query_params))
    assert "Moderation" not in [h.value for h in at.header]
    assert not at.get("data_editor") and not at.get("download_button") and not at.get("popover")
    assert not [e for e in at.get("expander") if e.label.startswith("Teacher link")]
    assert key not in texts_of(at) and not [h for h in at.get("html") if key in h.value]
    shown = texts_of(at)
    assert entries[0].text not in shown and entries[-1].text not in shown
    dots = sum(map_ids(at, "bert").values(), [])
    assert sorted(dots) == sorted(e.id for e in entries[1:-1])
    projector = page("board", **dict(parse_qsl(urlsplit(links.projector_link("http://lab.test", board.code)).query)))
    assert projector.toggle(key="_w_proj").value  # the projector link opens in projector mode
    assert {m.label: m.value for m in at.metric} == {m.label: m.value for m in projector.metric}
    assert sorted(sum(map_ids(projector, "bert").values(), [])) == sorted(dots)
    # the layer and QR controls stay, as on the projector; the way back is one button
    assert at.button(key="_board_teach").proto.shortcut.upper() == "T"
    at.button(key="_board_teach").click().run()
    assert param(at, "board_view") == "teacher" and "proj" not in at.query_params
    assert not at.toggle(key="_w_proj").value
    assert "Moderation" in [h.value for h in at.header] and at.get("data_editor")


def test_a_teachers_tab_without_its_key_says_how_to_get_control_back(store):
    """A tab whose address says it was the teacher's, in a session and browser without the
    key (a server restart with cookies refused, another browser): the projector's view,
    and what to do."""
    board, key = new_board(store)
    fill(store, board)
    at = page("board", board=board.code, board_view="teacher")
    assert not at.exception
    (warning,) = [w.value for w in at.warning]
    assert "does not hold its teacher key" in warning and "open the teacher link you saved" in warning
    assert "Moderation" not in [h.value for h in at.header] and not at.get("data_editor")
    presenting = page("board", board=board.code, board_view="present")
    assert not presenting.warning  # nothing about keys on the room's screen
    presenting.button(key="_board_teach").click().run()
    assert "does not hold its teacher key" in " ".join(w.value for w in presenting.warning)


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
    for at in (page("board", board=board.code), page("board", board=board.code, view="student")):
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


def test_the_students_view_shows_the_maps_only(store):
    board, key = new_board(store)
    fill(store, board)
    at = page("board", board=board.code, view="student")
    assert not at.exception and not at.metric and not at.get("imgs")  # no counts, no QR code
    assert not any(c.value.endswith(f"/join?code={board.code}") for c in at.code)
    assert map_ids(at, "bert") and map_ids(at, "elmo")
    assert "Moderation" not in [h.value for h in at.header]


def test_an_unknown_board_says_so(store):
    at = page("board", board="ACEFHK")
    assert "No board has the code" in " ".join(w.value for w in at.warning)
    assert at.button(key="_board_create")


