"""The layer probes: what training them costs, what a live grid costs, and their held-out table.

    .venv/bin/python bench/probes.py [--train] [--sentences N]

With ``--train``, trains both embedded models' probes into a fresh folder first and prints
the wall and CPU time of each (what ``python -m lab prepare`` adds on a machine without
them). Then, from the stored probes (``python -m lab probes train`` makes them), the server
time of the page's live grid for N new 20-word sentences after a warm-up sentence: the model
run, the probes and the figure (CPU and wall, median and max), and the held-out table of each
model.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

WORDS = ("the old fisherman said that a bank near the river would lend money to anyone who could show them "
         "a boat and some nets before winter came again to the quiet town by the lake").split()


def sentences(n: int) -> list[str]:
    """N different 20-word sentences (rotations of one text): each one new to the model."""
    return [" ".join((WORDS[i:] + WORDS[:i])[:20]) + "." for i in range(1, n + 1)]


def cpu() -> float:
    t = os.times()
    return t.user + t.system


def markdown(found) -> str:
    """The held-out table of ``lab.probes.table_rows`` as a Markdown table."""
    from lab import probes

    rows = probes.table_rows(found)
    cols = [c for c in rows[0] if c != "model"]
    lines = [f"{found.label}:", "", "| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
    return "\n".join(lines + ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", action="store_true", help="train both models' probes in a fresh folder first")
    parser.add_argument("--sentences", type=int, default=10)
    parser.add_argument("--markdown", action="store_true", help="print the held-out tables as Markdown only")
    args = parser.parse_args()
    from lab import figures, models, probes, stored

    if args.markdown:
        for family in ("bert", "elmo"):
            from lab import sources

            found = probes.read(family, sources.default_source(family))
            print(markdown(found) if found else f"{family}: no stored probes")
        return 0
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    loaded = {f: models.load(f) for f in ("bert", "elmo")}
    store = None
    if args.train:
        store = stored.RunStore(tempfile.mkdtemp(prefix="probes-bench-"), max_bytes=probes.STORE_BYTES)
        for family, model in loaded.items():
            w, c = time.perf_counter(), cpu()
            probes.train_and_store(model, store)
            print(f"train {family}: {time.perf_counter() - w:.1f} s wall, {cpu() - c:.1f} s CPU")
    for family, model in loaded.items():
        found = probes.read(family, model.source, store)
        if found is None:
            print(f"{family}: no stored probes ({probes.train_command(family, model.source)})")
            continue
        probes.live(found, model, "A warm-up sentence about a river bank.", "pos")
        walls, cpus = [], []
        for text in sentences(args.sentences):
            w, c = time.perf_counter(), cpu()
            for task in ("pos", "supersense"):
                figures.guess_grid(probes.live(found, model, text, task), task, found.short_label)
            walls.append(time.perf_counter() - w)
            cpus.append(cpu() - c)
        print(f"{family}: live grid of a new 20-word sentence, two tasks (model run each), {len(walls)} sentences: "
              f"CPU median {1000 * statistics.median(cpus) / 2:.0f} ms per grid (max {1000 * max(cpus) / 2:.0f}), "
              f"wall median {1000 * statistics.median(walls) / 2:.0f} ms")
        print("\n".join(probes.report_lines(found)))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
