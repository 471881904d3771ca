"""BERT WordPiece: how BERT cuts two sentences into pieces, and how a word's vector changes
layer by layer in each context."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from lab import analysis, figures
from ui import models, state
from ui.frame import frame, md_escape, show_input_messages, show_table

fr = frame("BERT WordPiece")
state.register(bert_ta=-1, bert_tb=-1, bert_pool="first")
state.reset_when_changed((fr.sentence_a, fr.sentence_b), bert_ta=-1, bert_tb=-1)

st.title("BERT WordPiece")
st.caption("How BERT splits text into word pieces, and how the vector of one word changes from "
           "layer to layer depending on the sentence around it.")
show_input_messages(fr)

model = models.model("bert", fr.bert_source)
out = models.bert_run(model, model.source, tuple(fr.sentences))
st.caption(f"Model: **{md_escape(out.model_label)}** · source: `{model.source}`")
for name, cut in zip("AB", out.truncated):
    if cut:
        st.warning(f"Sentence {name} has more word pieces than BERT's 512 positions allow; "
                   "only the first 510 pieces are used.")

# --- 1. the WordPiece view ---------------------------------------------------------------
st.header("1 · Word pieces and model inputs")
st.markdown("`##` marks a piece that continues the word before it. `[CLS]` opens every input "
            "and `[SEP]` closes it; `[PAD]` fills the shorter sentence up to the batch length, "
            "and `input_mask` = 0 tells the model to ignore it.")
T = out.input_word_ids.shape[1]
for b, name in enumerate("AB"):
    enc = out.encodings[b]
    st.subheader(f"Sentence {name}")
    st.text(fr.sentences[b])  # as typed: never rendered as markdown or HTML
    words = ["" if p == 0 or p > len(enc.pieces) else enc.words[enc.word_index[p - 1]] for p in range(T)]
    table = pd.DataFrame(
        [[out.tokens[b][p] if p < len(out.tokens[b]) else "[PAD]" for p in range(T)],
         out.input_word_ids[b].tolist(), out.input_mask[b].tolist(), out.input_type_ids[b].tolist(), words],
        index=["token", "input_word_ids", "input_mask", "input_type_ids", "word"],
        columns=[str(p) for p in range(T)],
    )
    show_table(table.astype(str), projector=fr.projector, key=f"wp_{name}")
shapes = " · ".join(f"`{k}` {getattr(out, k).dtype} {tuple(getattr(out, k).shape)}"
                    for k in ("input_word_ids", "input_mask", "input_type_ids"))
st.markdown(f"Batch inputs (B = 2 sentences, T = {T} positions): {shapes}")


# --- 2. pick a word in each sentence -----------------------------------------------------
def _select_from_chart(chart_key: str, rows_are: str, cols_are: str, row_words, col_words):
    """A clicked heatmap cell selects tokens: the word under the clicked row/column."""
    event = st.session_state.get(chart_key)
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    if not points:
        return
    x, y = int(points[0]["x"]), int(points[0]["y"])
    for axis, idx, word_of in (("col", x, col_words), ("row", y, row_words)):
        target = cols_are if axis == "col" else rows_are
        if target and 0 <= idx < len(word_of) and word_of[idx] >= 0:
            state.put(target, int(word_of[idx]))


@st.fragment
def compare() -> None:
    st.header("2 · One word, two contexts")
    enc_a, enc_b = out.encodings
    da, db = analysis.default_pair(enc_a.words, enc_b.words)
    if not (0 <= state.get("bert_ta") < len(enc_a.words)):
        state.put("bert_ta", da)
    if not (0 <= state.get("bert_tb") < len(enc_b.words)):
        state.put("bert_tb", db)
    ta = state.widget(st.pills, "bert_ta", "Word in sentence A", options=list(range(len(enc_a.words))),
                      format_func=lambda i: md_escape(enc_a.words[i]), selection_mode="single")
    tb = state.widget(st.pills, "bert_tb", "Word in sentence B", options=list(range(len(enc_b.words))),
                      format_func=lambda i: md_escape(enc_b.words[i]), selection_mode="single")
    pool = state.widget(st.segmented_control, "bert_pool", "Word vector from its pieces",
                        options=["first", "mean"], format_func={"first": "first piece", "mean": "mean"}.get,
                        help="A word cut into several pieces has several vectors: take the first "
                             "piece's, or average them.")
    ta = state.get("bert_ta") if ta is None else ta
    tb = state.get("bert_tb") if tb is None else tb
    pool = pool or "first"
    state.sync_url()  # a fragment rerun does not reach the page's last line
    word_a, word_b = enc_a.words[ta], enc_b.words[tb]
    pos_a, pos_b = out.piece_positions(0, ta), out.piece_positions(1, tb)
    vec_a = analysis.pool_pieces(out.layers[:, 0], pos_a, pool)  # (N, C)
    vec_b = analysis.pool_pieces(out.layers[:, 1], pos_b, pool)
    curve = analysis.layerwise_cosine(vec_a, vec_b)  # (N,)
    names = out.layer_names
    pieces_note = lambda enc, w: " ".join(enc.pieces[i] for i in enc.pieces_of_word(w))  # noqa: E731
    st.markdown(f"A: **{md_escape(word_a)}** → pieces `{pieces_note(enc_a, ta)}` · "
                f"B: **{md_escape(word_b)}** → pieces `{pieces_note(enc_b, tb)}`")

    series = f'A "{word_a}" vs B "{word_b}"'
    st.plotly_chart(figures.layer_curve(names, {series: curve}, "Cosine similarity at every layer",
                                        out.model_label, fr.projector), key="bert_curve")
    st.caption("Layer 0 is the input embedding. The same word starts close (its word-piece "
               "embedding is shared) and moves apart as the layers mix in context.")
    show_table(pd.DataFrame({"layer": names, "cosine": np.round(curve, 4)}).set_index("layer").T,
                 projector=fr.projector, key="bert_curve_table")

    # positions of real tokens of each sentence, and the word each position belongs to
    len_a, len_b = len(out.tokens[0]), len(out.tokens[1])
    word_at = [[-1] + enc.word_index + [-1] for enc in out.encodings]  # [CLS] ... [SEP]
    tab_b, tab_a = st.tabs([f'"{word_a}" vs every token of B', f'"{word_a}" vs every token of A'])
    for tab, b, length, target in ((tab_b, 1, len_b, "bert_tb"), (tab_a, 0, len_a, "bert_ta")):
        with tab:
            z = analysis.token_vs_tokens(vec_a, out.layers[:, b, :length])  # (N, T_b)
            key = f"bert_lt_{b}"
            st.plotly_chart(
                figures.heatmap(z, out.tokens[b], names, f'"{word_a}" (A) against every token of '
                                f'{"AB"[b]}, per layer', out.model_label, fr.projector,
                                x_title=f"tokens of sentence {'AB'[b]}", y_title="layer"),
                key=key, on_select=partial(_select_from_chart, key, "", target, [], word_at[b]),
                selection_mode="points")
    st.caption("Click a cell to select that token.")

    state.register(bert_layer=len(names) - 1)
    layer = state.widget(st.select_slider, "bert_layer", "Layer for the A × B map",
                         options=list(range(len(names))), format_func=lambda i: names[i])
    layer = state.get("bert_layer") if layer is None else layer
    state.sync_url()
    ab = analysis.cosine_matrix(out.layers[layer, 0, :len_a], out.layers[layer, 1, :len_b])
    hl = (pos_a[0], pos_b[0])
    st.plotly_chart(
        figures.heatmap(ab, out.tokens[1], out.tokens[0], f"Every token of A against every token "
                        f"of B at {names[layer]}", out.model_label, fr.projector,
                        x_title="sentence B", y_title="sentence A", highlight=hl),
        key="bert_ab", on_select=partial(_select_from_chart, "bert_ab", "bert_ta", "bert_tb",
                                         word_at[0], word_at[1]),
        selection_mode="points")

    # --- 3. the three measures -----------------------------------------------------------
    st.header("3 · Three ways to compare the sentences")
    last = out.layers[-1]
    content = [analysis.content_mask(out.tokens[b], len(out.tokens[b])) for b in (0, 1)]
    mean_a = analysis.mean_pool(last[0, :len_a], content[0])
    mean_b = analysis.mean_pool(last[1, :len_b], content[1])
    measures = {
        "pooled output": analysis.cosine(out.pooled[0], out.pooled[1]),
        "contextual token": float(curve[-1]),
        "mean-pooled content tokens": analysis.cosine(mean_a, mean_b),
    }
    m1, m2, m3 = st.columns(3)
    m1.metric("Pooled output cosine", f"{measures['pooled output']:.3f}")
    m1.caption("tanh(dense([CLS])) of the last layer: one vector per sentence, trained for "
               "next-sentence prediction in BERT (this embedded model was tuned on mean pooling "
               "instead, so read it with care).")
    m2.metric(f'Token cosine "{word_a}" / "{word_b}"', f"{measures['contextual token']:.3f}")
    m2.caption("The selected words at the last layer: how alike the two uses of a word are.")
    m3.metric("Mean-pooled content cosine", f"{measures['mean-pooled content tokens']:.3f}")
    m3.caption("Average of the last layer over real words ([CLS], [SEP], padding left out): "
               "how alike the two sentences are overall.")

    # --- 4. the input embedding, decomposed ----------------------------------------------
    st.header("4 · The input embedding, part by part")
    if out.embedding_parts is None:
        st.info("This source does not expose its embedding parts; the embedded model does.")
        return
    rows = []
    for part, arr in out.embedding_parts.items():
        va, vb = arr[0, pos_a[0]], arr[1, pos_b[0]]
        rows.append({"part": part, "cosine A/B": analysis.cosine(va, vb),
                     "norm A": float(np.linalg.norm(va)), "norm B": float(np.linalg.norm(vb))})
    shares = [analysis.part_contributions({p: a[b, pos] for p, a in out.embedding_parts.items()})
              for b, pos in ((0, pos_a[0]), (1, pos_b[0]))]
    for r in rows:
        r["share of sum A"], r["share of sum B"] = shares[0][r["part"]]["share"], shares[1][r["part"]]["share"]
    show_table(pd.DataFrame(rows).set_index("part").round(4), projector=fr.projector, key="bert_parts")
    st.caption(f"Before layer 0, BERT adds three vectors: the word-piece embedding, the position "
               f"embedding and the segment (token-type) embedding, then normalizes. The word part of "
               f'"{word_a}" and "{word_b}" has cosine {rows[0]["cosine A/B"]:.3f} (1.000 means the same '
               f"piece); the position part differs because the words sit at positions {pos_a[0]} and "
               f"{pos_b[0]}. 'Share' is each part's projection on the sum (the three add up to 1).")


compare()
state.sync_url()
