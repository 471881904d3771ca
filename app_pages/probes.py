"""What each layer knows: linear probes on every layer of BERT and ELMo, against control
tasks, and live on sentence A. The page reads stored probes (``lab.probes``); it never trains."""

from __future__ import annotations

from ui.imports import before_page

# first: the imports below take seconds on a fresh server (ui.imports)
before_page("lab.probe_data", "lab.probe_views", "lab.probes", "ui.probe_cache")

import pandas as pd
import streamlit as st

from lab import figures, probe_data, probe_views, probes
from lab.figures import MODEL_COLOURS
from ui import charts, model_cache, probe_cache, quiz_gate, state
from ui.frame import explain, frame, show_input_messages, show_table, word_pills
from ui.text import md_escape

fr = frame("What each layer knows")
state.register(probe_selectivity=False, probe_task="pos", probe_word=-1)
state.reset_when_changed((fr.sentence_a,), probe_word=-1)

st.title("What each layer knows")
st.caption("A probe is a linear classifier (logistic regression) trained on one layer's word vectors to tell a "
           "word's part of speech, its supersense (WordNet's coarse sense class: money-bank is noun.group, "
           "river-bank noun.object) or its place in the sentence. Each is held against a control task "
           "(Hewitt and Liang 2019): the same probe trained on a random label fixed for each word, which it can "
           "only memorise. What a layer knows is the accuracy above that control: the selectivity.")
show_input_messages(fr)


found = {f: probe_cache.stored(f, s) for f, s in (("bert", fr.bert_source), ("elmo", fr.elmo_source))}
for family, source in (("bert", fr.bert_source), ("elmo", fr.elmo_source)):
    if found[family] is None:
        st.info(probe_cache.missing_note(family, source))
have = [(MODEL_COLOURS[f], p) for f, p in found.items() if p is not None]
if not have:
    state.sync_url()
    st.stop()
labels = " · ".join(p.short_label for _, p in have)
data = probe_data.load_data()
st.caption(f"Probed: **{md_escape(labels)}** · data: {len(data.words):,} WordNet example sentences, split by "
           "sentence into train, dev and test, and a test of words never seen in training.")


def charts_section() -> None:
    st.header("1 · Accuracy at every layer")
    question = probe_views.quiz_question(have[0][1], "pos")
    if not quiz_gate.gate(question, "probes", hides="the charts of this section"):
        return
    selectivity = state.widget(st.toggle, "probe_selectivity", "Show the selectivity (accuracy − control task)",
                               help="Above zero with an interval clear of zero: the layer tells more than a probe "
                                    "that memorises words.")
    explain("Solid: held-out accuracy on test sentences; dashed: the control task, the same probe on random "
            "labels fixed per word, on the test words that occur in training (where memorising words pays); "
            "dotted: accuracy on words never seen in training. The selectivity is the accuracy on those seen "
            "words minus the control's (the table gives both). The bars are 95 % intervals over test sentences "
            "(1,000 bootstrap resamples). The grey dashed line is the commonest class.", fr.projector, st.caption)
    for task in probe_data.TASKS:
        st.subheader(probe_data.TASK_NAMES[task].capitalize())
        charts.show(figures.probe_chart(have, task, probe_data.TASK_NAMES[task], selectivity, labels, fr.projector),
                    key=f"probe_chart_{task}")
        for _, p in have:
            st.markdown(md_escape(probes.summary(p, task)) + " " + md_escape(probe_views.layer_pattern(p, task)) + ".")
    with st.expander("The held-out table"):
        if not fr.projector:
            show_table(pd.DataFrame([r for _, p in have for r in probes.table_rows(p)]), key="probe_table",
                       projector=False, hide_index=True)
            return
        for _, p in have:  # a table per model and task: the whole one is too wide for a projector
            for task in probe_data.TASKS:
                st.markdown(f"**{md_escape(p.short_label)}: {probe_data.TASK_NAMES[task]}**")
                show_table(pd.DataFrame(probes.short_rows(p, task)), key=f"probe_table_{p.family}_{task}",
                           projector=True, hide_index=True)


@st.cache_data(show_spinner=False, max_entries=64)
def _live(_model, _found, family: str, source: str, key: str, text: str, task: str) -> probes.Guesses:
    return probes.live(_found, _model, text, task)


@state.fragment
def live_section() -> None:
    st.header("2 · Live on your sentence")
    st.caption("Each probe's guess for each word of sentence A at every layer, coloured by the guess and paler "
               "the less sure it is. WordNet, which the probes learn from, has only open-class words: “I”, “with”, "
               "“them” are outside the part-of-speech and supersense classes (grey). Try “I bank with them.” "
               "against “We sat on the river bank.”")
    task = state.choice(st.segmented_control, "probe_task", "Task", list(probe_data.TASKS), "pos",
                        format_func=lambda t: probe_data.TASK_NAMES[t])
    grids = {}
    for family, p in found.items():
        if p is None:
            continue
        source = fr.bert_source if family == "bert" else fr.elmo_source
        model = model_cache.model(family, source)
        key = probes.probes_key(family, source, data.digest)
        whole = model_cache.or_stop(_live, model, p, family, source, key, fr.sentence_a, task)
        grids[family] = whole.first(probe_views.GRID_WORDS)
        if len(whole.words) > probe_views.GRID_WORDS:
            st.caption(f"{md_escape(p.short_label)} read {len(whole.words)} words of sentence A; the grid shows the "
                       f"first {probe_views.GRID_WORDS}, each guessed in the whole sentence's context.")
        charts.show(figures.guess_grid(grids[family], f"{probe_data.TASK_NAMES[task].capitalize()}: "
                                       "each word's guess at every layer", p.short_label, fr.projector),
                    key=f"probe_grid_{family}")
    first = next(iter(grids.values()))
    t = word_pills("probe_word", 0, list(first.words), next((i for i, w in enumerate(first.inside) if w), 0))
    for family, g in grids.items():
        st.markdown(f"**{md_escape(found[family].short_label)}**: “{md_escape(g.words[t])}” at every layer")
        show_table(pd.DataFrame(probe_views.word_rows(g, t)), key=f"probe_word_{family}", projector=fr.projector,
                   hide_index=True)


charts_section()
live_section()
state.sync_url()
