"""``python -m lab prepare``: compute the BERT views a class will open, ahead of class.

    python -m lab prepare [--source S] [LINK ...]

A fresh server draws a BERT view it finds in the disk store (``lab.stored``) before
TensorFlow has even been imported; a view nobody has opened on this machine waits for
the import, the model and its first run (about 14 s on the 2-core machine). This
command stores, for the embedded BERT (or ``--source``), the views of the app's default
sentences (the BERT page, which the ELMo vs BERT page shares, and the attention page as
a batch and as a pair) and of every app link given (``http://localhost:8501/bert?a=...&b=...``:
the page, its sentences, the attention page's ``att_mode`` and a link's BERT source). A
view already stored is left as it is, without loading the model. The ELMo page has no
stored view (it asks its model for its layers' names and limits as it starts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable
from urllib.parse import parse_qs, urlsplit

from lab import sources, stored
from lab.tokenize import DEFAULT_A, DEFAULT_B, prepare_text

# pages whose BERT run a fresh server can read from the store -> whether the run keeps attentions
STORED_PAGES = {"bert": False, "compare": False, "attention": True}
# app pages with no stored view -> why (the home page answers at "/", "/index" and "/home")
NOT_STORED = {"elmo": "the ELMo page loads its model before its first chart; nothing to store",
              **dict.fromkeys(("", "index", "home"), "the home page runs no model")}


@dataclass(frozen=True)
class View:
    """One BERT run as a page asks for it."""

    page: str
    sentences: tuple[str, str]
    pair: bool = False
    source: str = sources.EMBEDDED

    @property
    def attentions(self) -> bool:
        return STORED_PAGES[self.page]

    def key(self) -> str | None:
        return stored.bert_key(self.source, self.sentences, self.pair, self.attentions)

    def describe(self) -> str:
        a, b = (s if len(s) <= 40 else s[:39] + "…" for s in self.sentences)
        mode = " (pair)" if self.pair else ""
        return f"{self.page}{mode}: {a!r} / {b!r}"


def default_views(source: str = sources.EMBEDDED) -> list[View]:
    """The default sentences' views: the BERT page (its run is also the ELMo vs BERT
    page's) and the attention page as a batch and as a packed pair."""
    defaults = (DEFAULT_A, DEFAULT_B)
    return [View("bert", defaults, source=source), View("attention", defaults, source=source),
            View("attention", defaults, pair=True, source=source)]


def view_from_link(link: str, source: str = sources.EMBEDDED) -> View:
    """The BERT view an app link opens, with its sentences cleaned as the sidebar cleans
    them. Raises ValueError, saying why, for a page without a stored view or unusable text."""
    parts = urlsplit(link.strip())
    page = parts.path.strip("/").rsplit("/", 1)[-1]
    if page in NOT_STORED:
        raise ValueError(NOT_STORED[page])
    if page not in STORED_PAGES:
        raise ValueError(f"not a page of the app: {parts.path or link!r} (pages: {', '.join(STORED_PAGES)}, elmo)")
    query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    texts = []
    for name, key, default in (("Sentence A", "a", DEFAULT_A), ("Sentence B", "b", DEFAULT_B)):
        try:
            texts.append(prepare_text(query.get(key, default))[0])
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    link_source = query.get("bert_src", "")
    if link_source == "custom":
        link_source = query.get("bert_custom", "").strip()
    pair = page == "attention" and query.get("att_mode") == "pair"
    return View(page, (texts[0], texts[1]), pair, link_source or source)


STORED, PRESENT, SKIPPED = "stored", "already stored", "not stored"


def stored_defaults(source: str = sources.EMBEDDED, store: stored.RunStore | None = None) -> tuple[int, int]:
    """(how many of the default views are stored, how many there are), without loading a model."""
    store = stored.default_store() if store is None else store
    views = default_views(source)
    return sum(store.has(v.key()) for v in views), len(views)


def prepare(views: list[View], load: Callable[[str], object], store: stored.RunStore | None = None,
            progress: Callable[[str], None] = lambda line: None) -> list[tuple[View, str, str]]:
    """Store every view's run that the store lacks; ``load(source)`` gives the model (called
    once per source, only when a view must be computed). Returns (view, STORED, PRESENT or
    SKIPPED, why it was skipped)."""
    store = stored.default_store() if store is None else store
    models: dict[str, object] = {}
    done = []
    for view in views:
        key = view.key()
        if key is None:
            done.append((view, SKIPPED, "the model has no files on this machine to key its runs by"))
        elif store.has(key):
            done.append((view, PRESENT, ""))
        else:
            if view.source not in models:
                progress(f"loading BERT ({view.source})...")
                models[view.source] = load(view.source)
            stored.bert_run(models[view.source], view.source, view.sentences, view.pair, view.attentions,
                            store=store)
            done.append((view, STORED, "") if store.has(key) else
                        (view, SKIPPED, "the store refused it (too large, or its folder cannot be written)"))
        _, status, why = done[-1]
        progress(f"{status}: {view.describe()}" + (f" ({why})" if why else ""))
    return done
