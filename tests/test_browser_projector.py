"""A lesson step's link on a 1024x768 projector: its first screen holds what the step is
about, with the sidebar open or closed. In quiz mode (the lesson's links) that is the
quiz's question, which stands where the figure will be; without it, the figure's top edge."""

import pytest

from lab.lesson import DEMOS
from tests.browser import wait_idle

pytestmark = pytest.mark.browser

SCREEN = {"width": 1024, "height": 768}
# the steps whose page puts its figure first on a projector (``ui.frame.page_header`` and
# ``section_before_figure``; the attention page's tabs); the board's has no figure until the
# class has sent sentences
FIGURE_FIRST = [d for d in DEMOS if d.page in ("bert", "elmo", "attention")]
QUIZ_FIRST = [d for d in FIGURE_FIRST if ("quiz", "1") in d.params]
# the figures the page draws (a projector's other tab holds hidden ones)
FIGURE = '[data-testid="stPlotlyChart"]:visible'


def _first_screen_boxes(browser, url: str, sidebar: str, *selectors: str) -> list[dict]:
    """The bounding boxes (``y`` the top edge, in px from the top of the window) of each of
    ``selectors``' first element once ``url`` is drawn at 1024x768 (sidebar ``open`` or
    ``closed``), before any scrolling."""
    context = browser.new_context(viewport=SCREEN)
    page = context.new_page()
    page.set_default_timeout(120_000)
    try:
        page.goto(url)
        targets = [page.locator(selector).first for selector in selectors]
        for target in targets:
            target.wait_for()
        wait_idle(page)
        if sidebar == "closed":
            page.hover('[data-testid="stSidebar"]')
            page.locator('[data-testid="stSidebarCollapseButton"] button').click()
            wait_idle(page)
        return [target.bounding_box() for target in targets]
    finally:
        context.close()


@pytest.mark.parametrize("sidebar", ["open", "closed"])
@pytest.mark.parametrize("demo", QUIZ_FIRST, ids=lambda d: d.title)
def test_a_lesson_link_opens_with_its_question_and_reveal_on_the_first_screen(app_server, browser, demo, sidebar):
    question, reveal = _first_screen_boxes(browser, f"{app_server}/{demo.path}", sidebar, "text=Quiz:",
                                           'button:has-text("Reveal")')
    top = question["y"]
    assert top < SCREEN["height"], f"the quiz's question starts at {top:.0f} px, below the first screen"
    bottom = reveal["y"] + reveal["height"]
    assert bottom <= SCREEN["height"], f"the Reveal button ends at {bottom:.0f} px, below the first screen"


@pytest.mark.parametrize("sidebar", ["open", "closed"])
@pytest.mark.parametrize("demo", FIGURE_FIRST, ids=lambda d: d.title)
def test_without_the_quiz_the_figure_is_on_the_first_screen(app_server, browser, demo, sidebar):
    path = demo.path.replace("quiz=1", "quiz=0")
    (figure,) = _first_screen_boxes(browser, f"{app_server}/{path}", sidebar, FIGURE)
    top = figure["y"]
    assert top < SCREEN["height"], f"the figure starts at {top:.0f} px, below the first screen"
