"""ELMo: a character-CNN + two-layer biLSTM language model (Peters et al., 2018) in TF2.

Read top to bottom: config -> character ids -> layers (char CNN, biLSTM) -> model. The
runners the app calls, the loaders (AllenNLP hdf5, TF Hub / SavedModel) and the SavedModel
export live in ``lab.models.elmo_io``; the NumPy scalar mix for the page's sliders is
``lab.analysis.scalar_mix``.

This is a re-implementation of the original TensorFlow biLM (allenai/bilm-tf), checked
against AllenNLP's parity fixtures (``shared/fixtures/allennlp-elmo``) to 1e-5:

- character ids: 50 per token, UTF-8 bytes 0-255, begin/end of sentence 256/257,
  begin/end of word 258/259, padding 260, everything shifted by +1 so 0 = padded token;
- char CNN: embedding, VALID convolutions over the characters, max-pool, then the
  activation; highway layers ``g * relu(x Wt + bt) + (1 - g) * x`` with
  ``g = sigmoid(x Wc + bc)``; a linear projection (this is ``word_emb``);
- two LSTM layers per direction (forward LM, backward LM) with a cell projection, cell
  and projection clipping, forget bias +1.0 added at run time, and a residual around the
  second layer; sentences are wrapped in ``<S>`` ... ``</S>`` and those positions are
  dropped from the outputs.

Outputs are named as TF Hub ELMo v3: ``word_emb`` (B,T,P), ``lstm_outputs1`` and
``lstm_outputs2`` (B,T,2P) = forward || backward, ``elmo`` = gamma * sum_j softmax(w)_j *
layer_j with layer 0 = word_emb || word_emb, ``default`` (B,2P) = mean of ``elmo`` over
real tokens, plus ``sequence_len`` (B,) and ``mask`` (B,T). Padded positions are 0.

Shape letters: B batch, T tokens of a sentence, S = T + 2 (with <S> and </S>),
W characters per token (50), E char-embedding width, F CNN filters in all,
P projection width, D LSTM cells, L LSTM layers, G = 4D gates, C = 2P output width.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf

OUTPUT_KEYS = ["word_emb", "lstm_outputs1", "lstm_outputs2", "elmo", "default", "sequence_len"]
# Character slots per token in bilm-tf's input format (and so in TF Hub ELMo v3):
# <bow>, at most 48 UTF-8 bytes, <eow>, padding.
CHARS_PER_TOKEN = 50

# ---------------------------------------------------------------------------------------
# Config
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ElmoConfig:
    """Hyperparameters of a biLM, named after bilm-tf's ``options.json``.

    The defaults are the original model (TF Hub ELMo v3, 93.6M parameters).
    """

    char_embed_dim: int = 16
    filters: tuple[tuple[int, int], ...] = (
        (1, 32), (2, 32), (3, 64), (4, 128), (5, 256), (6, 512), (7, 1024),
    )  # (width, number of filters)
    n_highway: int = 2
    projection_dim: int = 512
    lstm_dim: int = 4096
    n_layers: int = 2
    cell_clip: float | None = 3.0
    proj_clip: float | None = 3.0
    use_skip_connections: bool = True
    activation: str = "relu"
    max_characters_per_token: int = CHARS_PER_TOKEN
    n_characters: int = 262  # 261 stored ids + the 0 row for a padded token

    @property
    def n_filters(self) -> int:
        return sum(n for _, n in self.filters)

    @property
    def output_dim(self) -> int:
        """Width C of every output layer (forward || backward)."""
        return 2 * self.projection_dim

    @classmethod
    def tiny(cls) -> "ElmoConfig":
        """The AllenNLP test model's shape: small enough for fast tests."""
        return cls(char_embed_dim=4, filters=((1, 4), (2, 8), (3, 16), (4, 32), (5, 64)), n_highway=2,
                   projection_dim=16, lstm_dim=64)

    @classmethod
    def mini(cls) -> "ElmoConfig":
        """The base shape ``python -m lab.elmo_training`` trains ELMo-mini from; the shipped model's
        exact shape (``--lstm-dim``, ``--char-scale``) is in ``lab/assets/elmo_mini/options.json``."""
        return cls(char_embed_dim=16, filters=((1, 32), (2, 32), (3, 64), (4, 128), (5, 128)), n_highway=1,
                   projection_dim=128, lstm_dim=512)

    @classmethod
    def from_options_json(cls, options: str | Path | dict) -> "ElmoConfig":
        """Read bilm-tf / AllenNLP ``options.json`` (a path or the parsed dict)."""
        if not isinstance(options, dict):
            options = json.loads(Path(options).read_text())
        lstm, cnn = options["lstm"], options["char_cnn"]
        return cls(
            char_embed_dim=int(cnn["embedding"]["dim"]),
            filters=tuple((int(w), int(n)) for w, n in cnn["filters"]),
            n_highway=int(cnn.get("n_highway", 0)),
            projection_dim=int(lstm["projection_dim"]),
            lstm_dim=int(lstm["dim"]),
            n_layers=int(lstm.get("n_layers", 2)),
            cell_clip=lstm.get("cell_clip"),
            proj_clip=lstm.get("proj_clip"),
            use_skip_connections=bool(lstm.get("use_skip_connections", False)),
            activation=cnn.get("activation", "relu"),
            max_characters_per_token=int(cnn.get("max_characters_per_token", CHARS_PER_TOKEN)),
            n_characters=int(cnn.get("n_characters", 262)),
        )

    def to_options_json(self) -> dict:
        """The bilm-tf ``options.json`` dict for this config."""
        return {
            "lstm": {
                "cell_clip": self.cell_clip,
                "use_skip_connections": self.use_skip_connections,
                "n_layers": self.n_layers,
                "proj_clip": self.proj_clip,
                "projection_dim": self.projection_dim,
                "dim": self.lstm_dim,
            },
            "char_cnn": {
                "embedding": {"dim": self.char_embed_dim},
                "filters": [list(f) for f in self.filters],
                "n_highway": self.n_highway,
                "n_characters": self.n_characters,
                "max_characters_per_token": self.max_characters_per_token,
                "activation": self.activation,
            },
        }


