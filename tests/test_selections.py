"""Single choices that cannot break: every pill row and segmented control of every page is
``required`` (a second click on the selected option keeps it, ``ui.state.choice``), and a
cleared one (a client that sends no selection) falls back to a choice instead of failing."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

# page -> (its query for a view with every control drawn, the word pickers' labels)
PAGES = {
    "bert": ({}, ["Word in sentence A", "Word in sentence B"]),
    "elmo": ({}, ["Word in sentence A", "Word in sentence B"]),
    "attention": ({}, ["Query token"]),
    "compare": ({}, ["Word in sentence A", "Word in sentence B"]),
}


def run_page(name: str, **params) -> AppTest:
    at = AppTest.from_file(str(ROOT / f"app_pages/{name}.py"), default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


@pytest.mark.parametrize("name", PAGES)
def test_every_single_choice_is_required(name):
    at = run_page(name, **PAGES[name][0])
    assert not at.exception
    groups = list(at.button_group)
    assert [g.label for g in groups if g.label in PAGES[name][1]] == PAGES[name][1]
    single = [g for g in groups if g._is_single_select]
    assert single == groups  # the app has no multiple choice
    assert [g.label for g in single if not g.proto.required] == []


@pytest.mark.parametrize("name", ["bert", "elmo", "compare"])
def test_a_cleared_word_picker_falls_back_to_a_word(name):
    at = run_page(name)
    (word_a,) = [p for p in at.pills if p.label == "Word in sentence A"]
    chosen = word_a.value
    assert chosen is not None
    word_a.set_value(None).run()
    assert not at.exception
    (word_a,) = [p for p in at.pills if p.label == "Word in sentence A"]
    assert word_a.value == chosen  # the default word of A, as before
