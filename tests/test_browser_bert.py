"""What a person does on the BERT page, in a real browser."""

import re
import time

import pytest

from tests.browser import (click_cell, click_pill, maps_and_draws_for_a_new_sentence, outline_over, record_answers,
                           record_requests, type_sentence, wait_idle)

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
    assert "bert_word_a=2" in page.url and "pitcher" in page.url.replace("+", " ")

    # a click on a cell of the A x B map selects both tokens:
    # rows [CLS] the pitcher threw a fast ball . [SEP]; columns [CLS] she poured ... a glass . [SEP]
    click_cell(page, "Every token of A against every token of B", row=5, col=9, cols=12)
    page.wait_for_selector('text=Token cosine "fast" / "glass"')


def test_the_a_by_b_outline_moves_to_the_selected_cell_without_redrawing_the_map(app_server, page):
    page.goto(app_server + "/bert")
    page.wait_for_selector('text=Token cosine "bank" / "bank"')
    wait_idle(page)
    cross = page.locator('[data-testid="stPlotlyChart"]', has_text="Every token of A against every token of B")
    cross.locator(".js-plotly-plot").evaluate("gd => { gd.__drawn_once = true }")
    outline_over(page, "bert_ab", "bank", "bank")  # cells are found by their tokens
    click_pill(page, "Word in sentence B", "river")
    page.wait_for_selector('text=Token cosine "bank" / "river"')
    outline_over(page, "bert_ab", "bank", "river")
    assert cross.locator(".js-plotly-plot").evaluate("gd => gd.__drawn_once === true")  # not drawn again


def test_a_new_sentence_draws_each_map_once(app_server, page):
    """Each map that a new sentence changes is drawn once. Streamlit's chart element hands
    Plotly a JSON copy of every new figure right after drawing it; while the figures
    carried a template and typed arrays (and Streamlit's theme), Plotly drew each of them a
    second time (lab.figures.layout._plain)."""
    # the word's token map and the A x B map, each drawn once
    assert maps_and_draws_for_a_new_sentence(page, app_server + "/bert", 'text=Token cosine "bank" / "bank"',
                                             "Her bank account was empty by Friday.") == (2, 2)


def test_words_that_look_like_markdown_show_as_typed(app_server, page):
    # the page's labels and captions are Markdown: the word "*" twice would italicize what
    # lies between, and a backtick would end the code span of its pieces
    page.goto(app_server + "/bert")
    page.wait_for_selector('text=Token cosine "bank" / "bank"')
    wait_idle(page)
    type_sentence(page, "Sentence A", "Bank stars * shine ` here")
    type_sentence(page, "Sentence B", "A bank * star ` there")
    click_pill(page, "Word in sentence A", "*")
    click_pill(page, "Word in sentence B", "*")
    page.wait_for_selector('text=Token cosine "*" / "*"')
    page.wait_for_selector('text=The word part of "*" and "*" has cosine')
    click_pill(page, "Word in sentence A", "`")
    page.wait_for_selector('text=Token cosine "`" / "*"')
    pieces = page.locator('[data-testid="stMarkdownContainer"]', has_text="→ pieces").first
    assert pieces.inner_text() == "A: ` → pieces ` · B: * → pieces *"
    assert pieces.locator("code").all_inner_texts() == ["`", "*"]


def test_a_tab_whose_session_is_gone_shows_its_view_again_and_clicks_on(page, tmp_path):
    """A closed or disconnected tab's session lives 5 s on the server (ui/memory.py); a tab
    that comes back later (here: the server restarted under it, every session gone) gets
    a new session, which reopens the same view from the URL, and its clicks work."""
    from harness.served import Server

    srv = Server(env={"LAB_WARMUP": "0"}, log=tmp_path / "first.log").start()
    try:
        page.goto(srv.url + "/bert?a=The+pitcher+threw+a+fast+ball.&b=She+poured+water+from+the+pitcher.")
        page.wait_for_selector("text=One word, two contexts")
        wait_idle(page)
        click_pill(page, "Word in sentence A", "threw")
        page.wait_for_selector('text=Token cosine "threw" / "pitcher"')
        # the tab reconnects on its own and runs its page again in full (ui.state.rerun_after_reconnect):
        # the new server loads BERT for it, and a click made meanwhile would be lost
        sent, answers = record_requests(page), record_answers(page)
        srv.stop()
        srv = Server(env={"LAB_WARMUP": "0"}, port=srv.port, log=tmp_path / "second.log").start()
        deadline = time.monotonic() + 120
        while "script_finished:FINISHED_SUCCESSFULLY" not in answers:
            assert time.monotonic() < deadline, f"no full run after reconnecting: sent {sent}, got {answers}"
            page.wait_for_timeout(200)
        assert sent[0] == "rerun_script" and "new_session" in answers
        assert page.get_by_text('Token cosine "threw" / "pitcher"').count() == 1  # the view, from the URL
        click_pill(page, "Word in sentence A", "fast")
        page.wait_for_selector('text=Token cosine "fast" / "pitcher"', timeout=60_000)
        assert page.locator("svg text", has_text='A "fast" vs B "pitcher"').count() >= 1
        assert "bert_word_a=4" in page.url and "pitcher" in page.url.replace("+", " ")
    finally:
        srv.stop()
