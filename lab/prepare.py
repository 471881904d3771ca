"""``python -m lab prepare``: compute the views a class will open, ahead of class.

    python -m lab prepare [--source S] [--elmo-source S] [LINK ...]

A fresh server draws a BERT, ELMo or ELMo vs BERT view it finds on disk (``lab.stored``,
``lab.reference``) before TensorFlow has even been imported; a view nobody has opened on
this machine waits for the import, the models and their runs (and the ELMo vs BERT page's
first view also for both models' passes over the reference corpus, longer still). This
command stores, for the embedded BERT and ELMo-mini (or
``--source``, ``--elmo-source``), the views of the app's default sentences (the BERT page,
the attention page as a batch and as a pair, the ELMo page with its model's facts, and the
ELMo vs BERT page: both models' runs, facts and sense tests, and from the reference corpus
their anisotropy baselines and the neighbour index of their top layers) and of every app
link given (``http://localhost:8501/bert?a=...&b=...``: the page, its sentences, the
attention page's ``att_mode`` and a link's model sources). A view already stored is left as
it is, without loading a model. Servers, or another ``prepare``, computing the same view at
the same time share the work: each run and each reference-corpus entry is computed by one of
them while the others wait and read it (``lab.locks``); each still loads its own models.
It also trains and stores both models' layer probes (``lab.probes``, the *What each layer
knows* page; ``--no-probes`` leaves them out): under a minute for the embedded pair,
nothing once stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable
from urllib.parse import parse_qs, urlsplit

from lab import probe_data, probes, sources, stored
from lab.models import FAMILY_NAMES
from lab.reference import ReferenceStore
from lab.tokenize import DEFAULT_A, DEFAULT_B, ELMO_MAX_WORDS, prepare_text, split_words

# pages whose runs a fresh server can read from the store -> (the family of the page's
# ``source``, whether its BERT run keeps attentions); the ELMo vs BERT page also reads ELMo's
STORED_PAGES = {"bert": ("bert", False), "compare": ("bert", False), "attention": ("bert", True),
                "elmo": ("elmo", False)}
# app pages with no stored view -> why (the home page answers at "/", "/index" and "/home")
NOT_STORED = dict.fromkeys(("", "index", "home"), "the home page runs no model") | {
    "probes": "the probes page reads the models' stored probes, which prepare stores for the default models"}


@dataclass(frozen=True)
class PageLink:
    """What a page reads for two sentences before its models load; ``source`` is the source
    of the page's family (``family``), ``elmo_source`` the ELMo vs BERT page's ELMo."""

    page: str
    sentences: tuple[str, str]
    pair: bool = False
    source: str = sources.EMBEDDED
    elmo_source: str = sources.EMBEDDED

    @property
    def family(self) -> str:
        return STORED_PAGES[self.page][0]

    @property
    def attentions(self) -> bool:
        return STORED_PAGES[self.page][1]

    def models(self) -> list[tuple[str, str]]:
        """(family, source) of every model the page reads."""
        if self.page == "compare":
            return [("bert", self.source), ("elmo", self.elmo_source)]
        return [(self.family, self.source)]

    def words(self) -> tuple[tuple[str, ...], ...]:
        """The sentences as the ELMo page's word tokens (each cut to its first ``ELMO_MAX_WORDS``)."""
        return tuple(tuple(split_words(s)[:ELMO_MAX_WORDS]) for s in self.sentences)

    def key(self) -> str | None:
        """The key of the page's run (on the ELMo vs BERT page, BERT's)."""
        if self.family == "elmo":
            return stored.elmo_key(self.source, self.words())
        return stored.bert_key(self.source, self.sentences, self.pair, self.attentions)

    def keys(self) -> list[str | None]:
        """Every key of the run store the page reads before its models load: its run's, the
        ELMo page's model facts (``lab.stored.ModelFacts``), and on the ELMo vs BERT page both
        models' runs, facts and sense tests."""
        if self.page == "compare":
            on = stored.enabled()
            return [self.key(), stored.elmo_key(self.elmo_source, self.words())] + [
                k for family, source in self.models()
                for k in (stored.run_key(family, source, "facts") if on else None, stored.sense_key(family, source))]
        if self.family == "elmo":
            return [self.key(), stored.run_key("elmo", self.source, "facts") if stored.enabled() else None]
        return [self.key()]

    def is_stored(self, store: stored.RunStore, corpus: ReferenceStore | None) -> bool:
        """Whether every key is in ``store`` and, on the ELMo vs BERT page, what it reads of
        the reference ``corpus`` is on disk (not checked where ``corpus`` is None)."""
        if not all(store.has(k) for k in self.keys()):
            return False
        if self.page != "compare" or corpus is None:
            return True
        facts = [store.get(stored.run_key(family, source, "facts")) for family, source in self.models()]
        return all(f is not None and corpus.prepared(family, source, f.label)
                   for (family, source), f in zip(self.models(), facts))

    def compute(self, model: Callable[[str, str], object], store: stored.RunStore,
                corpus: ReferenceStore | None, progress: Callable[[str], None] = lambda line: None) -> None:
        """Run the models (``model(family, source)``) for this view and write what the page
        reads to ``store`` and, on the ELMo vs BERT page, to the reference ``corpus``'s cache."""
        if self.page == "compare":
            bert, elmo = (model(*m) for m in self.models())
            stored.bert_run(bert, self.source, self.sentences, attentions=False, store=store)
            stored.elmo_run(elmo, self.elmo_source, self.words(), store=store)
            for (family, source), m in zip(self.models(), (bert, elmo)):
                stored.model_facts(lambda m=m: m, family, source, store=store)
                stored.sense_test(m, family, source, store=store)
                if corpus is not None and not corpus.prepared(family, source, m.label):
                    progress(f"the reference corpus through {FAMILY_NAMES[family]} ({len(corpus.corpus.sentences):,} "
                             "sentences): baselines, neighbour index of the top layer...")
                    corpus.prepare(m)
        elif self.family == "elmo":
            elmo = model("elmo", self.source)
            stored.elmo_run(elmo, self.source, self.words(), store=store)
            stored.model_facts(lambda: elmo, "elmo", self.source, store=store)
        else:
            stored.bert_run(model("bert", self.source), self.source, self.sentences, self.pair, self.attentions,
                            store=store)

    def describe(self) -> str:
        a, b = (s if len(s) <= 40 else s[:39] + "…" for s in self.sentences)
        mode = " (pair)" if self.pair else ""
        return f"{self.page}{mode}: {a!r} / {b!r}"


