"""Transformer attention: one minimal block with its padding mask, then real BERT heads."""

from __future__ import annotations

from ui.imports import MODEL_MODULES, before_page

before_page(*MODEL_MODULES)  # first: the imports below take seconds on a fresh server (ui.imports)

import pandas as pd
import streamlit as st

from lab import analysis, figures, quiz, sources, views
from lab.models.transformer import run_block
from ui import charts, clicks, model_cache, quiz_gate, state
from ui.frame import explain, frame, show_input_messages, show_table, token_picker
from ui.text import md_escape

# The most queries and keys a view draws: a 512 x 512 matrix (or 72 of them) would stall
# the browser, and nobody reads that many labels anyway.
VIEW_TOKENS = 48
FILTERS = {"all": "all tokens", "ab": "A → B", "ba": "B → A"}

fr = frame("Transformer attention")
state.register(att_seed=0, att_mask=True, att_block_head=0, att_block_row=0, att_mode="batch", att_bert_row=0,
               att_filter="all", att_special="show", att_layer=0, att_bert_head=0, att_query=-1,
               att_lines=False, att_embedded=False, att_block_tbl=False, att_head_tbl=False, att_row_tbl=False)
state.reset_when_changed(tuple(fr.sentences), att_query=-1)  # a position means another token now

st.title("Transformer attention")
# in projector mode one short line (the projector's compact header, ui.frame.page_header): the
# page has no model details or downloads above its figures to fold away
st.caption("Every token looks at every other: a bare block, then BERT." if fr.projector else
           "Self-attention lets every token look at every other token. First one bare "
           "Transformer block with its padding mask, then the heads of a real BERT.")
show_input_messages(fr)


def _table(df: pd.DataFrame, key: str, open_key: str) -> None:
    """The plotted matrix as numbers, folded away, in a keyed container (AppTest finds a
    plain st.dataframe by position only), as every table of the app is shown (``show_table``:
    a grid, or an HTML table in projector mode, with its CSV). Built only while its panel is
    open (``open_key``, kept in the URL): a closed table is neither sent nor drawn, so a
    click on the page redraws its charts and nothing hidden."""
    panel = state.widget(st.expander, open_key, "The values as a table")
    if not panel.open:
        return
    with panel, st.container(key=key):
        show_table(df, key=f"{key}_values", projector=fr.projector)


def _controls(widths: list[int]) -> list:
    """Columns for widgets, two per row: segmented controls need the width (more so in
    projector type), and a cut-off option cannot be clicked."""
    return [col for i in range(0, len(widths), 2) for col in st.columns(widths[i : i + 2])]


def _labels(tokens, positions) -> list[str]:
    """Unique column names for tables: 'position·token' (a token can repeat)."""
    return [f"{p}·{t}" for p, t in zip(positions, tokens)]


# --- how one weight is computed (drawn at the end of sections 1 and 2) --------------------


STEP_WIDTH = 0.7  # a step figure's share of a full-width chart in projector mode (its title's wrap)
state.register(att_steps_block=False, att_steps_bert=False, att_sq_block=-1, att_sq_bert=-1,
               att_sk_block=-1, att_sk_bert=-1, att_temp_block=1.0, att_temp_bert=1.0)
state.reset_when_changed(tuple(fr.sentences), att_sq_block=-1, att_sq_bert=-1, att_sk_block=-1, att_sk_bert=-1)


@st.cache_data(show_spinner="Running BERT's layer step by step...", max_entries=4)
def bert_steps(_model, source: str, sentences: tuple[str, ...], pair: bool, layer: int):
    """The tokens of each row (padding named ``[PAD]``), the padding mask and layer
    ``layer``'s attention steps of a BERT (``EmbeddedBert.attention_steps``)."""
    out, steps = _model.attention_steps(list(sentences), layer, pair=pair)
    T = out.mask.shape[1]
    tokens = [list(row) + ["[PAD]"] * (T - len(row)) for row in out.tokens]
    return tokens, out.mask, steps


def _steps_model():
    """The BERT that section 2 shows, or None (a TF Hub encoder gives no attention)."""
    model = model_cache.model("bert", fr.bert_source)
    if getattr(model, "has_attentions", False):
        return model
    return model_cache.model("bert", sources.EMBEDDED) if state.get("att_embedded") else None


