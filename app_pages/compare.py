"""ELMo vs BERT: one word through both models, each read against its own anisotropy baseline."""

from __future__ import annotations

from ui.imports import before_page

before_page()  # first: the imports below take seconds on a fresh server (ui.imports)

import pandas as pd
import streamlit as st

from lab import analysis, elmo_vs_bert, figures, quiz
from lab.analysis import default_pair
from lab.elmo_vs_bert import MIN_OCCURRENCES
from lab.figures import MODEL_COLOURS, DepthLine
from lab.models import FAMILY_NAMES
from lab.tokenize import ELMO_MAX_WORDS, word_tokens
from ui import charts, model_cache, state
from ui import quiz_gate
from ui.frame import frame, show_input_messages, show_table, word_pills
from ui.text import md_escape

MAX_WORDS = ELMO_MAX_WORDS  # per sentence, as on the ELMo page

fr = frame("ELMo vs BERT")
state.register(cmp_word_a=-1, cmp_word_b=-1, cmp_pool="first", cmp_adjusted=False, cmp_layer_bert=-1, cmp_layer_elmo=-1)
state.reset_when_changed((fr.sentence_a, fr.sentence_b), cmp_word_a=-1, cmp_word_b=-1)

st.title("ELMo vs BERT")
st.caption("The same word through both models, layer by layer, and every number read against what "
           "two random words would give: contextual spaces are anisotropic (Ethayarajh, EMNLP 2019), "
           "so a cosine means something only next to its layer's baseline.")
show_input_messages(fr)

# Lazy: stored runs, facts, sense tests and reference files can answer before the models load
bert = model_cache.model("bert", fr.bert_source, lazy=True)
elmo = model_cache.model("elmo", fr.elmo_source, lazy=True)
about = {"bert": model_cache.facts(bert), "elmo": model_cache.facts(elmo)}  # names and ELMo's limits, stored
store = model_cache.reference_store()
st.caption(f"BERT: **{md_escape(about['bert'].label)}** · ELMo: **{md_escape(about['elmo'].label)}** · "
           "reference corpus: "
           f"{len(store.corpus.sentences):,} sentences ({md_escape(store.corpus.path.split('/')[-1])})")


def read_words() -> tuple[tuple[str, ...], ...]:
    """Each sentence's words (the tokens ELMo reads; BERT's pieces are pooled per word)."""
    words = []
    for name, text in zip("AB", fr.sentences):
        t = word_tokens(text, MAX_WORDS, about["elmo"].chars_per_token - 2)
        if t.total > MAX_WORDS:
            st.warning(f"Sentence {name} has {t.total:,} words; this page compares the first {MAX_WORDS}.")
        words.append(tuple(t.words))
    return tuple(words)


words = read_words()
# BERT's run without its attention probabilities (none is drawn here; the download runs the model again)
runs = {"bert": elmo_vs_bert.align(model_cache.bert_run(bert, bert.source, tuple(fr.sentences), attentions=False)),
        "elmo": model_cache.elmo_run(elmo, elmo.source, words)}
downloads = {"bert": lambda s=list(fr.sentences): elmo_vs_bert.align(bert.run(s)),
             "elmo": runs["elmo"]}
loaded = {"bert": bert, "elmo": elmo}
for column, (family, out) in zip(st.columns(2), runs.items()):
    with column:
        charts.vectors_button(downloads[family], f"compare-{family}-vectors", key=f"cmp_npz_{family}",
                              label=f"Download the {FAMILY_NAMES[family]} vectors (.npz)",
                              model=out.short_label)  # the short name: the label stays on one line
baselines = {f: model_cache.baseline(m, needed=True) for f, m in loaded.items()}


def pick_words() -> tuple[int, int]:
    """Pills for a word of A and of B (by default the first content word they share)."""
    defaults = default_pair(words[0], words[1])
    wa, wb = (word_pills(key, row, words[row], defaults[row]) for key, row in (("cmp_word_a", 0), ("cmp_word_b", 1)))
    state.choice(st.segmented_control, "cmp_pool", "BERT's word vector from its pieces", analysis.POOLINGS, "first",
                 format_func={"first": "first piece", "mean": "mean"}.get,
                 help="A word BERT cuts into several pieces has several vectors: take the first or the mean.")
    return wa, wb


def pooling() -> str:
    """BERT's word vector from its pieces, as chosen: "first" or "mean"."""
    return state.get("cmp_pool")


