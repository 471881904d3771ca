"""The floor page of bench/click_floor.py, run with AppTest: it draws what the BERT page's
per-layer chart draws (same title, same figure code) for the word its pills select, and
nothing heavier (no model: it must stay a floor)."""

import json

from streamlit.testing.v1 import AppTest

from lab.tokenize import DEFAULT_A
from tests.conftest import ROOT
from tests.specs import values

FLOOR = ROOT / "bench" / "floor_app.py"


def curve_of(at) -> tuple[str, list[float]]:
    (el,) = at.get("plotly_chart")
    spec = json.loads(el.proto.spec)
    assert "Cosine similarity at every layer" in spec["layout"]["title"]["text"]
    (trace,) = spec["data"]
    return trace["name"], values(trace["y"]).tolist()


def test_the_pills_choose_the_word_the_chart_shows():
    at = AppTest.from_file(str(FLOOR), default_timeout=60).run()
    assert not at.exception
    words = DEFAULT_A.split()
    pills = at.button_group[0]
    assert pills.label == "Word in sentence A" and [o.content for o in pills.proto.options] == words
    name, last = curve_of(at)
    assert name == f'A "{words[-1]}"'  # the last word first: a new sentence changes the chart
    at = pills.set_value(1).run()
    name, second = curve_of(at)
    assert name == f'A "{words[1]}"' and second != last and len(second) == 7
    assert second == sorted(second, reverse=True) and second[0] < 1.0  # falling from 1, like a word's
    at = at.button_group[0].set_value(len(words) - 1).run()
    assert curve_of(at) == (f'A "{words[-1]}"', last)  # the same word, the same curve


def test_a_new_sentence_changes_the_pills_and_the_chart():
    at = AppTest.from_file(str(FLOOR), default_timeout=60).run()
    at = at.sidebar.text_area[0].input("We sat on the river bank").run()
    assert [o.content for o in at.button_group[0].proto.options] == ["We", "sat", "on", "the", "river", "bank"]
    assert curve_of(at)[0] == 'A "bank"'


def test_a_shared_links_sentence_sets_the_pills_and_the_chart():
    """``?a=`` opens the floor page on that sentence, as a shared link opens the app's pages
    (bench/click_floor.py times links on both)."""
    at = AppTest.from_file(str(FLOOR), default_timeout=60)
    at.query_params["a"] = "The pilot rested by the river bank"
    at = at.run()
    assert not at.exception
    assert [o.content for o in at.button_group[0].proto.options] == "The pilot rested by the river bank".split()
    assert curve_of(at)[0] == 'A "bank"'
