"""ELMo layers: what each of ELMo's layers does to a word, and how the scalar mix and the
model's state change the vectors."""

from __future__ import annotations

from ui.imports import before_page

before_page()  # first: the imports below take seconds on a fresh server (ui.imports)

import pandas as pd
import streamlit as st

from lab import analysis, figures, quiz, sources, views
from lab.senses import SENSE_AUC_TARGET, best_context_auc, best_sense_auc
from lab.tokenize import ELMO_MAX_WORDS, word_tokens
from lab.vectors import INPUT_LAYER
from ui import charts, clicks, model_cache, state
from ui import quiz_gate
from ui.frame import (explain, frame, layer_table, page_header, section_before_figure, show_input_messages, show_table,
                      word_pills)
from ui.text import md_code, md_escape

MAX_WORDS = ELMO_MAX_WORDS  # per sentence (lab.tokenize: python -m lab prepare cuts the same)
MAP_WORDS = 48  # per map, as the BERT page's: whole, a long input's map is an unreadable smear of labels
MAP_WORDS_PROJECTOR = 24  # in projector type, 48 slanted labels across a map overlap

fr = frame("ELMo layers")
map_words = MAP_WORDS_PROJECTOR if fr.projector else MAP_WORDS
state.register(elmo_word_a="", elmo_word_b="", elmo_layer=3, elmo_repeats=False, elmo_runs=6, elmo_dropout=0.2)
state.reset_when_changed((fr.sentence_a, fr.sentence_b), elmo_word_a="", elmo_word_b="")

details = page_header("ELMo layers", f"ELMo reads characters, builds a context-free word vector (the input layer, "
                      f"`{INPUT_LAYER}`: ELMo's `word_emb` output), then two bidirectional LSTM layers add context. "
                      "Click a word in each sentence to see what every layer does to it.", fr.projector,
                      line="A word through ELMo's layers: its letters, then its context.")
show_input_messages(fr)

model = model_cache.model("elmo", fr.elmo_source, lazy=True)  # a stored run can answer before it loads
about = model_cache.facts(model)  # its name, limits and mix: stored with its runs
details.caption(f"Model: **{md_escape(about.label)}** · source: {md_code(model.source)}")


def mini_note(box) -> None:
    """On ELMo-mini, in ``box``: how well it separates senses (its recorded scores, and the
    page's default pair at its best layers, computed) and where the real ELMo is."""
    m = sources.embedded_metrics() if model.source == sources.EMBEDDED else {}
    senses = m.get("sense_pair_auc")
    if not senses:
        return
    best = best_sense_auc(senses["by_layer"])
    weak = best < SENSE_AUC_TARGET
    text = (f"ELMo-mini is a small teaching model trained for this app on dictionary text, and it "
            f"separates word senses {'only weakly' if weak else 'clearly'}: on the {senses['pairs']} same- or "
            f"different-sense sentence pairs of its tests, its best layer ranks them with ROC AUC {best:.2f} "
            "(0.5 = chance, 1 = always right).")
    if m.get("stage_options", {}).get("word_table") == "static":
        text += (" Its word layer was fitted to context-free word vectors from MiniLM's input embeddings (the "
                 "BERT of the other pages, before any attention); its LSTMs learned only from predicting "
                 "the next and the previous word.")
    if "context1" in senses["by_layer"]:
        text += f" Its context-only view reaches {best_context_auc(senses['by_layer']):.2f}."
    if not quiz_gate.active():  # the pair's cosines would answer the quiz of section 3
        note = views.sense_note(out, senses["by_layer"], *default_weights)
        wa, wb = (md_escape(w) for w in note.texts)
        pair = f"the two “{wa}”s" if wa.casefold() == wb.casefold() else f"“{wa}” (A) and “{wb}” (B)"
        (std, cos), ctx = note.standard, note.context
        text += (f" In the sentences on this page, {pair} have cosine {cos:.3f} at `{std}`, its best layer on "
                 "that test" + (f", and {ctx[1]:.3f} at `{ctx[0]}`, its best context-only view" if ctx else "")
                 + " (section 3 shows every layer).")
    with box:
        explain(text + (" Expect two senses of a word to stay close here." if weak else "")
                + " For the real ELMo, choose ELMo v3 (TF Hub) or a local copy in the sidebar’s ELMo menu "
                "(model card: `lab/assets/elmo_mini/MODEL_CARD.md`).", fr.projector, st.info)


