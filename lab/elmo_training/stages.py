"""Stages of ELMo-mini's training: held-out perplexity (and a unigram baseline), each
stage run, saved and resumed under a work folder (``run_stage``), the staged design
(``staged_training``), and the finished model written with its figures (``write_model``)."""

from __future__ import annotations

import collections
import json
import os
import shutil
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import tensorflow as tf

from lab.elmo_training.corpus import HELD_OUT_PER_MILLE
from lab.elmo_training.train import (
    UNK, Batcher, SoftmaxHead, Trained, WordTable, build_vocab, fit_char_encoder, lm_states, static_word_table,
    train_bilm, word_level_runner,
)
from lab.models.elmo import EOS_TOKEN, ElmoConfig, ElmoModel
from lab.models.elmo_io import ElmoRunner, export_saved_model, load_allennlp, save_allennlp

# ---------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------


def heldout_perplexity(trained: Trained, sentences, max_tokens=4000):
    """Full-softmax perplexity of the forward and backward LMs over held-out targets
    (every word, plus </S> forward and <S> backward; rare words count as <UNK>)."""
    model, head, batcher = trained.model, trained.head, trained.batcher
    embed = trained.embed()
    nll = np.zeros(2)
    count = 0

    @tf.function(input_signature=[tf.TensorSpec((None, None), tf.int32)] * 2 + [tf.TensorSpec((None,), tf.int32)])
    def batch_nll(types, targets, lengths):
        token = embed(types)
        h, index, n = lm_states(model, token, lengths)
        logits = tf.matmul(h, head.w, transpose_b=True) + head.b  # (N, V)
        y = tf.gather_nd(targets, index)
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        return tf.reduce_sum(losses[:n]), tf.reduce_sum(losses[n:]), n

    for types, targets, lengths in batcher.batches(sentences, max_tokens):
        f, b, n = batch_nll(targets if trained.words else types, targets, lengths)
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


def save_stage(trained: Trained, folder: Path, figures: dict) -> None:
    """A finished stage: the biLM (bilm-tf files), the softmax head, the word table, figures."""
    save_allennlp(trained.model, folder)
    np.savez(folder / "softmax.npz", w=trained.head.w.numpy(), b=trained.head.b.numpy())
    if trained.words is not None:
        np.save(folder / "word_table.npy", trained.words.w.numpy())
    (folder / "done.json").write_text(json.dumps(figures, indent=2) + "\n")


def load_stage(folder: Path, batcher: Batcher, words_from: Path | None = None) -> Trained:
    """A stage saved by ``save_stage``; ``words_from``: the folder holding stage 1's word table."""
    model = load_allennlp(folder / "options.json", folder / "weights.hdf5")
    soft = np.load(folder / "softmax.npz")
    head = SoftmaxHead(*soft["w"].shape)
    head.w.assign(soft["w"])
    head.b.assign(soft["b"])
    words = None
    if words_from is not None:
        table = np.load(words_from / "word_table.npy")
        words = WordTable(*table.shape)
        words.w.assign(table)
    return Trained(model, head, batcher, [], words)


def stage_figures(trained: Trained, runner, held_out, start: float, history) -> dict:
    """Held-out perplexity, sense-pair ROC AUC per layer, time and steps of a stage."""
    from lab.senses import DEV_PAIRS_FILE, layer_aucs

    ppl_f, ppl_b, n = heldout_perplexity(trained, held_out)
    return {"ppl_forward": ppl_f, "ppl_backward": ppl_b, "heldout_targets_per_direction": n,
            "sense_auc": layer_aucs(runner), "dev_sense_auc": layer_aucs(runner, DEV_PAIRS_FILE),
            "steps": trained.steps or len(history),
            "final_loss": float(np.mean(history[-200:])) if history else None,
            "minutes": (trained.seconds or time.time() - start) / 60}


