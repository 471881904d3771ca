"""Median warm latency of one two-sentence request on the embedded ELMo-mini.

    python bench/elmo_latency.py [--source S] [--repeats N]

Prints figures; asserts nothing (timings belong in a benchmark, not a test).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lab.models.elmo_io import load_elmo
from lab.tokenize import split_words

SENTENCES = [
    "The bank raised its interest rates yesterday.",
    "We sat on the bank of the river and watched the boats.",
]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source", default="embedded")
    p.add_argument("--repeats", type=int, default=30)
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    runner = load_elmo(a.source)
    load_s = time.perf_counter() - t0
    tokens = [split_words(s) for s in SENTENCES]
    t0 = time.perf_counter()
    runner.run(tokens)  # the first call traces the graph
    first_s = time.perf_counter() - t0
    times = []
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        runner.run(tokens)
        times.append(time.perf_counter() - t0)
    print(f"model: {runner.label}")
    print(f"load: {load_s * 1000:.0f} ms; first call (traces): {first_s * 1000:.0f} ms")
    print(f"warm latency, 2 sentences ({sum(map(len, tokens))} tokens), {a.repeats} runs: "
          f"median {statistics.median(times) * 1000:.1f} ms, min {min(times) * 1000:.1f} ms, "
          f"max {max(times) * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
