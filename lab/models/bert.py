"""BERT, top to bottom: config -> weights -> model (its loaders: ``lab.models.bert_io``).

The encoder is the original BERT (Devlin et al., 2019), written with TensorFlow ops so
that every intermediate the app shows is at hand: the three embedding parts, every
hidden state and every attention probability matrix. It loads the embedded
all-MiniLM-L6-v2 weights from ``model.safetensors`` with NumPy (no PyTorch), and the
same page code also runs a TF Hub BERT (preprocessor + encoder) when one is configured.

Shape letters: B batch, T tokens, L layers, H heads, D head size, C = H * D width.
Padding mask convention: ``input_mask`` (B, T), 1 = real token (``layers.padding_bias``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import tensorflow as tf

from lab.models import layers as nn
from lab.models.bert_serving import BucketedForward
from lab.serving import EagerUntilTraced

# --- config ------------------------------------------------------------------------------


@dataclass(frozen=True)
class BertConfig:
    """Sizes of a BERT encoder, named as Hugging Face's ``config.json`` (defaults: MiniLM-L6)."""

    vocab_size: int = 30522  # uncased WordPiece entries
    hidden_size: int = 384  # C
    num_layers: int = 6  # L
    num_heads: int = 12  # H; head size D = C / H
    intermediate_size: int = 1536  # the feed-forward width
    max_positions: int = 512
    type_vocab_size: int = 2  # segments A and B
    layer_norm_eps: float = 1e-12

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_heads

    @classmethod
    def tiny(cls, vocab_size: int = 64) -> "BertConfig":
        """A 2-layer, 2-head, width-16 BERT for fast tests of shapes and invariants."""
        return cls(vocab_size, 16, 2, 2, 32, 64, 2, 1e-12)

    @classmethod
    def from_json(cls, path: str | Path) -> "BertConfig":
        """Read a Hugging Face ``config.json`` (BertModel, absolute positions, GELU)."""
        c = json.loads(Path(path).read_text())
        if c.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"only GELU BERTs are supported, got {c['hidden_act']}")
        return cls(
            vocab_size=c["vocab_size"],
            hidden_size=c["hidden_size"],
            num_layers=c["num_hidden_layers"],
            num_heads=c["num_attention_heads"],
            intermediate_size=c["intermediate_size"],
            max_positions=c["max_position_embeddings"],
            type_vocab_size=c["type_vocab_size"],
            layer_norm_eps=c["layer_norm_eps"],
        )


# --- weights -----------------------------------------------------------------------------


