"""A minimal Transformer encoder block, top to bottom: config -> vocabulary -> weights -> block.

One block as in "Attention Is All You Need" (Vaswani et al., 2017), post-LayerNorm like
the original and BERT: token embeddings + sinusoidal position embeddings, multi-head
self-attention with the additive padding mask, add & norm, a ReLU feed-forward network,
add & norm. The weights are *untrained*: drawn from a fixed seed, so the same sentences
and seed give the same numbers on every machine, and the pictures show the mechanics of
attention (scaling, softmax, masking), not meaning.

The attention pieces (``padding_bias``, ``scaled_dot_product_attention``, ``layer_norm``,
``split_heads``) are the shared ones in ``lab.models.layers``.

Shape letters: B batch, T tokens, H heads, D head size, C = H * D width, F feed-forward
width, V vocabulary. Padding mask convention: ``padding_mask`` (B, T), 1 = real token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import tensorflow as tf

from lab.models import layers as nn
from lab.tokenize import split_words

# --- config ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes of the block. ``max_tokens`` caps each sentence (longer ones are cut)."""

    width: int = 64
    num_heads: int = 4
    ff_width: int = 128
    max_tokens: int = 64
    layer_norm_eps: float = 1e-6

    def __post_init__(self):
        if self.width % self.num_heads:
            raise ValueError(f"width {self.width} is not a multiple of {self.num_heads} heads")
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")

    @property
    def head_size(self) -> int:
        return self.width // self.num_heads

    @classmethod
    def tiny(cls) -> "TransformerConfig":
        """Width 8, 2 heads, 8 tokens: fast tests of shapes and invariants."""
        return cls(width=8, num_heads=2, ff_width=16, max_tokens=8)


# --- vocabulary --------------------------------------------------------------------------

PAD, UNK = "[PAD]", "[UNK]"


@dataclass(frozen=True)
class Batch:
    """Sentences encoded as one padded batch.

    ``token_ids`` and ``padding_mask`` are int32 (B, T), T = the longest sentence (after
    the cut to ``max_tokens``); padding has id 0 and mask 0. ``tokens[b]`` holds the T
    token strings of row b, ``[PAD]`` included. ``truncated[b]`` says row b was cut.
    """

    tokens: list[list[str]]
    token_ids: np.ndarray
    padding_mask: np.ndarray
    truncated: list[bool]


@dataclass(frozen=True)
class Vocabulary:
    """Lower-cased words and punctuation of some sentences; id 0 is ``[PAD]``, 1 ``[UNK]``."""

    words: tuple[str, ...]

    @classmethod
    def from_sentences(cls, sentences: Sequence[str]) -> "Vocabulary":
        """Every distinct token of the sentences, in order of first appearance."""
        words = dict.fromkeys([PAD, UNK])
        for s in sentences:
            words.update(dict.fromkeys(w.lower() for w in split_words(s)))
        return cls(tuple(words))

    def __len__(self) -> int:
        return len(self.words)

    @property
    def pad_id(self) -> int:
        return 0

    def ids(self, sentence: str) -> list[int]:
        index = {w: i for i, w in enumerate(self.words)}
        return [index.get(w.lower(), 1) for w in split_words(sentence)]

    def encode(self, sentences: Sequence[str], max_tokens: int) -> Batch:
        """Pad the sentences to one length: ids (B, T) with 0 after each sentence's end.

        Raises ValueError when a sentence has no tokens at all.
        """
        rows = []
        for i, s in enumerate(sentences):
            ids = self.ids(s)
            if not ids:
                raise ValueError(f"Sentence {i + 1} has no tokens. Type some words.")
            rows.append(ids)
        T = min(max(len(r) for r in rows), max_tokens)
        token_ids = np.zeros((len(rows), T), np.int32)  # 0 = [PAD]
        for b, r in enumerate(rows):
            token_ids[b, : min(len(r), T)] = r[:T]
        return Batch(
            tokens=[[self.words[i] for i in row] for row in token_ids.tolist()],
            token_ids=token_ids,
            padding_mask=(token_ids != self.pad_id).astype(np.int32),
            truncated=[len(r) > T for r in rows],
        )


# --- weights -----------------------------------------------------------------------------

# Each weight draws from its own stream ([seed, n]), so a bigger vocabulary changes only
# the new embedding rows and nothing else.
_STREAMS = {"embedding": 0, "q": 1, "k": 2, "v": 3, "o": 4, "ff1": 5, "ff2": 6}


