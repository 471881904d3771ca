"""What a person does on the ELMo page, in a real browser."""

import re

import pytest

from tests.browser import click_pill, type_sentence, wait_idle

pytestmark = pytest.mark.browser


def bar_chart(page):
    """The per-layer bar chart, once drawn."""
    chart = page.locator('[data-testid="stPlotlyChart"]', has_text="at each layer").first
    chart.locator("g.textpoint text").first.wait_for()
    return chart


def bar_values(page) -> list[str]:
    """The numbers printed on the per-layer bars (one per layer)."""
    return [t.strip() for t in bar_chart(page).locator("g.textpoint text").all_text_contents()]


def test_type_two_sentences_click_a_word_and_see_the_layer_chart_change(app_server, page):
    page.goto(app_server + "/elmo")
    page.wait_for_selector("text=One word through the layers")
    wait_idle(page)
    type_sentence(page, "Sentence A", "He swung the bat and hit the ball.")
    type_sentence(page, "Sentence B", "A bat flew out of the cave at dusk.")
    page.wait_for_selector('text=Cosine of A "bat" and B "bat" at each layer')
    before = bar_values(page)
    assert len(before) == 6 and before[0] == "1.000"  # word_emb ignores context (+ 2 context-only bars)

    click_pill(page, "Word in sentence A", "ball")
    page.wait_for_selector('text=Cosine of A "ball" and B "bat" at each layer')
    after = bar_values(page)
    assert len(after) == 6 and after != before and after[0] != "1.000"
    # the fragment writes the URL when it ends, a moment after the chart's title changed
    page.wait_for_url(re.compile(r"elmo_word_a=7(%3A|:)ball"), timeout=60_000)


def test_open_the_repeated_runs_and_see_one_curve_per_mode(app_server, page):
    page.goto(app_server + "/elmo")
    page.wait_for_selector("text=Same sentence, same vectors?")
    wait_idle(page)
    title = "Norm of lstm_outputs2 for sentence A, run 6 times"
    assert page.locator(f"text={title}").count() == 0  # closed: nothing run yet
    page.get_by_text("Run it: stateless, stateful and with dropout").click()
    chart = page.locator('[data-testid="stPlotlyChart"]', has_text=title)
    chart.wait_for(timeout=60_000)
    legend = chart.locator("g.legend text.legendtext").all_text_contents()
    assert legend == ["stateless", "stateful", "dropout"]
    assert chart.locator("g.trace.scatter path.js-line").count() == 3
    page.wait_for_url(re.compile(r"elmo_repeats=1"), timeout=60_000)


def test_a_mix_preset_moves_the_elmo_bar_and_a_word_click_keeps_the_controls(app_server, page):
    # the mix's controls are a fragment of their own: a preset or a slider reruns them and
    # the charts; a word reruns the charts alone, and the pills stay above the controls
    page.goto(app_server + "/elmo")
    page.wait_for_selector("text=One word through the layers")
    wait_idle(page)
    names = [t.strip() for t in bar_chart(page).locator("g.xtick text").all_text_contents()]
    top, mix = names.index("lstm_outputs2"), names.index("elmo (mix)")

    page.get_by_role("button", name="Top layer only").click()
    wait_idle(page)
    bars = bar_values(page)
    assert bars[mix] == bars[top]  # softmax(-10, -10, 10) puts all but 4e-9 of the weight on the top layer
    assert "lstm_outputs2 1.000" in page.locator('[data-testid="stExpander"]').first.inner_text().replace("\n", " ")

    page.get_by_role("button", name="Uniform").click()
    wait_idle(page)
    uniform = bar_values(page)
    assert uniform[mix] != uniform[top] and uniform[:3] == bars[:3]

    click_pill(page, "Word in sentence A", "rates")
    page.wait_for_selector('text=Cosine of A "rates"')
    assert page.get_by_role("radiogroup", name="Word in sentence A").count() == 1
    pills_y = page.get_by_role("radiogroup", name="Word in sentence A").bounding_box()["y"]
    controls_y = page.get_by_role("button", name="Uniform").bounding_box()["y"]
    assert pills_y < controls_y
    # the preset stays in force: the mix of the new word is still the uniform one
    assert "lstm_outputs2 0.333" in page.locator('[data-testid="stExpander"]').first.inner_text().replace("\n", " ")
