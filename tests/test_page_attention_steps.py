"""The attention page's "How one weight is computed" sections under AppTest: every plotted
number is the model's own (``lab.views.weight_steps`` of the model's attention steps), the
lesson's padding step opens the block's section on a padded key, quiz mode holds back the
softmax, and awkward links and sentences give messages, never tracebacks."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from lab import figures
from lab.lesson import DEMOS
from lab.models.layers import MASK_BIAS
from lab.models.transformer import run_block
from lab.tokenize import DEFAULT_A, DEFAULT_B
from tests.conftest import ROOT
from tests.specs import chart_keyed, click_cell, values

PADDING_DEMO = next(d for d in DEMOS if d.title == "Padding must be masked")


def page(**params: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages/attention.py"), default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def rerun(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def section_charts(at: AppTest, kind: str = "block") -> list[str]:
    """The keys of the step section's charts, in page order."""
    return [c.key for c in at.get("plotly_chart") if c.key.startswith("att_s") and c.key.endswith(f"_{kind}")]


def traces(at: AppTest, panel: str, kind: str = "block") -> list[dict]:
    """The traces of one step (a panel of ``figures.stacked``, by name; K and V: their charts)."""
    if panel in ("keys", "values"):
        return chart_keyed(at, f"att_s{panel}_{kind}")["data"][:1]
    return [t for key in section_charts(at, kind) for t in chart_keyed(at, key)["data"] if t.get("name") == panel]


def panels(at: AppTest, kind: str = "block") -> list[str]:
    """The steps drawn, in page order."""
    names = [t.get("name") or key[5:-len(kind) - 1] for key in section_charts(at, kind)
             for t in chart_keyed(at, key)["data"]]
    return list(dict.fromkeys(names))


def bars(at: AppTest, panel: str, kind: str = "block") -> dict[int, float]:
    """Key position -> plotted value of one bar step (bars only): "dots", "scores", "mask", "softmax"."""
    bar = next(t for t in traces(at, panel, kind) if t["type"] == "bar")
    return dict(zip((int(x) for x in values(bar["x"])), (float(y) for y in values(bar["y"]))))


def crosses(at: AppTest, kind: str = "block") -> list[int]:
    found = [t for t in traces(at, "mask", kind) if t["type"] == "scatter"]
    return [int(x) for x in values(found[0]["x"])] if found else []


def strip(at: AppTest, panel: str, kind: str = "block") -> np.ndarray:
    return np.asarray(values(traces(at, panel, kind)[0]["z"]), float)


def titles(at: AppTest, kind: str = "block") -> str:
    """The steps' titles, as one line."""
    return " | ".join(a["text"].replace("<br>", " ") for key in section_charts(at, kind)
                      for a in chart_keyed(at, key)["layout"].get("annotations", []))


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "warning", "info") for e in at.get(kind))


def test_the_lesson_padding_step_opens_the_section_on_a_padded_key():
    params = dict(parse_qsl(urlsplit(PADDING_DEMO.url()).query))
    at = page(**params)
    run = run_block([DEFAULT_A, DEFAULT_B], use_mask=False)
    key = int(params["att_sk_block"])
    assert run.batch.tokens[0][key] == "[PAD]"  # the link's key is a padded one of sentence A
    # the link opens in quiz mode on a projector: every step waits behind its question until
    # revealed (the question first, on the first screen)
    assert ("proj", "1") in PADDING_DEMO.params
    assert section_charts(at) == []
    at.button(key="_quiz_reveal_att_steps_block").click()
    rerun(at)
    assert 'neuron view, key "[PAD]"' in titles(at)
    # the question, answered by the numbers: with the mask off the [PAD] key gets real weight
    weights = bars(at, "softmax")
    assert weights[key] > 0 and crosses(at) == []
    assert "real weight, taken from the real words" in texts(at)
    # the mask on: the cross of the mask's bias, and exactly 0
    at.toggle(key="_w_att_mask").set_value(True)
    rerun(at)
    assert crosses(at) == [8, 9]
    labels = traces(at, "mask")[1]["text"]
    assert labels == [figures.power_of_ten(MASK_BIAS), ""] == ["−10⁹", ""]
    weights = bars(at, "softmax")
    assert weights[8] == weights[9] == 0.0 and abs(sum(weights.values()) - 1) < 1e-6
    assert "exactly zero" in texts(at)


