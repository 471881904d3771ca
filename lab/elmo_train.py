"""Train ELMo-mini, the embedded biLM, on CPU: ``python -m lab.elmo_train``.

What it does, reproducibly (fixed seeds, fixed step count, deterministic data split):
1. gets WordNet 3.0 from Debian's ``wordnet-base`` package (``lab.elmo_corpus``) and
   builds train / held-out sequences from its glosses and examples;
2. trains the forward and backward LMs of ``ElmoConfig.mini()`` jointly with a sampled
   softmax over the training vocabulary shared by both directions (as bilm-tf), Adam
   with warm-up and cosine decay over a step count or a time budget (whichever ends
   first), no dropout by default (under one epoch), gradient clipping at norm 5;
3. measures held-out perplexity forward and backward with the full softmax, and a
   unigram baseline on the same split and vocabulary;
4. writes ``options.json`` + ``weights.hdf5`` (bilm-tf layout), the TF2 SavedModel with
   ELMo v3 signatures (``saved_model/``), ``metrics.json`` and ``MODEL_CARD.md``.

Defaults fit about 30-40 minutes on 2 CPU cores. Tests call ``train_bilm`` on a tiny
corpus for a few steps; they never run the full training.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import shutil
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

from lab.models.elmo import BOS_TOKEN, EOS_TOKEN, ElmoConfig, PAD_CHAR, ElmoModel, token_char_ids

from lab.models.elmo_io import ASSETS, SENSE_AUC_TARGET, best_sense_auc, export_saved_model, save_allennlp

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
    sentence is wrapped as ``<S> w1 .. wn </S>``; lengths count both markers.
    """

    def __init__(self, vocab: list[str], sentences_for_types: list[list[str]]):
        self.vocab = vocab
        self.word_id = {w: i for i, w in enumerate(vocab)}
        types = [BOS_TOKEN, EOS_TOKEN] + sorted(({w for s in sentences_for_types for w in s} | {UNK}) - {BOS_TOKEN, EOS_TOKEN})
        self.type_id = {w: i + 1 for i, w in enumerate(types)}  # 0 = padding
        self.char_table = np.zeros((len(types) + 1, 50), np.int32)
        for w, i in self.type_id.items():
            self.char_table[i] = token_char_ids(w)

    def encode(self, sentence: list[str]) -> tuple[list[int], list[int]]:
        words = [BOS_TOKEN] + sentence + [EOS_TOKEN]
        unk = self.word_id[UNK]
        return [self.type_id[w] for w in words], [self.word_id.get(w, unk) for w in words]

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


class Trainer:
    """Adam on the biLM + softmax head, one ``tf.function`` step traced once."""

    def __init__(self, model: ElmoModel, head: SoftmaxHead, char_table: np.ndarray, num_sampled: int,
                 lr: float, total_steps: int, warmup: int = 200, dropout: float = 0.1, clip: float = 5.0,
                 word_dropout: float = 0.0, unk_type: int = 0):
        self.model, self.head = model, head
        self.char_table = tf.constant(char_table)
        self.vars = list(model.weight_map().values()) + [head.w, head.b]
        self.m = [tf.Variable(tf.zeros_like(v)) for v in self.vars]
        self.v = [tf.Variable(tf.zeros_like(v)) for v in self.vars]
        self.step = tf.Variable(0, dtype=tf.int64)
        # Fraction of the run done: steps / total, or elapsed / time budget if that is
        # larger, so a slow (shared) machine still ends with a fully decayed rate.
        self.progress = tf.Variable(0.0)
        self.num_sampled, self.lr, self.total, self.warmup = num_sampled, lr, total_steps, warmup
        self.dropout, self.clip = dropout, clip
        self.word_dropout, self.unk_type = word_dropout, unk_type
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
            token = embed_types(self.model, self.char_table, types)  # (B, S, P)
            h, index, _ = lm_states(self.model, token, lengths, dropout=self.dropout)
            h = tf.nn.dropout(h, self.dropout)
            y = tf.gather_nd(targets, index)[:, tf.newaxis]  # (N, 1)
            loss = tf.reduce_mean(tf.nn.sampled_softmax_loss(
                self.head.w, self.head.b, tf.cast(y, tf.int64), h, self.num_sampled, V,
                remove_accidental_hits=True))
        grads = tape.gradient(loss, self.vars)
        grads = [tf.convert_to_tensor(g) for g in grads]
        grads, norm = tf.clip_by_global_norm(grads, self.clip)
        lr = self.learning_rate()
        self.step.assign_add(1)
        t = tf.cast(self.step, tf.float32)
        b1, b2 = 0.9, 0.999
        for var, g, m, v in zip(self.vars, grads, self.m, self.v):
            # Adam (Kingma & Ba) as one fused kernel per variable.
            tf.raw_ops.ResourceApplyAdam(
                var=var.handle, m=m.handle, v=v.handle, beta1_power=b1**t, beta2_power=b2**t, lr=lr,
                beta1=b1, beta2=b2, epsilon=1e-8, grad=g)
        return loss, norm