def read_tokens() -> tuple[tuple[str, ...], ...]:
    """The two sentences as the word tokens ELMo reads, with notices for what is cut."""
    limit = about.chars_per_token - 2  # bytes between the begin- and end-of-word markers
    tokens = []
    for name, text in zip("AB", fr.sentences):
        t = word_tokens(text, MAX_WORDS, limit)
        if t.total > MAX_WORDS:
            st.warning(f"Sentence {name} has {t.total:,} words; this page reads the first {MAX_WORDS}.")
        for w in t.too_long:
            st.info(f"The token “{md_escape(w[:20])}…” in sentence {name} is longer than {limit} bytes; "
                    f"ELMo reads only its first {limit}.")
        tokens.append(tuple(t.words))
    details.caption("Words are split from punctuation (“bank.” → “bank” “.”), as ELMo's training text "
                    "was. TF Hub ELMo's `default` signature splits on spaces only, so this page always "
               "feeds the `tokens` signature.")
    return tuple(tokens)


note_box = st.empty()  # the note on ELMo-mini, first on the page: its numbers need the run below
tokens = read_tokens()
out = model_cache.elmo_run(model, model.source, tokens)
with details:
    charts.vectors_button(out, "elmo-vectors", key="elmo_npz")
baseline = model_cache.baseline(model)  # each layer's and view's, from the reference corpus (`python -m lab prepare`)
learned = about.mix_weights
base_w, base_g = (learned[0].tolist(), learned[1]) if learned is not None else ([0.0, 0.0, 0.0], 1.0)
default_weights = ([float(round(w, 3)) for w in base_w], float(round(base_g, 3)))  # the sliders' defaults
mini_note(note_box)


def inspect() -> None:
    box, _ = section_before_figure("1 · Inspect the model", fr.projector)
    with box:
        _inspect()


def _inspect() -> None:
    info = about.info
    c1, c2 = st.columns(2)
    params = info.get("parameters")
    c1.markdown(f"**Backend:** {md_escape(info.get('backend', ''))}")
    c1.markdown(f"**Parameters:** {params:,}" if params else "**Parameters:** not reported by this source")
    c1.markdown("**Signatures:** " + ", ".join(f"`{s}`" for s in info.get("signatures", [])))
    with c2:
        arrays = views.elmo_outputs(out)
        show_table(pd.DataFrame({"output": [a.name for a in arrays], "dtype": [a.dtype for a in arrays],
                                 "shape for these sentences": [str(a.shape) for a in arrays]}),
                   hide_index=True, projector=fr.projector, key="elmo_outputs")
        st.caption("B = 2 sentences, T = the longer sentence's word count; padded positions are 0.")


def sentence_vs_tokens() -> None:
    box, folded = section_before_figure("2 · One vector per sentence, or one per word", fr.projector)
    with box:
        _sentence_vs_tokens(folded)


def _sentence_vs_tokens(folded: bool) -> None:
    sv = views.sentence_vectors(out)
    show_table(pd.DataFrame([{"output": r.name, "shape": str(r.shape), "norm": r.norm,
                              "first values": ", ".join(f"{v:+.3f}" for v in r.first)} for r in sv.rows]),
               hide_index=True, projector=fr.projector, key="elmo_default_vs_tokens")
    st.markdown(f"Cosine of the two `default` vectors: **{sv.default_cosine:.3f}**.")
    explain("Use `default` (the mean of `elmo` over a sentence's real words) to compare or classify "
            "whole sentences; use the token-level `elmo` tensor for anything about single words, "
            "such as word senses or tagging.", fr.projector and not folded)


inspect()
sentence_vs_tokens()


# --- 3. click a word --------------------------------------------------------------------------
def _pick(key: str, row: int) -> int:
    """The selected word index from its stored "index:word" form; say so if it is gone."""
    words = tokens[row]
    default = analysis.default_pair(tokens[0], tokens[1])[row]
    index, _, word = (state.get(key) or "").partition(":")
    if not word:
        return default
    i = int(index) if index.isdigit() else -1
    if 0 <= i < len(words) and words[i] == word:
        return i
    if word in words:
        return words.index(word)
    # the word came from the URL, so anything: a code span shows it as typed, links included
    st.info(f"The selected word {md_code(word)} is not in sentence {'AB'[row]}; showing "
            f"“{md_escape(words[default])}” instead.")
    return default


def _store(key: str, row: int):
    """A taker that stores word i of ``row`` as "i:word" (a link survives edits of the sentence)."""
    return lambda i: state.put(key, f"{i}:{tokens[row][i]}")


def _word_pills() -> tuple[int, int]:
    picked = []
    for row, (key, pill) in enumerate((("elmo_word_a", "elmo_ia"), ("elmo_word_b", "elmo_ib"))):
        i = _pick(key, row)
        _store(key, row)(i)
        state.put(pill, i)
        picked.append(word_pills(pill, row, tokens[row], i,
                                 on_change=lambda k=key, p=pill, r=row: _store(k, r)(state.get(p))))
    return picked[0], picked[1]


