"""ELMo layers: what each of ELMo's layers does to a word, and how the scalar mix and the
model's state change the vectors."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from lab import analysis, figures, sources
from lab.models.elmo import SENSE_AUC_TARGET, best_sense_auc, embedded_metrics, scalar_mix
from lab.tokenize import split_words
from ui import models, state
from ui.frame import frame, md_escape, show_input_messages, show_table

MAX_WORDS = 150  # per sentence: the LSTMs read word by word, and figures stay legible
MAX_TOKEN_CHARS = 50  # ELMo's character input holds 50 slots (48 bytes + 2 markers)
LAYERS = ["word_emb", "lstm_outputs1", "lstm_outputs2"]

fr = frame("ELMo layers")
state.register(elmo_wa="", elmo_wb="", elmo_layer=3, elmo_runs=6, elmo_dropout=0.2)
state.reset_when_changed((fr.sentence_a, fr.sentence_b), elmo_wa="", elmo_wb="")

st.title("ELMo layers")
st.caption("ELMo reads characters, builds a context-free word vector (`word_emb`), then two "
           "bidirectional LSTM layers add context. Click a word in each sentence to see what "
           "every layer does to it.")
show_input_messages(fr)

model = models.model("elmo", fr.elmo_source)
st.caption(f"Model: **{md_escape(model.label)}** · source: `{model.source}`")
if model.source == sources.EMBEDDED:
    senses = embedded_metrics().get("sense_pair_auc")
    if senses:
        best = best_sense_auc(senses["by_layer"])
        weak = best < SENSE_AUC_TARGET
        how = "only weakly" if weak else "clearly"
        st.info(f"ELMo-mini is a small teaching model trained for this app on dictionary "
                f"text, and it separates word senses {how}: on the {senses['pairs']} same- or "
                f"different-sense sentence pairs of its tests, its best layer ranks them with ROC AUC "
                f"{best:.2f} (0.5 = chance, 1 = always right)."
                + (" Expect the two senses of “bank” to stay close here." if weak else "")
                + " For the real ELMo, choose ELMo v3 (TF Hub) or a local copy in the sidebar’s ELMo menu "
                "(model card: `lab/assets/elmo_mini/MODEL_CARD.md`).")

# --- word tokens ---------------------------------------------------------------------------
tokens = []
for name, text in zip("AB", fr.sentences):
    words = split_words(text)
    if len(words) > MAX_WORDS:
        st.warning(f"Sentence {name} has {len(words):,} words; this page reads the first {MAX_WORDS}.")
        words = words[:MAX_WORDS]
    for w in words:
        if len(w) > MAX_TOKEN_CHARS:
            st.info(f"The token “{w[:20]}…” in sentence {name} is longer than {MAX_TOKEN_CHARS} "
                    "characters; ELMo reads only its first 48 bytes.")
    tokens.append(tuple(words))
st.caption("Words are split from punctuation (“bank.” → “bank” “.”), as ELMo's training text "
           "was. TF Hub ELMo's `default` signature splits on spaces only, so this page always "
           "feeds the `tokens` signature.")

out = models.elmo_run(model, model.source, tuple(tokens))
info = model.info()

# --- 1. inspect the model --------------------------------------------------------------------
st.header("1 · Inspect the model")
c1, c2 = st.columns(2)
with c1:
    st.markdown(f"**Backend:** {md_escape(info.get('backend', ''))}")
    params = info.get("parameters")
    st.markdown(f"**Parameters:** {params:,}" if params else "**Parameters:** not reported by this source")
    st.markdown("**Signatures:** " + ", ".join(f"`{s}`" for s in info.get("signatures", [])))
with c2:
    arrays = {"word_emb": out.word_emb, "lstm_outputs1": out.lstm_outputs1,
              "lstm_outputs2": out.lstm_outputs2, "elmo": out.elmo, "default": out.default,
              "sequence_len": out.sequence_len, "mask": out.mask}
    show_table(pd.DataFrame({"output": list(arrays), "dtype": [str(a.dtype) for a in arrays.values()],
                               "shape for these sentences": [str(tuple(a.shape)) for a in arrays.values()]}),
                 hide_index=True, projector=fr.projector, key="elmo_outputs")
    st.caption("B = 2 sentences, T = the longer sentence's word count; padded positions are 0.")

# --- 2. sentence vs token outputs ------------------------------------------------------------
st.header("2 · One vector per sentence, or one per word")
lens = out.sequence_len.tolist()
rows = []
for b, name in enumerate("AB"):
    rows.append({"output": f"default[{b}] (sentence {name})", "shape": str(out.default[b].shape),
                 "norm": float(np.linalg.norm(out.default[b])),
                 "first values": ", ".join(f"{v:+.3f}" for v in out.default[b, :4])})
    rows.append({"output": f"elmo[{b}] (sentence {name})", "shape": str(out.elmo[b, : lens[b]].shape),
                 "norm": float(np.linalg.norm(out.elmo[b, : lens[b]])),
                 "first values": ", ".join(f"{v:+.3f}" for v in out.elmo[b, 0, :4])})
show_table(pd.DataFrame(rows), hide_index=True, projector=fr.projector, key="elmo_default_vs_tokens")
st.markdown(f"Cosine of the two `default` vectors: **{analysis.cosine(out.default[0], out.default[1]):.3f}**. "
            "Use `default` (the mean of `elmo` over a sentence's real words) to compare or classify "
            "whole sentences; use the token-level `elmo` tensor for anything about single words, "
            "such as word senses or tagging.")


# --- 3. click a word --------------------------------------------------------------------------
def _pick(key: str, words: tuple[str, ...], name: str) -> int:
    """The selected word index from its stored "index:word" form; say so if it is gone."""
    default = analysis.default_pair(tokens[0], tokens[1])[0 if name == "A" else 1]
    stored = state.get(key) or ""
    if not stored:
        return default
    index, _, word = stored.partition(":")
    i = int(index) if index.isdigit() else -1
    if 0 <= i < len(words) and words[i] == word:
        return i
    if word in words:
        return words.index(word)
    st.info(f"The selected word “{word}” is not in sentence {name}; showing “{words[default]}” instead.")
    return default


def _store(key: str, words: tuple[str, ...], i: int) -> None:
    state.put(key, f"{i}:{words[i]}")


def _select_from_chart(chart_key: str, targets) -> None:
    """A clicked cell selects words: targets maps 'x'/'y' to (state key, words, index map)."""
    event = st.session_state.get(chart_key)
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    if not points:
        return
    for axis, (key, words, index_of) in targets.items():
        i = index_of[int(points[0][axis])]
        if i >= 0:
            _store(key, words, i)


def _mix() -> tuple[np.ndarray, float]:
    return np.array([state.get(f"elmo_w{j}") for j in range(3)], float), float(state.get("elmo_g"))


learned = model.mix_weights
base_w, base_g = (learned[0].tolist(), learned[1]) if learned is not None else ([0.0, 0.0, 0.0], 1.0)
state.register(**{f"elmo_w{j}": float(round(base_w[j], 3)) for j in range(3)}, elmo_g=float(round(base_g, 3)))


@st.fragment
def explore() -> None:
    st.header("3 · One word through the layers")
    words_a, words_b = tokens
    ia, ib = _pick("elmo_wa", words_a, "A"), _pick("elmo_wb", words_b, "B")
    _store("elmo_wa", words_a, ia)
    _store("elmo_wb", words_b, ib)
    state.put("elmo_ia", ia)
    state.put("elmo_ib", ib)
    state.widget(st.pills, "elmo_ia", "Word in sentence A", options=list(range(len(words_a))),
                 format_func=lambda i: md_escape(words_a[i]), selection_mode="single",
                 on_change=lambda: _store("elmo_wa", words_a, state.get("elmo_ia") or 0))
    state.widget(st.pills, "elmo_ib", "Word in sentence B", options=list(range(len(words_b))),
                 format_func=lambda i: md_escape(words_b[i]), selection_mode="single",
                 on_change=lambda: _store("elmo_wb", words_b, state.get("elmo_ib") or 0))
    ia = state.get("elmo_ia") if state.get("elmo_ia") is not None else ia
    ib = state.get("elmo_ib") if state.get("elmo_ib") is not None else ib

    # --- the scalar mix (sliders recompute `elmo` and every figure below) ---
    with st.expander("The scalar mix: elmo = γ · Σ softmax(w)ⱼ · layerⱼ", expanded=True):
        b1, b2, b3 = st.columns(3)

        def preset(w, g):
            for j in range(3):
                state.put(f"elmo_w{j}", float(w[j]))
            state.put("elmo_g", float(g))

        b1.button("Uniform", on_click=preset, args=([0.0, 0.0, 0.0], 1.0), key="elmo_uniform")
        b2.button("Top layer only", on_click=preset, args=([-10.0, -10.0, 10.0], 1.0), key="elmo_top")
        b3.button("Learned weights", on_click=preset, args=(base_w, base_g), key="elmo_learned",
                  disabled=learned is None,
                  help=None if learned is not None else "This source does not expose its learned mix.")
        s = st.columns(4)
        for j, name in enumerate(LAYERS):
            with s[j]:
                state.widget(st.slider, f"elmo_w{j}", f"w · {name}", min_value=-10.0, max_value=10.0, step=0.1)
        with s[3]:
            state.widget(st.slider, "elmo_g", "γ (scale)", min_value=0.0, max_value=3.0, step=0.05)
        w, g = _mix()
        soft = np.exp(w - w.max()) / np.exp(w - w.max()).sum()
        st.markdown("softmax(w) = " + " · ".join(f"`{n}` **{p:.3f}**" for n, p in zip(LAYERS, soft))
                    + f" · γ = **{g:.2f}**")
    state.sync_url()

    elmo = scalar_mix(out.layers, w, g)  # (B, T, C)
    stack = np.concatenate([out.layers, elmo[None]])  # (4, B, T, C)
    names = LAYERS + ["elmo (mix)"]
    curve = analysis.layerwise_cosine(stack[:, 0, ia], stack[:, 1, ib])
    wa, wb = words_a[ia], words_b[ib]
    st.plotly_chart(figures.bar_by_layer(names, curve, f'Cosine of A "{wa}" and B "{wb}" at each layer',
                                         model.label, fr.projector), key="elmo_bars")
    show_table(pd.DataFrame({"layer": names, "cosine": np.round(curve, 4)}).set_index("layer").T,
                 projector=fr.projector, key="elmo_curve_table")
    st.caption("`word_emb` sees only the characters of the word, so the same word has cosine 1.000 "
               "in any context; the LSTM layers mix in the sentence around it.")

    la, lb = lens
    labels = [f"A·{t}" for t in words_a] + [f"B·{t}" for t in words_b]
    both = np.concatenate([stack[:, 0, :la], stack[:, 1, :lb]], axis=1)  # (4, Ta + Tb, C)
    z = analysis.token_vs_tokens(stack[:, 0, ia], both)
    index_of_b = [-1] * la + list(range(lb))
    st.plotly_chart(
        figures.heatmap(z, labels, names, f'A "{wa}" against every word of both sentences, per layer',
                        model.label, fr.projector, x_title="words of A, then B", y_title="layer"),
        key="elmo_lt", selection_mode="points",
        on_select=partial(_select_from_chart, "elmo_lt", {"x": ("elmo_wb", words_b, index_of_b)}))
    st.caption("Which neighbours does the word resemble at each layer? Click a word of B to compare with it.")

    layer = state.widget(st.segmented_control, "elmo_layer", "Layer for the A × B map",
                         options=list(range(4)), format_func=lambda i: names[i])
    layer = state.get("elmo_layer") if layer is None else layer
    ab = analysis.cosine_matrix(stack[layer, 0, :la], stack[layer, 1, :lb])
    st.plotly_chart(
        figures.heatmap(ab, list(words_b), list(words_a), f"Every word of A against every word of B: {names[layer]}",
                        model.label, fr.projector, x_title="sentence B", y_title="sentence A", highlight=(ia, ib)),
        key="elmo_ab", selection_mode="points",
        on_select=partial(_select_from_chart, "elmo_ab", {"y": ("elmo_wa", words_a, list(range(la))),
                                                          "x": ("elmo_wb", words_b, list(range(lb)))}))
    state.sync_url()


explore()

# --- 4. determinism and state ----------------------------------------------------------------
st.header("4 · Same sentence, same vectors?")


@st.fragment
def determinism() -> None:
    c1, c2 = st.columns(2)
    runs = state.widget(c1.slider, "elmo_runs", "Runs", min_value=2, max_value=12, step=1)
    rate = state.widget(c2.slider, "elmo_dropout", "Dropout rate at inference", min_value=0.05,
                        max_value=0.5, step=0.05, disabled=not model.supports_state)
    runs, rate = int(runs or state.get("elmo_runs")), float(rate or state.get("elmo_dropout"))
    res = models.elmo_repeats(model, model.source, tokens[0], runs, rate)
    run_names = [f"run {i + 1}" for i in range(runs)]
    st.plotly_chart(figures.layer_curve(run_names, res, f"Norm of lstm_outputs2 for sentence A, run {runs} times",
                                        model.label, fr.projector, y_title="norm", y_range=None),
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
    if not model.supports_state:
        st.info("This source runs through SavedModel signatures, which have no carried state and no "
                "dropout switch: only the stateless runs can be shown. The embedded ELMo-mini shows all three.")
    state.sync_url()


determinism()
state.sync_url()