# ---------------------------------------------------------------------------------------
# Character ids (bilm-tf UnicodeCharsVocabulary / AllenNLP ELMoCharacterMapper)
# ---------------------------------------------------------------------------------------

BOS_CHAR, EOS_CHAR, BOW_CHAR, EOW_CHAR, PAD_CHAR = 256, 257, 258, 259, 260
BOS_TOKEN, EOS_TOKEN = "<S>", "</S>"


def _marker_ids(char: int) -> np.ndarray:
    ids = np.full(CHARS_PER_TOKEN, PAD_CHAR, dtype=np.int32)
    ids[:3] = (BOW_CHAR, char, EOW_CHAR)
    return ids + 1  # +1: 0 is kept for a padded token


BOS_IDS = _marker_ids(BOS_CHAR)  # the <S> token, shifted
EOS_IDS = _marker_ids(EOS_CHAR)  # the </S> token, shifted


def token_char_ids(token: str) -> np.ndarray:
    """One token -> int32 (50,): [bow, UTF-8 bytes (at most 48), eow, pad...] + 1.

    The literal tokens ``<S>`` and ``</S>`` map to the sentence markers, as in AllenNLP.
    """
    if token == BOS_TOKEN:
        return BOS_IDS.copy()
    if token == EOS_TOKEN:
        return EOS_IDS.copy()
    data = token.encode("utf-8", "ignore")[: CHARS_PER_TOKEN - 2]
    ids = np.full(CHARS_PER_TOKEN, PAD_CHAR, dtype=np.int32)
    ids[0] = BOW_CHAR
    ids[1 : 1 + len(data)] = np.frombuffer(data, dtype=np.uint8)
    ids[1 + len(data)] = EOW_CHAR
    return ids + 1


def char_ids(tokens_batch: list[list[str]]) -> np.ndarray:
    """Word-split sentences -> int32 (B, T, 50), T = longest sentence, padded tokens all 0.

    No ``<S>``/``</S>`` wrapping here: the model adds those positions itself.
    """
    B = len(tokens_batch)
    T = max((len(s) for s in tokens_batch), default=0)
    ids = np.zeros((B, T, CHARS_PER_TOKEN), dtype=np.int32)
    for b, sentence in enumerate(tokens_batch):
        for t, token in enumerate(sentence):
            ids[b, t] = token_char_ids(token)
    return ids


