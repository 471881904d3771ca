"""What a person does on the ELMo vs BERT page, in a real browser."""

import io
import re

import numpy as np
import pytest

from lab.vectors import INPUT_LAYER
from tests.browser import click_pill, download, record_requests, type_sentence, wait_idle

pytestmark = pytest.mark.browser

TITLE = "at every layer of both models"
BERT, ELMO = "all-MiniLM-L6-v2 (embedded)", "ELMo-mini (embedded)"


def lines(page, title: str = TITLE) -> dict[str, list[float]]:
    """Every line of the chart whose title holds ``title``, read from the drawn Plotly figure."""
    return page.evaluate("""(title) => {
        for (const el of document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')) {
            if (!(el.layout.title.text || '').includes(title)) continue;
            const out = {};
            for (const t of el._fullData) out[t.name] = Array.from(t.y);
            return out;
        }
        return null;
    }""", title)


def curves(page) -> dict[str, list[float]]:
    """The solid (cosine) lines of the comparison chart."""
    return {name: y for name, y in lines(page).items() if "baseline" not in name}


def neighbour_lists(page) -> list[str]:
    """The text of each model's neighbour list (markdown ordered lists), left to right."""
    return page.locator("ol").all_inner_texts()


def test_type_two_sentences_click_a_word_and_both_curves_change(app_server, page):
    page.goto(app_server + "/compare")
    page.wait_for_selector("text=One word, both models")
    wait_idle(page)
    type_sentence(page, "Sentence A", "The pitcher threw a fast ball.")
    type_sentence(page, "Sentence B", "She poured water from the pitcher into a glass.")
    page.wait_for_selector(f'svg text:has-text("{ELMO}: “pitcher” vs “pitcher”")')
    before = curves(page)
    assert set(before) == {f"{BERT}: “pitcher” vs “pitcher”", f"{ELMO}: “pitcher” vs “pitcher”"}

    click_pill(page, "Word in sentence A", "threw")
    page.wait_for_selector(f'svg text:has-text("{ELMO}: “threw” vs “pitcher”")')
    after = curves(page)
    for model in (BERT, ELMO):
        old, new = before[f"{model}: “pitcher” vs “pitcher”"], after[f"{model}: “threw” vs “pitcher”"]
        assert len(old) == len(new) and old != new  # both models' curves changed
    page.wait_for_url(re.compile(r"cmp_word_a=2\b"), timeout=120_000)  # written when the page run ends


def test_both_models_vectors_download_with_bert_attentions(app_server, page):
    """Both downloads, one after the other as a person clicks them; a download runs nothing
    (a rerun could sweep the built file before the browser fetched it: a 404, no file)."""
    sent = record_requests(page)
    page.goto(app_server + "/compare")
    page.wait_for_selector("text=One word, both models")
    wait_idle(page)
    for label, model in (("BERT", "MiniLM"), ("ELMo", "ELMo-mini")):
        _, data = download(page, page.get_by_role("button", name=f"Download the {label} vectors").click, sent)
        z = np.load(io.BytesIO(data))
        assert model in str(z["model"]) and z["layers"].shape[1] == 2
        # the page holds BERT's run without its attention probabilities; the download has them
        assert ("attentions" in z) == (model == "MiniLM")
    assert sent.count("backend_operation_request") == 2  # one deferred file each


def test_the_baseline_switch_and_another_neighbour_layer(app_server, page):
    """The baseline switch and a neighbour layer, each in a fragment of its own: the section
    redraws with the right numbers, the other model's list stays, and the URL keeps both."""
    page.goto(app_server + "/compare")
    page.wait_for_selector(f'svg text:has-text("{ELMO}: baseline (random words)")')
    wait_idle(page)
    before, lists = lines(page), neighbour_lists(page)
    assert len(lists) == 2
    page.get_by_text("Baseline-adjusted similarity: (cos").click()
    page.wait_for_selector('svg text:has-text("Baseline-adjusted similarity at every layer")')
    after = lines(page, "Baseline-adjusted similarity at every layer")
    for model in (BERT, ELMO):
        name = next(n for n in before if n.startswith(f"{model}: “"))
        cos, base = np.array(before[name]), np.array(before[f"{model}: baseline (random words)"])
        np.testing.assert_allclose(after[name], (cos - base) / (1 - base), atol=1e-6)
        np.testing.assert_allclose(after[f"{model}: baseline (random words)"], 0.0, atol=1e-9)
    page.wait_for_url(re.compile(r"cmp_adjusted=1\b"), timeout=120_000)
    wait_idle(page)

    layer = page.get_by_role("combobox", name=f"{ELMO} layer")
    layer.scroll_into_view_if_needed()
    layer.click()
    page.get_by_role("option").filter(has_text=INPUT_LAYER).click()
    page.wait_for_url(re.compile(r"cmp_layer_elmo=0\b"), timeout=120_000)
    wait_idle(page)
    now = neighbour_lists(page)
    assert now[0] == lists[0] and now[1] != lists[1]  # ELMo's list at its word layer; BERT's as it was
