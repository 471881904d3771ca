"""The pages of the app, in navigation order (used by app.py and the home page)."""

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PageInfo:
    path: str
    title: str
    icon: str
    blurb: str
    default: bool = False

    @property
    def url_path(self) -> str:
        """The file's stem: Streamlit's client checks a URL path against the pages/ folder."""
        return Path(self.path).stem


_BLURBS = {
    "home": "What this lab shows and how to use it.",
    "bert": "How BERT cuts text into word pieces, and how one word's vector changes layer by layer in "
            "two sentences.",
    "elmo": "What each ELMo layer does to a word, the scalar mix that blends them, and why ELMo vectors "
            "can change from run to run.",
    "attention": "One Transformer block with its padding mask made visible, then every head of a real "
                 "BERT: click a head to read it, a token to see where it looks.",
    "compare": "One word through both models on a shared depth axis, each layer read against its "
               "anisotropy baseline; its nearest neighbours and a map of its uses in a reference corpus, "
               "and the sense test.",
}

PAGES = tuple(
    PageInfo(f"pages/{stem}.py", title, icon, _BLURBS[stem], default=stem == "home")
    for stem, title, icon in (
        ("home", "Home", ":material/home:"),
        ("bert", "BERT WordPiece", ":material/extension:"),
        ("elmo", "ELMo layers", ":material/layers:"),
        ("attention", "Transformer attention", ":material/hub:"),
        ("compare", "ELMo vs BERT", ":material/compare_arrows:"),
    )
)