def char_ids_tf(tokens: tf.Tensor, sequence_len: tf.Tensor) -> tf.Tensor:
    """Graph version of ``char_ids`` for string tensors: (B, T) strings -> (B, T, 50) int32.

    Tokens at positions >= sequence_len are padding (all-zero ids), whatever they hold.
    """
    n_bytes = tf.minimum(tf.strings.length(tokens, unit="BYTE"), CHARS_PER_TOKEN - 2)  # (B, T)
    raw = tf.io.decode_raw(tokens, tf.uint8, fixed_length=CHARS_PER_TOKEN - 2)  # (B, T, 48)
    raw = tf.cast(raw, tf.int32)
    j = tf.range(CHARS_PER_TOKEN)  # slot in the token, (W,)
    n = n_bytes[..., tf.newaxis]  # (B, T, 1)
    shifted = tf.pad(raw, [[0, 0], [0, 0], [1, 1]])  # slot j holds byte j-1, (B, T, W)
    ids = tf.where(j == 0, BOW_CHAR, tf.where(j <= n, shifted, tf.where(j == n + 1, EOW_CHAR, PAD_CHAR)))
    ids = ids + 1
    ids = tf.where((tokens == BOS_TOKEN)[..., tf.newaxis], BOS_IDS, ids)
    ids = tf.where((tokens == EOS_TOKEN)[..., tf.newaxis], EOS_IDS, ids)
    real = tf.sequence_mask(sequence_len, tf.shape(tokens)[1])  # (B, T)
    return ids * tf.cast(real, tf.int32)[..., tf.newaxis]


def at_words(states: tf.Tensor, T) -> tf.Tensor:
    """One biLSTM layer's (2, B, S, P) states (forward, backward) over wrapped sentences ->
    (B, T, 2P): both directions side by side at the T words (<S> and </S> dropped), as
    ELMo's ``lstm_outputs`` are built."""
    return tf.concat([states[0], states[1]], axis=-1)[:, 1 : T + 1]


