"""The Lesson page, run headless with AppTest: the five demos of ``lab.lesson``, each with its
question and a link to exactly the view the README's lesson links to."""

from urllib.parse import parse_qsl, urljoin, urlsplit

from streamlit.testing.v1 import AppTest

from lab.lesson import DEMOS
from tests.conftest import ROOT
from tests.test_readme_links import LINKS

LESSON_URL = "http://localhost:8501/lesson?proj=1"  # where the page is open: its links are relative to it


def run_page(**params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages/lesson.py"), default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def _view(url: str) -> tuple[str, list[tuple[str, str]]]:
    parts = urlsplit(url)
    return parts.path, parse_qsl(parts.query)


def test_four_steps_each_with_its_question():
    at = run_page()
    assert not at.exception
    assert len(DEMOS) == 5
    assert [h.value for h in at.subheader] == [f"{i} · {d.title} ({d.minutes} min)" for i, d in enumerate(DEMOS, 1)]
    asked = [m.value for m in at.markdown if m.value.startswith("**Ask:**")]
    assert asked == [f"**Ask:** *“{d.question}”*" for d in DEMOS]
    # what answers it is folded: on a projector it would give the answer away
    looks = [e for e in at.expander if e.label == "What to look for"]
    assert [e.markdown[0].value for e in looks] == [d.look_for for d in DEMOS]
    assert not any(e.proto.expanded for e in looks)


def test_each_step_opens_the_readme_s_view():
    at = run_page(proj="1")
    links = [b.proto.url for b in at.get("link_button")]
    assert links == [d.path for d in DEMOS]
    # page and query exactly the README's link's, wherever the app is served
    assert [_view(urljoin(LESSON_URL, link)) for link in links] == [_view(link) for link in LINKS]
    assert [_view(urljoin("https://lab.example/course/lesson", link))[0] for link in links] == \
        [f"/course/{d.page}" for d in DEMOS]


def test_the_home_page_has_a_card_for_the_lesson():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception
    assert "lesson" in [link.proto.page for link in at.page_link]


def test_the_fifth_step_is_the_class_board_made_before_class():
    at = run_page()
    assert at.subheader[4].value.startswith("5 · The room's own sentences")
    board = DEMOS[4]
    assert (board.page, dict(board.params)) == ("board", {"quiz": "1", "proj": "1"})
    assert [b.proto.url for b in at.get("link_button")][4] == "board?quiz=1&proj=1"
    before = [m.value for m in at.markdown if "**Before class:**" in m.value]
    assert len(before) == 1 and "*Create the board*" in before[0] and "teacher link" in before[0]
    assert sum(d.minutes for d in DEMOS) == 20  # the lesson is still twenty minutes