@state.fragment
def how_one_weight(kind: str, layer: int = 0, head: int = 0) -> None:
    """Section "How one weight is computed" for the seeded block (``kind`` "block": its
    head, batch row and mask switch) or BERT ("bert": ``layer`` and ``head`` of the head
    view, its input and row), folded until opened (its state in the URL)."""
    panel = state.widget(st.expander, f"att_steps_{kind}", "How one weight is computed, step by step")
    if not panel.open:
        return
    with panel:
        pair = False
        if kind == "block":
            row, mask_on = state.get("att_block_row"), bool(state.get("att_mask"))
            try:
                run = block_run(tuple(fr.sentences), int(state.get("att_seed")), mask_on)
            except ValueError as exc:
                st.warning(str(exc))
                return
            tokens, mask, steps = run.batch.tokens, run.batch.padding_mask, run.steps
            head, where = state.get("att_block_head"), f"the seeded block, head {state.get('att_block_head') + 1}"
            label, x_what = run.label, "the token's embedding + position"
        else:
            model = _steps_model()
            if model is None:
                return
            pair = state.get("att_mode") == "pair"
            row = 0 if pair else state.get("att_bert_row")
            try:
                tokens, mask, steps = bert_steps(model, model.source, tuple(fr.sentences), pair, layer)
            except ValueError as exc:
                st.warning(str(exc))
                return
            where, label = f"BERT layer {layer + 1}, head {head + 1}", model.short_label
            x_what = "the input layer's vector" if layer == 0 else f"layer {layer}'s output"
        row_name = "the packed pair" if kind == "bert" and pair else f"sentence {'AB'[row]} of the padded batch"
        _weight_steps(kind, tokens[row], mask[row], steps, row, row_name, head, where, label, x_what)


def _weight_steps(kind, tokens, mask, steps, row, row_name, head, where, label, x_what) -> None:
    """The steps of one query in one head, a panel each with its shape. The steps that change
    together share a chart (``figures.stacked``); K and V, the same for every query, are
    charts of their own that a query click leaves as they are."""
    proj = fr.projector
    full = STEP_WIDTH if proj else 1.0  # the share of a full-width chart, for wrapping titles
    real = [p for p in range(len(tokens)) if mask[p]]
    content = [p for p in real if tokens[p] not in analysis.SPECIAL]
    query = token_picker(f"att_sq_{kind}", "Query token", [tokens[p] for p in real], (content or real)[0],
                         positions=real)
    w = views.weight_steps(steps, tokens, mask, row, head, query)
    question, gate_key = quiz.most_weight(tokens[query], tokens, w.weights), f"att_steps_{kind}"
    # on a projector the question comes before the steps, so that the class sees it first
    if proj and not quiz_gate.gate(question, gate_key, hides="every step of this weight"):
        return
    masked = steps.bias is not None
    st.caption(f"{md_escape(where)}, {md_escape(row_name)}; the padding mask is **{'on' if masked else 'OFF'}**. "
               "Every number below is the model's own, read from its attention layer (but for a "
               "temperature other than 1).")
    picked = state.get(f"att_sk_{kind}")
    key = picked if 0 <= picked < len(tokens) else w.largest
    look = (tokens, proj, full, key)
    q_tok = tokens[query]
    _show_steps(kind, _input_panels(look, w, query, head, x_what), f'1-2 · from the input to the query, at "{q_tok}"',
                label, proj, full)
    _keys_and_values(kind, w, tokens, label, proj, full)
    pick_key = clicks.pick(f"att_sk_{kind}", list(range(len(tokens))))
    # elsewhere the question follows the scores, which answer it; the softmax and what it
    # gives wait for the reveal. Their controls come here, below the first figures.
    soft = None
    if proj or quiz_gate.revealed(question, gate_key):
        token_picker(f"att_sk_{kind}", "Key for the neuron view (or click a bar)", tokens, key)
        t = _temperature(kind)  # at 1 the model's own steps, already at hand
        soft = w if t == 1.0 else views.weight_steps(steps, tokens, mask, row, head, query, temperature=t)
    to = ("3-5", "weights") if soft is not None else ("3-4", "scores")
    _show_steps(kind, _score_panels(look, w, masked, soft), f"{to[0]} · from q and every k to the {to[1]}, key by key",
                label, proj, full, pick_key)
    if soft is not None:
        _show_steps(kind, _output_panels(look, soft, query), f'6-7 · the output at "{q_tok}", and one key up close',
                    label, proj, full)
    if kind == "bert" and w.padded.any():
        st.caption("BERT has no switch to turn its mask off: it was trained with it.")
    if not proj and not quiz_gate.gate(question, gate_key, hides="the softmax weights, the output and the neuron view"):
        return
    _output_notes(soft, tokens)


