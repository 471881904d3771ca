"""A lesson step's link on a 1024x768 projector: its first screen holds what the step is
about, with the sidebar open or closed. In quiz mode (the lesson's links) that is the
quiz's question, which stands where the figure will be; without it, the figure's top edge."""

import pytest

from lab.lesson import DEMOS
from tests.browser import wait_idle

pytestmark = pytest.mark.browser

SCREEN = {"width": 1024, "height": 768}
# the steps whose page puts its figure first on a projector (``ui.frame.page_header`` and
# ``section_before_figure``); the attention page's steps still open with other sections
# above their figure, and the board's has no figure until the class has sent sentences
FIGURE_FIRST = [d for d in DEMOS if d.page in ("bert", "elmo")]


def _first_screen_top(browser, url: str, sidebar: str, selector: str) -> float:
    """The top edge, in px from the top of the window, of ``selector``'s first element once
    ``url`` is drawn at 1024x768 (sidebar ``open`` or ``closed``), before any scrolling."""
    context = browser.new_context(viewport=SCREEN)
    page = context.new_page()
    page.set_default_timeout(120_000)
    try:
        page.goto(url)
        target = page.locator(selector).first
        target.wait_for()
        wait_idle(page)
        if sidebar == "closed":
            page.hover('[data-testid="stSidebar"]')
            page.locator('[data-testid="stSidebarCollapseButton"] button').click()
            wait_idle(page)
        return target.bounding_box()["y"]
    finally:
        context.close()


@pytest.mark.parametrize("sidebar", ["open", "closed"])
@pytest.mark.parametrize("demo", FIGURE_FIRST, ids=lambda d: d.title)
def test_a_lesson_link_opens_with_its_question_on_the_first_screen(app_server, browser, demo, sidebar):
    assert ("quiz", "1") in demo.params
    top = _first_screen_top(browser, f"{app_server}/{demo.path}", sidebar, "text=Quiz:")
    assert top < SCREEN["height"], f"the quiz's question starts at {top:.0f} px, below the first screen"


@pytest.mark.parametrize("sidebar", ["open", "closed"])
@pytest.mark.parametrize("demo", FIGURE_FIRST, ids=lambda d: d.title)
def test_without_the_quiz_the_figure_is_on_the_first_screen(app_server, browser, demo, sidebar):
    path = demo.path.replace("quiz=1", "quiz=0")
    top = _first_screen_top(browser, f"{app_server}/{path}", sidebar, '[data-testid="stPlotlyChart"]')
    assert top < SCREEN["height"], f"the figure starts at {top:.0f} px, below the first screen"