def default_views(source: str = sources.EMBEDDED, elmo_source: str = sources.EMBEDDED) -> list[PageLink]:
    """The default sentences' views: the BERT page, the attention page as a batch and as a
    packed pair, the ELMo page (``elmo_source``) and the ELMo vs BERT page (whose runs are
    the BERT and ELMo pages')."""
    defaults = (DEFAULT_A, DEFAULT_B)
    return [PageLink("bert", defaults, source=source), PageLink("attention", defaults, source=source),
            PageLink("attention", defaults, pair=True, source=source), PageLink("elmo", defaults, source=elmo_source),
            PageLink("compare", defaults, source=source, elmo_source=elmo_source)]


def view_from_link(link: str, source: str = sources.EMBEDDED, elmo_source: str = sources.EMBEDDED) -> PageLink:
    """The view an app link opens, with its sentences cleaned as the sidebar cleans them
    and its models' sources (the link's, else ``source`` for BERT, ``elmo_source`` for
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

    def link_source(family: str, default: str) -> str:
        chosen = query.get(f"{family}_src", "")  # the sidebar's source picker (ui.frame)
        if chosen == "custom":
            chosen = query.get(f"{family}_custom", "").strip()
        return chosen or default

    bert_source, elmo = link_source("bert", source), link_source("elmo", elmo_source)
    pair = page == "attention" and query.get("att_mode") == "pair"
    return PageLink(page, (texts[0], texts[1]), pair, elmo if page == "elmo" else bert_source,
                elmo if page == "compare" else sources.EMBEDDED)


STORED, PRESENT, SKIPPED = "stored", "already stored", "not stored"


def stored_defaults(source: str = sources.EMBEDDED, elmo_source: str = sources.EMBEDDED,
                    store: stored.RunStore | None = None, corpus: ReferenceStore | None = None) -> tuple[int, int]:
    """(how many of the default views are stored, how many there are), without loading a model."""
    store = stored.default_store() if store is None else store
    views = default_views(source, elmo_source)
    return sum(v.is_stored(store, corpus) for v in views), len(views)


def prepare(views: list[PageLink], load: Callable[[str, str], object], store: stored.RunStore | None = None,
            corpus: ReferenceStore | None = None,
            progress: Callable[[str], None] = lambda line: None) -> list[tuple[PageLink, str, str]]:
    """Store every view that the store (and, for the ELMo vs BERT page, the reference
    ``corpus``'s cache; None: not that part) lacks; ``load(family, source)`` gives a model
    (called once per family and source, only when a view must be computed). Returns (view,
    STORED, PRESENT or SKIPPED, why it was skipped)."""
    store = stored.default_store() if store is None else store
    models: dict[tuple[str, str], object] = {}

    def model(family: str, source: str):
        if (family, source) not in models:
            progress(f"loading {FAMILY_NAMES[family]} ({source})...")
            models[family, source] = load(family, source)
        return models[family, source]

    done = []
    for view in views:
        if None in view.keys():
            done.append((view, SKIPPED, "the model has no files on this machine to key its runs by"))
        elif view.is_stored(store, corpus):
            done.append((view, PRESENT, ""))
        else:
            view.compute(model, store, corpus, progress)
            done.append((view, STORED, "") if view.is_stored(store, corpus) else
                        (view, SKIPPED, "the store refused it (too large, or its folder cannot be written)"))
        _, status, why = done[-1]
        progress(f"{status}: {view.describe()}" + (f" ({why})" if why else ""))
    return done


def prepare_probes(models: list[tuple[str, str]], load: Callable[[str, str], object],
                   store: stored.RunStore | None = None,
                   progress: Callable[[str], None] = lambda line: None) -> list[tuple[str, str, str, str]]:
    """Train and store the layer probes (``lab.probes``) of every (family, source) of ``models``
    that has none stored; ``load(family, source)`` is called only for those. Returns (family,
    source, STORED, PRESENT or SKIPPED, why it was skipped)."""
    store = probes.default_store() if store is None else store
    done = []
    for family, source in models:
        key = probes.probes_key(family, source, probe_data.load_data().digest)
        if key is None:
            done.append((family, source, SKIPPED, "the model has no files on this machine to key its probes by"))
        elif store.has(key):
            done.append((family, source, PRESENT, ""))
        else:
            progress(f"probes of {FAMILY_NAMES[family]} ({source}): every task at every layer...")
            probes.train_and_store(load(family, source), store)
            done.append((family, source, STORED, "") if store.has(key) else
                        (family, source, SKIPPED, "the store refused them (its folder cannot be written)"))
        progress(f"{done[-1][2]}: probes of {FAMILY_NAMES[family]} ({source})"
                 + (f" ({done[-1][3]})" if done[-1][3] else ""))
    return done