def _keys_and_values(kind: str, w, tokens, label: str, proj: bool, full: float) -> None:
    """2: every token's K and V, side by side (one above the other on a projector): the same
    for every query, so a query click leaves these charts as they are."""
    c1, c2 = (st.container(), st.container()) if proj else st.columns(2)
    for col, name, arr, part in ((c1, "K = X W_K", w.keys, "keys"), (c2, "V = X W_V", w.values, "values")):
        with col:
            charts.show(_kept_strip(arr, tokens, f"2 · {name}: every token", "TD", label, proj,
                                    width=full if proj else 0.5), key=f"att_s{part}_{kind}")


# a resource: K and V stay the same while a class clicks through the queries of a head
@st.cache_resource(show_spinner=False, max_entries=32)
def _kept_strip(*args, **kwargs):
    return figures.vector_strip(*args, **kwargs)


def _show_steps(kind: str, named: list, title: str, label: str, proj: bool, full: float, pick_key=None) -> None:
    """Steps that change together, (name, figure) each, as one chart (``figures.stacked``)
    keyed by the first one's name; ``pick_key`` takes a clicked key's position."""
    ck = f"att_s{named[0][0]}_{kind}"
    fig = figures.stacked([f for _, f in named], title, label, proj, width=full, names=[n for n, _ in named])
    if pick_key is None:
        charts.show(fig, key=ck)
    else:
        charts.show(fig, key=ck, selection_mode="points", on_select=clicks.on_click(ck, x=pick_key))


def _temperature(kind: str) -> float:
    """The temperature slider (shown once the softmax may be): a what-if, never the model."""
    return state.widget(st.slider, f"att_temp_{kind}", "Temperature t (not the model: the model uses t = 1)",
                        min_value=0.25, max_value=4.0, step=0.25,
                        help="Divides the scaled scores by t before the softmax: a what-if, to show why "
                             "the scores are scaled. Large t flattens the weights, small t sharpens them.")


def _input_panels(look: tuple, w, query: int, head: int, x_what: str) -> list:
    """1-2: the query's x and q, as (name, figure)."""
    tokens, proj, full, key = look
    q_tok = tokens[query]
    return [("x", figures.vector_strip(w.x[None], [q_tok], f'1 · x: {x_what} at "{q_tok}"', "1C", "", proj,
                                       width=full)),
            ("q", figures.vector_strip(w.q[None], [q_tok], f'2 · q = x W_Q for "{q_tok}", head {head + 1}', "1D", "",
                                       proj, width=full))]


def _score_panels(look: tuple, w, masked: bool, soft) -> list:
    """3-5 over the keys: q . k_j, the scaled scores, what the mask adds and, given ``soft``
    (the steps at the slider's temperature), the softmax's weights, as (name, figure)."""
    tokens, proj, full, key = look
    T, D = len(tokens), len(w.q)
    bias = w.bias[w.padded][0] if w.padded.any() and masked else 0.0
    mask_title = (f"4 · the mask adds {figures.power_of_ten(bias)} to the {int(w.padded.sum())} padded keys (crosses)"
                  if masked and w.padded.any() else
                  "4 · the mask is off: the padded keys keep their scores" if w.padded.any() else
                  "4 · the mask: this row has no padding, so it adds 0 everywhere")
    named = [("dots", figures.key_bars(w.dots, tokens, f"3 · q · k_j for every key j · "
                                       f"{figures.shape_note('T', (T,))}", "", proj, selected=key,
                                       y_title="q · k_j", width=full)),
             ("scores", figures.key_bars(w.scores, tokens, f"3 · divided by √D = √{D}: × {w.scale:.4f}", "", proj,
                                         selected=key, y_title="score", width=full)),
             ("mask", figures.key_bars(w.score_plus_mask, tokens, mask_title, "", proj, crossed=w.crossed,
                                       cross_text=figures.power_of_ten(bias), selected=key, y_title="score + mask",
                                       width=full))]
    if soft is not None:
        top = soft.largest
        named.append(("softmax", figures.key_bars(
            soft.weights, tokens, f'5 · softmax: the weights sum to {soft.weight_sum:.6f}; largest "{tokens[top]}" '
            f"{soft.weights[top]:.3f}{_what_if(soft)}", "", proj, selected=key, y_title="weight", width=full)))
    return named