def add_sentence_boundaries(ids: tf.Tensor, sequence_len: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """(B, T, W) ids, (B,) lengths -> (B, S=T+2, W) with <S> first and </S> after the last
    real token, and lengths + 2. Positions past the end stay all-zero (padded)."""
    S = tf.shape(ids)[1] + 2
    p = tf.range(S)[tf.newaxis, :, tf.newaxis]  # (1, S, 1)
    n = sequence_len[:, tf.newaxis, tf.newaxis]  # (B, 1, 1)
    inner = tf.pad(ids, [[0, 0], [1, 1], [0, 0]])  # position p holds token p-1, (B, S, W)
    out = tf.where((p >= 1) & (p <= n), inner, 0)
    out = tf.where(p == 0, BOS_IDS, out)
    out = tf.where(p == n + 1, EOS_IDS, out)
    return out, sequence_len + 2


# ---------------------------------------------------------------------------------------
# Layers
# ---------------------------------------------------------------------------------------

_ACTIVATIONS = {"relu": tf.nn.relu, "tanh": tf.nn.tanh}


def _var(shape, name, init="glorot", seed=None) -> tf.Variable:
    if init == "zeros":
        value = tf.zeros(shape)
    elif init == "ones":
        value = tf.ones(shape)
    else:  # glorot uniform over the last two axes
        fan_in, fan_out = shape[-2], shape[-1]
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        value = tf.random.stateless_uniform(shape, seed=[seed or 0, 7], minval=-limit, maxval=limit)
    return tf.Variable(value, name=name)


class CharCNNEncoder(tf.Module):
    """Character ids (B, S, W) -> context-free token vectors (B, S, P).

    Variables keep bilm-tf's shapes (``CNN/W_cnn_i`` is (1, width, E, n)) so the hdf5
    weights load as they are.
    """

    def __init__(self, config: ElmoConfig, seed: int = 0):
        super().__init__(name="char_cnn")
        c, E, F = config, config.char_embed_dim, config.n_filters
        self.config = c
        # Row k is char id k+1; id 0 (a padded token) gets a fixed zero vector.
        self.char_embed = _var((c.n_characters - 1, E), "char_embed", seed=seed)
        self.conv_w = [_var((1, w, E, n), f"W_cnn_{i}", seed=seed + 1 + i) for i, (w, n) in enumerate(c.filters)]
        self.conv_b = [_var((n,), f"b_cnn_{i}", "zeros") for i, (_, n) in enumerate(c.filters)]
        self.high_wc = [_var((F, F), f"W_carry_{k}", seed=seed + 20 + k) for k in range(c.n_highway)]
        # A negative carry bias starts the highway close to the identity (bilm-tf: -2).
        self.high_bc = [tf.Variable(tf.fill((F,), -2.0), name=f"b_carry_{k}") for k in range(c.n_highway)]
        self.high_wt = [_var((F, F), f"W_transform_{k}", seed=seed + 30 + k) for k in range(c.n_highway)]
        self.high_bt = [_var((F,), f"b_transform_{k}", "zeros") for k in range(c.n_highway)]
        self.proj_w = _var((F, c.projection_dim), "W_proj", seed=seed + 40)
        self.proj_b = _var((c.projection_dim,), "b_proj", "zeros")

    def __call__(self, ids: tf.Tensor) -> tf.Tensor:
        """(B, S, W) char ids -> (B, S, P)."""
        c = self.config
        B, S = tf.shape(ids)[0], tf.shape(ids)[1]
        h = self.encode_chars(tf.reshape(ids, (-1, c.max_characters_per_token)))  # (B*S, P)
        return tf.reshape(h, (B, S, c.projection_dim))

    def encode_chars(self, ids: tf.Tensor) -> tf.Tensor:
        """(N, W') char ids of N tokens -> (N, P); W' <= W slots (training trims padding)."""
        c = self.config
        table = tf.concat([tf.zeros((1, c.char_embed_dim)), self.char_embed], axis=0)  # (262, E)
        x = tf.nn.embedding_lookup(table, ids)  # (N, W', E)
        act = _ACTIVATIONS[c.activation]
        pooled = []
        for w, b in zip(self.conv_w, self.conv_b):
            conv = tf.nn.conv1d(x, w[0], stride=1, padding="VALID") + b  # (N, W'-width+1, n)
            pooled.append(act(tf.reduce_max(conv, axis=1)))  # max over characters, then act
        h = tf.concat(pooled, axis=-1)  # (N, F)
        for wc, bc, wt, bt in zip(self.high_wc, self.high_bc, self.high_wt, self.high_bt):
            g = tf.sigmoid(h @ wc + bc)  # carry gate
            h = g * tf.nn.relu(h @ wt + bt) + (1.0 - g) * h
        return h @ self.proj_w + self.proj_b  # (N, P), no activation


class BiLSTM(tf.Module):
    """Forward and backward LMs: L stacked LSTM layers each, run side by side.

    Both directions are computed in one time loop with their weights stacked on a leading
    axis of 2 (0 = forward, 1 = backward); the backward LM reads each sentence reversed
    (``tf.reverse_sequence`` over its real length, so padding never enters it).

    LSTM cell (TF1 ``LSTMCell`` with ``num_proj``): gates z = [x, m] W + b split as
    input, cell-input, forget, output; c = sig(f + 1) c + sig(i) tanh(j), clipped;
    m = (sig(o) tanh(c)) W_P, clipped. Layer l > 0 adds its input to its output.
    Past a row's length, the state is carried unchanged and outputs are 0 (as
    ``tf.nn.dynamic_rnn`` with ``sequence_length``), so the final state of a row is its
    state after its last real token.
    """

    def __init__(self, config: ElmoConfig, seed: int = 100):
        super().__init__(name="bilstm")
        c, P, D = config, config.projection_dim, config.lstm_dim
        self.config = c
        # [direction][layer]
        self.w = [[_var((2 * P, 4 * D), f"W_0_{d}{layer}", seed=seed + 10 * d + layer)
                   for layer in range(c.n_layers)] for d in range(2)]
        self.b = [[_var((4 * D,), f"B_{d}{layer}", "zeros") for layer in range(c.n_layers)] for d in range(2)]
        self.wp = [[_var((D, P), f"W_P_0_{d}{layer}", seed=seed + 50 + 10 * d + layer)
                    for layer in range(c.n_layers)] for d in range(2)]

    def zero_state(self, batch_size) -> tuple[tf.Tensor, tf.Tensor]:
        c = self.config
        return (tf.zeros((c.n_layers, 2, batch_size, c.lstm_dim)),
                tf.zeros((c.n_layers, 2, batch_size, c.projection_dim)))

    def __call__(self, x, lengths, state_c, state_m, dropout=None):
        """Run both LMs.

        Args:
            x: (B, S, P) token vectors in sentence order.
            lengths: (B,) int32 real lengths (S counts padding).
            state_c, state_m: (L, 2, B, D) and (L, 2, B, P) initial states.
            dropout: None, or a rate tensor applied to every layer's input.

        Returns:
            (outputs, (state_c, state_m)): outputs is a list of L tensors (2, B, S, P), both
            directions in sentence order, 0 past each row's length; the final states.
        """
        c = self.config
        P, L = c.projection_dim, c.n_layers
        B, S = tf.shape(x)[0], tf.shape(x)[1]
        W = [tf.stack([self.w[0][layer], self.w[1][layer]]) for layer in range(L)]  # (2, 2P, G)
        Wx, Wh = [w[:, :P] for w in W], [w[:, P:] for w in W]  # input and recurrent parts
        bias = [tf.stack([self.b[0][layer], self.b[1][layer]])[:, tf.newaxis] for layer in range(L)]  # (2, 1, G)
        Wp = [tf.stack([self.wp[0][layer], self.wp[1][layer]]) for layer in range(L)]  # (2, D, P)

        xb = tf.reverse_sequence(x, lengths, seq_axis=1, batch_axis=0)  # backward LM reads right to left
        xs = tf.stack([x, xb])  # (2, B, S, P)
        if dropout is not None:
            xs = tf.nn.dropout(xs, dropout)
        # The first layer's input part of the gates, for all steps at once.
        g0 = tf.reshape(tf.reshape(xs, (2, -1, P)) @ Wx[0], (2, B, S, -1))  # (2, B, S, G)
        g0 = tf.transpose(g0, (2, 0, 1, 3))  # time-major (S, 2, B, G)

        def step(t, cs, ms, outs):
            cs, ms, outs = list(cs), list(ms), list(outs)
            active = tf.reshape(t < lengths, (1, -1, 1))  # (1, B, 1): rows still inside
            inp = None
            for layer in range(L):
                if layer == 0:
                    z = g0[t] + ms[0] @ Wh[0] + bias[0]  # (2, B, G)
                else:
                    if dropout is not None:
                        inp = tf.nn.dropout(inp, dropout)
                    z = inp @ Wx[layer] + ms[layer] @ Wh[layer] + bias[layer]  # (2, B, G)
                i, j, f, o = tf.split(z, 4, axis=-1)
                cell = tf.sigmoid(f + 1.0) * cs[layer] + tf.sigmoid(i) * tf.tanh(j)  # (2, B, D)
                if c.cell_clip:
                    cell = tf.clip_by_value(cell, -c.cell_clip, c.cell_clip)
                m = (tf.sigmoid(o) * tf.tanh(cell)) @ Wp[layer]  # (2, B, P)
                if c.proj_clip:
                    m = tf.clip_by_value(m, -c.proj_clip, c.proj_clip)
                cs[layer] = tf.where(active, cell, cs[layer])
                ms[layer] = tf.where(active, m, ms[layer])
                out = m + inp if (c.use_skip_connections and layer > 0) else m
                out = tf.where(active, out, 0.0)
                outs[layer] = outs[layer].write(t, out)
                inp = out
            return t + 1, tuple(cs), tuple(ms), tuple(outs)

        loop_vars = (
            tf.constant(0),
            tuple(state_c[layer] for layer in range(L)),
            tuple(state_m[layer] for layer in range(L)),
            tuple(tf.TensorArray(tf.float32, size=S) for _ in range(L)),
        )
        _, cs, ms, outs = tf.while_loop(lambda t, *_: t < S, step, loop_vars)
        outputs = []
        for layer in range(L):
            h = tf.transpose(outs[layer].stack(), (1, 2, 0, 3))  # (2, B, S, P)
            hb = tf.reverse_sequence(h[1], lengths, seq_axis=1, batch_axis=0)  # back to sentence order
            outputs.append(tf.stack([h[0], hb]))
        return outputs, (tf.stack(cs), tf.stack(ms))


# ---------------------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------------------


class ElmoModel(tf.Module):
    """The biLM plus a scalar mix, mapping char ids to ELMo v3 outputs.

    ``aggregation/weights`` (3,) and ``aggregation/scaling`` () are the mix, named as in
    the TF Hub module; ``mix_learned`` says whether they were trained (else uniform, 1).
    """

    def __init__(self, config: ElmoConfig, seed: int = 0):
        super().__init__(name="elmo")
        self.config = config
        self.char_cnn = CharCNNEncoder(config, seed=seed)
        self.lstm = BiLSTM(config, seed=seed + 100)
        self.mix_weights = tf.Variable(tf.zeros(3), name="aggregation/weights")
        self.mix_gamma = tf.Variable(1.0, name="aggregation/scaling")
        self.mix_learned = False

    # -- the biLM on wrapped sentences (training uses this directly) ----------------------
    def bilm(self, ids_s, lengths_s, state_c=None, state_m=None, dropout=None):
        """(B, S, W) ids with <S>/</S>, (B,) lengths -> (token (B,S,P), [L x (2,B,S,P)], state)."""
        if state_c is None:
            state_c, state_m = self.lstm.zero_state(tf.shape(ids_s)[0])
        token = self.char_cnn(ids_s)
        layers, state = self.lstm(token, lengths_s, state_c, state_m, dropout)
        return token, layers, state

    # -- ELMo v3 outputs ------------------------------------------------------------------
    def embed(self, ids, sequence_len, state_c=None, state_m=None, dropout=None):
        """(B, T, W) char ids (no <S>/</S>), (B,) lengths -> (dict of v3 outputs, state).

        Padded positions (t >= sequence_len) are exactly 0 in every output; ``default``
        averages ``elmo`` over real tokens only.
        """
        sequence_len = tf.cast(sequence_len, tf.int32)
        T = tf.shape(ids)[1]
        ids_s, lengths_s = add_sentence_boundaries(ids, sequence_len)
        token, layers, state = self.bilm(ids_s, lengths_s, state_c, state_m, dropout)
        mask = tf.sequence_mask(sequence_len, T, dtype=tf.float32)  # (B, T)
        keep = mask[..., tf.newaxis]
        word_emb = token[:, 1 : T + 1] * keep  # drop <S> and </S>: (B, T, P)
        lstm = [at_words(h, T) * keep for h in layers]  # (B, T, C)
        stacked = tf.stack([tf.concat([word_emb, word_emb], axis=-1)] + lstm)  # (3, B, T, C)
        s = tf.nn.softmax(self.mix_weights)[:, tf.newaxis, tf.newaxis, tf.newaxis]
        elmo = self.mix_gamma * tf.reduce_sum(s * stacked, axis=0)  # (B, T, C)
        n = tf.maximum(tf.reduce_sum(mask, axis=1, keepdims=True), 1.0)
        out = {
            "word_emb": word_emb,
            "lstm_outputs1": lstm[0],
            "lstm_outputs2": lstm[-1],
            "elmo": elmo,
            "default": tf.reduce_sum(elmo, axis=1) / n,  # (B, C)
            "sequence_len": sequence_len,
            "mask": tf.cast(mask, tf.int32),
        }
        return out, state

    def weight_map(self) -> dict[str, tf.Variable]:
        """bilm-tf hdf5 dataset path -> variable."""
        cnn, lstm = self.char_cnn, self.lstm
        m = {"char_embed": cnn.char_embed, "CNN_proj/W_proj": cnn.proj_w, "CNN_proj/b_proj": cnn.proj_b}
        for i in range(len(cnn.conv_w)):
            m[f"CNN/W_cnn_{i}"], m[f"CNN/b_cnn_{i}"] = cnn.conv_w[i], cnn.conv_b[i]
        for k in range(len(cnn.high_wc)):
            p = f"CNN_high_{k}/"
            m[p + "W_carry"], m[p + "b_carry"] = cnn.high_wc[k], cnn.high_bc[k]
            m[p + "W_transform"], m[p + "b_transform"] = cnn.high_wt[k], cnn.high_bt[k]
        for d in range(2):
            for layer in range(self.config.n_layers):
                p = f"RNN_{d}/RNN/MultiRNNCell/Cell{layer}/LSTMCell/"
                m[p + "W_0"], m[p + "B"], m[p + "W_P_0"] = lstm.w[d][layer], lstm.b[d][layer], lstm.wp[d][layer]
        return m

    def num_parameters(self) -> int:
        return int(sum(np.prod(v.shape) for v in self.weight_map().values()))
