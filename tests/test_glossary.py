"""The glossary has one source (``lab.glossary``): docs/glossary.md is what it writes, and the
Lesson page shows every term."""

from streamlit.testing.v1 import AppTest

from lab import glossary
from tests.conftest import ROOT


def test_docs_glossary_is_the_module_s():
    written = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert written == glossary.markdown(), "docs/glossary.md is stale: python -m lab.glossary > docs/glossary.md"


def test_terms_are_sorted_and_short():
    terms = list(glossary.TERMS)
    assert terms == sorted(terms, key=str.casefold)
    for term, text in glossary.TERMS.items():
        assert text.strip() and text.count(". ") + text.count(".\n") <= 2, term  # one or two sentences


def test_the_words_the_issue_found_unexplained_are_there():
    needed = {"Cosine", "Anisotropy baseline", "WordPiece", "Scalar mix", "ROC AUC", "PCA", "p50 / p95", "RSS",
              "WAL", "XSRF", "SavedModel"}
    assert needed <= set(glossary.TERMS)


def test_the_lesson_page_shows_every_term():
    at = AppTest.from_file(str(ROOT / "app_pages/lesson.py"), default_timeout=120).run()
    assert not at.exception
    (words,) = [e for e in at.expander if e.label == "Glossary: the words this app uses"]
    shown = "\n".join(m.value for m in words.markdown)
    for term, text in glossary.TERMS.items():
        assert f"**{term}**: {text}" in shown
