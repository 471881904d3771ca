"""Every chart's labels fit inside the chart, in a real browser.

``lab.figures`` works out the margins from the tick labels instead of letting Plotly
measure them in the browser (``_fit_margins``: half of a chart's drawing time). This
checks the estimate where it matters: every tick label, axis title, legend entry and
colour-bar label drawn on the pages lies inside its chart's drawing, with long words,
CJK and emoji in the sentences, in the normal and the projector look.
"""

import urllib.parse

import numpy as np
import pytest

from lab import figures
from lab.vectors import INPUT_LAYER

from tests.browser import serve_app, wait_idle

pytestmark = pytest.mark.browser

A = "The Antidisestablishmentarianism committee met at the central bank 銀行 today."
B = "We sat on the river bank 🙂 and watched WWWWWWW boats."

PAGE_CHARTS = '[data-testid="stPlotlyChart"]'

# (chart title, text element, how far it sticks out in px, or 'hidden' for a tick label Plotly
# hid because it would reach past the chart's edge) for every label outside its chart, and how
# many labels were checked. The selector is an argument with no default: Playwright calls a
# function given no argument with null, not undefined, so a default never applied and the
# check ran on no chart at all
OUTSIDE = """(charts) => {
  const out = [];
  let checked = 0;
  for (const chart of document.querySelectorAll(charts)) {
    const svg = chart.querySelector('svg.main-svg');
    if (!svg) continue;
    const box = svg.getBoundingClientRect();
    if (box.width === 0) continue;  // a chart in a hidden tab
    const title = (chart.querySelector('.gtitle') || {}).textContent || '?';
    const labels = chart.querySelectorAll('.xtick text, .ytick text, .g-xtitle text, .g-ytitle text, ' +
                                          '.legendtext, .cbaxis text, .gtitle');
    for (const el of labels) {
      checked++;
      const r = el.getBoundingClientRect();
      if (r.width === 0 && el.textContent && getComputedStyle(el).display === 'none' && el.closest('.xtick, .ytick'))
        out.push([title.slice(0, 60), el.textContent.slice(0, 30), 'hidden']);  // Plotly hides one past the edge
      if (r.width === 0) continue;
      const over = Math.max(box.left - r.left, r.right - box.right, box.top - r.top, r.bottom - box.bottom);
      if (over > 2) out.push([title.slice(0, 60), el.textContent.slice(0, 30), Math.round(over)]);
    }
  }
  return {out, checked};
}"""


def labels_outside(page, charts: str = PAGE_CHARTS) -> list:
    """``OUTSIDE`` on the charts ``charts`` selects, which must hold some labels."""
    found = page.evaluate(OUTSIDE, charts)
    assert found["checked"] > 0, f"no chart label under {charts!r}"
    return found["out"]


# (chart title, cell width, widest value printed in a cell) for every heatmap whose printed
# values are wider than its cells (Plotly does not fit them: they run into each other)
OVERFULL_CELLS = """() => {
  const out = [];
  for (const gd of document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')) {
    const heat = (gd._fullData || []).find(t => t.type === 'heatmap');
    if (!heat || !heat.texttemplate) continue;
    const cell = gd._fullLayout._size.w / heat.z[0].length;
    let widest = 0;
    for (const t of gd.querySelectorAll('.heatmaplayer text'))
      widest = Math.max(widest, t.getBoundingClientRect().width);
    if (widest > cell - 2)
      out.push([((gd.querySelector('.gtitle') || {}).textContent || '?').slice(0, 60),
                Math.round(cell), Math.round(widest)]);
  }
  return out;
}"""


@pytest.mark.parametrize("projector", [False, True], ids=["normal", "projector"])
@pytest.mark.parametrize("page_name", ["bert", "elmo", "attention", "compare"])
def test_every_label_lies_inside_its_chart(app_server, page, page_name, projector):
    """... and every value a heatmap prints lies inside its cell (``figures.heatmaps._cell_text``)."""
    query = urllib.parse.urlencode({"a": A, "b": B, "proj": int(projector)})
    page.goto(f"{app_server}/{page_name}?{query}")
    page.wait_for_selector('[data-testid="stPlotlyChart"] svg.main-svg')
    wait_idle(page)
    charts = page.locator('[data-testid="stPlotlyChart"] svg.main-svg').count()
    assert charts >= 2, f"only {charts} charts drawn on {page_name}"
    assert labels_outside(page) == []
    assert page.evaluate(OVERFULL_CELLS) == []


