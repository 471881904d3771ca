""""How one weight is computed" in a real browser: the two sections' controls clicked in
normal, projector and quiz mode without breaking the page (``tests.monkey``: one of each
kind and label in ``make test``, every one with ``LAB_MONKEY=all``), and every step's
figure exported whole by the toolbar's camera, in both looks."""

from __future__ import annotations

import numpy as np
import pytest

from lab import figures, views
from lab.models.transformer import run_block
from lab.tokenize import DEFAULT_A, DEFAULT_B
from tests.browser import wait_idle
from tests.monkey import Monkey
from tests.test_browser_monkey import EVERY_CONTROL
from tests.test_browser_exports import chart_page, draw, exported, listed, problems  # noqa: F401 - a fixture

pytestmark = pytest.mark.browser

MODES = {"normal": "", "projector": "&proj=1", "quiz": "&quiz=1"}
# the labels of the sections' own controls (an expander's label holds its icon's name too)
LABELS = ("Query token", "Key for the neuron view", "Temperature t", "How one weight is computed", "Reveal",
          "Your class's answer")


@pytest.mark.parametrize("mode", MODES)
def test_no_click_on_the_step_sections_breaks_the_page(served_app, page, mode):
    url = f"{served_app.url}/attention?att_steps_block=1&att_steps_bert=1&att_mask=0{MODES[mode]}"
    log_from = len(served_app.log.read_text(errors="replace"))
    page.goto(url)
    page.wait_for_selector("text=Real BERT attention")
    # both sections drawn down to their mask step (the last before quiz mode's question)
    page.wait_for_function("""() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
                              .filter(c => c.textContent.includes('4 · the mask')).length >= 2""", timeout=300_000)
    wait_idle(page)
    monkey = Monkey(page, served_app.log, seed=0)
    monkey.check(log_from, f"opening {url}")
    ours = [c for c in monkey.controls() if any(text in c.label for text in LABELS) or c.kind == "cell"
            and c.label[:1].isdigit()]  # the steps' strips: "2 · K = X W_K ..."
    kinds = {c.kind for c in ours}
    assert {"pill", "expander"} <= kinds, kinds
    if mode != "quiz":
        assert "slider-start" in kinds and any(c.label.startswith("Key for the neuron view") for c in ours)
    if not EVERY_CONTROL:  # the sample: one control of each kind and label, in a seeded order
        monkey.rng.shuffle(ours)
        ours = list({(c.kind, next((t for t in LABELS if t in c.label), "strip")): c for c in ours}.values())
    ours.sort(key=lambda c: c.kind == "expander")  # last: folding a section takes its controls away
    clicked = sum(monkey.click(c) for c in ours)
    assert clicked >= 4, monkey.done


def step_figures(projector: bool) -> dict:
    """The section's chart as the page builds it, every step shown (x, q, K, V, the bar steps
    with the mask's crosses and a what-if softmax, the output and the neuron view), and the
    shortest it gets (quiz mode, before the reveal)."""
    run = run_block([DEFAULT_A, DEFAULT_B], use_mask=True)
    w = views.weight_steps(run.steps, run.batch.tokens[0], run.batch.padding_mask[0], 0, 1, 2)
    m, p, T = run.label, projector, len(w.tokens)
    panels = [
        figures.vector_strip(w.x[None], ["bank"], '1 · x: the embedding + position at "bank"', "1C", "", p),
        figures.vector_strip(w.q[None], ["bank"], '2 · q = x W_Q for "bank", head 2', "1D", "", p),
        figures.vector_strip(w.keys, w.tokens, "2 · K = X W_K: every token", "TD", "", p),
        figures.vector_strip(w.values, w.tokens, "2 · V = X W_V: every token", "TD", "", p),
        figures.key_bars(w.dots, w.tokens, f"3 · q · k_j for every key j · {figures.shape_note('T', (T,))}",
                         "", p, selected=8, y_title="q · k_j"),
        figures.key_bars(w.scores, w.tokens, "3 · divided by √D = √16: × 0.2500", "", p, y_title="score"),
        figures.key_bars(np.where(w.padded, 0, w.scores), w.tokens, "4 · the mask adds −10⁹ to the 2 padded keys "
                         "(crosses)", "", p, crossed=w.padded, cross_text="−10⁹", y_title="score + mask"),
        figures.key_bars(w.weights, w.tokens, f'5 · softmax: the weights sum to {w.weight_sum:.6f}; largest '
                         '"interest" 0.377 — temperature 4, NOT THE MODEL', "", p, y_title="weight"),
        figures.vector_strip(w.output[None], ["bank"], '6 · output = Σ_j w_j v_j for "bank"', "1D", "", p),
        figures.vector_strip(w.neuron(8), ["q", "k ([PAD])", "q * k"], '7 · neuron view, key "[PAD]": '
                             "the products sum to q · k = 1.234, score 0.218", "3D", "", p)]
    return {"every step": figures.stacked(panels, 'How "bank" attends: steps 1 to 7, head 2', m, p),
            "before the reveal": figures.stacked(panels[:7], 'How "bank" attends: steps 1 to 4, head 2', m, p)}


@pytest.mark.parametrize("projector", [False, True], ids=["normal", "projector"])
def test_every_step_figure_exports_whole(chart_page, projector):  # noqa: F811 - the fixture
    found = {}
    for key, fig in step_figures(projector).items():
        chart = draw(chart_page, fig, figures.export_config(fig, key))
        found[key] = problems(exported(chart_page, chart, (figures.EXPORT_WIDTH, fig.layout.height)))
    assert not any(found.values()), listed(found)
