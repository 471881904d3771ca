"""``LayerVectors``: what every contextual model in the lab returns for a batch of sentences.

BERT and ELMo give the same object, so a page, a figure, the CLI export or a comparison of
the two never asks which model it got. What only one family has sits in an optional part:
``bert`` (``BertParts``: ids, segment ids, pooled output, embedding parts, word pieces) or
``elmo`` (``ElmoParts``: the narrow ``word_emb``, the mixed ``elmo``, the ``default``
sentence vector).

Shape letters: N layers (index 0 is the context-free input layer when the model gives it),
B rows (sentences, or one packed pair), T token positions, C width, L attention layers,
H heads.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

# The context-free input layer's name (``layers[0]``: BERT's embedding output, ELMo's
# ``word_emb`` doubled) in every model's ``layer_names``, and so on every page, axis, table,
# download and report: one name for both families, numbered as BERT's "layer 1", "layer 2"...
INPUT_LAYER = "input (layer 0)"

@dataclass(frozen=True)
class BertParts:
    """The BERT-only part of a run.

    ``input_word_ids`` / ``input_type_ids`` (B, T) int32 are the packed inputs ([CLS] A
    [SEP] (B [SEP]) [PAD]...); ``pooled`` (B, C) is tanh(dense([CLS])); ``embedding_parts``
    maps "word" / "position" / "token type" to (B, T, C) before they are summed and
    normalized (None when the source hides them); ``encodings`` hold each sentence's word
    pieces (``lab.tokenize.Encoding``).
    """

    input_word_ids: np.ndarray
    input_type_ids: np.ndarray
    pooled: np.ndarray
    encodings: list
    embedding_parts: dict[str, np.ndarray] | None = None
    pair: bool = False


@dataclass(frozen=True)
class ElmoParts:
    """The ELMo-only part of a run (TF Hub ELMo v3 names).

    ``word_emb`` (B, T, P) is the char-CNN vector before it is doubled to width C = 2P for
    ``layers[0]``; ``elmo`` (B, T, C) the model's own scalar mix; ``default`` (B, C) the mean
    of ``elmo`` over each sentence's real tokens.
    """

    word_emb: np.ndarray
    elmo: np.ndarray
    default: np.ndarray


@dataclass(frozen=True)
class LayerVectors:
    """Per-layer token vectors of B rows, with the alignment of words to token positions.

    Arrays are float32 NumPy; padded positions (``mask`` == 0) are 0 in ``layers``.

    Attributes:
        model_label: the model's full name, shown once per page.
        short_label: a name short enough for a figure's caption line.
        source: where the model came from (``embedded``, a folder or a TF Hub handle).
        sentences: the input texts, one per sentence (two for a packed pair).
        tokens: per row, the real tokens in position order ([CLS]/[SEP] included for BERT).
        words: per row, the words of the row in order.
        word_positions: per row, per word, the token positions that make up the word.
        layers: (N, B, T, C); ``layer_names`` names each (index 0 is the input layer,
            named ``INPUT_LAYER``, when the source gives it: BERT's embedding output,
            ELMo's ``word_emb``).
        mask: (B, T) int32, 1 = real token.
        attentions: (L, B, H, T, T) softmax probabilities (query x key, padded keys exactly
            0), or None when the source cannot give them.
        truncated: per sentence, whether the input was cut to fit the model.
    """

    model_label: str
    short_label: str
    source: str
    sentences: list[str]
    tokens: list[list[str]]
    words: list[list[str]]
    word_positions: list[list[list[int]]]
    layers: np.ndarray
    layer_names: list[str]
    mask: np.ndarray
    attentions: np.ndarray | None = None
    truncated: list[bool] = field(default_factory=list)
    bert: BertParts | None = None
    elmo: ElmoParts | None = None

    def without_attentions(self) -> "LayerVectors":
        """This run without its attention probabilities, for views that draw none: they are
        most of a long input's memory (151 MB of 167 for two inputs of 512 pieces)."""
        return replace(self, attentions=None)

    @property
    def lengths(self) -> np.ndarray:
        """(B,) int32: real tokens per row."""
        return self.mask.sum(axis=1).astype(np.int32)

    def layer(self, name: str) -> np.ndarray:
        """The layer called ``name``: (B, T, C)."""
        if name not in self.layer_names:
            raise KeyError(f"{self.short_label} has no layer {name!r}; it has {self.layer_names}")
        return self.layers[self.layer_names.index(name)]

    def positions(self, row: int, word: int) -> list[int]:
        """Token positions of word ``word`` in row ``row``."""
        return self.word_positions[row][word]

    def word_at(self, row: int) -> list[int]:
        """For each real token position of ``row``, the index of its word (-1 for [CLS] etc.)."""
        index = [-1] * len(self.tokens[row])
        for w, positions in enumerate(self.word_positions[row]):
            for p in positions:
                index[p] = w
        return index


def short_label(label: str) -> str:
    """A model label cut for a figure's caption: the text before the first ';' or ',' inside
    its parentheses ("ELMo-mini (embedded, trained here, ...)" -> "ELMo-mini (embedded)")."""
    head, paren, rest = label.partition("(")
    if not paren:
        return label
    inner = rest.split(";")[0].split(",")[0].rstrip(")")
    return f"{head}({inner})"


def to_arrays(out: LayerVectors) -> dict[str, np.ndarray]:
    """The npz contract of ``python -m lab export`` and the pages' download button.

    Every array is numeric or fixed-width unicode, so plain ``numpy.load(f)`` reads it (no
    ``allow_pickle``). Position t is the same token in every array with a T axis.

    - ``tokens`` unicode (B, T): the token at each position ([CLS]/[SEP] included for
      BERT); "" at a padded position.
    - ``mask`` int32 (B, T): 1 = real token, 0 = padding (padded vectors are 0).
    - ``layers`` float32 (N, B, T, C); index 0 is the context-free input layer (BERT's
      embedding output, ELMo's ``word_emb`` doubled to width C).
    - ``layer_names`` unicode (N,): the name of each layer (``INPUT_LAYER`` for index 0
      when the model gives its input layer).
    - ``model`` unicode, shape (): the model's label.
    - ``attentions`` float32 (L, B, H, T, T), softmax probabilities (query x key), only
      when the source gives them; ``input_word_ids`` int32 (B, T), BERT only.

    Raises:
        ValueError: a row's tokens do not match its real positions in ``mask``.
    """
    mask = out.mask.astype(np.int32)
    width = max((len(t) for row in out.tokens for t in row), default=1)
    tokens = np.full(mask.shape, "", dtype=f"<U{width}")  # (B, T)
    for b, row in enumerate(out.tokens):
        real = mask[b] > 0
        if real.sum() != len(row):
            raise ValueError(f"row {b} has {len(row)} tokens but {real.sum()} real positions in its mask")
        tokens[b, real] = row
    arrays = {
        "tokens": tokens,
        "layers": out.layers.astype(np.float32),
        "mask": mask,
        "layer_names": np.array(out.layer_names, dtype=str),
        "model": np.array(out.model_label, dtype=str),
    }
    if out.attentions is not None:
        arrays["attentions"] = out.attentions.astype(np.float32)
    if out.bert is not None:
        arrays["input_word_ids"] = out.bert.input_word_ids.astype(np.int32)
    return arrays


def npz_bytes(out: LayerVectors) -> bytes:
    """``to_arrays(out)`` as the bytes of a compressed ``.npz`` file: what the download
    button serves and ``python -m lab export`` writes. Saved with ``allow_pickle=False``,
    so an array that would need pickle fails here rather than in a reader's hands."""
    import io

    buffer = io.BytesIO()
    np.savez_compressed(buffer, allow_pickle=False, **to_arrays(out))
    return buffer.getvalue()