def _what_if(w) -> str:
    return "" if w.model_numbers else f" — temperature {w.temperature:g}, NOT THE MODEL"


def _output_panels(look: tuple, w, query: int) -> list:
    """6-7: the output and the neuron view of the key picked, as (name, figure)."""
    tokens, proj, full, key = look
    q_tok = tokens[query]
    return [("output", figures.vector_strip(w.output[None], [q_tok], f'6 · output = Σ_j w_j v_j for "{q_tok}"'
                                            f"{_what_if(w)}", "1D", "", proj, width=full)),
            ("neuron", figures.vector_strip(w.neuron(key), ["q", f"k ({tokens[key]})", "q * k"],
                                            f'7 · neuron view, key "{tokens[key]}": the products sum to q · k = '
                                            f"{w.dots[key]:.3f}, score {w.scores[key]:.3f}", "3D", "", proj,
                                            width=full))]


def _output_notes(w, tokens) -> None:
    """What the softmax gives the padded keys, and the keys that add most to the output."""
    if w.padded.any():
        largest_pad = float(w.weights[w.padded].max())
        st.markdown(f"Weight on the padded keys: **{largest_pad:.6f}** at most"
                    + (" — exactly zero." if largest_pad == 0 else " — real weight, taken from the real words."))
    st.caption("The keys that add most to the output (the length of w_j v_j): "
               + ", ".join(f"**{md_escape(tokens[j])}** ({w.contributions[j]:.3f})" for j in w.top(3)) + ".")


# --- 1. a minimal block ------------------------------------------------------------------


@st.cache_data(show_spinner="Running the block...", max_entries=32)
def block_run(sentences: tuple[str, ...], seed: int, use_mask: bool):
    return run_block(list(sentences), seed=seed, use_mask=use_mask)


@state.fragment
def minimal_block() -> None:
    if not fr.projector:  # on a projector the section's tab names it
        st.header("1 · One Transformer block and its padding mask")
    explain(
        "The two sentences go in as **one batch**, so the shorter one is filled up with `[PAD]` "
        "(id 0). The **padding mask** (1 = real token, 0 = padding) becomes a bias of −10⁹ on "
        "the padded keys before the softmax, so no token attends to padding: those columns "
        "are exactly 0. Turn the mask off to see attention leak into the padding.", fr.projector)
    c1, c2, c3, c4 = _controls([2, 2, 3, 3])
    with c1:
        seed = state.widget(st.number_input, "att_seed", "Seed", min_value=0, max_value=2**31 - 1,
                            step=1, help="The random weights come from this number: the same seed "
                                         "and sentences give the same picture on every machine.")
    with c2:
        use_mask = state.widget(st.toggle, "att_mask", "Padding mask on")
    try:
        run = block_run(tuple(fr.sentences), int(seed), bool(use_mask))
    except ValueError as exc:
        st.warning(str(exc))
        return
    heads = list(range(run.config.num_heads))
    with c3:
        head = state.choice(st.segmented_control, "att_block_head", "Head", heads, 0, format_func=lambda h: f"H{h + 1}")
    with c4:
        row = state.choice(st.segmented_control, "att_block_row", "Batch row", [0, 1], 0,
                           format_func=lambda b: f"sentence {'AB'[b]}")
    # on a projector an opened step-by-step section (a lesson link's) comes first, on the first screen
    steps_first = fr.projector and state.get("att_steps_block")
    if steps_first:
        how_one_weight("block")
    st.info(f"The weights are **random** (seed {int(seed)}), not trained: the pattern shows the "
            "mechanics of attention, not meaning.", icon=":material/casino:")
    _block_batch(run)
    _block_head(run, head, row)
    if not steps_first:
        how_one_weight("block")