def test_the_block_section_plots_the_blocks_own_numbers():
    at = page(att_steps_block="1", att_block_head="2", att_block_row="1", att_sq_block="6")
    run = run_block([DEFAULT_A, DEFAULT_B])
    s = run.steps
    w = bars(at, "softmax")
    np.testing.assert_allclose([w[j] for j in sorted(w)], run.attentions[1, 2, 6], atol=1e-6)
    np.testing.assert_allclose(strip(at, "output")[0], s.context[1, 2, 6], atol=1e-6)
    np.testing.assert_allclose(strip(at, "keys"), s.k[1, 2], atol=1e-6)
    np.testing.assert_allclose(strip(at, "values"), s.v[1, 2], atol=1e-6)
    np.testing.assert_allclose(strip(at, "x")[0], s.x[1, 6], atol=1e-6)
    np.testing.assert_allclose(strip(at, "q")[0], s.q[1, 2, 6], atol=1e-6)
    dots = bars(at, "dots")
    np.testing.assert_allclose([dots[j] for j in sorted(dots)], s.k[1, 2] @ s.q[1, 2, 6], atol=1e-5)
    # a click on a key's bar opens it in the neuron view: q, k_j and their product
    at = click_cell(at, "att_sdots_block", 3, 0)
    n = strip(at, "neuron")
    np.testing.assert_allclose(n, [s.q[1, 2, 6], s.k[1, 2, 3], s.q[1, 2, 6] * s.k[1, 2, 3]], atol=1e-6)
    assert at.query_params["att_sk_block"] == "3"


def test_the_bert_section_follows_the_head_views_layer_and_head(embedded_bert):
    at = page(att_steps_bert="1", att_layer="3", att_bert_head="7", att_bert_row="0", att_sq_bert="3")
    out = embedded_bert.run([DEFAULT_A, DEFAULT_B])  # the page's batch mode
    w = bars(at, "softmax", "bert")
    assert len(w) == out.mask.shape[1]  # every key of the padded row, [PAD] included
    np.testing.assert_allclose([w[j] for j in sorted(w)], out.attentions[3, 0, 7, 3], atol=1e-6)
    padded = np.flatnonzero(out.mask[0] == 0)
    assert len(padded) and crosses(at, "bert") == list(padded)
    assert all(w[j] == 0.0 for j in padded)
    assert "BERT layer 4, head 8" in texts(at) and "no switch to turn its mask off" in texts(at)


def test_quiz_mode_holds_back_the_softmax_until_revealed():
    at = page(att_steps_block="1", quiz="1")
    # the scores, which answer the question, are drawn; the softmax and what follows are not
    assert panels(at) == ["x", "q", "keys", "values", "dots", "scores", "mask"]
    assert not any(s.key == "_w_att_temp_block" for s in at.slider)
    assert any("Which key will" in m.value for m in at.markdown)
    at.button(key="_quiz_reveal_att_steps_block").click()
    rerun(at)
    assert panels(at)[-3:] == ["softmax", "output", "neuron"]


def test_a_temperature_other_than_one_is_marked_not_the_model():
    at = page(att_steps_block="1", att_temp_block="4.0")
    said = titles(at).split(" | ")
    assert [t.startswith(("5 ·", "6 ·")) for t in said if "NOT THE MODEL" in t] == [True, True]
    assert "temperature 4" in said[-3]
    flatter = bars(at, "softmax")
    at = page(att_steps_block="1")
    assert "NOT THE MODEL" not in titles(at)
    model = bars(at, "softmax")  # t = 4 flattens the model's weights; both sum to 1
    assert abs(sum(flatter.values()) - 1) < 1e-6 and max(flatter.values()) < max(model.values())


@pytest.mark.parametrize("params, message", [
    ({"att_sq_block": "abc"}, "is not a whole number"),
    ({"att_sq_block": "999"}, "cannot be shown"),
    ({"att_sk_block": "-7"}, ""),
    ({"att_sk_block": "1e9"}, "is not a whole number"),
    ({"att_temp_block": "nan"}, "is not a number"),
    ({"att_temp_block": "0"}, "is outside its range"),
    ({"att_temp_block": "100"}, "is outside its range"),
    ({"att_temp_block": "inf"}, "is not a finite number"),
    ({"a": "   "}, "Sentence A: it is empty"),
    ({"b": "🙂🙂"}, "Sentence B: it has no letters"),
    ({"b": "bank river " * 60}, "first 64"),
])
def test_awkward_links_and_sentences_give_messages(params, message):
    at = page(att_steps_block="1", **params)
    shown = "\n".join(str(e.value) for kind in ("info", "warning") for e in at.get(kind))
    assert message in shown
    assert not at.error or all("Mask off" in e.value for e in at.error)