def run_stage(name: str, work: Path, fn, log) -> dict:
    """Run a stage unless its folder says it is done; returns its figures."""
    folder = work / name
    if (folder / "done.json").is_file():
        log(f"stage {name}: done already ({folder})")
        return json.loads((folder / "done.json").read_text())
    folder.mkdir(parents=True, exist_ok=True)
    log(f"stage {name} -> {folder}")
    figures = fn(folder)
    log(f"stage {name} figures: {json.dumps(figures)}")
    return figures


def staged_training(a, corpus, work: Path, log) -> tuple[Trained, dict]:
    """Stages 1-3 (see the module docstring); each resumes and is skipped when done."""
    config = replace(ElmoConfig.mini(), lstm_dim=a.lstm_dim)
    lower = [[w.lower() for w in s] for s in corpus.train]
    vocab = build_vocab(lower, a.min_count)
    batcher = Batcher(vocab, list(corpus.train) + list(corpus.held_out), lowercase=True)
    counts = collections.Counter(w for s in lower for w in s)
    common = dict(max_tokens=a.max_tokens, num_sampled=a.num_sampled, min_count=a.min_count, seed=a.seed,
                  dropout=a.dropout, type_sentences=corpus.held_out, log=log, lowercase=True,
                  checkpoint_every=a.checkpoint_every)

    def auc_log(trained, step, runner_of):
        from lab.senses import DEV_PAIRS_FILE, PAIRS_FILE, layer_aucs

        runner = runner_of(trained)
        for name, path in (("dev", DEV_PAIRS_FILE), ("test", PAIRS_FILE)):
            log(f"  step {step} sense AUC ({name} pairs): "
                + json.dumps({k: round(v, 3) for k, v in layer_aucs(runner, path).items()}))

    def words(folder):
        start = time.time()
        static = a.word_table == "static"
        trained = train_bilm(corpus.train, config, a.word_steps, lr=a.lr, words=True,
                             table_init=static_word_table(vocab, config.projection_dim) if static else None,
                             freeze_table=static, max_seconds=a.word_minutes * 60, checkpoint_dir=folder / "ckpt",
                             on_checkpoint=lambda t, s: auc_log(t, s, word_level_runner), **common)
        figures = stage_figures(trained, word_level_runner(trained), corpus.held_out, start, trained.history)
        if static:  # what the inputs alone give: the same table read by the LSTMs as they started
            from lab.senses import DEV_PAIRS_FILE, layer_aucs

            untrained = word_level_runner(replace(trained, model=ElmoModel(config, seed=a.seed)))
            figures["untrained_sense_auc"] = layer_aucs(untrained)
            figures["untrained_dev_sense_auc"] = layer_aucs(untrained, DEV_PAIRS_FILE)
        save_stage(trained, folder, figures)
        return figures

    def chars(folder):
        start = time.time()
        stage1 = load_stage(work / "words", batcher, words_from=work / "words")
        # A fresh char CNN (``--char-scale`` times mini's filters) behind stage 1's LSTMs.
        model = ElmoModel(replace(config, filters=tuple((w, n * a.char_scale) for w, n in config.filters)), seed=a.seed)
        for name, var in stage1.model.weight_map().items():
            if name.startswith("RNN_"):
                model.weight_map()[name].assign(var)
        history = fit_char_encoder(model, vocab, counts, stage1.words.w.numpy(), a.char_steps,
                                   seed=a.seed, log=log, max_seconds=a.char_minutes * 60)
        trained = Trained(model, stage1.head, batcher, history)
        figures = stage_figures(trained, ElmoRunner(trained.model, "stage 2", "chars"), corpus.held_out, start, history)
        save_stage(trained, folder, figures)
        return figures

    def joint(folder):
        start = time.time()
        init = load_stage(work / "chars", batcher, words_from=work / "words")
        trained = train_bilm(corpus.train, config, a.joint_steps, lr=a.joint_lr, init=init, anchor=a.anchor,
                             max_seconds=a.joint_minutes * 60, checkpoint_dir=folder / "ckpt",
                             on_checkpoint=lambda t, s: auc_log(
                                 t, s, lambda t: ElmoRunner(t.model, "stage 3", "joint")),
                             **{**common, "checkpoint_every": a.checkpoint_every // 2})
        figures = stage_figures(trained, ElmoRunner(trained.model, "stage 3", "joint"), corpus.held_out, start,
                                trained.history)
        save_stage(trained, folder, figures)
        return figures

    stages = {"words": words, "chars": chars, "joint": joint}
    wanted = list(stages) if a.stage == "all" else [a.stage]
    if a.joint_minutes <= 0:
        wanted = [name for name in wanted if name != "joint"]
    figures = {}
    for name in stages:
        if name in wanted or (work / name / "done.json").is_file():
            figures[name] = run_stage(name, work, stages[name], log)
    last = "joint" if a.joint_minutes > 0 else "chars"
    if last not in figures:
        return None, figures
    return load_stage(work / last, batcher), figures


def write_model(a, out: Path, corpus, trained: Trained, stages: dict, steps: int, shipped: str | None,
                times: tuple[float, float], log) -> dict:
    """Measure the trained biLM, write it to ``out`` (bilm-tf files, the SavedModel,
    ``metrics.json``, and through ``record`` the measured figures and ``MODEL_CARD.md``) and
    return its metrics. ``a``: the command line's options; ``times``: when the run and its
    training started."""
    from lab.elmo_training.record import record

    t0, start = times
    stats = corpus.stats()
    model, batcher, config = trained.model, trained.batcher, trained.model.config
    train_minutes = (sum(f["minutes"] for f in stages.values()) if stages else (time.time() - start) / 60)
    tokens_per_epoch = sum(len(s) + 2 for s in corpus.train)
    ppl_f, ppl_b, n = heldout_perplexity(trained, corpus.held_out)
    ppl_u, _ = unigram_perplexity(
        [[w.lower() for w in s] for s in corpus.train] if batcher.lowercase else corpus.train,
        [[w.lower() for w in s] for s in corpus.held_out] if batcher.lowercase else corpus.held_out,
        batcher.vocab)
    unk = batcher.word_id[UNK]
    norm = str.lower if batcher.lowercase else str
    held_unk = sum(batcher.word_id.get(norm(w), unk) == unk for s in corpus.held_out for w in s)
    log(f"held-out perplexity: forward {ppl_f:.1f} backward {ppl_b:.1f} unigram {ppl_u:.1f} ({n} targets)")

    save_allennlp(model, out)
    if (out / "saved_model").exists():
        shutil.rmtree(out / "saved_model")
    export_saved_model(model, out / "saved_model")
    metrics = {
        "design": a.design,
        "config": asdict(config),
        "n_filters": config.n_filters,
        "parameters": model.num_parameters(),
        "corpus": {**stats, "source_name": "WordNet 3.0 glosses and examples",
                   "held_out_per_mille": HELD_OUT_PER_MILLE},
        "lowercase_targets": batcher.lowercase,
        "vocab_size": len(batcher.vocab),
        "min_count": a.min_count,
        "heldout_unk_rate": held_unk / max(1, stats["held_out_tokens"]),
        "steps": steps,
        "steps_planned": a.steps if a.design == "chars" else a.word_steps,
        "max_minutes": a.max_minutes if a.design == "chars" else a.word_minutes + a.char_minutes + a.joint_minutes,
        "max_tokens": a.max_tokens,
        "epochs": steps * a.max_tokens / tokens_per_epoch,  # an upper bound: batches hold padding
        "lr": a.lr,
        "dropout": a.dropout,
        "num_sampled": a.num_sampled,
        "seed": a.seed,
        "sense_tags": a.sense_tags,
        "word_dropout": a.word_dropout,
        "stages": stages,
        "shipped_stage": shipped,
        "stage_options": {"word_minutes": a.word_minutes, "char_steps": a.char_steps, "char_minutes": a.char_minutes,
                          "joint_minutes": a.joint_minutes, "joint_lr": a.joint_lr, "anchor": a.anchor,
                          "char_scale": a.char_scale, "word_table": a.word_table},
        "final_train_loss": float(np.mean(trained.history[-200:])) if trained.history else None,
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
    return record(out, corpus.held_out, batcher.vocab, log=log)  # sense AUC, anisotropy, neighbours; the card
