"""What a person does on the ELMo vs BERT page, in a real browser."""

import io
import re

import numpy as np
import pytest

from tests.browser import click_pill, type_sentence, wait_idle

pytestmark = pytest.mark.browser

TITLE = "at every layer of both models"
BERT, ELMO = "all-MiniLM-L6-v2 (embedded)", "ELMo-mini (embedded)"


def curves(page) -> dict[str, list[float]]:
    """The solid (cosine) lines of the comparison chart, read from the drawn Plotly figure."""
    return page.evaluate("""(title) => {
        for (const el of document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')) {
            if (!(el.layout.title.text || '').includes(title)) continue;
            const out = {};
            for (const t of el._fullData) if (!t.name.includes('baseline')) out[t.name] = Array.from(t.y);
            return out;
        }
        return null;
    }""", TITLE)


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
    page.wait_for_url(re.compile(r"cmp_wa=2\b"), timeout=120_000)  # written when the page run ends


def test_both_models_vectors_download_with_bert_attentions(app_server, page):
    page.goto(app_server + "/compare")
    page.wait_for_selector("text=One word, both models")
    wait_idle(page)
    for label, model in (("all-MiniLM-L6-v2", "MiniLM"), ("ELMo-mini", "ELMo-mini")):
        with page.expect_download(timeout=60_000) as info:
            page.get_by_role("button", name=f"Download the {label}").click()
        z = np.load(io.BytesIO(open(info.value.path(), "rb").read()), allow_pickle=True)
        assert model in str(z["model"]) and z["layers"].shape[1] == 2
        # the page holds BERT's run without its attention probabilities; the download has them
        assert ("attentions" in z) == (model == "MiniLM")
