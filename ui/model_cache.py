"""Loaded models and sense tests (``st.cache_resource``, once per process) and results (``st.cache_data``).

A source that cannot be loaded is remembered with its message, so a page says what went
wrong once, quickly, and carries on with the embedded model.

A BERT or ELMo run is also kept on disk (``lab.stored``), with the model's ``facts`` and
its sense test: a fresh server answers sentences it answered before from there, and a page
that asks for a ``lazy`` model draws that view before the model, or TensorFlow, has been
loaded.
"""

from __future__ import annotations

import dataclasses
import logging

import streamlit as st

from lab import models as lab_models
from lab import serving, sources, stored
from lab.tokenize import DEFAULT_A, DEFAULT_B, split_words
from ui import access
from ui.text import md_code, md_escape
from ui.memory import freeze_heap

_LOG = logging.getLogger(__name__)

BERT_CACHE_BYTES = 256 * 2**20  # pickled; least recently used runs go first


@st.cache_resource(show_spinner=False, max_entries=8)
def load(family: str, source: str):
    """(model, None) or (None, message). Cached either way; never mutate the model.

    A loaded model lives as long as the server: the garbage collector is told to stop
    walking it (``ui.memory.freeze_heap``), which keeps every later collection cheap.
    """
    from ui.imports import MODEL_MODULES, import_serially

    try:
        import_serially(*MODEL_MODULES)  # not at the same time as the warm-up's imports (ui.imports)
        loaded = lab_models.load(family, source)
        serve = getattr(loaded, "serve", None)  # the embedded BERT has it; a TF Hub BERT does not
        if serve and serving.enabled():
            # on a server no request waits for a trace or for XLA: the first one runs eagerly
            # (far sooner than tracing would), and the warm-up then
            # traces and compiles in the background (ui.server.warmup)
            serve(())
        return loaded, None
    except Exception as exc:  # noqa: BLE001 - a broken model folder must not crash the page
        # the page says it in words; the log keeps the exception, and what caused it
        _LOG.warning("could not load the %s model from %s", family, source, exc_info=exc)
        return None, sources.failure_sentence(source, exc)
    finally:
        freeze_heap()


# What a LazyModel answers from its stored facts (``facts``), without loading
FACT_NAMES = frozenset(f.name for f in dataclasses.fields(stored.ModelFacts)) - {"info"}


class LazyModel:
    """The embedded model of ``family``, loaded when something other than its family, its
    source or one of its facts (``FACT_NAMES``: its name, ELMo's limits and mix) is asked of
    it: a run stored on disk can answer a page before that (``bert_run``). Loading raises
    ``lab.sources.SourceError`` with the loader's message."""

    def __init__(self, family: str):
        self.family = family
        self.source = sources.EMBEDDED

    def loaded(self):
        """The model itself (loaded now, if it was not; no spinner of its own: it is called
        inside cached functions, which show theirs)."""
        loaded, error = load(self.family, sources.EMBEDDED)
        if loaded is None:
            raise sources.SourceError(error)
        return loaded

    def __getattr__(self, name: str):
        if name.startswith("__"):  # copy and pickle probe for these before __init__ has run
            raise AttributeError(name)
        if name in FACT_NAMES:
            return getattr(_facts(self, self.family, self.source), name)
        return getattr(self.loaded(), name)


def model(family: str, source: str, lazy: bool = False):
    """The model for ``source``; on failure, say why and fall back to the embedded one.

    ``lazy``: for the embedded model, a ``LazyModel`` (loaded on first use), so that a run
    stored on disk can answer first; any other source is loaded now, as without it."""
    if lazy and sources.is_embedded(source):
        return LazyModel(family)
    with st.spinner(f"Loading the {family.upper()} model ({md_code(source)})..."):
        loaded, error = load(family, source)
    if loaded is not None:
        return loaded
    # the source may come from a link: in a code span it is shown as typed, never as
    # Markdown or a link (the rest is the app's own message)
    st.error(error.replace(source, md_code(source)) if source else error)
    if sources.is_embedded(source):
        st.stop()
    st.warning("Showing the embedded model instead.")
    with st.spinner(f"Loading the embedded {family.upper()} model..."):
        loaded, error = load(family, sources.EMBEDDED)
    if loaded is None:
        st.error(error)
        st.stop()
    return loaded


def or_stop(call, *args):
    """``call(*args)``; where it must load a ``LazyModel`` that cannot be loaded, say why
    and stop the page."""
    try:
        return call(*args)
    except sources.SourceError as exc:
        st.error(str(exc))
        st.stop()


def bert_run(model, source: str, sentences: tuple[str, ...], pair: bool = False, attentions: bool = True):
    """``LayerVectors`` of a BERT for ``sentences`` (``_bert_run``); where a ``LazyModel``
    cannot be loaded, say why and stop the page."""
    return or_stop(_bert_run, model, source, sentences, pair, attentions)


# What a class shares (the sentence everyone was asked to type), not a history of everyone's
# typing: a session keeps its own page's run for as long as it lives, and a run of two
# sentences is quick to compute again; many more runs a model grew the server with every
# round of new sessions (bench/HISTORY.md). Bounded in bytes as well as in runs: two
# sentences take little, but two inputs of 512 pieces carry over a hundred MB of attention
# probabilities.
RUNS_KEPT = 16


@st.cache_data(show_spinner="Running BERT...", max_entries=RUNS_KEPT, max_size=BERT_CACHE_BYTES)
def _bert_run(_model, source: str, sentences: tuple[str, ...], pair: bool, attentions: bool):
    """Cached ``LayerVectors`` of a BERT, keyed by source and sentences (the model is not hashed);
    without ``attentions`` for the pages that draw none. Every call pickles or unpickles
    what it returns: for two inputs of 512 pieces, ten times as much with the attentions as
    without (a large share of a view's CPU, and one such run fills most of the cache).

    Read from the disk store when it holds the run (``lab.stored``: a fresh server, one
    that dropped the run from memory, or one prepared with ``python -m lab prepare``), and
    written there when computed, where ``_storable``."""
    return stored.bert_run(_model, source, sentences, pair, attentions, keep=_storable(sentences))