def _block_batch(run) -> None:
    """The padded batch as a table, and the shapes from ids to output."""
    batch = run.batch
    B, T = batch.token_ids.shape
    for b, cut in enumerate(batch.truncated):
        if cut:
            st.warning(f"Sentence {'AB'[b]} has more than {run.config.max_tokens} tokens; the block "
                       f"uses the first {run.config.max_tokens}.")
    table = pd.DataFrame(
        [row_ for b in range(B) for row_ in (batch.tokens[b], batch.token_ids[b].tolist(),
                                             batch.padding_mask[b].tolist())],
        index=[f"{'AB'[b]} {name}" for b in range(B) for name in ("token", "token_ids", "padding_mask")],
        columns=[str(p) for p in range(T)],
    )
    with st.container(key="att_batch"):  # an HTML table (wrap): projector mode enlarges its type
        show_table(table.astype(str), key="att_batch_table", projector=fr.projector, wrap=True)
    c = run.config
    st.markdown(
        f"Vocabulary: {len(run.vocabulary)} entries from the two sentences (`[PAD]` = 0, `[UNK]` = 1). "
        f"`token_ids` int32 ({B}, {T}) · `padding_mask` int32 ({B}, {T}) → bias ({B}, 1, 1, {T}) · "
        f"attention ({B}, {c.num_heads}, {T}, {T}) · **output ({B}, {T}, {c.width})**: one new "
        f"vector of width {c.width} per token, padding included.")


def _block_head(run, head: int, row: int) -> None:
    """One head's matrix for one batch row, and what the mask did to the padded keys."""
    m = run.attentions[row, head]  # (T, T), query x key
    tokens = run.batch.tokens[row]
    charts.show(
        charts.cached_attention_heatmap(m, tokens, f"Head {head + 1}, sentence {'AB'[row]}, mask "
                                 f"{'on' if run.use_mask else 'OFF'}", run.label, fr.projector,
                                 clickable=False),  # nothing to select here: no click markers to draw
        key="att_block_fig")
    check = views.padding_check(m, run.batch.padding_mask[row])
    if not check.padded:
        st.caption(f"Sentence {'AB'[row]} is the longer one, so it has no padding: pick the other "
                   "batch row to see the mask at work.")
    elif run.use_mask:
        st.success(f"Padded key columns ({check.padded}): largest weight "
                   f"{check.largest_masked:.1f}, exactly zero. Every row sums to 1 over the real keys. "
                   "The `[PAD]` rows are computed too, but nothing downstream reads them.")
    else:
        st.error(f"Mask off: the real tokens give on average {check.leak:.0%} of their attention to "
                 "`[PAD]`, so the shorter sentence's vectors now depend on how long the other "
                 "sentence is.")
    pos = list(range(len(tokens)))
    _table(pd.DataFrame(m, index=_labels(tokens, pos), columns=_labels(tokens, pos)),
           "att_block_matrix", "att_block_tbl")


# In projector mode the two sections are tabs, and the one a link sets up (pair mode is section
# 2's) opens first, so that its figure, not the other section, fills the first screen.
BLOCK_TAB, BERT_TAB = "1 · One Transformer block", "2 · Real BERT attention"
if fr.projector:
    block_tab, bert_tab = st.tabs([BLOCK_TAB, BERT_TAB],
                                  default=BERT_TAB if state.get("att_mode") == "pair" else BLOCK_TAB)
else:
    block_tab = bert_tab = st.container()
with block_tab:
    minimal_block()


# --- 2. real BERT heads ------------------------------------------------------------------


# a resource: the figure itself (never mutated), not an unpickled copy (unpickling costs a click's time)
@st.cache_resource(show_spinner=False, max_entries=16)
def model_view(attn, query_tokens, key_tokens, title, model_label, projector):
    """The small multiples, cached: clicking a token or a head must not rebuild them. With
    them, where their grid lies and its tiling (``figures.model_view_grid``, read from the
    figure)."""
    fig = figures.model_view(attn, query_tokens, title, model_label, projector, key_tokens=key_tokens)
    return fig, figures.model_view_grid(fig, projector)


def _attention_model():
    """The BERT for this section: the chosen one, or the embedded one when it has no attention."""
    model = model_cache.model("bert", fr.bert_source)
    if getattr(model, "has_attentions", False):
        return model
    st.info(f"**{md_escape(model.label)}** cannot show attention: a TF Hub BERT encoder outputs "
            "hidden states only, not its attention probabilities. The embedded model (a "
            "BERT we run ourselves) can.", icon=":material/visibility_off:")
    if not state.widget(st.toggle, "att_embedded", "Use the embedded model for attention"):
        return None
    return model_cache.model("bert", sources.EMBEDDED)


