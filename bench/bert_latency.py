"""Warm latency of one two-sentence BERT request on the embedded model.

A request is what the page asks for when a sentence changes: WordPiece tokenization,
packing, and the encoder with every hidden state and every attention matrix, returned as
NumPy. Prints the median and 90th percentile over repeated runs, and the parts.

    .venv/bin/python bench/bert_latency.py [--runs 200]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from lab.models.bert import load_bert  # noqa: E402

SENTENCES = ["The central bank raised interest rates yesterday.",
             "A fisherman rested on the river bank at sunset."]


def timed(fn, runs: int) -> np.ndarray:
    for _ in range(5):  # warm: traces, XLA programs, caches
        fn()
    times = np.empty(runs)
    for i in range(runs):
        t0 = time.perf_counter()
        fn()
        times[i] = time.perf_counter() - t0
    return times * 1000.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    t0 = time.perf_counter()
    bert = load_bert("embedded")
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    bert.run(SENTENCES)
    first_s = time.perf_counter() - t0

    enc = bert.tokenizer.encode(SENTENCES)
    packed = bert.tokenizer.pack(enc)
    parts = {
        "tokenize + pack": timed(lambda: bert.tokenizer.pack(bert.tokenizer.encode(SENTENCES)), args.runs),
        "encoder (all layers + attentions)": timed(
            lambda: bert.encoder(packed["input_word_ids"], packed["input_mask"], packed["input_type_ids"]),
            args.runs),
        "whole request": timed(lambda: bert.run(SENTENCES), args.runs),
    }
    print(f"model: {bert.label}")
    print(f"machine: {os.cpu_count()} CPU cores; batch {packed['input_word_ids'].shape} (B, T)")
    print(f"load {load_s:.2f} s, first request (trace + XLA compile) {first_s:.2f} s")
    for name, ms in parts.items():
        print(f"{name:36s} median {np.median(ms):7.2f} ms   p90 {np.percentile(ms, 90):7.2f} ms")


if __name__ == "__main__":
    main()
