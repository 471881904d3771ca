"""BERT WordPiece: how BERT cuts two sentences into pieces, and how a word's vector changes
layer by layer in each context."""

from __future__ import annotations

from ui.imports import before_page

before_page()  # first: the imports below take seconds on a fresh server (ui.imports)

import pandas as pd
import streamlit as st

from lab import analysis, figures, quiz, views
from lab.vectors import INPUT_LAYER
from ui import charts, clicks, model_cache, state
from ui import quiz_gate
from ui.frame import (explain, frame, layer_table, page_header, section_before_figure, show_input_messages, show_table,
                      word_pills)
from ui.text import md_code, md_escape

MAP_TOKENS = 48  # per side of a map, as on the attention page: whole, a long input's is unreadable

fr = frame("BERT WordPiece")
state.register(bert_word_a=-1, bert_word_b=-1, bert_pool="first", bert_map=1)
state.reset_when_changed((fr.sentence_a, fr.sentence_b), bert_word_a=-1, bert_word_b=-1)

details = page_header("BERT WordPiece", "How BERT splits text into word pieces, and how the vector of one word "
                      "changes from layer to layer depending on the sentence around it.", fr.projector,
                      line="One word's vector, layer by layer, in two sentences.")
show_input_messages(fr)

model = model_cache.model("bert", fr.bert_source, lazy=True)  # a stored run can answer before it loads
# The page draws no attention probabilities, so it keeps its run without them (151 MB of a
# long input's 167, held as long as the session); the download runs the model again.
out = model_cache.bert_run(model, model.source, tuple(fr.sentences), attentions=False)
with details:
    st.caption(f"Model: **{md_escape(out.model_label)}** · source: {md_code(model.source)}")
    charts.vectors_button(lambda m=model, s=list(fr.sentences): m.run(s), "bert-vectors", key="bert_npz")
baseline = model_cache.baseline(model)  # each layer's, from the reference corpus (stored by `python -m lab prepare`)
for name, cut in zip("AB", out.truncated):
    if cut:
        st.warning(f"Sentence {name} has more word pieces than BERT's 512 positions allow; "
                   "only the first 510 pieces are used.")


def wordpieces() -> None:
    box, folded = section_before_figure("1 · Word pieces and model inputs", fr.projector)  # section 2's figure
    with box:
        _wordpieces(folded)


def _wordpieces(folded: bool) -> None:
    explain("`##` marks a piece that continues the word before it. `[CLS]` opens every input "
            "and `[SEP]` closes it; `[PAD]` fills the shorter sentence up to the batch length, "
            "and `input_mask` = 0 tells the model to ignore it.", fr.projector and not folded)  # (no nested folds)
    T = out.mask.shape[1]
    for b, name in enumerate("AB"):
        st.subheader(f"Sentence {name}")
        st.text(fr.sentences[b])  # as typed: never rendered as markdown or HTML
        t = views.wordpiece_table(out, b)
        table = pd.DataFrame([t.tokens, t.input_word_ids, t.input_mask, t.input_type_ids, t.words],
                             index=["token", "input_word_ids", "input_mask", "input_type_ids", "word"],
                             columns=[str(p) for p in range(T)])
        show_table(table.astype(str), projector=fr.projector, key=f"wp_{name}")
    arrays = {"input_word_ids": out.bert.input_word_ids, "input_mask": out.mask,
              "input_type_ids": out.bert.input_type_ids}
    shapes = " · ".join(f"`{k}` {a.dtype} {tuple(a.shape)}" for k, a in arrays.items())
    st.markdown(f"Batch inputs (B = 2 sentences, T = {T} positions): {shapes}")


def _word_pickers() -> views.WordPair:
    """Pills for a word of A and of B, and the pooling choice -> the selected pair."""
    da, db = analysis.default_pair(out.words[0], out.words[1])
    ta = word_pills("bert_word_a", 0, out.words[0], da)
    tb = word_pills("bert_word_b", 1, out.words[1], db)
    state.choice(st.segmented_control, "bert_pool", "Word vector from its pieces", analysis.POOLINGS, "first",
                 format_func={"first": "first piece", "mean": "mean"}.get,
                 help="A word cut into several pieces has several vectors: take the first "
                      "piece's, or average them.")
    return views.word_pair(out, (0, ta), (1, tb), pooling())


def pooling() -> str:
    """The pooling picked ("first" or "mean"): the pair's vectors and their baselines follow it."""
    return state.get("bert_pool")


@state.fragment
def compare() -> None:
    st.header("2 · One word, two contexts")
    pair = _word_pickers()
    word_a, word_b = pair.texts
    st.markdown(f"A: **{md_escape(word_a)}** → pieces {md_code(' '.join(pair.pieces[0]))} · "
                f"B: **{md_escape(word_b)}** → pieces {md_code(' '.join(pair.pieces[1]))}")
    if not quiz_gate.gate(quiz.least_alike(pair.texts, {out.short_label: (pair.layer_names, pair.cosine)}), "bert",
                        hides=("this section's chart and maps, and sections 3 and 4 "
                               "(their numbers give the answer away)")):
        return
    base = baseline.at(pair.layer_names, pool=pooling()) if baseline is not None else None
    charts.show(figures.layer_curve(pair.layer_names, {f'A "{word_a}" vs B "{word_b}"': pair.cosine},
                                    "Cosine similarity at every layer", out.model_label, fr.projector, baseline=base),
                key="bert_curve")
    st.caption(f"`{INPUT_LAYER}` is the input embedding, before any attention. The same word starts close (its "
               "word-piece embedding is shared) and moves apart as the layers mix in context."
               + ("" if base is None else " The dashed line is each layer's baseline: " + views.BASELINE_NOTE))
    layer_table(views.against_baseline(pair.cosine, base), pair.layer_names, fr.projector, "bert_curve_table")
    _token_map(pair)
    _cross_map(pair)
    _measures(pair)
    _embedding_parts(pair)


