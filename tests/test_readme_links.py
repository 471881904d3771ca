"""The README's lesson is the app's (``lab.lesson``, drawn by the Lesson page): the same steps
and links. Each link opens the view it describes: its page run with the link's query string
shows no error and no warning, keeps every setting of the link, and has the state the
demo's question is about."""

import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from lab.lesson import DEMOS, Demo
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
LESSON = README.split("## A 20-minute lesson", 1)[1].split("\n## ", 1)[0]
LINKS = re.findall(r"\]\((http://localhost:8501/[^)\s]+)\)", README)


def test_the_readme_lesson_is_the_apps():
    assert LINKS == [d.url() for d in DEMOS]  # the README's only app links are the lesson's
    for i, d in enumerate(DEMOS, start=1):
        assert f"{i}. **{d.title}** ({d.minutes} min) —\n   [{d.view}]({d.url()})" in LESSON
        assert f'Ask: *"{d.question}"*' in " ".join(LESSON.split())  # however the README wraps it


def _word(at: AppTest, label: str) -> str:
    (pills,) = [p for p in at.pills if p.label == label]
    return pills.options[pills.value].replace("\u200b", "")


def _bank_in_both(at):
    assert (_word(at, "Word in sentence A"), _word(at, "Word in sentence B")) == ("bank", "bank")


def _bat_in_both(at):
    assert (_word(at, "Word in sentence A"), _word(at, "Word in sentence B")) == ("bat", "bat")


def _mask_off(at):
    assert at.toggle(key="_w_att_mask").value is False
    assert any(e.value.startswith("Mask off") for e in at.error)  # the notice the demo points at


def _pair_a_to_b(at):
    assert at.segmented_control(key="_w_att_mode").value == "pair"
    assert at.segmented_control(key="_w_att_filter").value == "ab"
    assert [p.label for p in at.pills] == ["Query token"]


def _board_to_make(at):
    assert [b.label for b in at.button if b.label == "Create the board"] == ["Create the board"]
    assert at.sidebar.toggle(key="_w_quiz").value is True  # the separation chart will wait behind its question


# what each demo's question is about, by title
STATE = {"One word, two meanings": _bank_in_both, "Characters don't know the context": _bat_in_both,
         "Padding must be masked": _mask_off, "One sentence looks at the other": _pair_a_to_b,
         "The room's own sentences": _board_to_make}


def test_every_demo_has_its_state_check():
    assert set(STATE) == {d.title for d in DEMOS}


@pytest.mark.parametrize("demo", DEMOS, ids=lambda d: d.title)
def test_a_lesson_link_opens_its_view(demo: Demo, monkeypatch, tmp_path):
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path))  # the board page's database: this test's own
    url = urlsplit(demo.url())
    page = url.path.strip("/")
    params = dict(parse_qsl(url.query))
    at = AppTest.from_file(str(ROOT / "app_pages" / f"{page}.py"), default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    problems = [w.value for w in at.warning] + [e.value for e in at.error if not e.value.startswith("Mask off")]
    assert not problems  # (the mask-off demo's red notice is the point of that demo)
    for k, v in params.items():
        assert at.query_params.get(k) == v, f"{k} is not kept"
    assert at.sidebar.toggle(key="_w_proj").value is True  # every demo is shown in projector mode
    STATE[demo.title](at)


def test_a_step_opens_in_quiz_mode_where_its_page_has_a_quiz():
    """The class commits to an answer before it sees one: where a step's page can hide its
    figure behind a question, the step's link turns quiz mode on."""
    for d in DEMOS:
        has_quiz = "quiz_gate.gate(" in (ROOT / "app_pages" / f"{d.page}.py").read_text(encoding="utf-8")
        if d.page == "attention":  # its one question is in the step-by-step section
            has_quiz = any(name.startswith("att_steps_") for name, _ in d.params)
        assert (("quiz", "1") in d.params) == has_quiz, d.title
