"""Quiz mode on the BERT and ELMo pages: the per-layer figure and its numbers wait for Reveal,
and the revealed answer is the one lab's numbers give. (The ELMo vs BERT page: test_page_compare.)"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from lab import quiz
from tests.conftest import ROOT
from tests.specs import tables
from tests.test_page_bert import A, B, expected_curve
from tests.test_page_elmo import NAMES, defaults_out, elmo, expected, mix_of  # noqa: F401 - fixtures
from ui.text import md_escape


def run(page: str, **params) -> AppTest:
    at = AppTest.from_file(str(ROOT / page), default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def titles(at) -> str:
    return " ".join(el.proto.spec for el in at.get("plotly_chart"))


def reveal_and_check(at, key: str, right: str) -> None:
    assert any("least alike" in m.value for m in at.markdown)
    at.button(key=f"_quiz_reveal_{key}").click().run()
    assert not at.exception
    assert any(f"Right answer: **{md_escape(right)}**" in s.value for s in at.success)
    assert f"{md_escape(right)} ✓" in at.radio[0].options


@pytest.mark.parametrize("params", [{"quiz": "1"}, {"quiz": "1", "proj": "1"}])
def test_bert_page_hides_the_curve_until_reveal(embedded_bert, params):
    at = run("app_pages/bert.py", **params)
    assert not at.exception
    assert not at.get("plotly_chart") and not at.metric  # no figure, no value
    assert all("input_mask" in list(t.index) for t in tables(at))  # only the WordPiece tables
    # says what else waits: under the Reveal button, or on a projector in its help
    said = [c.value for c in at.caption] + [at.button(key="_quiz_reveal_bert").help or ""]
    assert any("sections 3 and 4" in line for line in said)
    assert not any(h.value.startswith(("3 ·", "4 ·")) for h in at.header)
    out = embedded_bert.run([A, B])
    cos = expected_curve(out, 2, 6)
    right = quiz.least_alike(("bank", "bank"), {out.short_label: (out.layer_names, cos)}).right
    reveal_and_check(at, "bert", right)
    assert "Cosine similarity at every layer" in titles(at) and at.metric
    # (in projector mode section 1 is folded away, under its title)
    folded = [e.label[0] for e in at.expander if e.label.startswith("1 ·")]
    assert folded + [h.value[0] for h in at.header] == ["1", "2", "3", "4"]


def test_elmo_page_hides_the_bars_until_reveal(elmo, defaults_out):  # noqa: F811 - pytest fixtures
    at = run("app_pages/elmo.py", quiz="1")
    assert not at.exception
    assert "each layer" not in titles(at) and "every word of" not in titles(at)
    assert not [t for t in tables(at) if list(t.index)[:1] == ["cosine"]]
    w, g = mix_of(elmo)
    cos = expected(defaults_out, 2, 6, w, g)
    right = quiz.least_alike(("bank", "bank"), {elmo.short_label: (NAMES, cos)}).right
    reveal_and_check(at, "elmo", right)
    assert "each layer" in titles(at)


def test_the_switch_lives_in_the_url_and_survives_a_page_switch():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.sidebar.toggle[1].set_value(True).run()
    assert at.query_params["quiz"] == "1"
    at.switch_page("app_pages/bert.py").run()
    assert at.sidebar.toggle[1].value is True and not at.get("plotly_chart")