def _input_controls(cols) -> tuple[bool, str, str]:
    """Batch or pair, the pair filter or batch row, and [CLS]/[SEP] shown or hidden."""
    c1, c2, c3 = cols
    with c1:
        mode = state.choice(st.segmented_control, "att_mode", "Input", ["batch", "pair"], "batch",
                            format_func={"batch": "padded batch", "pair": "packed pair"}.get,
                            help="Padded batch: one row per sentence, the shorter one padded. Packed "
                                 "pair: one row [CLS] A [SEP] B [SEP], so A and B attend to each other.")
    pair, filt = mode == "pair", "all"
    with c2:
        if pair:
            filt = state.choice(st.segmented_control, "att_filter", "Queries → keys", FILTERS, "all",
                                format_func=FILTERS.get,
                                help="A → B keeps sentence A's tokens as queries and B's as keys.")
        else:
            state.choice(st.segmented_control, "att_bert_row", "Batch row", [0, 1], 0,
                         format_func=lambda b: f"sentence {'AB'[b]}")
    with c3:
        special = state.choice(st.segmented_control, "att_special", "[CLS] / [SEP]", ["show", "hide"], "show",
                               help="Hide drops them as queries and keys and renormalizes each row "
                                    "to sum to 1 over the remaining tokens, in every view.")
    return pair, filt, special


@state.fragment
def bert_heads() -> None:
    if not fr.projector:  # on a projector the section's tab names it
        st.header("2 · Real BERT attention")
    model = _attention_model()
    if model is None:
        return
    c1, c2, c3, c4 = _controls([1, 1, 1, 1])
    pair, filt, special = _input_controls((c1, c2, c3))
    try:
        out = model_cache.bert_run(model, model.source, tuple(fr.sentences), pair)
    except ValueError as exc:
        st.warning(str(exc))
        return
    if out.attentions is None:
        st.info("This source gave no attention probabilities.")
        return
    L = out.attentions.shape[0]
    with c4:
        layer = state.choice(st.segmented_control, "att_layer", "Layer", range(L), 0, format_func=lambda i: str(i + 1))
    if any(out.truncated):
        st.warning("The input has more word pieces than BERT's 512 positions allow; the extra "
                   "pieces are cut.")
    row = 0 if pair else state.get("att_bert_row")
    view = views.attention_view(out, row, special == "hide", filt, limit=VIEW_TOKENS)
    if view.cropped:
        st.warning(f"Long input: the views draw the first {VIEW_TOKENS} queries and keys. The "
                   "weights are those of the whole input, so a row can sum to less than 1 here.")
    where = "the pair" if pair else f"sentence {'AB'[row]}"
    detail = (f"{where}, {FILTERS[filt] if pair else 'all tokens'}, "
              f"[CLS]/[SEP] {dict(show='shown', hide='hidden')[special]}")
    st.caption(f"Model: **{md_escape(out.model_label)}** · {md_escape(detail)}")
    # the download runs the model again: a session keeps the button's function as long as
    # it lives, and this run's attentions are 151 MB for two inputs of 512 pieces
    charts.vectors_button(lambda m=model, s=list(fr.sentences), p=pair: m.run(s, pair=p),
                          f"bert-{'pair' if pair else 'batch'}-attention", key="att_npz")
    grid = _model_view(out, view, detail)
    _head_view(view, layer, detail, out.short_label, grid)


def _model_view(out, view: views.AttentionView, detail: str) -> dict:
    """Every head of every layer; a click on a head opens it in the head view. Returns
    where its grid lies (``figures.model_view_grid``), for the head view to outline the
    head it shows."""
    L, _, H = out.attentions.shape[:3]
    st.subheader("Model view: every layer and head")
    fig, grid = model_view(view.attn, view.query_tokens, view.key_tokens, f"All {L} layers × {H} heads, {detail}",
                          out.short_label, fr.projector)
    tiling = grid["tiles"]
    charts.show(fig, key="att_model_view", selection_mode="points",
                on_select=clicks.on_click("att_model_view",
                                          x=clicks.pick("att_bert_head", figures.model_view_heads(tiling)),
                                          y=clicks.pick("att_layer", figures.model_view_layers(tiling))))
    st.caption("Rows are layers, columns heads; in each small square the queries run down and "
               "the keys across. Click a square to read it closely below (the outlined one is "
               "in the head view).")
    return grid


