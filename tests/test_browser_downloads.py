"""Downloads in a real browser: a page's vectors (.npz), a table (CSV), a figure (PNG)."""

import csv
import io

import numpy as np
import pytest

from lab.vectors import INPUT_LAYER
from tests.browser import download, record_requests, wait_idle

pytestmark = pytest.mark.browser


@pytest.fixture
def sent(page) -> list[str]:
    """What the page asks of the server (``record_requests``), from before it opens."""
    return record_requests(page)


@pytest.fixture
def bert_page(app_server, page, sent):
    page.goto(app_server + "/bert")
    page.wait_for_selector("text=Three ways to compare the sentences")
    wait_idle(page)
    return page


def test_vectors_download_as_the_export_contract(bert_page, sent):
    name, data = download(bert_page, lambda: bert_page.get_by_role("button", name="Download these vectors").click(),
                          sent)
    assert name == "bert-vectors.npz"
    z = np.load(io.BytesIO(data))  # no pickle: it opens anywhere
    assert z["tokens"][0, :4].tolist() == ["[CLS]", "the", "central", "bank"]
    assert z["layers"].shape == (7, 2, 12, 384) and z["attentions"].shape == (6, 2, 12, 12, 12)
    assert list(z["layer_names"])[0] == INPUT_LAYER and "MiniLM" in str(z["model"])


def test_a_table_downloads_as_csv(bert_page, sent):
    # the WordPiece table of sentence A's button, by its key (Streamlit puts it in the element's class); the
    # first "CSV" button on the page can belong to another table while a section is being redrawn
    button = bert_page.locator(".st-key-wp_A_csv").get_by_role("button", name="CSV", exact=True)
    name, data = download(bert_page, lambda: button.click(), sent)
    assert name == "wp_A.csv"
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    assert rows[0][:3] == ["", "0", "1"]  # one column per position
    assert rows[1][:5] == ["token", "[CLS]", "the", "central", "bank"]  # the WordPiece table of sentence A


def test_a_figure_downloads_as_png_named_after_it(bert_page):
    chart = bert_page.locator('[data-testid="stPlotlyChart"]', has_text="Cosine similarity at every layer")
    chart.hover()
    button = chart.locator('.modebar-btn[data-title^="Download plot"]')
    name, data = download(bert_page, lambda: button.click())
    assert name == "cosine-similarity-at-every-layer.png"
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_the_attention_page_downloads_the_run_it_shows(app_server, page, sent):
    # packed as one pair: the download runs the model again (a session does not keep the
    # attentions of its run), with the page's sentences and its input mode
    page.goto(app_server + "/attention?att_mode=pair")
    page.wait_for_selector("text=Head view: one layer, one head")
    wait_idle(page)
    name, data = download(page, lambda: page.get_by_role("button", name="Download these vectors").click(), sent)
    assert name == "bert-pair-attention.npz"
    z = np.load(io.BytesIO(data))
    T = int(z["mask"][0].sum())  # real positions; "" tokens pad the row past them
    tokens = z["tokens"][0, :T].tolist()
    assert tokens[:4] == ["[CLS]", "the", "central", "bank"] and tokens.count("[SEP]") == 2
    assert z["attentions"].shape[:2] == (6, 1) and z["attentions"].shape[-1] >= T
    np.testing.assert_allclose(z["attentions"][:, 0, :, :T, :T].sum(-1), 1.0, atol=1e-5)
