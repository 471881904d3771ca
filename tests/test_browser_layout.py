"""Every chart's labels fit inside the chart, in a real browser.

``lab.figures`` works out the margins from the tick labels instead of letting Plotly
measure them in the browser (``_fit_margins``: half of a chart's drawing time). This
checks the estimate where it matters: every tick label, axis title, legend entry and
colour-bar label drawn on the pages lies inside its chart's drawing, with long words,
CJK and emoji in the sentences, in the normal and the projector look.
"""

import urllib.parse

import pytest

from tests.browser import wait_idle

pytestmark = pytest.mark.browser

A = "The Antidisestablishmentarianism committee met at the central bank 銀行 today."
B = "We sat on the river bank 🙂 and watched WWWWWWW boats."

# (chart title, text element, how far it sticks out in px) for every label outside its chart
OUTSIDE = """() => {
  const out = [];
  for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    const svg = chart.querySelector('svg.main-svg');
    if (!svg) continue;
    const box = svg.getBoundingClientRect();
    if (box.width === 0) continue;  // a chart in a hidden tab
    const title = (chart.querySelector('.gtitle') || {}).textContent || '?';
    const labels = chart.querySelectorAll('.xtick text, .ytick text, .g-xtitle text, .g-ytitle text, ' +
                                          '.legendtext, .cbaxis text, .gtitle');
    for (const el of labels) {
      const r = el.getBoundingClientRect();
      if (r.width === 0) continue;
      const over = Math.max(box.left - r.left, r.right - box.right, box.top - r.top, r.bottom - box.bottom);
      if (over > 2) out.push([title.slice(0, 60), el.textContent.slice(0, 30), Math.round(over)]);
    }
  }
  return out;
}"""


@pytest.mark.parametrize("projector", [False, True], ids=["normal", "projector"])
@pytest.mark.parametrize("page_name", ["bert", "elmo", "attention", "compare"])
def test_every_label_lies_inside_its_chart(app_server, page, page_name, projector):
    query = urllib.parse.urlencode({"a": A, "b": B, "proj": int(projector)})
    page.goto(f"{app_server}/{page_name}?{query}")
    page.wait_for_selector('[data-testid="stPlotlyChart"] svg.main-svg')
    wait_idle(page)
    charts = page.locator('[data-testid="stPlotlyChart"] svg.main-svg').count()
    assert charts >= 2, f"only {charts} charts drawn on {page_name}"
    assert page.evaluate(OUTSIDE) == []