@state.fragment
def one_word() -> None:
    """Sections 1 to 4, which all follow the selected words and pooling: a click on a word
    reruns them, not the model runs, baselines and buttons above."""
    st.header("1 · One word, both models")
    wa, wb = pick_words()
    found = curves(wa, wb)
    if not found:
        return
    question = quiz.least_alike((words[0][wa], words[1][wb]),
                                {c.short_label: (c.layer_names, c.cosine) for c in found.values()})
    if not quiz_gate.gate(question, "compare", hides="this section's chart and sections 2 to 4, which follow the "
                                                   "selected words"):
        return
    comparison_chart(found)
    self_similarity(words[0][wa])
    neighbours(found, words[0][wa])
    sense_section(found)


def curves(wa: int, wb: int) -> dict[str, elmo_vs_bert.ModelCurve]:
    """Each model's curve for the two words; a model that cannot place a word says so."""
    found = {}
    for family, out in runs.items():
        try:
            found[family] = elmo_vs_bert.model_curve(out, (0, wa), (1, wb), pooling(),
                                                     baselines[family].layers(pooling()))
        except ValueError as exc:
            st.warning(f"{md_escape(str(exc))}. Its curve is left out; pick another word to compare both model_cache.")
    return found


@state.fragment
def comparison_chart(found: dict[str, elmo_vs_bert.ModelCurve]) -> None:
    """The curves of both models; the baseline toggle reruns this alone."""
    adjusted = state.widget(st.toggle, "cmp_adjusted", "Baseline-adjusted similarity: (cos − base) / (1 − base)",
                            help=("0 = as alike as two random words of the reference corpus at that layer; "
                                  "1 = identical."))
    charts.show(figures.word_curves_chart([(MODEL_COLOURS[f], c) for f, c in found.items()], adjusted, _labels(),
                                          fr.projector), key="cmp_curves")
    show_table(pd.DataFrame(elmo_vs_bert.curve_rows(list(found.values()))), key="cmp_table", projector=fr.projector,
               hide_index=True)
    st.caption("Dashed: each layer's anisotropy baseline, the mean cosine of random words from different "
               f"sentences of the reference corpus ({baselines['bert'].pairs:,} pairs). A cosine near its "
               "dashed line says the two uses are no more alike than two unrelated words.")


def _labels() -> str:
    return " · ".join(f"{m.short_label}" for m in loaded.values())


def self_similarity(word: str) -> None:
    st.header("2 · How contextual is each layer?")
    lines, rare = [], []
    for family, m in loaded.items():
        s = model_cache.or_stop(store.self_similarity, m, word, pooling())  # a lookup once the index is built
        if s.too_rare:
            rare.append(f"{m.short_label}: {s.used} usable")
            continue
        names, depth = baselines[family].layer_names, elmo_vs_bert.depth(len(baselines[family].layer_names))
        lines += [DepthLine(f"{m.short_label}: self-similarity of “{word}” ({s.used} sentences)", names, depth,
                            s.values, MODEL_COLOURS[family]),
                  DepthLine(f"{m.short_label}: baseline", names, depth, baselines[family].layers(pooling()),
                            MODEL_COLOURS[family], dashed=True)]
    if rare:
        count = len(store.corpus.containing(word))
        st.info(f"“{md_escape(word)}” is too rare in the reference corpus for a self-similarity: {count} "
                f"sentence(s) hold it, {MIN_OCCURRENCES} are needed ({'; '.join(rare)}).")
    if lines:
        charts.show(figures.depth_chart(lines, f"Self-similarity of “{word}” in the reference corpus",
                                        _labels(), fr.projector), key="cmp_self")
        st.caption("Self-similarity: the mean cosine between the word's vectors in different sentences. "
                   "Near 1, the layer gives the word one vector whatever the context; the lower it falls "
                   "towards the baseline, the more the layer depends on context.")


@state.fragment
def neighbours(found: dict[str, elmo_vs_bert.ModelCurve], word: str) -> None:
    """Each model's nearest occurrences of the word of A; a layer choice reruns this alone."""
    st.header("3 · Nearest neighbours in context")
    st.caption(f"The {elmo_vs_bert.NEIGHBOURS} word occurrences of the reference corpus nearest to "
               f"“{md_escape(word)}” of sentence A, at a layer of each model.")
    drawn = []
    for col, (family, c) in zip(st.columns(len(found)), found.items()):
        with col:
            key = f"cmp_layer_{family}"
            layer = state.widget(st.selectbox, key, f"{c.short_label} layer", options=list(range(len(c.layer_names))),
                                 format_func=lambda i, c=c: c.layer_names[i], fallback=len(c.layer_names) - 1)
            index = model_cache.with_progress(f"{c.short_label} vectors of the corpus at {c.layer_names[layer]}",
                                         lambda p, f=family: store.index(loaded[f], layer, pooling(), p))
            found_n = elmo_vs_bert.neighbours(index, store.corpus.sentences, c.vectors_a[layer])
            st.markdown("\n".join(f"{i}. `{n.cosine:.3f}` {md_escape(n.before)}**{md_escape(n.word)}**"
                                  f"{md_escape(n.after)}" for i, n in enumerate(found_n, 1)))
            st.caption(f"{elmo_vs_bert.same_word(found_n, word)} of {len(found_n)} are “{md_escape(word)}” itself. "
                       f"Two random words at {c.layer_names[layer]}: cosine {c.baseline[layer]:.3f} on average "
                       "(the baseline).")
            drawn.append(_uses(family, c, index, word, layer))
    if any(drawn):
        st.caption("The maps: every use of the word in the corpus (hover a dot for its sentence) and your two "
                   "(the stars), placed by the two directions along which their vectors at that layer differ "
                   "most (principal components). A dot's colour is the word's WordNet sense where its sentence "
                   "is WordNet's example of that sense, the commonest senses by name; grey where the sentence "
                   "illustrates another word, so the sense of this one is not known. Where a layer tells senses "
                   "apart, each colour gathers on a side, and your words join their own.")


