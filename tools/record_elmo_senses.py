"""Score a trained ELMo-mini on the sense pairs and record the figures in its model card.

    python -m lab.elmo_train --out DIR        # train (writes metrics.json, MODEL_CARD.md)
    python tools/record_elmo_senses.py DIR    # add the sense-pair ROC AUC per layer

The pairs are the tests' (``tests/elmo_pairs.py``), written for the tests and never
trained on; ``tests/test_elmo_mini.py`` recomputes the figures from the shipped files and
checks that they are the recorded ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lab.elmo_train import write_model_card  # noqa: E402
from lab.models.elmo_io import ASSETS, load_elmo# noqa: E402
from tests.elmo_pairs import SENSES, layer_aucs, sense_pairs  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("folder", nargs="?", default=str(ASSETS), help="a folder written by lab.elmo_train")
    a = p.parse_args(argv)
    folder = Path(a.folder)
    aucs = layer_aucs(load_elmo(str(folder)))
    metrics = json.loads((folder / "metrics.json").read_text())
    metrics["sense_pair_auc"] = {"pairs": len(sense_pairs()), "words": len(SENSES), "by_layer": aucs}
    (folder / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    write_model_card(folder, metrics)
    print("ROC AUC by layer:", {k: round(v, 3) for k, v in aucs.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
