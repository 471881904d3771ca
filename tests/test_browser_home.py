"""The home page in a real browser, reached by its URL path as well as by `/`."""

import pytest

from tests.browser import wait_idle
from ui.pages import PAGES

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


@pytest.mark.parametrize("proj", ["0", "1"])
def test_every_page_is_described_in_full(app_server, page, proj):
    # a page link's label is one line cut off at its column's edge: each description is text
    # of its own beside its link, where it wraps (that no text is cut off, in projector mode's
    # large type too, is test_browser_layout's test_no_text_is_cut_off)
    page.goto(f"{app_server}/?proj={proj}")
    page.wait_for_selector(f"text={HOME_TEXT}")
    wait_idle(page)
    for p in PAGES:
        if not p.default:
            assert page.get_by_role("link", name=p.title).last.is_visible()
            text = page.get_by_text(p.blurb, exact=True)
            assert text.count() == 1 and text.is_visible(), p.blurb
