"""The stored layer probes (``lab.probes``) as pages read them: once per key, never trained
here; and the class board's test of the supersense probe on the room's sentences."""

from __future__ import annotations

import streamlit as st

from lab import figures, probe_data, probe_views, probes
from lab.figures import MODEL_COLOURS
from lab.models import FAMILY_NAMES
from ui import charts
from ui.text import md_code, md_escape


@st.cache_resource(show_spinner=False, max_entries=8)
def _stored(key: str, folder: str, family: str, source: str) -> probes.ModelProbes | None:
    return probes.read(family, source, probes.default_store())


def stored(family: str, source: str) -> probes.ModelProbes | None:
    """The stored probes of a model, read once per key (its weights, the code, the data) and
    folder; None where there are none."""
    key = probes.probes_key(family, source, probe_data.load_data().digest)
    return None if key is None else _stored(key, str(probes.default_store().folder), family, source)


def missing_note(family: str, source: str) -> str:
    return (f"{FAMILY_NAMES[family]} ({md_escape(source)}) has no stored probes on this server: no page trains "
            f"them. Make them with {md_code(probes.train_command(family, source))} (a minute or two), then reload.")


def board_section(board, found: dict, senses: list, projector: bool) -> None:
    """"Test the probe on our sentences": the supersense probe of each model with stored probes
    on the board's labelled uses (``found``: family -> (layer names, (N, U, C) vectors)), where
    the board's senses map to supersenses; else why not."""
    st.subheader("Test the probe on our sentences")
    mapping, why = probe_views.board_mapping(board.word, tuple(board.senses))
    if mapping is None:
        st.caption(why)
        return
    results = []
    for family, (_, vectors) in found.items():
        source = board.bert_source if family == "bert" else board.elmo_source
        p = stored(family, source)
        if p is None:
            st.caption(missing_note(family, source))
            continue
        results.append((MODEL_COLOURS[family], probe_views.board_probe(p, vectors, senses, mapping)))
    if not results or not results[0][1].used:
        st.caption("No labelled sentence yet for the supersense probe to read.")
        return
    charts.show(figures.board_probe_chart(results, board.word, " · ".join(r.short_label for _, r in results),
                                          projector), key="board_probe")
    pairs = ", ".join(f"{md_escape(s)} = `{c}`" for s, c in mapping.items())
    st.caption(f"The supersense probes of *What each layer knows*, trained on WordNet's examples of other words "
               f"too, on the room's sentences: the share whose guess is the supersense of the sense its writer "
               f"chose ({pairs}).")
