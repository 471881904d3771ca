"""Loaded models (``st.cache_resource``, once per process) and results (``st.cache_data``).

A source that cannot be loaded is remembered with its message, so a page says what went
wrong once, quickly, and carries on with the embedded model.
"""

from __future__ import annotations

import threading

import numpy as np
import streamlit as st

from lab import sources


def _loader(family: str):
    if family == "bert":
        from lab.models.bert import load_bert

        return load_bert
    if family == "elmo":
        from lab.models.elmo import load_elmo

        return load_elmo
    raise ValueError(family)


@st.cache_resource(show_spinner=False, max_entries=8)
def _load(family: str, source: str):
    """(model, None) or (None, message). Cached either way; never mutate the model."""
    try:
        return _loader(family)(source), None
    except sources.SourceError as exc:
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 - a broken model folder must not crash the page
        return None, f"Could not load {source}: {type(exc).__name__}: {exc}"


def model(family: str, source: str):
    """The model for ``source``; on failure, say why and fall back to the embedded one."""
    with st.spinner(f"Loading the {family.upper()} model ({source})..."):
        loaded, error = _load(family, source)
    if loaded is not None:
        return loaded
    st.error(error)
    if sources.is_embedded(source):
        st.stop()
    st.warning("Showing the embedded model instead.")
    with st.spinner(f"Loading the embedded {family.upper()} model..."):
        loaded, error = _load(family, sources.EMBEDDED)
    if loaded is None:
        st.error(error)
        st.stop()
    return loaded


@st.cache_data(show_spinner="Running BERT...", max_entries=64)
def bert_run(_model, source: str, sentences: tuple[str, ...], pair: bool = False):
    """A cached ``BertOutput`` keyed by source and sentences (the model is not hashed)."""
    return _model.run(list(sentences), pair=pair)


@st.cache_data(show_spinner="Running ELMo...", max_entries=64)
def elmo_run(_model, source: str, tokens: tuple[tuple[str, ...], ...]):
    """A cached stateless ``ElmoOutput`` keyed by source and word tokens."""
    return _model.run([list(t) for t in tokens])


_STATE_LOCK = threading.Lock()


@st.cache_data(show_spinner="Running ELMo repeatedly...", max_entries=32)
def elmo_repeats(_model, source: str, tokens: tuple[str, ...], runs: int, dropout: float):
    """One sentence run ``runs`` times per mode -> {mode: (runs,) norm of lstm_outputs2}.

    Modes: stateless; stateful (from a zero state, each run starting where the last ended);
    stateless with dropout at inference. The model's carried state is shared by every
    session, so the stateful runs hold a lock and reset the state before and after.
    """
    sent = [list(tokens)]

    def norm(out) -> float:
        return float(np.linalg.norm(out.lstm_outputs2[0, : len(tokens)]))

    result = {"stateless": [norm(_model.run(sent)) for _ in range(runs)]}
    if getattr(_model, "supports_state", False):
        with _STATE_LOCK:
            _model.reset_state()
            try:
                result["stateful"] = [norm(_model.run(sent, stateful=True)) for _ in range(runs)]
            finally:
                _model.reset_state()
        result["dropout"] = [norm(_model.run(sent, dropout=dropout)) for _ in range(runs)]
    return {k: np.asarray(v) for k, v in result.items()}
