"""The Lesson page in a real browser: each step's button opens its view in a new tab (a new
session, which sets the view up from the link alone, as the README's link would)."""

from urllib.parse import parse_qsl, urlsplit

import pytest

from lab.lesson import DEMOS
from tests.browser import wait_idle

pytestmark = pytest.mark.browser


def test_a_step_opens_its_view_in_a_new_tab_whatever_this_tab_holds(app_server, page):
    page.goto(f"{app_server}/lesson")
    page.wait_for_selector("text=One sentence looks at the other")
    wait_idle(page)
    page.get_by_label("Sentence A").fill("Money in the bank.")  # this tab's own sentences
    page.get_by_label("Sentence A").press("Control+Enter")
    page.wait_for_function("location.search.includes('a=Money')")
    buttons = page.locator('[data-testid="stLinkButton"] a')
    assert [(buttons.nth(i).get_attribute("href"), buttons.nth(i).get_attribute("target"))
            for i in range(buttons.count())] == [(d.path, "_blank") for d in DEMOS]
    demo = next(d for d in DEMOS if dict(d.params).get("att_mask") == "0")
    with page.context.expect_page() as opened:
        buttons.nth(DEMOS.index(demo)).click()
    view = opened.value
    view.set_default_timeout(120_000)
    view.locator('[data-testid="stAlert"]', has_text="Mask off:").wait_for()  # the notice the demo points at
    wait_idle(view)
    url = urlsplit(view.url)
    assert url.path == f"/{demo.page}"
    assert dict(demo.params).items() <= dict(parse_qsl(url.query)).items()  # kept (the page adds what it picks)
    assert view.get_by_label("Sentence A").input_value() != "Money in the bank."  # the link's view, not this tab's
    assert page.url.startswith(f"{app_server}/lesson")  # the plan of the lesson stays open
