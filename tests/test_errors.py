"""A failure in a page shows the app's own message, never a traceback; the log keeps it (``ui.errors``)."""

import logging
from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui import errors, state

ROOT = Path(__file__).resolve().parents[1]
# what a failure's text and traceback hold that a room must not see
LEAKS = ("Traceback", 'File "', "/srv/lab", "secret", "Error", "Errno", ".py")


def rendered(at: AppTest) -> str:
    """Everything the run sent to draw: every element's and block's protobuf, as text."""
    return "\n".join(str(node.proto) for node in at._tree if getattr(node, "proto", None) is not None)


def assert_nothing_leaks(at: AppTest) -> None:
    text = rendered(at)
    assert errors.MESSAGE in text and not at.exception
    assert not [leak for leak in LEAKS if leak in text], text


def logged(records, *texts: str) -> None:
    """Each of ``records`` (ui.errors's) carries a whole traceback; together they name ``texts``."""
    assert all(record.exc_info for record in records)
    tracebacks = "\n".join(logging.Formatter().formatException(record.exc_info) for record in records)
    assert tracebacks.count("Traceback (most recent call last)") == len(records)
    assert all(text in tracebacks for text in texts), tracebacks


def _failing_view():
    import streamlit as st

    from ui import errors

    st.title("Before")
    with errors.guard():
        raise OSError(2, "No such file or directory", "/srv/lab/secret/saved_model.pb")
    st.markdown("After")


def test_a_failure_shows_the_apps_message_and_logs_its_traceback(caplog, failed_views):
    at = AppTest.from_function(_failing_view).run()
    assert [e.value for e in at.error] == [errors.MESSAGE]
    assert [m.value for m in at.markdown] == ["After"]  # the run goes on after the guarded block
    assert_nothing_leaks(at)
    records = [r for r in caplog.records if r.name == "ui.errors"]
    assert len(records) == 1 and records[0].levelname == "ERROR"
    assert "Traceback (most recent call last)" in caplog.text
    assert "FileNotFoundError: [Errno 2] No such file or directory: '/srv/lab/secret/saved_model.pb'" in caplog.text
    failed_views.clear()


def test_a_page_that_fails_under_app_py_shows_the_apps_message(monkeypatch, failed_views):
    def broken():
        raise KeyError("/srv/lab/secret/state.py")

    monkeypatch.setattr(state, "sync_url", broken)  # the home page's last line
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    assert at.title[0].value == "Context Lab"  # drawn up to where it failed
    assert [e.value for e in at.error] == [errors.MESSAGE]
    assert_nothing_leaks(at)
    logged(failed_views, "KeyError: '/srv/lab/secret/state.py'")
    failed_views.clear()


def test_a_section_that_fails_shows_the_apps_message_in_its_place(failed_views):
    at = AppTest.from_file(str(ROOT / "tests" / "failing_page.py"), default_timeout=120).run()
    assert "The section is drawn." in [m.value for m in at.markdown]
    assert [e.value for e in at.error] == [errors.MESSAGE]  # the body's failure
    assert_nothing_leaks(at)
    logged(failed_views, "FileNotFoundError: /srv/lab/secret_model/saved_model.pb")
    failed_views.clear()

    at.button[0].click().run()
    markdown = [m.value for m in at.markdown]
    assert "The section is drawn." not in markdown
    assert "The page goes on after its section." in markdown  # where Streamlit would have stopped the page
    assert [e.value for e in at.error] == [errors.MESSAGE, errors.MESSAGE]  # the section's, then the body's
    assert_nothing_leaks(at)
    logged(failed_views, "ZeroDivisionError: division by zero in /srv/lab/secret_section.py",
           "FileNotFoundError: /srv/lab/secret_model/saved_model.pb")
    failed_views.clear()

def test_a_model_that_fails_to_load_is_told_in_the_apps_words(monkeypatch, caplog):
    """The loader's own exception (its type, its text with the server's paths) goes to the
    log; a source error of the app's own (what is wrong, what to do) is shown as it is."""
    from lab import models as lab_models
    from lab import sources
    from ui import model_cache

    def unreadable(family, source):
        return sources.call_with_timeout(lambda: open("/srv/lab/secret/saved_model.pb"), 30, source)

    def missing(family, source):
        raise sources.SourceError(f"Model folder not found: {source}. Give an extracted TF Hub folder.")

    shown = {}
    for loader in (unreadable, missing):
        monkeypatch.setattr(lab_models, "load", loader)
        model_cache.load.clear()
        try:
            loaded, shown[loader.__name__] = model_cache.load("bert", "/models/bert")
        finally:
            model_cache.load.clear()
        assert loaded is None
    assert shown["unreadable"].startswith("Could not load the model from /models/bert: ")
    assert not [leak for leak in LEAKS if leak in shown["unreadable"]]
    assert shown["missing"] == "Model folder not found: /models/bert. Give an extracted TF Hub folder."
    assert {r.name for r in caplog.records if r.levelno >= logging.WARNING} == {"ui.model_cache"}
    assert "FileNotFoundError: [Errno 2] No such file or directory: '/srv/lab/secret/saved_model.pb'" in caplog.text
