"""Measure a trained ELMo-mini again and record the figures in its metrics.json and card.

    python -m lab.elmo_training --out DIR        # train (records these figures itself)
    python tools/record_elmo_senses.py DIR    # re-measure a folder (after changing lab.senses)

Figures: the sense-pair ROC AUC per layer, standard and context-only (``lab.senses``, pairs
from ``lab/data/sense_pairs.json``, never trained on), the "bank" pair, anisotropy per
layer of ELMo-mini and of the embedded BERT, the nearest neighbours of common words
(``lab.elmo_training.record``). ``tests/test_elmo_mini.py`` recomputes the sense figures from the
shipped files and checks that they are the recorded ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lab.elmo_training.corpus import load_corpus
from lab.elmo_training.record import record
from lab.elmo_training.train import build_vocab
from lab.models.elmo_io import ASSETS


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("folder", nargs="?", default=str(ASSETS), help="a folder written by lab.elmo_training")
    p.add_argument("--wordnet", default=None, help="a folder holding WordNet's data.* files (default: fetch)")
    p.add_argument("--designs", default=None,
                   help="a JSON list of other designs' measured rows ({design, sense_auc, dev_sense_auc}) for the card")
    a = p.parse_args(argv)
    folder = Path(a.folder)
    metrics = json.loads((folder / "metrics.json").read_text())
    if a.designs:
        metrics["other_designs"] = json.loads(Path(a.designs).read_text())
        (folder / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    corpus = load_corpus(a.wordnet, tags=metrics.get("sense_tags", False))
    train = corpus.train
    if metrics.get("lowercase_targets"):
        train = [[w.lower() for w in s] for s in train]
    record(folder, corpus.held_out, build_vocab(train, metrics.get("min_count", 3)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