def _storable(sentences, words: bool = False) -> bool:
    """Whether runs of ``sentences`` (with ``words``: their word tokens, as ELMo reads them)
    are written to the disk store: any sentences for a request that is not restricted
    (``ui.access``: the teacher's own browser; a demo link is then as quick after a restart
    as the defaults), only the app's default sentences for a restricted one (nobody else's
    typing is written to the disk; what ``python -m lab prepare`` stored there is read all
    the same). Called inside the cached run, which is in the script run of the request that
    computes it."""
    if not stored.enabled():
        return False
    if access.restricted():
        defaults = (DEFAULT_A, DEFAULT_B)
        return tuple(sentences) == (tuple(tuple(split_words(s)) for s in defaults) if words else defaults)
    return True


def facts(model) -> stored.ModelFacts:
    """``lab.stored.ModelFacts`` of ``model`` (stored on disk, so a ``LazyModel`` need not
    load for them); where a ``LazyModel`` cannot be loaded, say why and stop the page."""
    return or_stop(_facts, model, model.family, model.source)


@st.cache_resource(show_spinner=False, max_entries=8)
def _facts(_model, family: str, source: str) -> stored.ModelFacts:
    # a resource: small and frozen, read by every session; the model is not hashed
    return stored.model_facts(_model.loaded if isinstance(_model, LazyModel) else lambda: _model, family, source)


def elmo_run(model, source: str, tokens: tuple[tuple[str, ...], ...]):
    """``LayerVectors`` of an ELMo for word ``tokens`` (``_elmo_run``); where a ``LazyModel``
    cannot be loaded, say why and stop the page."""
    return or_stop(_elmo_run, model, source, tokens)


@st.cache_data(show_spinner="Running ELMo...", max_entries=RUNS_KEPT)
def _elmo_run(_model, source: str, tokens: tuple[tuple[str, ...], ...]):
    """Cached stateless ``LayerVectors`` of an ELMo, keyed by source and word tokens; read
    from the disk store when it holds the run, and written there when computed, where
    ``_storable`` (for the words of the app's default sentences, on a shared server)."""
    return stored.elmo_run(_model, source, tokens, keep=_storable(tokens, words=True))


def elmo_repeats(model, source: str, tokens: tuple[str, ...], runs: int, dropout: float):
    """``lab.models.elmo_io.repeat_runs`` (``_elmo_repeats``); where a ``LazyModel`` cannot be
    loaded, say why and stop the page."""
    return or_stop(_elmo_repeats, model, source, tokens, runs, dropout)


@st.cache_data(show_spinner="Running ELMo repeatedly...", max_entries=32)
def _elmo_repeats(_model, source: str, tokens: tuple[str, ...], runs: int, dropout: float):
    """``lab.models.elmo_io.repeat_runs``, cached: {mode: (runs,) norms}."""
    from lab.models.elmo_io import repeat_runs

    return repeat_runs(_model, list(tokens), runs, dropout)


def sense_test(model, pool: str):
    """``lab.stored.sense_test`` of ``model`` (on ``lab.senses``' pairs), once per model and
    pooling for the whole process: it does not depend on anyone's sentences. Where a
    ``LazyModel`` cannot be loaded, say why and stop the page."""
    return or_stop(_sense_test, model, model.family, model.source, pool)


# a resource: a small frozen result every session reads and none mutates (no copy per view);
# keyed by family and source (both embedded models are "embedded"), the model not hashed.
# Stored on disk like the runs, whoever's sentences they are: it holds none of them.
@st.cache_resource(show_spinner="Scoring the sense pairs...", max_entries=8)
def _sense_test(_model, family: str, source: str, pool: str):
    return stored.sense_test(_model, family, source, pool)


@st.cache_resource(show_spinner=False, max_entries=4)
def _reference_store(corpus_file: str, cache_folder: str):
    from lab import reference

    return reference.ReferenceStore(reference.load_corpus(corpus_file), cache_folder)


def reference_store():
    """The process's ``lab.reference.ReferenceStore`` for the configured corpus and cache folder."""
    from lab import reference, reference_corpus

    return _reference_store(str(reference_corpus.corpus_path()), str(reference.cache_dir()))


def with_progress(what: str, compute):
    """``compute(progress)`` with a progress bar that shows while it reports (a first
    computation over the reference corpus) and goes when it is done; where it must load a
    ``LazyModel`` that cannot be loaded, say why and stop the page (``or_stop``)."""
    bar = st.empty()

    def progress(fraction: float, text: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=f"{what} (first use; cached afterwards): {text}")

    try:
        return or_stop(compute, progress)
    finally:
        bar.empty()


def baseline(model, needed: bool = False):
    """The model's anisotropy baselines (``lab.reference.Baseline``) from the reference corpus:
    read, or computed under a progress bar on first use. Where the corpus gives none (the
    model places no word of it, say), a warning says so and None comes back, or, where the
    page ``needed`` it, the page stops there."""
    try:
        return with_progress(f"Anisotropy baseline of {model.short_label}",
                             lambda p: reference_store().baseline(model, p))
    except ValueError as exc:
        st.warning(f"No anisotropy baseline for {md_escape(model.short_label)} from the reference corpus "
                   f"({md_escape(str(exc))}), " + ("and this page reads every cosine against one." if needed else
                                                   "so its cosines are shown without one."))
        if needed:
            st.stop()
        return None