def weight_shapes(config: BertConfig) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every weight, named as Hugging Face's BertModel (dense weights
    stored (out, in) as in PyTorch)."""
    C, FF = config.hidden_size, config.intermediate_size
    shapes = {
        "embeddings.word_embeddings.weight": (config.vocab_size, C),
        "embeddings.position_embeddings.weight": (config.max_positions, C),
        "embeddings.token_type_embeddings.weight": (config.type_vocab_size, C),
        "embeddings.LayerNorm.weight": (C,),
        "embeddings.LayerNorm.bias": (C,),
        "pooler.dense.weight": (C, C),
        "pooler.dense.bias": (C,),
    }
    for i in range(config.num_layers):
        p = f"encoder.layer.{i}."
        for name, (out, inp) in {
            "attention.self.query": (C, C),
            "attention.self.key": (C, C),
            "attention.self.value": (C, C),
            "attention.output.dense": (C, C),
            "intermediate.dense": (FF, C),
            "output.dense": (C, FF),
        }.items():
            shapes[p + name + ".weight"] = (out, inp)
            shapes[p + name + ".bias"] = (out,)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[p + name + ".weight"] = (C,)
            shapes[p + name + ".bias"] = (C,)
    return shapes


def random_weights(config: BertConfig, seed: int = 0) -> dict[str, np.ndarray]:
    """Weights named as Hugging Face's BertModel, drawn N(0, 0.02) from ``seed``
    (layer norms: weight 1, bias 0; biases 0)."""
    rng = np.random.default_rng(seed)
    w = {}
    for name, shape in weight_shapes(config).items():
        if name.endswith(".bias"):
            w[name] = np.zeros(shape, np.float32)
        elif "LayerNorm" in name:
            w[name] = np.ones(shape, np.float32)
        else:
            w[name] = rng.normal(0.0, 0.02, shape).astype(np.float32)
    return w


# --- model -------------------------------------------------------------------------------


@dataclass(frozen=True)
class EncoderArrays:
    """What one forward pass returns, as NumPy.

    ``hidden_states`` is (L+1, B, T, C): index 0 is the embedding output (after its
    LayerNorm), index i the output of encoder layer i. ``attentions`` is (L, B, H, T, T),
    softmax probabilities, query x key, padded keys exactly 0. ``word``, ``position`` and
    ``token_type`` are the three embedding parts (B, T, C) before they are summed and
    normalized. ``pooled`` is tanh(dense([CLS])) (B, C).
    """

    hidden_states: np.ndarray
    attentions: np.ndarray
    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    pooled: np.ndarray


class BertEncoder(tf.Module):
    """BERT's embeddings + L post-LayerNorm encoder layers + pooler, all outputs kept.

    Reference: Devlin et al. (2019); Hugging Face ``BertModel`` (which the parity test
    compares against). Dense weights come in PyTorch's (out, in) layout and are stored
    transposed so that ``x @ W`` maps (.., in) -> (.., out).
    """

    def __init__(self, config: BertConfig, weights: dict[str, np.ndarray] | None = None):
        super().__init__(name="bert_encoder")
        self.config = config
        w = weights if weights is not None else random_weights(config)
        for name, shape in weight_shapes(config).items():
            if name not in w:
                raise ValueError(f"weights lack {name}")
            if tuple(w[name].shape) != shape:
                raise ValueError(f"{name}: shape {w[name].shape}, config wants {shape}")

        def const(name, transpose=False):
            a = np.asarray(w[name], np.float32)
            return tf.constant(a.T if transpose else a)

        self.word_embeddings = const("embeddings.word_embeddings.weight")
        self.position_embeddings = const("embeddings.position_embeddings.weight")
        self.type_embeddings = const("embeddings.token_type_embeddings.weight")
        self.emb_ln = (const("embeddings.LayerNorm.weight"), const("embeddings.LayerNorm.bias"))
        self.layer_weights = []
        for i in range(config.num_layers):
            p = f"encoder.layer.{i}."
            self.layer_weights.append(
                {
                    k: (const(p + n + ".weight", transpose=True), const(p + n + ".bias"))
                    for k, n in {
                        "q": "attention.self.query",
                        "k": "attention.self.key",
                        "v": "attention.self.value",
                        "o": "attention.output.dense",
                        "ff1": "intermediate.dense",
                        "ff2": "output.dense",
                    }.items()
                }
                | {
                    "ln1": (const(p + "attention.output.LayerNorm.weight"),
                            const(p + "attention.output.LayerNorm.bias")),
                    "ln2": (const(p + "output.LayerNorm.weight"),
                            const(p + "output.LayerNorm.bias")),
                }
            )
        self.pooler = (const("pooler.dense.weight", transpose=True), const("pooler.dense.bias"))
        # padded to a few shape buckets, compiled per bucket, served from a plain graph while
        # a bucket compiles (lab.models.bert_serving)
        self.forward = BucketedForward(self._forward_graph)
        # one layer's attention steps (``attention_steps``), run as the forward pass ran
        C = config.hidden_size
        specs = [tf.TensorSpec([None, None, C], tf.float32), tf.TensorSpec([None, None], tf.int32)]
        specs += [tf.TensorSpec(shape, tf.float32) for _ in "qkv" for shape in ([C, C], [C])]
        self._steps_xla = tf.function(self._steps_graph, input_signature=specs, jit_compile=True, autograph=False)
        self._steps_plain = tf.function(self._steps_graph, input_signature=specs, autograph=False)

    def serve(self, buckets: Sequence[tuple[int, int]] = (), graphs: Sequence[EagerUntilTraced] = ()) -> None:
        """Never make a caller wait for a trace or for XLA (``BucketedForward.serve``)."""
        self.forward.serve(buckets, graphs)

    @property
    def serving(self) -> bool:
        """True once ``serve`` was called (a bucket without a program uses the plain graph)."""
        return self.forward.serving

    @property
    def compiled(self) -> frozenset[tuple[int, int]]:
        """The (B, T) buckets compiled so far."""
        return self.forward.compiled

    def wait_settled(self, timeout: float | None = None) -> bool:
        """Wait until what ``serve`` queued is traced and compiled (``BucketedForward.wait_settled``)."""
        return self.forward.wait_settled(timeout)

    @staticmethod
    def _dense(w):
        """``dense(t, name)`` with layer weights ``w``: (B, T, in) @ (in, out) + bias -> (B, T, out)."""
        def dense(t, name):
            kernel, b = w[name]
            return tf.matmul(t, kernel) + b
        return dense

    def _layer(self, x, bias, w):
        """One encoder layer: self-attention, add & norm, feed-forward, add & norm."""
        eps, H = self.config.layer_norm_eps, self.config.num_heads
        dense = self._dense(w)
        steps = nn.self_attention(x, dense, H, bias)  # context (B,H,T,D), weights (B,H,T,T)
        x = nn.layer_norm(x + dense(nn.merge_heads(steps.context), "o"), *w["ln1"], eps)
        ff = dense(nn.gelu(dense(x, "ff1")), "ff2")  # (B, T, I) -> (B, T, C)
        return nn.layer_norm(x + ff, *w["ln2"], eps), steps.weights

    def _forward_graph(self, input_word_ids, input_mask, input_type_ids):
        T = tf.shape(input_word_ids)[1]
        word = tf.gather(self.word_embeddings, input_word_ids)  # (B, T, C)
        position = tf.gather(self.position_embeddings, tf.range(T))[tf.newaxis]  # (1, T, C)
        position = tf.broadcast_to(position, tf.shape(word))
        token_type = tf.gather(self.type_embeddings, input_type_ids)  # (B, T, C)
        x = nn.layer_norm(word + position + token_type, *self.emb_ln, self.config.layer_norm_eps)
        bias = nn.padding_bias_tf(input_mask)  # (B, 1, 1, T)
        hidden, attentions = [x], []
        for w in self.layer_weights:
            x, probs = self._layer(x, bias, w)
            hidden.append(x)
            attentions.append(probs)
        pooled = tf.tanh(tf.matmul(x[:, 0], self.pooler[0]) + self.pooler[1])  # (B, C)
        return {
            "hidden_states": tf.stack(hidden),  # (L+1, B, T, C)
            "attentions": tf.stack(attentions),  # (L, B, H, T, T)
            "word": word,
            "position": position,
            "token_type": token_type,
            "pooled": pooled,
        }

    def __call__(self, input_word_ids, input_mask, input_type_ids=None) -> EncoderArrays:
        ids = np.asarray(input_word_ids, np.int32)
        mask = np.asarray(input_mask, np.int32)
        types = np.zeros_like(ids) if input_type_ids is None else np.asarray(input_type_ids, np.int32)
        if ids.ndim != 2 or ids.shape != mask.shape or ids.shape != types.shape:
            raise ValueError(f"ids, mask and types must be equal (B, T), got {ids.shape}, "
                             f"{mask.shape}, {types.shape}")
        if ids.shape[1] > self.config.max_positions:
            raise ValueError(f"{ids.shape[1]} tokens; this BERT has {self.config.max_positions} positions")
        nn.check_padding_mask(mask)
        B, T = ids.shape
        out = self.forward(ids, mask, types, self.config.max_positions)  # padded to its bucket
        return EncoderArrays(
            hidden_states=out["hidden_states"][:, :B, :T],
            attentions=out["attentions"][:, :B, :, :T, :T],
            word=out["word"][:B, :T],
            position=out["position"][:B, :T],
            token_type=out["token_type"][:B, :T],
            pooled=out["pooled"][:B],
        )

    def attention_steps(self, input_word_ids, input_mask, input_type_ids=None, layer: int = 0
                        ) -> tuple[EncoderArrays, nn.AttentionSteps]:
        """The forward pass, and layer ``layer``'s (0-based) self-attention with every
        intermediate (``layers.AttentionSteps``, NumPy, cut back to (B, T)).

        The steps are the layer's own code (``layers.self_attention`` with its weights and
        the padding bias) on the pass's ``hidden_states[layer]``, padded to the pass's
        bucket and run the way the pass ran (compiled by XLA or on the plain graph), so
        ``steps.weights`` is the pass's ``attentions[layer]``. The normal pass computes
        none of this.
        """
        if not 0 <= layer < self.config.num_layers:
            raise ValueError(f"layer {layer} is not one of this BERT's {self.config.num_layers} layers")
        out = self(input_word_ids, input_mask, input_type_ids)
        mask = np.asarray(input_mask, np.int32)
        (B, T), (Bp, Tp) = mask.shape, self.forward.padded_shape(*mask.shape, self.config.max_positions)
        x = np.pad(out.hidden_states[layer], ((0, Bp - B), (0, Tp - T), (0, 0)))  # (Bp, Tp, C)
        w = self.layer_weights[layer]
        run = self._steps_xla if self.forward.uses_xla(Bp, Tp) else self._steps_plain
        parts = run(tf.constant(x), tf.constant(np.pad(mask, ((0, Bp - B), (0, Tp - T)))), *w["q"], *w["k"], *w["v"])
        q, k, v, scores, bias, weights, context = (t.numpy() for t in parts)
        return out, nn.AttentionSteps(
            x=out.hidden_states[layer], q=q[:B, :, :T], k=k[:B, :, :T], v=v[:B, :, :T],
            scores=scores[:B, :, :T, :T], bias=bias[:B, ..., :T], weights=weights[:B, :, :T, :T],
            context=context[:B, :, :T])

    def _steps_graph(self, x, mask, wq, bq, wk, bk, wv, bv):
        """One layer's attention steps as a tuple of tensors (``attention_steps``)."""
        dense = self._dense({"q": (wq, bq), "k": (wk, bk), "v": (wv, bv)})
        s = nn.self_attention(x, dense, self.config.num_heads, nn.padding_bias_tf(mask))
        return s.q, s.k, s.v, s.scores, s.bias, s.weights, s.context
