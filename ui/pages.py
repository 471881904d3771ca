"""The pages of the app, in navigation order (app.py's navigation and the home page's cards).

Each page lives at its file's stem (``/bert``); the home page is the default, served at
``/``, and a link to ``/home`` reaches a hidden page that switches to it, so that an old or
hand-typed link works too."""

from dataclasses import dataclass
from pathlib import Path

import streamlit as st


@dataclass(frozen=True)
class PageInfo:
    path: str
    title: str
    icon: str
    blurb: str
    default: bool = False

    @property
    def url_path(self) -> str:
        """The file's stem: the page's address."""
        return Path(self.path).stem


_BLURBS = {
    "home": "What this lab shows and how to use it.",
    "lesson": "A 20-minute lesson in five demos, the class board the last: ask each question, then open the "
              "view that answers it. And a glossary of the words the app uses.",
    "bert": "How BERT cuts text into word pieces, and how one word's vector changes layer by layer in "
            "two sentences.",
    "elmo": "What each ELMo layer does to a word, the scalar mix that blends them, and why ELMo vectors "
            "can change from run to run.",
    "attention": "One Transformer block with its padding mask made visible, then every head of a real "
                 "BERT: click a head to read it, a token to see where it looks.",
    "compare": "One word through both models on a shared depth axis, each layer read against its "
               "anisotropy baseline; its nearest neighbours and a map of its uses in a reference corpus, "
               "and the sense test.",
    "probes": "What each layer knows: part of speech, supersense and position read off every layer of both "
              "models by linear probes, each against a control task; live on your sentence.",
    "board": "The room writes sentences with one word; the projector shows every use, layer by layer, "
             "in both models, sorting itself by sense.",
}

PAGES = tuple(
    PageInfo(f"app_pages/{stem}.py", title, icon, _BLURBS[stem], default=stem == "home")
    for stem, title, icon in (
        ("home", "Home", ":material/home:"),
        ("lesson", "Lesson", ":material/school:"),
        ("bert", "BERT WordPiece", ":material/extension:"),
        ("elmo", "ELMo layers", ":material/layers:"),
        ("attention", "Transformer attention", ":material/hub:"),
        ("compare", "ELMo vs BERT", ":material/compare_arrows:"),
        ("probes", "What each layer knows", ":material/psychology:"),
        ("board", "Class board", ":material/groups:"),
    )
)


def navigation():
    """``st.navigation`` over ``PAGES`` and the hidden ``/home`` page."""
    pages = {p: st.Page(p.path, title=p.title, icon=p.icon, default=p.default,
                        url_path="index" if p.default else p.url_path)  # the default page lives at `/`
             for p in PAGES}
    home = next(page for p, page in pages.items() if p.default)
    to_home = st.Page(lambda: st.switch_page(home), title="Home", url_path=next(p.url_path for p in PAGES if p.default),
                      visibility="hidden")
    return st.navigation([*pages.values(), to_home])