def _token_map(pair: views.WordPair) -> None:
    """Word A against every token of one sentence, chosen with a switch: one map drawn at a
    time (tabs would draw both on every click)."""
    word_a = pair.texts[0]
    b = state.choice(st.segmented_control, "bert_map", f'"{md_escape(word_a)}" (A) against every token of',
                     [1, 0], 1, format_func=lambda b: f"sentence {'AB'[b]}")
    m = views.token_map(out, pair.vectors[0], (b,), around=(pair.positions[b][0],), size=MAP_TOKENS)
    shown = m.spans[0]
    which = "every token" if not m.cropped else f"tokens {shown.start}-{shown.stop - 1}"
    key = f"bert_lt_{b}"
    charts.show(charts.cached_heatmap(m.cosine, m.labels, pair.layer_names, f'"{word_a}" (A) against {which} '
                                      f'of {"AB"[b]}, per layer', out.model_label, fr.projector,
                                      x_title=f"tokens of sentence {'AB'[b]}", y_title="layer"),
                key=key,
                on_select=clicks.on_click(key, x=clicks.pick("bert_word_b" if b == 1 else "bert_word_a", m.words)),
                selection_mode="points")
    st.caption("Click a cell to select that token.")


def _cross_map(pair: views.WordPair) -> None:
    names = pair.layer_names
    state.register(bert_layer=len(names) - 1)
    state.widget(st.select_slider, "bert_layer", "Layer for the A × B map",
                 options=list(range(len(names))), format_func=lambda i: names[i])
    layer = state.get("bert_layer")
    pa, pb = pair.positions[0][0], pair.positions[1][0]  # the selected words' first pieces
    m = views.cross_window(out, layer, (pa, pb), MAP_TOKENS)
    r, c = m.rows, m.cols
    what = ("Every token of A against every token of B" if not m.cropped else
            f"Tokens {r.start}-{r.stop - 1} of A against tokens {c.start}-{c.stop - 1} of B")
    fig = charts.cached_heatmap(m.cosine, out.tokens[1][c.start:c.stop], out.tokens[0][r.start:r.stop],
                         f"{what} at {names[layer]}", out.model_label, fr.projector,
                         x_title="sentence B", y_title="sentence A")
    charts.show(fig, key="bert_ab", selection_mode="points",
                on_select=clicks.on_click("bert_ab", x=clicks.pick("bert_word_b", out.word_at(1)[c.start:c.stop]),
                                          y=clicks.pick("bert_word_a", out.word_at(0)[r.start:r.stop])))
    # the selected pair's cell, outlined over the chart: another word moves the outline,
    # and the map, its figure unchanged, is not drawn again
    charts.outline("bert_ab", figures.outline_box(fig, pa - r.start, pb - c.start, projector=fr.projector))
    if m.cropped:
        st.caption(f"Long input: the map shows at most {MAP_TOKENS} tokens of each sentence, around the "
                   "selected words; select other words to move it.")


def _measures(pair: views.WordPair) -> None:
    st.header("3 · Three ways to compare the sentences")
    m = views.sentence_measures(out, pair)
    m1, m2, m3 = st.columns(3)
    m1.metric("Pooled output cosine", f"{m.pooled:.3f}")
    m1.caption("tanh(dense([CLS])) of the last layer: one vector per sentence, trained for "
               "next-sentence prediction in BERT (this embedded model was tuned on mean pooling "
               "instead, so read it with care).")
    m2.metric(f'Token cosine "{md_escape(pair.texts[0])}" / "{md_escape(pair.texts[1])}"', f"{m.token:.3f}")
    m2.caption("The selected words at the last layer: how alike the two uses of a word are.")
    m3.metric("Mean-pooled content cosine", f"{m.mean_content:.3f}")
    m3.caption("Average of the last layer over real words ([CLS], [SEP], padding left out): "
               "how alike the two sentences are overall.")


def _embedding_parts(pair: views.WordPair) -> None:
    st.header("4 · The input layer, part by part")
    parts = views.embedding_parts(out, pair)
    if parts is None:
        st.info("This source does not expose its embedding parts; the embedded model does.")
        return
    table = pd.DataFrame([{"part": p.part, "cosine A/B": p.cosine, "norm A": p.norms[0], "norm B": p.norms[1],
                           "share of sum A": p.shares[0], "share of sum B": p.shares[1]} for p in parts])
    show_table(table.set_index("part").round(4), projector=fr.projector, key="bert_parts")
    pos_a, pos_b = pair.positions[0][0], pair.positions[1][0]
    wa, wb = (md_escape(w) for w in pair.texts)
    st.caption(f"`{INPUT_LAYER}` is the sum of three vectors, normalized: the word-piece embedding, the "
               f"position embedding and the segment (token-type) embedding. The word part of "
               f'"{wa}" and "{wb}" has cosine {parts[0].cosine:.3f} (1.000 means the '
               f"same piece); the position part differs because the words sit at positions {pos_a} and "
               f"{pos_b}. 'Share' is each part's projection on the sum (the three add up to 1).")


wordpieces()
compare()
state.sync_url()
