"""What a person does on the Transformer attention page, in a real browser."""

import pytest

from tests.browser import click_pill, wait_idle

pytestmark = pytest.mark.browser


def row_chart(page, query: str):
    """The chart of one query's attention row in every head (its title names the query)."""
    return page.locator('[data-testid="stPlotlyChart"]', has_text=f'Where "{query}" looks')


def test_click_a_token_and_see_its_attention_row_update(app_server, page):
    page.goto(app_server + "/attention")
    page.wait_for_selector("text=Real BERT attention")
    wait_idle(page)
    # the default query is the first word of sentence A
    page.wait_for_selector('text="the" in every head of layer 1')
    before = row_chart(page, "the")
    before.wait_for()
    values_before = before.locator("g.heatmaplayer, text").all_inner_texts()

    click_pill(page, "Query token", "bank")
    page.wait_for_selector('text="bank" in every head of layer 1')
    after = row_chart(page, "bank")
    after.wait_for()
    assert row_chart(page, "the").count() == 0
    assert after.locator("text", has_text="all-MiniLM-L6-v2").count() >= 1  # names its model
    assert after.locator("text").all_inner_texts() != values_before
    # the selection lives in the URL, so the view can be shared
    assert "att_tok=3" in page.url