state.register(**{f"elmo_w{j}": default_weights[0][j] for j in range(3)}, elmo_gamma=default_weights[1])


# The mix's controls are a fragment of their own: a click on a word reruns (and the
# browser redraws) only the charts, not the sliders; a slider reruns both.
MIX_FRAGMENTS = ("elmo_mix", "elmo_explore")


def _weights() -> tuple[list[float], float]:
    return [state.get(f"elmo_w{j}") for j in range(3)], state.get("elmo_gamma")


def _preset(w, g) -> None:
    for j in range(3):
        state.put(f"elmo_w{j}", float(w[j]))
    state.put("elmo_gamma", float(g))
    state.rerun(*MIX_FRAGMENTS)


@state.fragment(key="elmo_mix")
def mix_controls() -> None:
    # folded on a projector: the chart below it first (the lesson opens the fold when it gets to the mix)
    with st.expander("The scalar mix: elmo = γ · Σ softmax(w)ⱼ · layerⱼ", expanded=not fr.projector):
        b1, b2, b3 = st.columns(3)
        b1.button("Uniform", on_click=_preset, args=([0.0, 0.0, 0.0], 1.0), key="elmo_uniform")
        b2.button("Top layer only", on_click=_preset, args=([-10.0, -10.0, 10.0], 1.0), key="elmo_top")
        b3.button("Learned weights", on_click=_preset, args=(base_w, base_g), key="elmo_learned",
                  disabled=learned is None,
                  help=None if learned is not None else "This source does not expose its learned mix.")
        s = st.columns(4)
        for j, name in enumerate(out.layer_names):
            with s[j]:
                state.widget(st.slider, f"elmo_w{j}", f"w · {name}", min_value=-10.0, max_value=10.0, step=0.1,
                             on_change=lambda: state.rerun(*MIX_FRAGMENTS))
        with s[3]:
            state.widget(st.slider, "elmo_gamma", "γ (scale)", min_value=0.0, max_value=3.0, step=0.05,
                         on_change=lambda: state.rerun(*MIX_FRAGMENTS))
        weights, gamma = _weights()
        st.markdown("softmax(w) = " + " · ".join(f"`{n}` **{p:.3f}**" for n, p in
                                                  zip(out.layer_names, analysis.softmax(weights)))
                    + f" · γ = **{gamma:.2f}**")


@state.fragment(key="elmo_explore")
def explore(pills_box) -> None:
    with pills_box:
        ia, ib = _word_pills()
    stack = views.with_context_only(views.mix(out, *_weights()))  # the three layers, the mix, context-only
    pair = views.word_pair(stack, (0, ia), (1, ib))
    if not quiz_gate.gate(quiz.least_alike(pair.texts, {about.short_label: (pair.layer_names, pair.cosine)}), "elmo",
                        hides="this section's chart, table and maps"):
        return
    wa, wb = pair.texts
    base = baseline.at(pair.layer_names, _weights()[0]) if baseline is not None else None  # the mix's: the weights'
    charts.show(figures.bar_by_layer(pair.layer_names, pair.cosine, f'Cosine of A "{wa}" and B "{wb}" at each layer',
                                     about.label, fr.projector, groups=views.layer_kinds(pair.layer_names),
                                     baseline=base, group_names=views.LAYER_KINDS), key="elmo_bars")
    layer_table(views.against_baseline(pair.cosine, base), pair.layer_names, fr.projector, "elmo_curve_table")
    st.caption(f"`{INPUT_LAYER}` sees only the characters of the word, so the same word has cosine 1.000 "
               "in any context; the LSTM layers mix in the sentence around it. The *context-only* bars "
               "are not ELMo outputs: at each word they take the forward LSTM's state at the word "
               "before and the backward LSTM's state at the word after, which is what the biLM uses to "
               "predict the word. They leave the word's own identity out, so they separate senses more."
               + ("" if base is None else " The dark line across each bar is its baseline (the mix's for the "
                  "weights above): " + views.BASELINE_NOTE))
    m = views.token_map(stack, pair.vectors[0], (0, 1), prefix=True, around=pair.words, size=map_words)
    words_b = [w if r == 1 else -1 for r, w in zip(m.rows, m.words)]
    what = f"words {_spans(m.spans)}" if m.cropped else "every word of both sentences"
    charts.show(
        charts.cached_heatmap(m.cosine, m.labels, pair.layer_names, f'A "{wa}" against {what}, per layer', about.label,
                       fr.projector, x_title="words of A, then B", y_title="layer"),
        key="elmo_lt", selection_mode="points",
        on_select=clicks.on_click("elmo_lt", x=clicks.pick("", words_b, _store("elmo_word_b", 1))))
    st.caption("Which neighbours does the word resemble at each layer? Click a word of B to compare with it."
               + (f" Long input: the map shows {map_words} words, {_spans(m.spans)} (counted from 0), "
                  "around the selected words; select other words to move it." if m.cropped else ""))
    _cross_map(stack, pair)


