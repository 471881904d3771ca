"""``python -m lab probes train | report`` and ``python -m lab probe``: the layer probes
(``lab.probes``) from the command line.

    python -m lab probes train [--model bert|elmo ...] [--source S]
    python -m lab probes report [--model bert|elmo ...] [--source S]
    python -m lab probe --model bert|elmo --task pos|supersense|position [--source S] [--json] SENTENCE ...

``probes train`` runs each model over the probe data and fits every task at every layer,
with a progress bar, and stores the probes (``lab.probes.default_store``); it trains nothing
already stored. ``probes report`` prints the stored held-out table. ``probe`` prints each
word's guess at every layer of the stored probes; with ``--json``, one line per sentence
holding one object: ``{"model", "task", "layers", "words": [{"word", "guesses": [{"label",
"p"}, ...]}]}`` (``label`` and ``p`` null for a word outside the task's classes).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from lab import probe_data, probes, sources
from lab.models import FAMILIES, FAMILY_NAMES


def add_parsers(sub) -> None:
    """Register ``probes`` (with ``train`` and ``report``) and ``probe`` on ``sub``."""
    p = sub.add_parser("probes", help="train or report the layer probes (what each layer knows)",
                       description="Linear probes on every layer: part of speech, supersense, position, each "
                       "against its control task.")
    actions = p.add_subparsers(dest="action", required=True)
    for name, fn, text in (("train", cmd_train, "train and store the probes (nothing already stored)"),
                           ("report", cmd_report, "print the stored held-out table with 95 % intervals")):
        a = actions.add_parser(name, help=text, description=text)
        a.add_argument("--model", choices=FAMILIES, action="append",
                       help="bert and/or elmo (default: both)")
        a.add_argument("--source", default=None,
                       help="model source for a single --model: embedded (default), a SavedModel folder or a TF Hub "
                            "handle")
        a.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                       help="also show TensorFlow's log lines and each failure's full error")
        a.set_defaults(fn=fn)
    q = sub.add_parser("probe", help="each word's guess at every layer, from the stored probes",
                       description="Print each word's guess at every layer of the stored probes.")
    q.add_argument("--model", choices=FAMILIES, required=True)
    q.add_argument("--task", choices=probe_data.TASKS, required=True)
    q.add_argument("--source", default=None, help="embedded (default), a SavedModel folder or a TF Hub handle")
    q.add_argument("--json", action="store_true", help="one JSON object per sentence, one a line")
    q.add_argument("sentences", nargs="+", metavar="SENTENCE")
    q.set_defaults(fn=cmd_probe)


def _models(args) -> list[tuple[str, str]]:
    families = args.model or list(FAMILIES)
    if args.source and len(families) > 1:
        raise ValueError("--source needs a single --model")
    return [(f, args.source or sources.default_source(f)) for f in families]


def progress_bar(label: str, width: int = 30, out=None):
    """A progress callback drawing ``[#####-----]  45% text`` on stderr: redrawn in place on
    a terminal, a line every tenth otherwise."""
    out = out or sys.stderr
    tty = out.isatty()
    state = {"tenth": -1, "start": time.perf_counter()}

    def report(fraction: float, text: str) -> None:
        fraction = min(1.0, max(0.0, fraction))
        filled = int(round(width * fraction))
        line = f"{label} [{'#' * filled}{'-' * (width - filled)}] {fraction:4.0%} {text}"
        if tty:
            out.write("\r" + line[:119].ljust(119) + ("\n" if fraction >= 1 else ""))
            out.flush()
        elif int(fraction * 10) > state["tenth"]:
            state["tenth"] = int(fraction * 10)
            print(f"{line} ({time.perf_counter() - state['start']:.0f} s)", file=out, flush=True)

    return report


def cmd_train(args) -> int:
    from lab import models

    store = probes.default_store()
    for family, source in _models(args):
        if probes.is_stored(family, source, store):
            print(f"{FAMILY_NAMES[family]} ({source}): probes already stored in {store.folder}")
            continue
        model = models.load(family, source)
        t0 = time.perf_counter()
        found, trained = probes.train_and_store(model, store, progress=progress_bar(FAMILY_NAMES[family]))
        where = f"stored in {store.folder}" if probes.is_stored(family, source, store) else \
            "not stored (the model has no files to key them by, or the folder cannot be written)"
        print(f"{model.label}: probes trained in {time.perf_counter() - t0:.0f} s, {where}")
        print("\n".join(probes.report_lines(found)))
    return 0


def cmd_report(args) -> int:
    missing = 0
    for family, source in _models(args):
        found = probes.read(family, source)
        if found is None:
            print(f"{FAMILY_NAMES[family]} ({source}): no stored probes; make them with: "
                  f"{probes.train_command(family, source)}", file=sys.stderr)
            missing += 1
            continue
        print(f"{found.label}: held-out accuracy per task and layer, with 95 % intervals over test sentences "
              f"({probes.BOOTSTRAP} resamples)")
        print("\n".join(probes.report_lines(found)))
        for task in found.tasks:
            print(probes.summary(found, task))
        print()
    return 1 if missing else 0


def cmd_probe(args) -> int:
    source = args.source or sources.default_source(args.model)
    found = probes.read(args.model, source)
    if found is None:
        print(f"error: {FAMILY_NAMES[args.model]} ({source}) has no stored probes; make them with: "
              f"{probes.train_command(args.model, source)}", file=sys.stderr)
        return 2
    from lab import models

    model = models.load(args.model, source)
    for n, text in enumerate(args.sentences, 1):
        try:
            grid = probes.live(found, model, text, args.task)
        except ValueError as exc:
            print(f"error: sentence {n}: {exc}", file=sys.stderr)
            return 2
        if args.json:
            print(json.dumps(grid.as_json(args.model), ensure_ascii=False))
        else:
            print("\n".join(guess_lines(grid)) + ("\n" if n < len(args.sentences) else ""))
    return 0


def guess_lines(grid: probes.Guesses) -> list[str]:
    """The grid as text: a row per word, a column per layer, ``LABEL 0.91`` or ``-`` outside."""
    labels, conf = grid.labels, grid.confidence
    cells = [[f"{lab} {conf[t, n]:.2f}" if lab is not None else "-" for n, lab in enumerate(row)]
             for t, row in enumerate(labels)]
    head = ["word", *grid.layer_names]
    width = [max(len(head[0]), *(len(w) for w in grid.words))] + [
        max(len(head[n + 1]), *(len(c[n]) for c in cells)) for n in range(len(grid.layer_names))]
    line = lambda parts: "  ".join(p.ljust(w) for p, w in zip(parts, width)).rstrip()  # noqa: E731
    return [f"{probe_data.TASK_NAMES[grid.task]}: each word's guess at every layer (- : outside the task's classes)",
            line(head)] + [line([w, *c]) for w, c in zip(grid.words, cells)]
