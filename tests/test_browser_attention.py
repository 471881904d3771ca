"""What a person does on the Transformer attention page, in a real browser."""

import pytest

from tests.browser import (click_cell, click_pill, click_tile, maps_and_draws_for_a_new_sentence, outline_over,
                           tile_outlined, type_sentence, wait_idle)

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
    page.wait_for_function("location.search.includes('att_query=3')")


def test_click_heatmap_cells_to_pick_the_query_and_the_head(app_server, page):
    page.goto(app_server + "/attention")
    page.wait_for_selector('text="the" in every head of layer 1')
    wait_idle(page)
    # head view of sentence A: 10 x 10 ([CLS] the central bank ... . [SEP]); row 2 = "central"
    click_cell(page, "Layer 1, head 1", row=2, col=5, cols=10)
    page.wait_for_selector('text="central" in every head of layer 1')
    page.wait_for_function("location.search.includes('att_query=2')")
    # a row of the heads x keys map opens that head in the head view
    click_cell(page, 'Where "central" looks', row=2, col=0, cols=10)
    page.wait_for_selector('[data-testid="stPlotlyChart"] >> text=Layer 1, head 3')
    page.wait_for_function("location.search.includes('att_bert_head=2')")  # the view is in the URL


def test_a_new_sentence_draws_each_map_once(app_server, page):
    """The minimal block's head, the model view, the head view and the heads x keys map:
    each drawn once for a new sentence (while the model view carried its tiling in
    ``layout.meta``, Plotly drew it twice)."""
    assert maps_and_draws_for_a_new_sentence(page, app_server + "/attention", 'text="the" in every head of layer 1',
                                             "Her bank account was empty by Friday.",
                                             then='text="her" in every head of layer 1') == (4, 4)


def test_the_query_row_outline_moves_over_the_head_view_without_redrawing_it(app_server, page):
    page.goto(app_server + "/attention")
    page.wait_for_selector('text="the" in every head of layer 1')
    wait_idle(page)
    head_view = page.locator('[data-testid="stPlotlyChart"]', has_text="Layer 1, head 1")
    head_view.locator(".js-plotly-plot").evaluate("gd => { gd.__drawn_once = true }")
    # sentence A has 10 rows ([CLS] the central bank ... . [SEP]); the query "the" is row 1
    assert outline_over(page, "att_head_view", 1)["color"] == "rgb(213, 94, 0)"

    click_pill(page, "Query token", "bank")
    page.wait_for_selector('text="bank" in every head of layer 1')
    outline_over(page, "att_head_view", 3)  # row 3: "bank"
    assert head_view.locator(".js-plotly-plot").evaluate("gd => gd.__drawn_once === true")  # not drawn again


def test_click_a_head_in_the_model_view_to_read_it_in_the_head_view(app_server, page):
    page.goto(app_server + "/attention")
    page.wait_for_selector('text="the" in every head of layer 1')
    wait_idle(page)
    model_view = page.locator(".st-key-att_model_view .js-plotly-plot")
    model_view.evaluate("gd => { gd.__drawn_once = true }")
    tile_outlined(page, "att_model_view", 0, 0)  # the head view's head: layer 1, head 1
    # a click near a tile's corner opens it too (its marker carries the hover of the whole tile)
    click_tile(page, "att_model_view", 2, 4, at=(0.15, 0.85))
    page.wait_for_selector('[data-testid="stPlotlyChart"] >> text=Layer 3, head 5')
    page.wait_for_selector('text="the" in every head of layer 3')
    page.wait_for_function("location.search.includes('att_layer=2') && location.search.includes('att_bert_head=4')")
    tile_outlined(page, "att_model_view", 2, 4)
    # picking a head below moves the outline; the model view is never drawn again
    click_pill(page, "Head", "H7")  # a segmented control is a radio group too
    page.wait_for_selector('[data-testid="stPlotlyChart"] >> text=Layer 3, head 7')
    wait_idle(page)
    tile_outlined(page, "att_model_view", 2, 6)
    assert model_view.evaluate("gd => gd.__drawn_once === true")


def test_tokens_that_look_like_markdown_show_as_typed_in_the_batch_table(app_server, page):
    # a plain table renders each cell as Markdown: "#" alone would be an empty heading,
    # "-" an empty bullet, "_a_" italic a (ui.frame.plain_table escapes them)
    from lab.models.transformer import run_block
    from lab.tokenize import DEFAULT_B

    sentence = "C# is - **fun** 1. _a_ [x](y)"
    page.goto(app_server + "/attention")
    page.wait_for_selector('text="the" in every head of layer 1')
    wait_idle(page)
    type_sentence(page, "Sentence A", sentence)
    page.wait_for_selector('text="c" in every head of layer 1')
    table = page.locator(".st-key-att_batch table")
    first_row = table.locator("tbody tr").first
    want = run_block([sentence, DEFAULT_B]).batch.tokens[0]
    assert want[:4] == ["c", "#", "is", "-"] and "_a_" in want
    assert first_row.locator("td").all_inner_texts()[:len(want)] == want
    assert first_row.locator("th").inner_text() == "A token"
    assert table.locator("h1, h2, ul, ol, li, strong, em, a, code").count() == 0
