"""What each page section shows, computed: one pure function per section.

Each takes ``LayerVectors`` (or a model run) and the person's choices, and returns a small
frozen dataclass; pages only turn widgets into arguments and results into figures, tables
and prose. Nothing here imports Streamlit, Plotly or TensorFlow, so every number a page
shows can be checked by a unit test.

Shape letters: N layers, B rows, T tokens, C width, L attention layers, H heads,
Q / K kept query / key positions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from lab import analysis, senses
from lab.board.rules import spreadsheet_text
from lab.vectors import INPUT_LAYER, LayerVectors

# --- one word in two contexts (BERT, ELMo and the comparison page) ----------------------


@dataclass(frozen=True)
class WordPair:
    """Two selected words (row, word index) and their vectors at every layer."""

    rows: tuple[int, int]
    words: tuple[int, int]
    texts: tuple[str, str]
    positions: tuple[list[int], list[int]]  # token positions each word was pooled from
    pieces: tuple[list[str], list[str]]  # the tokens at those positions
    vectors: tuple[np.ndarray, np.ndarray]  # (N, C) each
    cosine: np.ndarray  # (N,): cosine of the two at each layer
    layer_names: list[str]


def word_pair(out: LayerVectors, a: tuple[int, int], b: tuple[int, int], pool: str = "first") -> WordPair:
    """Word ``a = (row, word)`` against word ``b`` at every layer of ``out``.

    A word made of several tokens (BERT's word pieces) is pooled with ``pool``: its
    first token, or the mean of its tokens (``analysis.pool_pieces``).
    """
    picked = []
    for row, word in (a, b):
        if not 0 <= word < len(out.words[row]):
            raise ValueError(f"row {row} has {len(out.words[row])} words, not a word {word}")
        pos = out.positions(row, word)
        vec = analysis.pool_pieces(out.layers[:, row], pos, pool)  # (N, C)
        picked.append((out.words[row][word], pos, [out.tokens[row][p] for p in pos], vec))
    (ta, pa, ka, va), (tb, pb, kb, vb) = picked
    return WordPair((a[0], b[0]), (a[1], b[1]), (ta, tb), (pa, pb), (ka, kb), (va, vb),
                    analysis.layerwise_cosine(va, vb), list(out.layer_names))


# What a page's caption and the report say of the baselines they show (after naming how)
BASELINE_NOTE = ("the mean cosine of two random words from different sentences of the reference corpus at that "
                 "layer. It differs from layer to layer (where a layer's vectors crowd into a narrow cone, even "
                 "unrelated words score high), and a cosine says “alike” only as far as it rises above it: "
                 "adjusted = (cosine − baseline) / (1 − baseline), 0 for two random words.")


def against_baseline(cosine: np.ndarray, baseline: np.ndarray | None) -> dict[str, np.ndarray]:
    """A pair's cosine at each layer beside the layer's anisotropy baseline and the adjusted
    similarity, (cos - base) / (1 - base), each rounded to 4 decimals: a table's rows
    ({"cosine", "baseline", "adjusted"} -> (N,); NaN where a layer has no baseline; only
    "cosine" where there is no ``baseline`` at all)."""
    if baseline is None:
        return {"cosine": np.round(cosine, 4)}
    return {"cosine": np.round(cosine, 4), "baseline": np.round(baseline, 4),
            "adjusted": np.round(analysis.adjusted(cosine, baseline), 4)}


@dataclass(frozen=True)
class TokenMap:
    """One vector against the real tokens of some rows, per layer: all of them, or a window
    of each row's (``spans``)."""

    cosine: np.ndarray  # (N, number of columns)
    labels: list[str]  # one per column
    rows: list[int]  # the row of each column
    words: list[int]  # the word index of each column (-1 for [CLS]/[SEP])
    spans: tuple[range, ...]  # the token positions shown of each row, in the order of ``rows``
    cropped: bool  # whether tokens were left out


def token_map(out: LayerVectors, vector: np.ndarray, rows: tuple[int, ...], prefix: bool = False,
              around: tuple[int, ...] | None = None, size: int | None = None) -> TokenMap:
    """``vector`` (N, C) against every real token of ``rows``, layer by layer.

    With ``prefix`` each column label starts with its sentence ("A·bank"). With ``size``,
    at most ``size`` tokens in all: of each row a ``window`` around its position in
    ``around``, the room shared as ``shares`` does (a map of a long input is unreadable whole).
    """
    lengths = [int(out.lengths[r]) for r in rows]
    if size is None:
        spans = [range(n) for n in lengths]
    else:
        spans = [window(n, centre, k) for n, centre, k in zip(lengths, around, shares(lengths, size))]
    shown = list(zip(rows, spans))
    tokens = np.concatenate([out.layers[:, r, s.start:s.stop] for r, s in shown], axis=1)  # (N, columns, C)
    labels = [f"{'AB'[r]}·{t}" if prefix else t for r, s in shown for t in out.tokens[r][s.start:s.stop]]
    return TokenMap(analysis.token_vs_tokens(vector, tokens), labels, [r for r, s in shown for _ in s],
                    [w for r, s in shown for w in out.word_at(r)[s.start:s.stop]], tuple(spans),
                    any(len(s) < n for s, n in zip(spans, lengths)))


def cross_map(out: LayerVectors, layer: int, rows: tuple[int, int] = (0, 1)) -> np.ndarray:
    """Every real token of row ``rows[0]`` against every one of ``rows[1]`` at ``layer``: (Ta, Tb)."""
    (ra, rb), lengths = rows, out.lengths
    return analysis.cosine_matrix(out.layers[layer, ra, : lengths[ra]], out.layers[layer, rb, : lengths[rb]])


@dataclass(frozen=True)
class CrossWindow:
    """A part of ``cross_map``: rows ``rows`` of the first sentence against columns ``cols``."""

    cosine: np.ndarray  # (len(rows), len(cols))
    rows: range  # token positions of the first sentence shown
    cols: range  # token positions of the second
    cropped: bool  # whether positions were left out


def window(n: int, center: int, size: int) -> range:
    """At most ``size`` consecutive positions of ``range(n)``, ``center`` as near their
    middle as the ends allow."""
    start = min(max(center - size // 2, 0), max(n - size, 0))
    return range(start, min(n, start + size))


def shares(lengths, size: int) -> list[int]:
    """``size`` positions shared among rows of ``lengths``: equal parts, where a row needs
    fewer than its part the rest goes to the others (a short sentence B beside a long A:
    B whole, A the rest)."""
    parts, left = [0] * len(lengths), size
    order = sorted(range(len(lengths)), key=lambda r: lengths[r])
    for i, r in enumerate(order):
        parts[r] = min(lengths[r], left // (len(order) - i))
        left -= parts[r]
    return parts


def cross_window(out: LayerVectors, layer: int, around: tuple[int, int], size: int,
                 rows: tuple[int, int] = (0, 1)) -> CrossWindow:
    """``cross_map`` cut to at most ``size`` x ``size`` tokens around positions ``around``
    (one of each sentence): a map of long inputs is unreadable whole, and costs the
    square of their length to draw and send (512 x 512 tokens: 20.8 MB of figure)."""
    full = cross_map(out, layer, rows)
    r, c = window(full.shape[0], around[0], size), window(full.shape[1], around[1], size)
    return CrossWindow(full[r.start:r.stop, c.start:c.stop], r, c, (len(r), len(c)) != full.shape)


# --- BERT --------------------------------------------------------------------------------


@dataclass(frozen=True)
class WordPieceTable:
    """One row of a BERT batch as the WordPiece table shows it: a column per position."""

    tokens: list[str]  # [PAD] past the real tokens
    input_word_ids: list[int]
    input_mask: list[int]
    input_type_ids: list[int]
    words: list[str]  # the word each position belongs to ("" for [CLS], [SEP], [PAD])


def wordpiece_table(out: LayerVectors, row: int) -> WordPieceTable:
    T = out.mask.shape[1]
    words = ["" if w < 0 else out.words[row][w] for w in out.word_at(row)]
    pad = T - len(out.tokens[row])
    return WordPieceTable(out.tokens[row] + ["[PAD]"] * pad, out.bert.input_word_ids[row].tolist(),
                          out.mask[row].tolist(), out.bert.input_type_ids[row].tolist(), words + [""] * pad)


@dataclass(frozen=True)
class SentenceMeasures:
    """Three ways to compare two sentences with BERT (cosines at the last layer)."""

    pooled: float  # the pooled outputs
    token: float  # the two selected words
    mean_content: float  # the means of the real words ([CLS], [SEP], padding left out)


def sentence_measures(out: LayerVectors, pair: WordPair) -> SentenceMeasures:
    last, lengths = out.layers[-1], out.lengths
    means = [analysis.mean_pool(last[b, : lengths[b]], analysis.content_mask(out.tokens[b], lengths[b]))
             for b in (0, 1)]
    return SentenceMeasures(analysis.cosine(out.bert.pooled[0], out.bert.pooled[1]), float(pair.cosine[-1]),
                            analysis.cosine(*means))


@dataclass(frozen=True)
class EmbeddingPart:
    """One of BERT's three input-embedding parts for the two selected words."""

    part: str
    cosine: float  # of A's and B's vector of this part
    norms: tuple[float, float]
    shares: tuple[float, float]  # of each word's summed embedding (the parts add up to 1)


def embedding_parts(out: LayerVectors, pair: WordPair) -> list[EmbeddingPart] | None:
    """The word / position / token-type parts at each word's first piece; None when the
    source does not expose them."""
    parts = out.bert.embedding_parts if out.bert else None
    if parts is None:
        return None
    at = [(row, pos[0]) for row, pos in zip(pair.rows, pair.positions)]
    shares = [analysis.part_contributions({p: a[row, t] for p, a in parts.items()}) for row, t in at]
    result = []
    for name, arr in parts.items():
        va, vb = (arr[row, t] for row, t in at)
        result.append(EmbeddingPart(name, analysis.cosine(va, vb),
                                    (float(np.linalg.norm(va)), float(np.linalg.norm(vb))),
                                    (shares[0][name]["share"], shares[1][name]["share"])))
    return result


# --- ELMo --------------------------------------------------------------------------------

MIX_LAYER = "elmo (mix)"


def mix(out: LayerVectors, weights, gamma: float) -> LayerVectors:
    """``out`` with ELMo's scalar mix added as a last layer named ``MIX_LAYER``:
    elmo = gamma * sum_j softmax(weights)_j * layer_j over ``out``'s three layers."""
    mixed = analysis.scalar_mix(out.layers, weights, gamma)  # (B, T, C)
    return replace(out, layers=np.concatenate([out.layers, mixed[None]]),
                   layer_names=list(out.layer_names) + [MIX_LAYER])


CONTEXT_LAYERS = ("context-only 1", "context-only 2")  # of lstm_outputs1, lstm_outputs2
# The kinds of bars in a chart of ELMo's layers (``layer_kinds``), as its legend names them
LAYER_KINDS = ("ELMo's layers and mix", "context-only views (not ELMo outputs)")
# metrics.json's names of ELMo's scored outputs and views (``lab.senses``: ELMo v3's output
# keys) -> the names the pages and the report give them
RECORDED_NAMES = {"word_emb": INPUT_LAYER, "lstm_outputs1": "lstm_outputs1", "lstm_outputs2": "lstm_outputs2",
                  "elmo": MIX_LAYER, "context1": CONTEXT_LAYERS[0], "context2": CONTEXT_LAYERS[1]}


def layer_kinds(names) -> list[int]:
    """Each layer's kind, an index into ``LAYER_KINDS``: 1 for a context-only view, else 0."""
    return [1 if n in CONTEXT_LAYERS else 0 for n in names]


def with_context_only(out: LayerVectors) -> LayerVectors:
    """``out`` with the context-only views of its two LSTM layers added as last layers
    (``CONTEXT_LAYERS``; ``analysis.context_only``: at word k the forward half at k-1 and
    the backward half at k+1, what the biLM uses to predict the word). Not ELMo outputs:
    they leave the word's own identity out, so they show what the context alone says."""
    extra = [analysis.context_only(out.layer(name), out.lengths) for name in ("lstm_outputs1", "lstm_outputs2")]
    return replace(out, layers=np.concatenate([out.layers, np.stack(extra)]),
                   layer_names=list(out.layer_names) + list(CONTEXT_LAYERS))


def with_context_layers(out: LayerVectors) -> LayerVectors:
    """``out`` with its context-only views (``with_context_only``) where it has biLM layers
    (``lstm_outputs1`` and ``lstm_outputs2``: an ELMo), else ``out`` as it is."""
    return with_context_only(out) if {"lstm_outputs1", "lstm_outputs2"} <= set(out.layer_names) else out


@dataclass(frozen=True)
class SenseNote:
    """The default pair's cosines at the layers where a model scored best on the sense test."""

    texts: tuple[str, str]  # the two words
    standard: tuple[str, float]  # the best standard output (a page's name for it), the pair's cosine there
    context: tuple[str, float] | None  # the best context-only view's; None where none was scored


def sense_note(out: LayerVectors, by_layer: dict[str, float], weights, gamma: float) -> SenseNote:
    """The ELMo page's note: the default pair of ``out``'s two sentences
    (``analysis.default_pair``, the words the page selects first) at the best standard
    output and the best context-only view of ``by_layer`` (recorded ROC AUCs, metrics.json's
    names), with the mix at ``weights`` and ``gamma``: the numbers the page's chart shows."""
    ia, ib = analysis.default_pair(out.words[0], out.words[1])
    pair = word_pair(with_context_only(mix(out, weights, gamma)), (0, ia), (1, ib))
    cosine = dict(zip(pair.layer_names, pair.cosine.tolist()))

    def best(names) -> tuple[str, float] | None:
        if not any(n in by_layer for n in names):
            return None
        name = RECORDED_NAMES[senses.best_layer(by_layer, names)]
        return name, cosine[name]

    return SenseNote(pair.texts, best(senses.CONTEXTUAL), best(senses.CONTEXT))


@dataclass(frozen=True)
class ArrayInfo:
    name: str
    dtype: str
    shape: tuple[int, ...]


def elmo_outputs(out: LayerVectors) -> list[ArrayInfo]:
    """ELMo v3's output keys for this run, with dtype and shape."""
    e = out.elmo
    arrays = {"word_emb": e.word_emb, "lstm_outputs1": out.layer("lstm_outputs1"),
              "lstm_outputs2": out.layer("lstm_outputs2"), "elmo": e.elmo, "default": e.default,
              "sequence_len": out.lengths, "mask": out.mask}
    return [ArrayInfo(k, str(v.dtype), tuple(v.shape)) for k, v in arrays.items()]


@dataclass(frozen=True)
class VectorSummary:
    name: str
    shape: tuple[int, ...]
    norm: float
    first: tuple[float, ...]  # the first 4 values


@dataclass(frozen=True)
class SentenceVectors:
    """``default`` (one vector per sentence) beside ``elmo`` (one per word)."""

    rows: list[VectorSummary]
    default_cosine: float


def sentence_vectors(out: LayerVectors) -> SentenceVectors:
    e, rows = out.elmo, []
    for b, (name, n) in enumerate(zip("AB", out.lengths)):
        rows.append(VectorSummary(f"default[{b}] (sentence {name})", e.default[b].shape,
                                  float(np.linalg.norm(e.default[b])), tuple(map(float, e.default[b, :4]))))
        rows.append(VectorSummary(f"elmo[{b}] (sentence {name})", e.elmo[b, :n].shape,
                                  float(np.linalg.norm(e.elmo[b, :n])), tuple(map(float, e.elmo[b, 0, :4]))))
    return SentenceVectors(rows, analysis.cosine(e.default[0], e.default[1]))


# --- attention ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionView:
    """What every BERT view draws: attn (L, H, Q, K) over the kept query/key positions."""

    attn: np.ndarray
    query_positions: np.ndarray
    key_positions: np.ndarray
    query_tokens: list[str]
    key_tokens: list[str]
    cropped: bool

    def head(self, layer: int, head: int) -> np.ndarray:
        """One head's matrix: (Q, K)."""
        return self.attn[layer, head]

    def query_row(self, layer: int, query: int) -> np.ndarray:
        """Where query ``query`` (an index into the kept queries) looks in every head: (H, K)."""
        return self.attn[layer, :, query, :]


def attention_view(out: LayerVectors, row: int, hide_special: bool, filt: str, limit: int = 48) -> AttentionView:
    """Row ``row`` of a BERT run as the attention views show it.

    Padding is dropped (its columns are 0). ``hide_special`` drops [CLS]/[SEP] and
    renormalizes each row over the remaining keys (``analysis.drop_tokens``); then the
    pair filter keeps one quadrant (``analysis.quadrant``) without renormalizing, so A → B
    shows how much of A's attention goes to B. At most ``limit`` queries and keys are kept.
    """
    n = int(out.lengths[row])
    tokens = out.tokens[row]
    attn = out.attentions[:, row, :, :n, :n]  # (L, H, n, n): the real tokens
    positions = np.arange(n)
    if hide_special:
        keep = analysis.content_mask(tokens, n)
        attn = analysis.drop_tokens(attn, keep, renormalize=True)
        positions = positions[keep]
    segment = out.bert.input_type_ids[row, positions]  # 0 = [CLS] A [SEP], 1 = B [SEP]
    everything = np.ones(len(positions), bool)
    q_keep, k_keep = {"ab": (segment == 0, segment == 1), "ba": (segment == 1, segment == 0)}.get(
        filt, (everything, everything))
    attn = analysis.quadrant(attn, q_keep, k_keep)
    q_pos, k_pos = positions[q_keep], positions[k_keep]
    cropped = len(q_pos) > limit or len(k_pos) > limit
    q_pos, k_pos = q_pos[:limit], k_pos[:limit]
    # a copy, not a view: a session keeps its view for as long as it lives, and a view of
    # the input's whole (L, H, n, n) block would keep that alive too (36 MB seen for a long input)
    attn = np.ascontiguousarray(attn[..., : len(q_pos), : len(k_pos)])
    return AttentionView(attn, q_pos, k_pos, [tokens[p] for p in q_pos], [tokens[p] for p in k_pos], cropped)


@dataclass(frozen=True)
class PaddingCheck:
    """How one head of the minimal block treats the padded keys of one row."""

    padded: int  # how many key positions are padding
    largest_masked: float  # the largest weight on a padded key (0.0 with the mask on)
    leak: float  # the real queries' mean share of attention on padding


def padding_check(attn: np.ndarray, padding_mask: np.ndarray) -> PaddingCheck:
    """attn (T, T) query x key, padding_mask (T,) 1 = real token."""
    padded = np.asarray(padding_mask) == 0
    if not padded.any():
        return PaddingCheck(0, 0.0, 0.0)
    return PaddingCheck(int(padded.sum()), float(attn[:, padded].max()),
                        float(attn[~padded][:, padded].sum(axis=1).mean()))


# --- one weight, step by step ------------------------------------------------------------


@dataclass(frozen=True)
class WeightSteps:
    """How one query's attention weights come to be in one head, the model's own numbers.

    T keys (padding included), D head size, C width. ``x`` (C,) the query's input row;
    ``q`` (D,); ``keys`` and ``values`` (T, D); ``dots`` (T,) q . k_j; ``scale`` 1/sqrt(D);
    ``scores`` (T,) the model's dots * scale; ``bias`` (T,) what the mask adds (0, or the
    model's mask bias on padded keys; all 0 with the mask off); ``padded`` (T,) bool;
    ``weights`` (T,) softmax(scores / temperature + bias), the model's own at temperature 1;
    ``output`` (D,) sum_j weights_j v_j, the head's context vector at temperature 1.
    """

    tokens: list[str]
    query: int
    head: int
    x: np.ndarray
    q: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    dots: np.ndarray
    scale: float
    scores: np.ndarray
    bias: np.ndarray
    padded: np.ndarray
    masked: bool
    temperature: float
    weights: np.ndarray
    output: np.ndarray

    @property
    def model_numbers(self) -> bool:
        """True at temperature 1: the weights and output are the model's, not a what-if."""
        return self.temperature == 1.0

    @property
    def weight_sum(self) -> float:
        return float(self.weights.astype(np.float64).sum())

    @property
    def crossed(self) -> np.ndarray:
        """(T,) bool: the keys the mask sends to zero (padded, with the mask on)."""
        return self.padded & self.masked

    @property
    def score_plus_mask(self) -> np.ndarray:
        """(T,) what the softmax adds up before its exponent: score plus the mask's bias
        where a key keeps a real score; a ``crossed`` key keeps its bare score, since the
        bias (-10^9) would dwarf every bar and is drawn as a cross instead."""
        return self.scores + np.where(self.crossed, 0, self.bias)

    @property
    def largest(self) -> int:
        """The key with the most weight (the first on ties)."""
        return int(np.argmax(self.weights))

    @property
    def contributions(self) -> np.ndarray:
        """(T,) how much each key adds to the output: the length of weights_j v_j."""
        return self.weights * np.linalg.norm(self.values, axis=-1)

    def top(self, n: int = 3) -> list[int]:
        """The ``n`` keys that contribute most to the output, largest first (ties: lower position)."""
        c = self.contributions
        return sorted(range(len(c)), key=lambda j: (-c[j], j))[:n]

    def neuron(self, key: int) -> np.ndarray:
        """BertViz's neuron view of key ``key``: rows q, k_j and q * k_j (3, D); the last
        row sums to ``dots[key]``."""
        if not 0 <= key < len(self.tokens):
            raise ValueError(f"key {key} is not one of the {len(self.tokens)} positions")
        k = self.keys[key]
        return np.stack([self.q, k, self.q * k])


def weight_steps(steps, tokens, padding_mask, row: int, head: int, query: int,
                 temperature: float = 1.0) -> WeightSteps:
    """One query's steps from a model's attention intermediates (``lab.models.layers.
    AttentionSteps`` as NumPy: x (B, T, C), q / k / v (B, H, T, D), scores and weights
    (B, H, T, T), bias (B, 1, 1, T) or None, context (B, H, T, D)) for batch row ``row``,
    head ``head`` and query position ``query``; ``tokens`` names row ``row``'s T positions
    and ``padding_mask`` (T,) tells which are real (1) and which padding (0).

    At ``temperature`` 1 the weights and the output are the model's arrays; another
    temperature divides the scaled scores by it before the mask and the softmax (not the
    model: a what-if that shows why the scores are scaled).
    """
    B, H, T, D = np.shape(steps.q)
    if not 0 <= row < B:
        raise ValueError(f"row {row} is not one of the batch's {B} rows")
    if not 0 <= head < H:
        raise ValueError(f"head {head} is not one of the {H} heads")
    if not 0 <= query < T:
        raise ValueError(f"query {query} is not one of the {T} positions")
    if len(tokens) != T or np.shape(padding_mask) != (T,):
        raise ValueError(f"{len(tokens)} tokens and a mask of shape {np.shape(padding_mask)} for {T} positions")
    t = float(temperature)
    if not (np.isfinite(t) and t > 0):
        raise ValueError(f"the temperature must be a positive number, got {temperature}")
    q, keys, values = (np.asarray(a)[row, head] for a in (steps.q, steps.k, steps.v))
    bias = np.zeros(T, np.float32) if steps.bias is None else np.asarray(steps.bias)[row, 0, 0]
    scores = np.asarray(steps.scores)[row, head, query]  # (T,)
    if t == 1.0:
        weights, output = np.asarray(steps.weights)[row, head, query], np.asarray(steps.context)[row, head, query]
    else:  # float32 as the model computes
        z = (scores / np.float32(t) + bias).astype(np.float32)
        e = np.exp(z - z.max())
        weights = (e / e.sum()).astype(np.float32)
        output = weights @ values
    return WeightSteps(
        tokens=list(tokens), query=query, head=head, x=np.asarray(steps.x)[row, query], q=q[query],
        keys=keys, values=values, dots=keys @ q[query], scale=1.0 / float(np.sqrt(D)), scores=scores,
        bias=bias, padded=np.asarray(padding_mask) == 0,
        masked=steps.bias is not None, temperature=t, weights=weights, output=output)


def table_csv(df, index: bool = True) -> bytes:
    """A page's table (a pandas DataFrame) as the CSV its download button gives: UTF-8, and
    every text cell, column name and index label that a spreadsheet would read as a formula
    (a typed token such as "=cmd|..." or "@sum") written with a leading ``'``. Numbers stay
    numbers, negative ones included."""
    def safe(value):
        return spreadsheet_text(value) if isinstance(value, str) else value

    out = df.map(safe)
    out.columns = [safe(c) for c in df.columns]
    out.index = df.index.map(safe)
    return out.to_csv(index=index).encode("utf-8")