def _spans(spans) -> str:
    """Which words of A and B a windowed map shows: "40-77 of A and 0-9 of B"."""
    return " and ".join(f"{s.start}-{s.stop - 1} of {name}" for s, name in zip(spans, "AB"))


def _cross_map(stack, pair: views.WordPair) -> None:
    names = stack.layer_names
    layer = state.choice(st.segmented_control, "elmo_layer", "Layer for the A × B map", range(len(names)),
                         len(names) - 1, format_func=lambda i: names[i])
    m = views.cross_window(stack, layer, pair.words, map_words)
    r, c = m.rows, m.cols
    what = (f"Words {r.start}-{r.stop - 1} of A against words {c.start}-{c.stop - 1} of B" if m.cropped else
            "Every word of A against every word of B")
    fig = charts.cached_heatmap(m.cosine, list(tokens[1][c.start:c.stop]), list(tokens[0][r.start:r.stop]),
                         f"{what}: {names[layer]}", about.label, fr.projector,
                         x_title="sentence B", y_title="sentence A")
    charts.show(fig, key="elmo_ab", selection_mode="points",
                on_select=clicks.on_click("elmo_ab", x=clicks.pick("", c, _store("elmo_word_b", 1)),
                                          y=clicks.pick("", r, _store("elmo_word_a", 0))))
    # the selected pair's cell, outlined over the chart: another word moves the outline,
    # and the map, its figure unchanged, is not drawn again
    charts.outline("elmo_ab", figures.outline_box(fig, pair.words[0] - r.start, pair.words[1] - c.start,
                                                  projector=fr.projector))
    if m.cropped:
        st.caption(f"Long input: the map shows at most {map_words} words of each sentence, around the selected "
                   "words (counted from 0); select other words to move it.")


st.header("3 · One word through the layers")
pills = st.container()  # the word pills, drawn by explore above the mix's controls
mix_controls()
explore(pills)

# --- 4. determinism and state ----------------------------------------------------------------
st.header("4 · Same sentence, same vectors?")
st.markdown("Run sentence A several times and watch whether its vectors stay put: the answer "
            "depends on how the biLM is run.")


@state.fragment
def determinism() -> None:
    # Runs only while open (a new sentence costs no repeated runs until someone asks for them);
    # its state is in the URL, so a shared link reopens it.
    panel = state.widget(st.expander, "elmo_repeats", "Run it: stateless, stateful and with dropout",
                         icon=":material/replay:")
    if not panel.open:
        return
    with panel:
        _repeats()


def _repeats() -> None:
    c1, c2 = st.columns(2)
    state.widget(c1.slider, "elmo_runs", "Runs", min_value=2, max_value=12, step=1)
    state.widget(c2.slider, "elmo_dropout", "Dropout rate at inference", min_value=0.05,
                 max_value=0.5, step=0.05, disabled=not about.supports_state)
    runs, rate = int(state.get("elmo_runs")), float(state.get("elmo_dropout"))
    res = model_cache.elmo_repeats(model, model.source, tokens[0], runs, rate)
    run_names = [f"run {i + 1}" for i in range(runs)]
    charts.show(figures.layer_curve(run_names, res, f"Norm of lstm_outputs2 for sentence A, run {runs} times",
                                    about.label, fr.projector, y_title="norm", y_range=None, x_title="run"),
                key="elmo_runs_chart")
    show_table(pd.DataFrame(res, index=run_names).T.round(6), projector=fr.projector, key="elmo_runs_table")
    st.markdown(
        "- **stateless**: every run starts the LSTMs from zeros, so the same sentence gives the same "
        "vectors, every time.\n"
        "- **stateful**: as in the original bilm-tf and AllenNLP, each run starts from the state the "
        "last one ended in; the first runs drift, then the state settles and the vectors with it. "
        "This is why people see “my ELMo embeddings change every run”.\n"
        "- **dropout**: dropout left on at inference zeroes random units each run, so the vectors "
        "change every time; turn it off (the default) for stable vectors.")
    if not about.supports_state:
        st.info("This source runs through SavedModel signatures, which have no carried state and no "
                "dropout switch: only the stateless runs can be shown. The embedded ELMo-mini shows all three.")


determinism()
state.sync_url()
