"""Hands on every control: on every page, in normal, projector and quiz mode, each control
is clicked twice in a seeded random order, and no click may show an exception on the page
or leave a traceback in the server's log (``tests.monkey``).

``make test`` runs a sample bounded in time: on each page and mode the selected word is
clicked again (what a teacher does in front of a class), then other controls for a few
seconds. ``make test-monkey`` (``LAB_MONKEY=all``) clicks every control. ``LAB_MONKEY_SEED``
picks another order.
"""

from __future__ import annotations

import os

import pytest

from tests.browser import wait_idle
from tests.monkey import Monkey

pytestmark = pytest.mark.browser

EVERY_CONTROL = os.environ.get("LAB_MONKEY") == "all"
SEED = int(os.environ.get("LAB_MONKEY_SEED", "0"))
SAMPLE_S = 3.0  # seconds of other controls after the selected words, per page and mode, in the sample

# page -> (a text shown once it is drawn, its word pickers' labels)
PAGES = {"": ("Offline first.", ()), "lesson": ("A 20-minute lesson", ()),
         "bert": ("One word, two contexts", ("Word in sentence",)),
         "elmo": ("Same sentence, same vectors?", ("Word in sentence",)),
         "attention": ("Real BERT attention", ("Query token",)),
         "compare": ("One word, both models", ("Word in sentence",)),
         "probes": ("A probe is a linear classifier", ())}
MODES = {"normal": "", "projector": "?proj=1", "quiz": "?quiz=1"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", PAGES)
def test_no_click_breaks_the_page(served_app, page, name, mode):
    url = f"{served_app.url}/{name}{MODES[mode]}"
    log_from = len(served_app.log.read_text(errors="replace"))
    page.goto(url)
    shown, words = PAGES[name]
    page.wait_for_selector(f"text={shown}")
    page.wait_for_selector('[data-testid="stSidebar"] [data-testid="stCheckbox"]')  # the mode switches
    wait_idle(page)
    monkey = Monkey(page, served_app.log, seed=SEED)
    monkey.check(log_from, f"opening {url}")
    if words:
        holder = page.get_by_role("tab", name=shown)  # a projector shows the attention page's parts as tabs
        if holder.count():
            holder.first.click()
            wait_idle(page)
        assert monkey.reclick_selected(words) >= 1, f"no selected word found on {url} (seed {SEED})"
    clicked = monkey.run(budget_s=None if EVERY_CONTROL else SAMPLE_S)
    assert clicked >= 1, f"no control found on {url}"