# For every heatmap that prints its values: the size its figure gives them, its cells' width,
# and the size and display the page's style gives them (ui.charts.fit_cell_text)
CELL_TEXT = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')].flatMap(gd => {
  const heat = (gd._fullData || []).find(t => t.type === 'heatmap'), text = gd.querySelector('.heatmaplayer text');
  if (!heat || !heat.texttemplate || !text) return [];
  const cs = getComputedStyle(text);
  return [[heat.textfont.size, gd._fullLayout._size.w / heat.z[0].length, parseFloat(cs.fontSize), cs.display]];
})"""


@pytest.mark.parametrize("width, projector", [(1280, 0), (1024, 1), (390, 0)],
                         ids=["laptop", "projector-1024-sidebar-open", "phone"])
def test_printed_values_fit_their_cells_at_any_width(app_server, browser, width, projector):
    # the figures size a heatmap's printed values for a chart about 800 px wide; on a 1024-px
    # projector with the sidebar open (a 564-px chart) they ran into each other on the BERT,
    # ELMo and attention pages. The page's style keeps the figure's size where the cells have
    # room, shrinks the values where they have less, and hides them below the look's least
    # legible size (the colours and the hover give every value)
    phone = width < 500
    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=phone, has_touch=phone)
    page = context.new_page()
    page.set_default_timeout(120_000)
    seen = {}
    for name in ("bert", "elmo", "attention"):
        page.goto(f"{app_server}/{name}?proj={projector}")
        page.wait_for_selector('[data-testid="stPlotlyChart"] svg.main-svg')
        wait_idle(page)
        assert page.evaluate(OVERFULL_CELLS) == [], name
        seen[name] = page.evaluate(CELL_TEXT)
    context.close()
    smallest = figures.style(bool(projector))["cell_text_min"]
    found = [v for values in seen.values() for v in values]
    assert len(found) >= 5, seen  # every page prints the values of some map
    for size, cell, shown, display in found:
        assert shown <= size + 0.01 and (display == "none" or shown >= smallest - 0.01), seen
    if width == 1280:  # the width the figures were sized for: as they were
        assert all(shown == pytest.approx(size, abs=0.01) and display != "none" for size, _, shown, display in found)
    else:
        assert any(display == "none" or shown < size - 0.5 for size, _, shown, display in found)


BERT_BASE = [INPUT_LAYER] + [f"layer {i}" for i in range(1, 13)]


@pytest.mark.parametrize("projector", [False, True], ids=["normal", "projector"])
def test_a_13_layer_model_keeps_every_tick_label(browser, tmp_path, projector):
    # a real BERT-base (TF Hub) has 13 layers: their names are turned to fit, and Plotly hid
    # the top layer's, past the chart's right edge, in projector mode at 820 px (the chart on
    # a 1280-px screen with the sidebar open) and in the normal look at 560 px. The figures
    # alone, drawn by the Plotly.js of the plotly package.
    line = figures.layer_curve(BERT_BASE, {"A “bank” vs B “bank”": np.linspace(1, 0.5, 13)},
                               "Cosine similarity at every layer", "BERT-base (TF Hub)", projector)
    depth = figures.depth_chart([figures.DepthLine("BERT-base", BERT_BASE, np.linspace(0, 1, 13),
                                                   np.linspace(1, 0.5, 13))],
                                "Cosine similarity at every layer of both models", "BERT-base", projector)
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    for width in (820, 560):
        for fig in (line, depth):
            path = tmp_path / "figure.html"
            fig.write_html(path, include_plotlyjs=True, default_width=f"{width}px")
            page.goto(path.as_uri())
            page.wait_for_selector(".plotly-graph-div svg.main-svg")
            outside = labels_outside(page, ".plotly-graph-div")
            # at 560 px only the tick labels: a projector-size title needs the wider chart
            assert [o for o in outside if width == 820 or o[2] == "hidden"] == [], width
    page.close()


# When the hidden box (ui.charts.preload), the page's title and the page's first chart first
# appear, and how the box looked whenever it held a chart
WATCH_PRELOAD = """() => {
  const seen = window.__preload = {box: null, drawn: null, title: null, looks: []};
  new MutationObserver(() => {
    const now = performance.now(), box = document.querySelector('.st-key-lab_preload');
    if (box) {
      seen.box = seen.box || now;
      if (box.querySelector('svg.main-svg')) seen.drawn = seen.drawn || now;
      if (box.querySelector('[data-testid="stPlotlyChart"]')) {
        const wrapper = box.parentElement;
        seen.looks.push([getComputedStyle(box).visibility, getComputedStyle(wrapper).position,
                         wrapper.getBoundingClientRect().height, now]);
      }
    }
    if (document.querySelector('h1') && document.querySelector('h1').textContent.includes('BERT WordPiece'))
      seen.title = seen.title || now;
    for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"] svg.main-svg'))
      if (!chart.closest('.st-key-lab_preload')) seen.chart = seen.chart || now;
  }).observe(document, {subtree: true, childList: true});
}"""

# the page title's top within the page's content (whatever the scroll)
TITLE_TOP = """() => document.querySelector('h1').getBoundingClientRect().top -
  document.querySelector('[data-testid="stMainBlockContainer"]').getBoundingClientRect().top"""


def test_a_cold_server_has_the_browser_load_the_chart_code_while_the_page_imports(tmp_path_factory, browser):
    with serve_app(tmp_path_factory) as srv:  # a server of its own: cold, its first request a page link
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(180_000)
        page.add_init_script(f"({WATCH_PRELOAD})()")
        page.goto(f"{srv.url}/bert")
        page.wait_for_selector('[data-testid="stPlotlyChart"] svg.main-svg >> nth=1')
        wait_idle(page)
        seen = page.evaluate("window.__preload")
        # the box came first, and its chart was drawn before the page's first chart (the page
        # shows its title at once and imports TensorFlow when its run needs the model:
        # ui.model_cache.LazyModel)
        assert seen["box"] and seen["drawn"] and seen["chart"] and seen["box"] < seen["drawn"] < seen["chart"]
        assert seen["title"]
        # whenever it held a chart it took no room: invisible, out of the page's flow and of
        # no height once its style applied, and before that at most the 1 px its container
        # is cut to. The style is a markdown element with HTML, whose code the browser loads
        # only when it first meets one, as it loads Plotly's: either can come first, and on
        # a loaded machine the style can come a second after the page's title, so that order
        # is not asserted; once the style has applied, it stays applied.
        assert seen["looks"]
        hidden = [(visibility, position, height) == ("hidden", "absolute", 0)
                  for visibility, position, height, _ in seen["looks"]]
        for (visibility, position, height, _), now_hidden in zip(seen["looks"], hidden):
            assert now_hidden or (position == "static" and height <= 1), seen["looks"]
        assert True in hidden, seen["looks"]  # the style applied while the box held its chart ...
        assert all(hidden[hidden.index(True):]), seen["looks"]  # ... and stayed applied
        assert page.locator(".st-key-lab_preload").count() == 0  # removed once the page was drawn
        # served through app.py's navigation (the page titles, not Streamlit's folder mode)
        assert page.get_by_role("link", name="Transformer attention").count() == 1
        title_top = page.evaluate(TITLE_TOP)
        page.get_by_role("radiogroup", name="Word in sentence A").get_by_role("radio").nth(1).click()
        wait_idle(page)  # a later run: no box, the page where it was
        assert page.locator(".st-key-lab_preload").count() == 0
        assert page.evaluate(TITLE_TOP) == title_top
        context.close()


# (test id or tag, text, its full width, the width shown) for every text cut off: an element
# whose content is wider than it and which hides (or scrolls) the rest, or ends it with "…"
CUT_OFF = """(scope) => {
  const out = [];
  let checked = 0;
  for (const e of document.querySelectorAll(scope)) {
    checked++;
    if (e.closest('.js-plotly-plot, [data-testid="stDataFrame"], textarea, style') || e.querySelector('style'))
      continue;  // charts and grids draw their own text; a <style> holds no text that is shown
    if (!e.textContent.trim() || e.children.length > 3 && e.tagName !== 'TABLE' && !e.querySelector('table'))
      continue;
    const cs = getComputedStyle(e);
    if (cs.display !== 'inline' && e.scrollWidth > e.clientWidth + 1 &&
        (cs.overflowX !== 'visible' || cs.textOverflow === 'ellipsis'))
      out.push([e.dataset.testid || e.tagName, e.textContent.trim().slice(0, 60), e.scrollWidth, e.clientWidth]);
  }
  return {out, checked};
}"""


def cut_off(page, scope: str = '[data-testid="stMain"] *, [data-testid="stSidebar"] *') -> list:
    """``CUT_OFF`` over the elements ``scope`` selects (the page's main part and sidebar)."""
    found = page.evaluate(CUT_OFF, scope)
    assert found["checked"] > 0, f"no element under {scope!r}"
    return found["out"]


@pytest.mark.parametrize("projector", [False, True], ids=["normal", "projector"])
@pytest.mark.parametrize("page_name", ["", "lesson", "bert", "elmo", "attention", "compare"])
def test_no_text_is_cut_off(app_server, page, page_name, projector):
    # at 1280 x 900 with the sidebar open, the default sentences: no label, button, metric or
    # table of the page (its [PAD] columns above all) hides part of its text
    page.goto(f"{app_server}/{page_name}?proj={int(projector)}")
    page.wait_for_selector('[data-testid="stMain"] h1')
    if page_name not in ("", "lesson"):  # the pages with charts
        page.wait_for_selector('[data-testid="stPlotlyChart"] svg.main-svg')
    wait_idle(page)
    assert cut_off(page) == []


def test_projector_mode_enlarges_the_metric_values(app_server, page):
    sizes = {}
    for projector in (0, 1):
        page.goto(f"{app_server}/bert?proj={projector}")
        page.wait_for_selector('[data-testid="stMetricValue"]')
        wait_idle(page)
        sizes[projector] = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stMetricValue"]')]
          .map(m => parseFloat(getComputedStyle(m.querySelector('p') || m).fontSize))""")
    assert len(sizes[1]) == len(sizes[0]) == 3
    assert min(sizes[1]) >= 1.2 * max(sizes[0]), sizes  # not the text rule's 1.35rem (21.6 px, under 36)


@pytest.mark.parametrize("page_name", ["bert", "elmo", "attention", "compare"])
def test_a_1024_px_projector_with_the_sidebar_closed_has_room_for_every_figure(app_server, browser, page_name):
    # the figures are laid out for a 1280-px screen with the sidebar open (a chart about 800
    # px wide); on a 1024-px projector the sidebar's toggle help and the README say to close
    # it, which gives the pages that room: checked here in projector mode
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{app_server}/{page_name}?proj=1")
    page.wait_for_selector('[data-testid="stPlotlyChart"] svg.main-svg')
    wait_idle(page)
    page.hover('[data-testid="stSidebar"]')
    page.locator('[data-testid="stSidebarCollapseButton"] button').click()
    # every chart redrawn at the new width: as wide as its element (a full-width one past
    # 800 px; the ELMo vs BERT page's maps share a row)
    page.wait_for_function("""() => {
      const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
        .filter(c => c.querySelector('svg.main-svg'));
      const widths = charts.map(c => [c.querySelector('svg.main-svg').getBoundingClientRect().width,
                                      c.getBoundingClientRect().width]);
      return widths.every(([svg, box]) => Math.abs(svg - box) < 2) && widths.some(([svg]) => svg > 800);
    }""")
    page.wait_for_timeout(500)
    assert labels_outside(page) == []
    assert page.evaluate(OVERFULL_CELLS) == []
    assert cut_off(page, '[data-testid="stMain"] *') == []
    context.close()
