"""What a person does on the BERT page, in a real browser."""

import re

import pytest

from tests.browser import click_cell, click_pill, type_sentence, wait_idle

pytestmark = pytest.mark.browser


def test_type_two_sentences_click_a_word_and_see_the_figures_update(app_server, page):
    page.goto(app_server + "/bert")
    page.wait_for_selector("text=One word, two contexts")
    wait_idle(page)
    type_sentence(page, "Sentence A", "The pitcher threw a fast ball.")
    type_sentence(page, "Sentence B", "She poured water from the pitcher into a glass.")
    # the default selection is the shared word, in both the metric and the chart legend
    page.wait_for_selector('text=Token cosine "pitcher" / "pitcher"')
    assert page.locator("svg text", has_text='A "pitcher" vs B "pitcher"').count() >= 1
    before = page.locator('[data-testid="stMetricValue"]').nth(1).inner_text()

    click_pill(page, "Word in sentence A", "threw")
    page.wait_for_selector('text=Token cosine "threw" / "pitcher"')
    assert page.locator("svg text", has_text='A "threw" vs B "pitcher"').count() >= 1
    after = page.locator('[data-testid="stMetricValue"]').nth(1).inner_text()
    assert re.fullmatch(r"-?\d\.\d{3}", after) and after != before
    # the selection lives in the URL, so the view can be shared
    assert "bert_ta=2" in page.url and "pitcher" in page.url.replace("+", " ")

    # a click on a cell of the A x B map selects both tokens:
    # rows [CLS] the pitcher threw a fast ball . [SEP]; columns [CLS] she poured ... a glass . [SEP]
    click_cell(page, "Every token of A against every token of B", row=5, col=9, cols=12)
    page.wait_for_selector('text=Token cosine "fast" / "glass"')
