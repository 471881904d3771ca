"""*What each layer knows* in a real browser, in the projector's look on a 1024 x 768 screen
(sidebar open and closed): every chart drawn, every label inside its chart, no text cut off,
and no chart wider than the screen leaves it. The server reads probes trained on a part of
the data (``tests.test_probes.small``)."""

from __future__ import annotations

import urllib.parse

import pytest

from tests.browser import serve_app, wait_idle
from tests.test_browser_layout import OVERFULL_CELLS, cut_off, labels_outside
from tests.test_probes import small  # noqa: F401 - a fixture

pytestmark = pytest.mark.browser

SCREEN = {"width": 1024, "height": 768}


@pytest.fixture(scope="module")
def probes_app(tmp_path_factory, small):  # noqa: F811 - the fixture
    folder, _, _ = small
    with serve_app(tmp_path_factory, env={"LAB_PROBES_DIR": str(folder)}) as srv:
        yield srv


@pytest.mark.parametrize("sidebar", ["open", "closed"])
def test_the_projector_look_fits_a_1024_px_screen(probes_app, browser, sidebar):
    context = browser.new_context(viewport=SCREEN)
    page = context.new_page()
    page.set_default_timeout(180_000)
    try:
        query = urllib.parse.urlencode({"a": "I bank with them at the river bank.", "proj": 1})
        page.goto(f"{probes_app.url}/probes?{query}")
        page.wait_for_selector('.st-key-probe_grid_bert svg.main-svg')
        wait_idle(page)
        if sidebar == "closed":
            page.hover('[data-testid="stSidebar"]')
            page.locator('[data-testid="stSidebarCollapseButton"] button').click()
            wait_idle(page)
        charts = page.locator('[data-testid="stPlotlyChart"] svg.main-svg')
        assert charts.count() >= 5  # three tasks' charts, a grid for each model
        widest = max(charts.nth(i).bounding_box()["x"] + charts.nth(i).bounding_box()["width"]
                     for i in range(charts.count()))
        assert widest <= SCREEN["width"], f"a chart reaches {widest:.0f} px, past the screen"
        assert labels_outside(page) == []
        assert page.evaluate(OVERFULL_CELLS) == []
        main = '[data-testid="stMain"] *'  # a closed sidebar's content is folded away on purpose
        assert (cut_off(page) if sidebar == "open" else cut_off(page, main)) == []
    finally:
        context.close()
