"""The home page in a real browser, reached by its URL path as well as by `/`."""

import pytest

from tests.browser import wait_idle

pytestmark = pytest.mark.browser

HOME_TEXT = "A word has one entry in a dictionary"


@pytest.mark.parametrize("path", ["/", "/home"])
def test_home_opens_without_a_page_not_found_dialog(app_server, page, path):
    page.goto(app_server + path)
    page.wait_for_selector(f"text={HOME_TEXT}")
    wait_idle(page)
    assert page.get_by_text("Page not found").count() == 0
    assert page.get_by_role("dialog").count() == 0
    page.wait_for_function("location.pathname === '/'")  # /home lands on the home page's own URL
    # the page links work from there
    page.get_by_role("link", name="BERT WordPiece").first.click()
    page.wait_for_selector("text=Word pieces and model inputs")
