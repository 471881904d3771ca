"""The pages of the app, in navigation order (used by app.py and the home page)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class PageInfo:
    path: str
    title: str
    icon: str
    url_path: str
    blurb: str
    default: bool = False


PAGES = (
    PageInfo("pages/home.py", "Home", ":material/home:", "home", "What this lab shows and how to use it.", default=True),
    PageInfo("pages/bert.py", "BERT WordPiece", ":material/extension:", "bert",
             "How BERT cuts text into word pieces, and how one word's vector changes layer by "
             "layer in two sentences."),
    PageInfo("pages/elmo.py", "ELMo layers", ":material/layers:", "elmo",
             "What each ELMo layer does to a word, the scalar mix that blends them, and why "
             "ELMo vectors can change from run to run."),
    PageInfo("pages/attention.py", "Transformer attention", ":material/hub:", "attention",
             "One Transformer block with its padding mask made visible, then every head of a "
             "real BERT: click a token to see where it looks."),
    PageInfo("pages/compare.py", "ELMo vs BERT", ":material/compare_arrows:", "compare",
             "One word through both models on a shared depth axis, each layer read against its "
             "anisotropy baseline; nearest neighbours in a reference corpus and the sense test."),
)
