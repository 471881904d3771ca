"""What the benchmarks' command lines share: the pages they time (``--pages``) and the options
every benchmark takes (``parser``). The served app and the protocol client are
``harness.served``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


PAGES = ("bert", "elmo", "attention")  # the pages with click targets (README): measured by default
EXTRA_PAGES = ("compare",)  # ELMo vs BERT, on request (--pages)


def add_pages_option(ap, help: str) -> None:
    """``--pages``: comma-separated page names of ``PAGES`` and ``EXTRA_PAGES`` (default: ``PAGES``)."""
    def pages(value: str) -> list[str]:
        names = value.split(",")
        if unknown := set(names) - set(PAGES + EXTRA_PAGES):
            raise argparse.ArgumentTypeError(f"no page {', '.join(sorted(unknown))} "
                                             f"(pages: {', '.join(PAGES + EXTRA_PAGES)})")
        return names

    ap.add_argument("--pages", type=pages, default=list(PAGES), help=f"{help}, comma-separated (default: %(default)s)")


def parser(doc: str, **counts: int):
    """The command line every benchmark shares: ``--NAME N`` for each count (its default),
    ``--root`` (the checkout to serve, e.g. a worktree of an older commit) and ``--python``."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    for name, default in counts.items():
        ap.add_argument(f"--{name}", type=int, default=default)
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout to serve (default: this one)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that serves it")
    return ap
