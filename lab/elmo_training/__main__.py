"""Train ELMo-mini: ``python -m lab.elmo_training --out DIR`` (the package's docstring says
what each design and stage does; ``--help`` lists the options)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from lab.elmo_training.corpus import load_corpus
from lab.elmo_training.stages import staged_training, write_model
from lab.elmo_training.train import train_bilm
from lab.models.elmo import ElmoConfig
from lab.models.elmo_io import ASSETS


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lab.elmo_training", description=__doc__.split("\n")[0])
    p.add_argument("--out", default=str(ASSETS), help="where to write the model (default: the embedded assets)")
    p.add_argument("--wordnet", default=None, help="a folder holding WordNet's data.* files (default: fetch)")
    p.add_argument("--design", choices=["staged", "chars"], default="staged",
                   help="staged: word-level biLM, then the char CNN fitted to its word vectors, then joint "
                        "fine-tuning (stages 1-3); chars: the char-CNN biLM trained from scratch (ELMo-mini v1)")
    p.add_argument("--stage", choices=["words", "chars", "joint", "all"], default="all",
                   help="staged design: run up to this stage only (a finished stage is skipped, a stopped one resumes)")
    p.add_argument("--work", default=None,
                   help="stage outputs and checkpoints, kept so a stage can be rerun (default: OUT/../elmo_mini_work)")
    p.add_argument("--steps", type=int, default=1100, help="chars design: training steps")
    p.add_argument("--max-tokens", type=int, default=2500, help="padded tokens per batch")
    p.add_argument("--num-sampled", type=int, default=1024)
    p.add_argument("--lr", type=float, default=3e-3, help="peak learning rate (chars design, stage 1)")
    p.add_argument("--dropout", type=float, default=0.1,
                   help="LSTM dropout while training (stage 1 reads the text ~7 times)")
    p.add_argument("--min-count", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-minutes", type=float, default=32.0,
                   help="chars design: time budget (the rate decays to its floor by then)")
    p.add_argument("--lstm-dim", type=int, default=256, help="LSTM cells per layer and direction (v1: 512)")
    p.add_argument("--word-steps", type=int, default=100_000, help="stage 1 steps (the time budget usually ends it)")
    p.add_argument("--word-minutes", type=float, default=65.0, help="stage 1 time budget")
    p.add_argument("--word-table", choices=["learned", "static"], default="static",
                   help="stage 1's input table: learned from random rows with the LM loss, or static: the embedded "
                        "BERT's context-free input embeddings, reduced to the projection width and kept frozen "
                        "(static_word_table)")
    p.add_argument("--char-steps", type=int, default=14000, help="stage 2 steps of 512 words")
    p.add_argument("--char-minutes", type=float, default=15.0, help="stage 2 time budget")
    p.add_argument("--char-scale", type=int, default=2,
                   help="stage 2: filters per width times mini's (2: 768 filters, room to hold the word vectors)")
    p.add_argument("--joint-steps", type=int, default=100_000, help="stage 3 steps")
    p.add_argument("--joint-minutes", type=float, default=0.0,
                   help=("stage 3 time budget (12 was measured); 0: no stage 3, ship stage 2 "
                         "(a finished stage 3 is still reported)"))
    p.add_argument("--joint-lr", type=float, default=5e-4, help="stage 3 peak learning rate")
    p.add_argument("--anchor", type=float, default=1.0, help="stage 3: pull of the char CNN toward stage 1's vectors")
    p.add_argument("--word-dropout", type=float, default=0.0, help="chars design: share of input words read as <UNK>")
    p.add_argument("--sense-tags", action="store_true",
                   help=("put WordNet's sense class (noun.animal) next to each illustrated word "
                         "(lab.elmo_training.corpus)"))
    p.add_argument("--checkpoint-every", type=int, default=400, help="steps between checkpoints (and sense-AUC logs)")
    return p


def main(argv=None) -> int:
    a = parser().parse_args(argv)

    def log(s):
        print(s, flush=True)

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(a.work) if a.work else out.resolve().parent / "elmo_mini_work"
    t0 = time.time()
    corpus = load_corpus(a.wordnet, tags=a.sense_tags)
    stats = corpus.stats()
    log("corpus: " + json.dumps(stats))
    start = time.time()
    if a.design == "staged":
        trained, stages = staged_training(a, corpus, work, log)
        if trained is None:
            return 0  # an early stage only
        shipped = "joint" if a.joint_minutes > 0 else "chars"
        steps = stages["words"]["steps"] + (stages["joint"]["steps"] if shipped == "joint" else 0)  # LM steps
    else:
        trained = train_bilm(
            corpus.train, replace(ElmoConfig.mini(), lstm_dim=a.lstm_dim), a.steps, max_tokens=a.max_tokens,
            num_sampled=a.num_sampled, lr=a.lr, min_count=a.min_count, seed=a.seed, dropout=a.dropout,
            type_sentences=corpus.held_out, log=log, max_seconds=a.max_minutes * 60,
            checkpoint_every=a.checkpoint_every, checkpoint_dir=work / "chars-only", word_dropout=a.word_dropout,
        )
        stages, steps, shipped = {}, len(trained.history), None
    metrics = write_model(a, out, corpus, trained, stages, steps, shipped, (t0, start), log)
    log(json.dumps(metrics, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