def train_bilm(sentences, config: ElmoConfig, steps: int, *, max_tokens: int = 2500, num_sampled: int = 1024,
               lr: float = 2e-3, min_count: int = 3, seed: int = 0, dropout: float = 0.1, warmup: int = 200,
               type_sentences=None, log=print, max_seconds: float | None = None, on_checkpoint=None,
               checkpoint_every: int = 0, word_dropout: float = 0.0):
    """Train a biLM on word-split sentences for ``steps`` steps.

    Returns (model, head, batcher, history) where history is a list of per-step losses.
    """
    tf.random.set_seed(seed)
    rng = np.random.default_rng(seed)
    vocab = build_vocab(sentences, min_count)
    batcher = Batcher(vocab, list(sentences) + list(type_sentences or []))
    model = ElmoModel(config, seed=seed)
    head = SoftmaxHead(len(vocab), config.projection_dim, seed=seed + 1)
    trainer = Trainer(model, head, batcher.char_table, min(num_sampled, len(vocab) - 1), lr, steps,
                      warmup=min(warmup, max(1, steps // 10)), dropout=dropout,
                      word_dropout=word_dropout, unk_type=batcher.type_id[UNK])
    history, start, step, epoch = [], time.time(), 0, 0
    while step < steps:
        epoch += 1
        for types, targets, lengths in batcher.batches(sentences, max_tokens, rng):
            if max_seconds:
                trainer.progress.assign((time.time() - start) / max_seconds)
            loss, norm = trainer.train_step(types, targets, lengths)
            history.append(float(loss))
            step += 1
            if step % 100 == 0 or step == steps:
                elapsed = time.time() - start
                log(f"step {step}/{steps} epoch {epoch} loss {np.mean(history[-100:]):.3f} "
                    f"grad-norm {float(norm):.2f} lr {float(trainer.learning_rate()):.5f} {elapsed / 60:.1f} min")
            if on_checkpoint and checkpoint_every and step % checkpoint_every == 0:
                on_checkpoint(model, step)
            if step >= steps or (max_seconds and time.time() - start > max_seconds):
                steps = step
                break
    return model, head, batcher, history


# ---------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------


def heldout_perplexity(model: ElmoModel, head: SoftmaxHead, batcher: Batcher, sentences, max_tokens=4000):
    """Full-softmax perplexity of the forward and backward LMs over held-out targets
    (every word, plus </S> forward and <S> backward; rare words count as <UNK>)."""
    nll = np.zeros(2)
    count = 0

    @tf.function(input_signature=[tf.TensorSpec((None, None), tf.int32)] * 2 + [tf.TensorSpec((None,), tf.int32)])
    def batch_nll(types, targets, lengths):
        token = embed_types(model, batcher.char_table, types)
        h, index, n = lm_states(model, token, lengths)
        logits = tf.matmul(h, head.w, transpose_b=True) + head.b  # (N, V)
        y = tf.gather_nd(targets, index)
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        return tf.reduce_sum(losses[:n]), tf.reduce_sum(losses[n:]), n

    for types, targets, lengths in batcher.batches(sentences, max_tokens):
        f, b, n = batch_nll(types, targets, lengths)
        nll += (float(f), float(b))
        count += int(n)
    return float(np.exp(nll[0] / count)), float(np.exp(nll[1] / count)), count


def unigram_perplexity(train, held, vocab):
    """Perplexity of the training unigram distribution over the same targets (add-one)."""
    word_id = {w: i for i, w in enumerate(vocab)}
    unk = word_id[UNK]
    counts = np.ones(len(vocab))
    for s in train:
        for w in s + [EOS_TOKEN]:
            counts[word_id.get(w, unk)] += 1
    logp = np.log(counts / counts.sum())
    nll, n = 0.0, 0
    for s in held:
        for w in s + [EOS_TOKEN]:
            nll -= logp[word_id.get(w, unk)]
            n += 1
    return float(np.exp(nll / n)), n


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


WORDNET_LICENCE = """This software and database is being provided to you, the LICENSEE, by Princeton
University under the following license. By obtaining, using and/or copying this software
and database, you agree that you have read, understood, and will comply with these terms
and conditions.:

Permission to use, copy, modify and distribute this software and database and its
documentation for any purpose and without fee or royalty is hereby granted, provided that
you agree to comply with the following copyright notice and statements, including the
disclaimer, and that the same appear on ALL copies of the software, database and
documentation, including modifications that you make for internal use or for distribution.

WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.

THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO
REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF EXAMPLE, BUT NOT LIMITATION,
PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES OF MERCHANTABILITY OR FITNESS
FOR ANY PARTICULAR PURPOSE OR THAT THE USE OF THE LICENSED SOFTWARE, DATABASE OR
DOCUMENTATION WILL NOT INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER
RIGHTS.

The name of Princeton University or Princeton may not be used in advertising or publicity
pertaining to distribution of the software and/or database. Title to copyright in this
software, database and any associated documentation shall at all times remain with
Princeton University and LICENSEE agrees to preserve same."""


def write_model_card(out: Path, m: dict) -> None:
    c = m["config"]
    auc = m.get("sense_pair_auc")
    if auc:
        sense_section = (
            "ROC AUC of the cosine between a word's vectors in two sentences, same sense vs different "
            f"sense, over the {auc['pairs']} pairs of `tests/elmo_pairs.py` ({auc['words']} ambiguous words, "
            "written for the tests, never trained on): "
            + ", ".join(f"`{k}` {v:.3f}" for k, v in auc["by_layer"].items())
            + " (0.5 = chance; `word_emb` is context-free, so exactly 0.5)."
        )
        if best_sense_auc(auc["by_layer"]) < SENSE_AUC_TARGET:
            sense_section += (
                f" The project asked for {SENSE_AUC_TARGET}: this model falls short. Its contextual vectors follow"
                " local syntax (the neighbouring function words) more than word sense; the real ELMo"
                " learned sense from a billion words of text, this one had"
                f" {m['train_minutes']:.0f} minutes of CPU on two million."
            )
    else:
        sense_section = "Not measured for this run (see `tests/test_elmo_mini.py`)."
    if m.get("sense_tags"):
        data_section = f"""- Corpus: {m['corpus']['source_name']}, **with WordNet's sense classes in the text**: one
  sequence per synset, its example sentences and its definition joined by `;`, and the
  synset's sense class (its lexicographer file: `noun.animal`, `noun.artifact`, ... 45 in
  all) written next to each occurrence of the synset's word in its examples and next to its
  lemmas after (before) the definition. For half of the synsets (by hash) the class follows
  the word, so the forward LM learns to name the sense from the words before it
  (`he swung the bat noun.artifact and hit the ball`); for the other half it precedes the
  word, so the backward LM learns it from the words after it
  (`a noun.animal bat flew out of the cave`). The LM objective is unchanged (every token,
  class names included, is predicted with the same sampled softmax); the class names make
  WordNet's sense annotation part of the text, which is how a model this small learns to
  separate word senses from context. The sentence pairs it is scored on below are not in
  WordNet and carry no class names. {m['corpus'].get('tag_tokens', 0):,} of the training tokens are class names;
  held-out text carries them too, so the perplexities below count them, for the model and
  the unigram baseline alike.
- Cut at 60 words; words split with `lab.tokenize.split_words`, case kept."""
    else:
        data_section = f"""- Corpus: {m['corpus']['source_name']}: one sequence per synset, its example sentences
  then its definition led by up to three of its lemmas, joined by `;`
  (`they pulled the canoe up on the bank ; he sat on the bank of the river ; bank , river
  bank : sloping land ...`), so that the LM carries a sense's topic from one sentence into
  the next; cut at 60 words; words split with `lab.tokenize.split_words`, case kept.
- Not used in this run: WordNet's sense-class names (`noun.animal`) in the text next to the
  illustrated word (`--sense-tags`)."""
    text = f"""# ELMo-mini (embedded in Context Lab)

A small ELMo-style bidirectional language model trained **here**, on CPU, by
`python -m lab.elmo_train`, so that the app has a contextual-embedding model that works
offline. It is **not** the AllenNLP / TF Hub ELMo (93.6M parameters, 1B Word Benchmark):
it is a teaching model with the same architecture at a much smaller size, trained on a
small corpus of dictionary text. Expect rough, dictionary-flavoured contexts, not
state-of-the-art representations.

## Architecture
- Character CNN: char embedding {c['char_embed_dim']}, filters {c['filters']}
  ({m['n_filters']} in all), ReLU, {c['n_highway']} highway layer(s), projection {c['projection_dim']}.
- biLM: {c['n_layers']} LSTM layers per direction, {c['lstm_dim']} cells projected to
  {c['projection_dim']}, cell clip {c['cell_clip']}, projection clip {c['proj_clip']},
  residual around layer 2; forward and backward LMs share the softmax.
- Outputs as TF Hub ELMo v3: `word_emb` (B,T,{c['projection_dim']}), `lstm_outputs1`,
  `lstm_outputs2`, `elmo` (B,T,{2 * c['projection_dim']}), `default` (B,{2 * c['projection_dim']}).
  The scalar mix is **not learned** (uniform weights, gamma 1): there was no downstream task.
- Parameters (biLM, without the training softmax): {m['parameters']:,}.

## Data
{data_section}
- Licence: the WordNet 3.0 licence (use, copy, modify and distribute for any purpose,
  keeping its copyright notice and disclaimer: see the end of this card). Obtained from
  Debian's `wordnet-base` package.
- Split: by synset, stable CRC32 hash of offset+POS, {m['corpus']['held_out_per_mille'] / 10:.0f}% held out.
- Train: {m['corpus']['train_sentences']:,} sequences, {m['corpus']['train_tokens']:,} tokens.
  Held-out: {m['corpus']['held_out_sentences']:,} sequences, {m['corpus']['held_out_tokens']:,} tokens.
- Output vocabulary: {m['vocab_size']:,} words (count >= {m['min_count']} in train, plus `<S>`, `</S>`, `<UNK>`);
  held-out `<UNK>` rate {m['heldout_unk_rate'] * 100:.1f}%. Inputs are characters, so any word can be embedded.

## Training
- Command: `python -m lab.elmo_train` (defaults: {m['steps_planned']:,} steps or a {m['max_minutes']:.0f}-minute
  budget, whichever ends first; the learning rate follows whichever is further along).
- This run: {m['steps']:,} steps of at most {m['max_tokens']} padded tokens (at most {m['epochs']:.2f} epochs), Adam,
  peak lr {m['lr']}, warm-up then cosine decay to 10%, dropout {m['dropout']}, sampled softmax with
  {m['num_sampled']} samples, gradient norm clipped at 5, seed {m['seed']}.
- Wall time: {m['train_minutes']:.1f} min of training ({m['total_minutes']:.1f} min in all) on {m['cpus']} CPU cores
  shared with other work (TensorFlow {m['tensorflow']}). On a shared machine the time budget,
  not the step count, may end the run: `metrics.json` records what happened.

## Held-out perplexity (full softmax; targets are every word plus `</S>` forward, `<S>` backward)
| model | perplexity |
| --- | --- |
| ELMo-mini forward LM | {m['ppl_forward']:.1f} |
| ELMo-mini backward LM | {m['ppl_backward']:.1f} |
| unigram baseline (train counts, add-one, same vocabulary and split) | {m['ppl_unigram']:.1f} |

## Word senses by context
{sense_section}

## Other designs tried (measured here on 2 CPU cores, same sense pairs)
Best-layer ROC AUC of checkpoints; none came near 0.75, and none rose steadily with training.
- One sentence per sequence instead of a synset's text joined (30-minute budget): 0.49 to 0.64.
- WordNet's sense classes (`noun.animal`) written next to the illustrated word, after it or
  before it (`--sense-tags`; 30-minute budget): within the same range.
- 256-cell LSTMs with dropout 0.1, no class names (two runs, stopped after 18 and 21
  minutes): 0.53 to 0.60 at 400 to 1,600 steps.
- 256-cell LSTMs with dropout 0.1 and class names (budget an hour, stopped after 41
  minutes, 3,100 steps, 4 passes): 0.54 to 0.58 at 400 to 2,800 steps, lower at the end
  than at 400 steps, while the training loss kept falling (5.1 at 500 steps, 3.6 at 3,100).
- 256-cell LSTMs, dropout 0.1 and word dropout 0.25 (`--word-dropout`: a quarter of the
  input words read as `<UNK>`, to make the LM lean on more than the next word; stopped
  after 17 minutes): 0.50, 0.48 and 0.53 at 400, 800 and 1,200 steps.

## Files
- `options.json` + `weights.hdf5`: bilm-tf / AllenNLP layout, read by `lab.models.elmo_io.load_allennlp`
  (the app's default path: supports stateful mode and dropout).
- `saved_model/`: TF2 SavedModel with ELMo v3 signatures `default` and `tokens`
  (`hub.load(...)`), {m['saved_model_mb']:.1f} MB.
- `metrics.json`: every figure above.

## What it is not
Not the AllenNLP or TF Hub ELMo; not trained on news or web text; not evaluated on any
downstream task beyond the sense-pair check in `tests/test_elmo_mini.py`; its vocabulary
and style are those of dictionary definitions; a teaching model for offline use.

## WordNet licence
{WORDNET_LICENCE}
"""
    (out / "MODEL_CARD.md").write_text(text)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=str(ASSETS), help="where to write the model (default: the embedded assets)")
    p.add_argument("--wordnet", default=None, help="a folder holding WordNet's data.* files (default: fetch)")
    p.add_argument("--steps", type=int, default=1100)
    p.add_argument("--max-tokens", type=int, default=2500, help="padded tokens per batch")
    p.add_argument("--num-sampled", type=int, default=1024)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--dropout", type=float, default=0.0, help="0: under one epoch, nothing to regularize")
    p.add_argument("--min-count", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-minutes", type=float, default=32.0, help="time budget: the rate decays to its floor by then, and training stops")
    p.add_argument("--lstm-dim", type=int, default=ElmoConfig.mini().lstm_dim, help="LSTM cells per layer and direction")
    p.add_argument("--word-dropout", type=float, default=0.0, help="share of input words read as <UNK> in training")
    p.add_argument("--sense-tags", action="store_true",
                   help="put WordNet's sense class (noun.animal) next to each illustrated word (lab.elmo_corpus)")
    p.add_argument("--checkpoint-every", type=int, default=1000, help="steps between checkpoints to OUT/checkpoint")
    a = p.parse_args(argv)

    from lab.elmo_corpus import HELD_OUT_PER_MILLE, load_corpus

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    corpus = load_corpus(a.wordnet, tags=a.sense_tags)
    stats = corpus.stats()
    print("corpus:", json.dumps(stats), flush=True)
    config = replace(ElmoConfig.mini(), lstm_dim=a.lstm_dim)

    def checkpoint(model, step):
        save_allennlp(model, out / "checkpoint")
        print(f"checkpoint at step {step} -> {out / 'checkpoint'}", flush=True)

    start = time.time()
    model, head, batcher, history = train_bilm(
        corpus.train, config, a.steps, max_tokens=a.max_tokens, num_sampled=a.num_sampled, lr=a.lr,
        min_count=a.min_count, seed=a.seed, dropout=a.dropout, type_sentences=corpus.held_out,
        log=lambda s: print(s, flush=True), max_seconds=a.max_minutes * 60, on_checkpoint=checkpoint,
        checkpoint_every=a.checkpoint_every, word_dropout=a.word_dropout,
    )
    train_minutes = (time.time() - start) / 60
    steps = len(history)
    tokens_per_epoch = sum(len(s) + 2 for s in corpus.train)
    ppl_f, ppl_b, n = heldout_perplexity(model, head, batcher, corpus.held_out)
    ppl_u, _ = unigram_perplexity(corpus.train, corpus.held_out, batcher.vocab)
    unk = batcher.word_id[UNK]
    held_unk = sum(batcher.word_id.get(w, unk) == unk for s in corpus.held_out for w in s)
    print(f"held-out perplexity: forward {ppl_f:.1f} backward {ppl_b:.1f} unigram {ppl_u:.1f} ({n} targets)", flush=True)

    save_allennlp(model, out)
    if (out / "saved_model").exists():
        shutil.rmtree(out / "saved_model")
    export_saved_model(model, out / "saved_model")
    shutil.rmtree(out / "checkpoint", ignore_errors=True)
    metrics = {
        "config": asdict(config),
        "n_filters": config.n_filters,
        "parameters": model.num_parameters(),
        "corpus": {**stats, "source_name": "WordNet 3.0 glosses and examples", "held_out_per_mille": HELD_OUT_PER_MILLE},
        "vocab_size": len(batcher.vocab),
        "min_count": a.min_count,
        "heldout_unk_rate": held_unk / max(1, stats["held_out_tokens"]),
        "steps": steps,
        "steps_planned": a.steps,
        "max_minutes": a.max_minutes,
        "max_tokens": a.max_tokens,
        "epochs": steps * a.max_tokens / tokens_per_epoch,  # an upper bound: batches hold padding
        "lr": a.lr,
        "dropout": a.dropout,
        "num_sampled": a.num_sampled,
        "seed": a.seed,
        "sense_tags": a.sense_tags,
        "word_dropout": a.word_dropout,
        "final_train_loss": float(np.mean(history[-200:])),
        "train_minutes": train_minutes,
        "total_minutes": (time.time() - t0) / 60,
        "cpus": os.cpu_count(),
        "tensorflow": tf.__version__,
        "ppl_forward": ppl_f,
        "ppl_backward": ppl_b,
        "ppl_unigram": ppl_u,
        "heldout_targets_per_direction": n,
        "saved_model_mb": folder_size(out / "saved_model") / 2**20,
        "weights_hdf5_mb": (out / "weights.hdf5").stat().st_size / 2**20,
    }
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    write_model_card(out, metrics)
    print(json.dumps(metrics, indent=2), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