@state.fragment
def _head_view(view: views.AttentionView, layer: int, detail: str, model_label: str, grid: dict) -> None:
    """One head of one layer, with a query token to follow: a fragment of its own inside
    ``bert_heads``, so that picking a token or a head redraws this part only, not the
    model view above it, whose tile of this head it outlines (``grid``: where the model
    view's grid lies). A session keeps a fragment's arguments for as long as it lives:
    the view (at most 48 x 48 per head), never the run (the attentions of a whole input:
    151 MB for two of 512 pieces)."""
    st.subheader("Head view: one layer, one head")
    H = view.attn.shape[1]
    q_pos = [int(p) for p in view.query_positions]
    content = [p for p, t in zip(q_pos, view.query_tokens) if t not in analysis.SPECIAL]
    head = state.choice(st.segmented_control, "att_bert_head", "Head", range(H), 0, format_func=lambda h: f"H{h + 1}")
    token = token_picker("att_query", "Query token", view.query_tokens, (content or q_pos)[0], positions=q_pos)
    qi = q_pos.index(token)
    # the head shown here, outlined over the model view: its figure unchanged, it is not drawn again
    charts.outline("att_model_view", figures.model_view_box(grid, layer, head))
    lines = state.widget(st.toggle, "att_lines", "Also show the query's row as lines",
                         help="The selected token on the left, every key on the right; thicker "
                              "lines carry more attention.")
    m = view.head(layer, head)  # (Q, K)
    title = f"layer {layer + 1}"
    # the lines beside the heatmap; below it in projector mode, where type is large
    hv1, hv2 = st.columns([3, 2]) if lines and not fr.projector else (st.container(), st.container())
    with hv1:
        fig = charts.cached_attention_heatmap(m, view.query_tokens, f"Layer {layer + 1}, head {head + 1}: {detail}",
                                       model_label, fr.projector, key_tokens=view.key_tokens)
        charts.show(fig, key="att_head_view", selection_mode="points",
                    on_select=clicks.on_click("att_head_view", y=clicks.pick("att_query", q_pos)))
        # the query's row, outlined over the chart: another query moves the outline, and
        # the head view, its figure unchanged, is not drawn again
        charts.outline("att_head_view", figures.outline_box(fig, qi, projector=fr.projector))
    if lines:
        with hv2:
            charts.show(figures.attention_lines(m[qi], view.query_tokens, qi, f'"{view.query_tokens[qi]}" in '
                                                f"{title}, head {head + 1}", model_label, fr.projector,
                                                key_tokens=view.key_tokens), key="att_lines_view")
    _table(pd.DataFrame(m, index=_labels(view.query_tokens, q_pos),
                        columns=_labels(view.key_tokens, view.key_positions)), "att_head_matrix", "att_head_tbl")
    _query_row(view, layer, qi, model_label)
    how_one_weight("bert", layer, head)


def _query_row(view: views.AttentionView, layer: int, qi: int, model_label: str) -> None:
    """The selected query's row in every head of the layer."""
    q_tok = view.query_tokens[qi]
    st.subheader(f'"{md_escape(q_tok)}" in every head of layer {layer + 1}')
    rows = view.query_row(layer, qi)  # (H, K)
    head_names = [f"H{h + 1}" for h in range(rows.shape[0])]
    charts.show(
        figures.heatmap(rows, view.key_tokens, head_names, f'Where "{q_tok}" looks, head by head, in '
                        f"layer {layer + 1}", model_label, fr.projector,
                        x_title="key (attended to)", y_title="head", zrange=(0.0, 1.0),
                        colorscale=figures.style(fr.projector)["attention"], value_name="attention"),
        key="att_row_view", selection_mode="points",
        on_select=clicks.on_click("att_row_view", y=clicks.pick("att_bert_head", list(range(len(head_names))))))
    st.caption("Click a token above, or a row of the head view, to follow another query; click "
               "a row here to open that head in the head view.")
    _table(pd.DataFrame(rows, index=head_names, columns=_labels(view.key_tokens, view.key_positions)),
           "att_row_matrix", "att_row_tbl")


with bert_tab:
    bert_heads()
state.sync_url()
