"""A browser monkey: every control a person can click on a page, clicked twice, in a seeded
random order, with a check after each click that nothing broke.

A page's controls are found in the DOM Streamlit draws (``_CONTROLS``): pills and segmented
controls, toggles and checkboxes, radio options, select boxes, slider ends, expanders,
ordinary buttons and heatmap cells. Each has a key (its kind, label, which one of that label,
which option) that finds it again after a rerun has drawn the page anew. Left out: the
sidebar's model pickers (their presets and a custom handle wait on the network), text boxes
(typing is what the other browser tests do), downloads, links to other pages and the
tables' own toolbars.

After each click: no exception element nor the app's message of a failed view
(``ui.errors``) on the page, no traceback in the server's log.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path

from tests.browser import wait_idle

# Every control on the page, in document order, as {key, mark, kind, label, option,
# selected}; the element is marked with ``data-monkey`` = mark (its key, but for a slider's
# two ends, one input) so that a click finds it.
_CONTROLS = r"""() => {
  const found = [], seen = {};
  // the hidden box that preloads the chart code on a first visit (app.py) is no control
  const shown = e => e.getClientRects().length > 0 && !e.closest('.st-key-lab_preload');
  const add = (el, kind, text, option, selected) => {
    const label = text.replace(/\s+/g, ' ').trim();  // one line: a key is a CSS attribute value
    const n = seen[kind + label] = (seen[kind + label] ?? -1) + (option === 0 || option === null ? 1 : 0);
    const key = `${kind}|${label}|${n}|${option}`;
    el.setAttribute('data-monkey', key);
    found.push({key, mark: key, kind, label, option, selected: !!selected});
  };
  document.querySelectorAll('[data-monkey]').forEach(e => e.removeAttribute('data-monkey'));
  for (const g of document.querySelectorAll('[data-testid="stButtonGroup"]')) {
    if (!shown(g)) continue;
    const label = g.querySelector('[role="radiogroup"], [role="group"]')?.getAttribute('aria-label') ?? '';
    g.querySelectorAll('button').forEach((b, i) => add(b, 'pill', label, i,
      b.getAttribute('aria-checked') === 'true' || b.getAttribute('aria-pressed') === 'true'));
  }
  for (const c of document.querySelectorAll('[data-testid="stCheckbox"]')) {
    const input = c.querySelector('input');
    if (shown(c) && input)
      add(c.querySelector('label'), 'toggle', input.getAttribute('aria-label') ?? '', null, input.checked);
  }
  for (const r of document.querySelectorAll('[data-testid="stRadio"]')) {
    if (!shown(r)) continue;
    const label = r.querySelector('[role="radiogroup"]')?.getAttribute('aria-label') ?? '';
    r.querySelectorAll('label').forEach((l, i) => add(l, 'radio', label, i, l.querySelector('input')?.checked));
  }
  for (const s of document.querySelectorAll('[data-testid="stSelectbox"]')) {
    const input = s.querySelector('input[role="combobox"]');
    if (!shown(s) || !input) continue;
    if (s.closest('[data-testid="stSidebar"]')) continue;  // the model pickers: presets wait on the network
    add(input, 'select', input.getAttribute('aria-label') ?? '', null, false);
  }
  for (const s of document.querySelectorAll('[data-testid="stSlider"] input[type="range"]')) {
    if (!shown(s.closest('[data-testid="stSlider"]'))) continue;
    const label = s.getAttribute('aria-label') ?? '';
    add(s, 'slider-start', label, null, false);
    const start = found[found.length - 1];  // the same input's other end
    found.push({...start, key: start.key.replace('slider-start', 'slider-end'), kind: 'slider-end'});
  }
  for (const e of document.querySelectorAll('[data-testid="stExpander"] summary')) {
    if (shown(e)) add(e, 'expander', e.innerText.trim(), null, false);
  }
  for (const b of document.querySelectorAll('[data-testid="stButton"] button')) {
    if (shown(b) && !b.disabled) add(b, 'button', b.innerText.trim(), null, false);
  }
  for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    const points = chart.querySelectorAll('g.trace.scatter path.point');
    if (!chart.querySelector('g.heatmaplayer') || !points.length) continue;
    const title = chart.querySelector('.gtitle')?.textContent ?? '';
    const picks = new Set([0, points.length - 1, Math.floor(points.length / 2)]);
    for (const i of picks) add(points[i], 'cell', title, i, false);
  }
  return found;
}"""


@dataclass(frozen=True)
class Control:
    key: str
    mark: str
    kind: str
    label: str
    option: int | None
    selected: bool


class PageBroke(AssertionError):
    pass


class Monkey:
    """Clicks on one open page of a served app, checking after each click that the page
    shows no exception and that ``log`` (the server's output) gained no traceback."""

    def __init__(self, page, log: Path, seed: int):
        self.page = page
        self.log = log
        self.rng = random.Random(seed)
        self.done: list[str] = []  # what was clicked, in order: the trail an assertion shows

    def controls(self) -> list[Control]:
        return [Control(**c) for c in self.page.evaluate(_CONTROLS)]

    def check(self, log_from: int, what: str) -> None:
        shown = self.page.locator('[data-testid="stException"], '
                                  '[data-testid="stAlert"]:has-text("Something went wrong")')
        if shown.count():
            raise PageBroke(f"an exception is shown after {what}:\n{shown.first.inner_text()[:1500]}"
                            f"\nclicks so far: {self.done}")
        text = self.log.read_text(errors="replace")[log_from:]
        if "Traceback" in text:
            raise PageBroke(f"the server logged a traceback after {what}:\n{text[-3000:]}\nclicks so far: {self.done}")

    def click(self, control: Control, times: int = 2) -> bool:
        """Click ``control`` ``times`` times (found again by its key before each click);
        False when it is no longer on the page (an earlier click removed it)."""
        for _ in range(times):
            if not any(c.key == control.key for c in self.controls()):
                return False
            log_from = len(self.log.read_text(errors="replace"))
            self._act(control)
            self.done.append(control.key)
            wait_idle(self.page, settle_ms=300)
            self.check(log_from, control.key)
        return True

    def _act(self, control: Control) -> None:
        el = self.page.locator(f'[data-monkey="{_css_string(control.mark)}"]').first
        if control.kind in ("slider-start", "slider-end"):
            el.focus()
            el.press("Home" if control.kind == "slider-start" else "End")
        elif control.kind == "select":
            el.click()
            options = self.page.locator('[role="listbox"] [role="option"]')
            options.first.wait_for()
            options.nth(self.rng.randrange(options.count())).click()
        elif control.kind == "cell":
            el.scroll_into_view_if_needed()
            box = el.bounding_box()
            self.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        else:
            el.scroll_into_view_if_needed()
            el.click()

    def reclick_selected(self, labels: tuple[str, ...]) -> int:
        """Click, twice, the selected option of every pill group whose label starts with one
        of ``labels`` (waiting for the first such group to be drawn); returns how many were clicked."""
        self.page.wait_for_selector(", ".join(f'[role="radiogroup"][aria-label^="{_css_string(label)}"]'
                                              for label in labels))
        picked = [c for c in self.controls() if c.kind == "pill" and c.selected and c.label.startswith(labels)]
        return sum(self.click(c) for c in picked)

    def run(self, budget_s: float | None = None) -> int:
        """Click every control twice in a seeded random order (until ``budget_s`` seconds
        have passed, where given); returns how many were clicked."""
        todo = self.controls()
        self.rng.shuffle(todo)
        t0, clicked = time.monotonic(), 0
        for control in todo:
            if budget_s is not None and time.monotonic() - t0 > budget_s:
                break
            clicked += self.click(control)
        return clicked


def _css_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\a ")