def _uses(family: str, c: elmo_vs_bert.ModelCurve, index, word: str, layer: int) -> bool:
    """The map of the word's uses in the corpus at the neighbours' layer, and yours; False
    where the corpus holds too few of them to draw one."""
    uses = elmo_vs_bert.use_map(index, store.corpus, word, c.vectors_a[layer], c.vectors_b[layer])
    if uses is None:
        st.caption(f"“{md_escape(word)}” has fewer than {MIN_OCCURRENCES} uses in the reference corpus: no map.")
        return False
    charts.show(figures.use_map_chart(uses, uses.contexts(store.corpus.sentences), c.texts, uses.title,
                                      c.short_label, fr.projector, width=0.5,
                                      colour=MODEL_COLOURS[family]),
                key=f"cmp_uses_{family}")
    if not uses.explained.any():
        st.caption(f"At {md_escape(c.layer_names[layer])} every use of “{md_escape(word)}” is one and the same "
                   "vector: this layer cannot tell them apart.")
    return True


def sense_section(found: dict[str, elmo_vs_bert.ModelCurve]) -> None:
    st.header("4 · The sense test")
    tests = {f: model_cache.sense_test(m, pooling()) for f, m in loaded.items()}
    _sense_chart(tests)
    _own_pair(tests, found)
    for family, t in tests.items():
        _most_wrong(t, f"cmp_wrong_{family}")


def _sense_chart(tests: dict[str, elmo_vs_bert.SenseTest]) -> None:
    charts.show(figures.sense_chart([(MODEL_COLOURS[f], t) for f, t in tests.items()], _labels(), fr.projector),
                key="cmp_senses")
    st.caption("For every pair of sentences that share an ambiguous word (bank, bat, spring, ...), the cosine "
               "of the word's two vectors. ROC AUC: how often a same-sense pair has a higher cosine than a "
               "different-sense pair (0.5 = chance, 1 = always).")


def _own_pair(tests: dict[str, elmo_vs_bert.SenseTest], found: dict[str, elmo_vs_bert.ModelCurve]) -> None:
    mine = {f: elmo_vs_bert.placed(t, found[f]) for f, t in tests.items() if f in found}
    charts.show(figures.pair_strip({t.short_label: elmo_vs_bert.at_best(t) for t in tests.values()},
                                   {t.short_label: mine[f].cosine if f in mine else None for f, t in tests.items()},
                                   "Your pair (sentences A and B, the selected words) among the sense pairs, "
                                   "at each model's best layer", _labels(), fr.projector,
                                   colours={t.short_label: MODEL_COLOURS[f] for f, t in tests.items()}),
                key="cmp_own")
    for f, p in mine.items():
        t = tests[f]
        st.markdown(f"{md_escape(t.short_label)} at {md_escape(t.layer_names[t.best])}: your pair's cosine "
                    f"{p.cosine:.3f} is above {p.above_same:.0%} of the same-sense pairs and "
                    f"{p.above_different:.0%} of the different-sense pairs.")


def _most_wrong(t: elmo_vs_bert.SenseTest, key: str) -> None:
    st.subheader(f"What {md_escape(t.short_label)} gets most wrong (at {md_escape(t.layer_names[t.best])})")
    rows = [{"word": w.word, "truth": "same sense" if w.same_sense else "different sense",
             "cosine": round(w.cosine, 4), "its cosine is": w.why, "sentence 1": w.sentence_1,
             "sentence 2": w.sentence_2} for w in elmo_vs_bert.most_wrong(t)]
    show_table(pd.DataFrame(rows), key=key, projector=fr.projector, wrap=True, hide_index=True)


one_word()
state.sync_url()
