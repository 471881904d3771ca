"""Reference-corpus figures of the ELMo vs BERT page: build, cache load and neighbour query times.

    python bench/reference.py [--model bert|elmo] [--layers 0 3 ...] [--queries N]

For each model and layer, in a fresh cache folder (a temporary one unless --cache): the
time to build the layer's neighbour index over the corpus (one pass of the model over
every sentence), the time a later start takes to read it back from disk, its size in
memory, and the median warm time of one 8-nearest-neighbour query. Also the anisotropy
baseline (all layers, from a sample of the corpus). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lab import elmo_vs_bert, models, reference


def timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def bench_model(family: str, layers: list[int] | None, queries: int, folder: Path) -> None:
    model = models.load(family, "embedded")
    models.embed(model, ["A warm-up sentence traces the graph."])
    corpus = reference.load_corpus()
    store = reference.ReferenceStore(corpus, folder)
    base, base_s = timed(lambda: store.baseline(model))
    print(f"\n{model.label}\n  baseline, all {len(base.layer_names)} layers "
          f"({base.sentences} sentences, {base.pairs:,} pairs): {base_s:.1f} s")
    for layer in layers if layers is not None else range(len(base.layer_names)):
        index, build_s = timed(lambda: store.index(model, layer))
        later = reference.ReferenceStore(corpus, folder)  # a later start: nothing in memory
        _, load_s = timed(lambda: later.index(model, layer))
        rows = index.unit[:: max(1, len(index.unit) // queries)][:queries]
        times = [timed(lambda q=q: elmo_vs_bert.neighbours(index, corpus.sentences, q))[1] for q in rows]
        print(f"  {base.layer_names[layer]:14s} build {build_s:6.1f} s | cache load {load_s * 1000:6.1f} ms | "
              f"{index.unit.shape[0]:,} words x {index.unit.shape[1]} = {index.nbytes / 2**20:5.1f} MB in memory | "
              f"query (top 8) median {statistics.median(times) * 1000:5.1f} ms, max {max(times) * 1000:5.1f} ms")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=("bert", "elmo"), action="append")
    p.add_argument("--layers", type=int, nargs="+", default=None, help="layer indices (default: all)")
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--cache", default=None, help="cache folder (default: a fresh temporary one)")
    a = p.parse_args(argv)
    corpus = reference.load_corpus()
    print(f"corpus: {corpus.path}: {len(corpus.sentences):,} sentences; cores: {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        for family in a.model or ["bert", "elmo"]:
            bench_model(family, a.layers, a.queries, Path(a.cache or tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
