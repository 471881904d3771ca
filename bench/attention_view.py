"""Warm time to build the attention model view (every layer x head) of the embedded BERT.

    python bench/attention_view.py [--repeats N] [--projector]

For the two default sentences: one BERT run (cached on the page, timed here for
reference), then the figure the page draws, ``figures.model_view`` over 6 layers x 12
heads of sentence A, and its JSON (what Streamlit sends to the browser). Prints figures;
asserts nothing (timings belong in a benchmark, not a test). Aim: under 1 s warm.
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

from lab import figures
from lab.models.bert_io import load_bert
from ui.frame import DEFAULT_A, DEFAULT_B


def timed(fn, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def summary(times: list[float]) -> str:
    return (f"median {statistics.median(times) * 1000:.0f} ms, min {min(times) * 1000:.0f} ms, "
            f"max {max(times) * 1000:.0f} ms")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--projector", action="store_true", help="build the projector-mode figure")
    a = p.parse_args(argv)
    model = load_bert("embedded")
    sentences = [DEFAULT_A, DEFAULT_B]
    model.run(sentences)  # compiles the bucket
    run_times = timed(lambda: model.run(sentences), a.repeats)
    out = model.run(sentences)
    n = int(out.mask[0].sum())
    attn = out.attentions[:, 0, :, :n, :n]  # (L, H, T, T) of sentence A

    def build():
        return figures.model_view(attn, out.tokens[0], "All layers x heads", out.model_label, a.projector)

    build()  # first build imports and validates Plotly's trace classes
    build_times = timed(build, a.repeats)
    fig = build()
    json_times = timed(fig.to_json, a.repeats)
    total = [b + j for b, j in zip(build_times, json_times)]
    print(f"model: {out.model_label}")
    print(f"model view: {attn.shape[0]} layers x {attn.shape[1]} heads, {n} x {n} tokens, "
          f"{a.repeats} warm runs{' (projector)' if a.projector else ''}")
    print(f"  BERT run (cached on the page): {summary(run_times)}")
    print(f"  build figure:                  {summary(build_times)}")
    print(f"  figure to JSON:                {summary(json_times)} ({len(fig.to_json()) / 1e3:.0f} kB)")
    print(f"  build + JSON:                  {summary(total)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
