"""A page and a section that fail, in a real browser: the app's message, never Streamlit's
error box (its traceback, file paths, "Ask Google" and "Ask ChatGPT"); the server's log
keeps the tracebacks."""

import pytest

from tests.browser import serve_app, wait_idle
from ui import errors

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def failing_server(tmp_path_factory):
    """tests/failing_page.py served as serve.py serves the app (tests/failing_server.py, with
    the repo's .streamlit/config.toml); yields (base URL, server log)."""
    with serve_app(tmp_path_factory, script="tests/failing_server.py") as srv:
        yield srv.url, srv.log


def assert_only_the_apps_message(page, count: int) -> None:
    """The page (its run over) shows the app's message ``count`` times and nothing of a failure's own."""
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.locator('[data-testid="stAlert"]', has_text=errors.MESSAGE).count() == count
    assert page.get_by_role("button", name="Ask").count() == 0
    assert page.get_by_role("link", name="Ask").count() == 0
    text = page.locator("body").inner_text()
    assert not [leak for leak in ("Traceback", "/srv/lab", "Error", "secret") if leak in text], text


def test_a_failing_page_and_section_show_the_apps_message(failing_server, page):
    url, log = failing_server
    page.goto(url)
    page.wait_for_selector("text=The page goes on after its section.")
    wait_idle(page)
    assert_only_the_apps_message(page, 1)

    page.get_by_role("button", name="Break this section").click()  # the section alone reruns, and fails
    page.wait_for_selector("text=The section is drawn.", state="detached")
    wait_idle(page)
    assert_only_the_apps_message(page, 2)
    assert page.get_by_text("The page goes on after its section.").is_visible()

    page.get_by_role("button", name="Break a callback").click()  # the server's handler (serve.py) reports it
    wait_idle(page)
    assert_only_the_apps_message(page, 1)

    server_log = log.read_text(errors="replace")
    assert server_log.count("Traceback (most recent call last)") >= 3
    assert "KeyError: '/srv/lab/secret_callback.json'" in server_log
    assert "FileNotFoundError: /srv/lab/secret_model/saved_model.pb" in server_log
    assert "ZeroDivisionError: division by zero in /srv/lab/secret_section.py" in server_log
