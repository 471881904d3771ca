"""The README's lesson links open the views they describe (each page run with the link's
query string: no error, no warning, and every setting in the link kept)."""

import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

LINKS = re.findall(r"\]\((http://localhost:8501/[^)\s]+)\)", (ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_lesson_has_links():
    assert len(LINKS) >= 4


@pytest.mark.parametrize("link", LINKS)
def test_a_lesson_link_opens_its_view(link):
    url = urlsplit(link)
    page = url.path.strip("/")
    params = dict(parse_qsl(url.query))
    at = AppTest.from_file(str(ROOT / "app_pages" / f"{page}.py"), default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    problems = [w.value for w in at.warning] + [e.value for e in at.error if not e.value.startswith("Mask off")]
    assert not problems  # (the mask-off demo's red notice is the point of that demo)
    for k, v in params.items():
        assert at.query_params.get(k) == v, f"{k} is not kept"