def random_weights(config: TransformerConfig, vocab_size: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Untrained weights from ``seed``: embeddings N(0, 1), dense kernels N(0, 1/fan_in).

    Kernels are stored (in, out) so that ``x @ W`` maps (.., in) -> (.., out). Biases are
    0 and LayerNorm is the identity (gamma 1, beta 0), as at initialization.
    """
    C, F = config.width, config.ff_width

    def normal(name, *shape, std=1.0):
        return np.random.default_rng([seed, _STREAMS[name]]).normal(0.0, std, shape).astype(np.float32)

    w = {"embedding": normal("embedding", vocab_size, C)}
    for name, (fan_in, fan_out) in {"q": (C, C), "k": (C, C), "v": (C, C), "o": (C, C),
                                    "ff1": (C, F), "ff2": (F, C)}.items():
        w[name] = normal(name, fan_in, fan_out, std=1.0 / math.sqrt(fan_in))
        w[name + "_bias"] = np.zeros(fan_out, np.float32)
    for name in ("ln1", "ln2"):
        w[name + "_gamma"] = np.ones(C, np.float32)
        w[name + "_beta"] = np.zeros(C, np.float32)
    return w


def sinusoidal_positions(T: int, C: int) -> np.ndarray:
    """(T, C): sin on even, cos on odd channels, wavelengths 2 pi .. 10000 * 2 pi (Vaswani)."""
    pos = np.arange(T)[:, None]  # (T, 1)
    rates = 1.0 / 10000 ** (np.arange(0, C, 2) / C)  # (C/2,)
    table = np.zeros((T, C), np.float32)
    table[:, 0::2] = np.sin(pos * rates)
    table[:, 1::2] = np.cos(pos * rates[: C // 2])
    return table


# --- block -------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockOutput:
    """One forward pass as NumPy: ``output`` (B, T, C), the block's new token vectors;
    ``attentions`` (B, H, T, T), softmax probabilities, query x key; with the mask on, a
    padded key gets exactly 0 in every row and each row sums to 1 over the real keys.
    ``steps``: the attention's intermediates (``layers.AttentionSteps``: x, q, K, V,
    scores, bias, weights, context), ``steps.weights`` being ``attentions``."""

    output: np.ndarray
    attentions: np.ndarray
    steps: nn.AttentionSteps | None = None


class TransformerBlock(tf.Module):
    """Embeddings + one post-LayerNorm encoder block with untrained, seeded weights."""

    def __init__(self, config: TransformerConfig, vocab_size: int, seed: int = 0):
        super().__init__(name="transformer_block")
        if vocab_size < 1:
            raise ValueError("the vocabulary is empty")
        self.config, self.vocab_size, self.seed = config, vocab_size, seed
        self.w = {k: tf.constant(v) for k, v in random_weights(config, vocab_size, seed).items()}

    def _dense(self, x, name):
        return tf.matmul(x, self.w[name]) + self.w[name + "_bias"]  # (B, T, in) @ (in, out)

    def __call__(self, token_ids, padding_mask, use_mask: bool = True) -> BlockOutput:
        """Run the block.

        Args:
            token_ids: int (B, T), ids below ``vocab_size``; 0 is padding.
            padding_mask: (B, T), 1 = real token, 0 = padding (checked by ``padding_bias``).
            use_mask: False drops the padding bias, so queries attend to padding too (the
                leak the mask exists to prevent).
        """
        ids = np.asarray(token_ids, np.int32)
        if ids.ndim != 2 or np.shape(padding_mask) != ids.shape:
            raise ValueError(f"token_ids and padding_mask must both be (B, T), got {ids.shape} "
                             f"and {np.shape(padding_mask)}")
        if ids.size and (ids.min() < 0 or ids.max() >= self.vocab_size):
            raise ValueError(f"token ids must lie in [0, {self.vocab_size})")
        bias = nn.padding_bias(padding_mask)  # (B, 1, 1, T); also checks the mask's values
        c = self.config
        T = ids.shape[1]
        x = tf.gather(self.w["embedding"], ids) + sinusoidal_positions(T, c.width)  # (B, T, C)

        # q, K, V (B, H, T, D), weights (B, H, T, T), context (B, H, T, D)
        steps = nn.self_attention(x, self._dense, c.num_heads, bias if use_mask else None)
        x = nn.layer_norm(x + self._dense(nn.merge_heads(steps.context), "o"),  # residual, (B, T, C)
                          self.w["ln1_gamma"], self.w["ln1_beta"], c.layer_norm_eps)
        ff = self._dense(tf.nn.relu(self._dense(x, "ff1")), "ff2")  # (B, T, F) -> (B, T, C)
        x = nn.layer_norm(x + ff, self.w["ln2_gamma"], self.w["ln2_beta"], c.layer_norm_eps)
        steps = steps.numpy()
        return BlockOutput(output=x.numpy(), attentions=steps.weights, steps=steps)


# --- one call for the page ---------------------------------------------------------------


@dataclass(frozen=True)
class BlockRun:
    """Sentences through a seeded block: the padded batch, the vocabulary and the output."""

    batch: Batch
    vocabulary: Vocabulary
    output: np.ndarray  # (B, T, C)
    attentions: np.ndarray  # (B, H, T, T)
    seed: int
    use_mask: bool
    config: TransformerConfig
    steps: nn.AttentionSteps | None = None  # the attention's intermediates (BlockOutput.steps)

    @property
    def label(self) -> str:
        """The model line for figures."""
        c = self.config
        return f"minimal Transformer block, untrained (seed {self.seed}), {c.num_heads} heads, width {c.width}"


def run_block(sentences: Sequence[str], seed: int = 0, use_mask: bool = True,
              config: TransformerConfig | None = None) -> BlockRun:
    """Build the vocabulary from ``sentences``, pad them into a batch and run the block."""
    config = config or TransformerConfig()
    vocab = Vocabulary.from_sentences(sentences)
    batch = vocab.encode(sentences, config.max_tokens)
    out = TransformerBlock(config, len(vocab), seed)(batch.token_ids, batch.padding_mask, use_mask)
    return BlockRun(batch, vocab, out.output, out.attentions, seed, use_mask, config, out.steps)
