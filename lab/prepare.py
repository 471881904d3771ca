"""``python -m lab prepare``: compute the views a class will open, ahead of class.

    python -m lab prepare [--source S] [--elmo-source S] [LINK ...]

A fresh server draws a BERT or ELMo view it finds in the disk store (``lab.stored``)
before TensorFlow has even been imported; a view nobody has opened on this machine waits
for the import, the model and its first run (about 14 s on the 2-core machine). This
command stores, for the embedded BERT and ELMo-mini (or ``--source``, ``--elmo-source``),
the views of the app's default sentences (the BERT page, which the ELMo vs BERT page
shares, the attention page as a batch and as a pair, and the ELMo page with its model's
facts) and of every app link given (``http://localhost:8501/bert?a=...&b=...``: the page,
its sentences, the attention page's ``att_mode`` and a link's model source). A view
already stored is left as it is, without loading the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable
from urllib.parse import parse_qs, urlsplit

from lab import sources, stored
from lab.tokenize import DEFAULT_A, DEFAULT_B, ELMO_MAX_WORDS, prepare_text, split_words

# pages whose run a fresh server can read from the store -> (the model family, whether the run keeps attentions)
STORED_PAGES = {"bert": ("bert", False), "compare": ("bert", False), "attention": ("bert", True),
                "elmo": ("elmo", False)}
FAMILY_NAMES = {"bert": "BERT", "elmo": "ELMo"}
# app pages with no stored view -> why (the home page answers at "/", "/index" and "/home")
NOT_STORED = dict.fromkeys(("", "index", "home"), "the home page runs no model")


@dataclass(frozen=True)
class View:
    """One model run as a page asks for it; ``source`` is the source of the page's family."""

    page: str
    sentences: tuple[str, str]
    pair: bool = False
    source: str = sources.EMBEDDED

    @property
    def family(self) -> str:
        return STORED_PAGES[self.page][0]

    @property
    def attentions(self) -> bool:
        return STORED_PAGES[self.page][1]

    def words(self) -> tuple[tuple[str, ...], ...]:
        """The sentences as the ELMo page's word tokens (each cut to its first ``ELMO_MAX_WORDS``)."""
        return tuple(tuple(split_words(s)[:ELMO_MAX_WORDS]) for s in self.sentences)

    def key(self) -> str | None:
        """The key of the page's run."""
        if self.family == "elmo":
            return stored.elmo_key(self.source, self.words())
        return stored.bert_key(self.source, self.sentences, self.pair, self.attentions)

    def keys(self) -> list[str | None]:
        """Every key the page reads before its model loads: its run's, and the ELMo page's
        model facts (``lab.stored.ModelFacts``)."""
        if self.family == "elmo":
            return [self.key(), stored.run_key("elmo", self.source, "facts") if stored.enabled() else None]
        return [self.key()]

    def compute(self, model, store: stored.RunStore) -> None:
        """Run ``model`` for this view and write what the page reads to ``store``."""
        if self.family == "elmo":
            stored.elmo_run(model, self.source, self.words(), store=store)
            stored.model_facts(model, "elmo", self.source, store=store)
        else:
            stored.bert_run(model, self.source, self.sentences, self.pair, self.attentions, store=store)

    def describe(self) -> str:
        a, b = (s if len(s) <= 40 else s[:39] + "…" for s in self.sentences)
        mode = " (pair)" if self.pair else ""
        return f"{self.page}{mode}: {a!r} / {b!r}"


def default_views(source: str = sources.EMBEDDED, elmo_source: str = sources.EMBEDDED) -> list[View]:
    """The default sentences' views: the BERT page (its run is also the ELMo vs BERT
    page's), the attention page as a batch and as a packed pair, and the ELMo page
    (``elmo_source``)."""
    defaults = (DEFAULT_A, DEFAULT_B)
    return [View("bert", defaults, source=source), View("attention", defaults, source=source),
            View("attention", defaults, pair=True, source=source), View("elmo", defaults, source=elmo_source)]


def view_from_link(link: str, source: str = sources.EMBEDDED, elmo_source: str = sources.EMBEDDED) -> View:
    """The view an app link opens, with its sentences cleaned as the sidebar cleans them
    and its model's source (the link's, else ``source`` for BERT, ``elmo_source`` for
    ELMo). Raises ValueError, saying why, for a page without a stored view or unusable text."""
    parts = urlsplit(link.strip())
    page = parts.path.strip("/").rsplit("/", 1)[-1]
    if page in NOT_STORED:
        raise ValueError(NOT_STORED[page])
    if page not in STORED_PAGES:
        raise ValueError(f"not a page of the app: {parts.path or link!r} (pages: {', '.join(STORED_PAGES)})")
    query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    texts = []
    for name, key, default in (("Sentence A", "a", DEFAULT_A), ("Sentence B", "b", DEFAULT_B)):
        try:
            texts.append(prepare_text(query.get(key, default))[0])
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    family = STORED_PAGES[page][0]
    link_source = query.get(f"{family}_src", "")  # the sidebar's source picker (ui.frame)
    if link_source == "custom":
        link_source = query.get(f"{family}_custom", "").strip()
    pair = page == "attention" and query.get("att_mode") == "pair"
    return View(page, (texts[0], texts[1]), pair, link_source or (elmo_source if family == "elmo" else source))


STORED, PRESENT, SKIPPED = "stored", "already stored", "not stored"


def stored_defaults(source: str = sources.EMBEDDED, elmo_source: str = sources.EMBEDDED,
                    store: stored.RunStore | None = None) -> tuple[int, int]:
    """(how many of the default views are stored, how many there are), without loading a model."""
    store = stored.default_store() if store is None else store
    views = default_views(source, elmo_source)
    return sum(all(store.has(k) for k in v.keys()) for v in views), len(views)


def prepare(views: list[View], load: Callable[[str, str], object], store: stored.RunStore | None = None,
            progress: Callable[[str], None] = lambda line: None) -> list[tuple[View, str, str]]:
    """Store every view's run that the store lacks; ``load(family, source)`` gives the model
    (called once per family and source, only when a view must be computed). Returns
    (view, STORED, PRESENT or SKIPPED, why it was skipped)."""
    store = stored.default_store() if store is None else store
    models: dict[tuple[str, str], object] = {}
    done = []
    for view in views:
        keys = view.keys()
        if None in keys:
            done.append((view, SKIPPED, "the model has no files on this machine to key its runs by"))
        elif all(store.has(k) for k in keys):
            done.append((view, PRESENT, ""))
        else:
            which = (view.family, view.source)
            if which not in models:
                progress(f"loading {FAMILY_NAMES[view.family]} ({view.source})...")
                models[which] = load(*which)
            view.compute(models[which], store)
            done.append((view, STORED, "") if all(store.has(k) for k in keys) else
                        (view, SKIPPED, "the store refused it (too large, or its folder cannot be written)"))
        _, status, why = done[-1]
        progress(f"{status}: {view.describe()}" + (f" ({why})" if why else ""))
    return done
