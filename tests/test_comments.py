"""Comments and docstrings in the app's code say what holds and why, not what a run
measured: a timing quoted there goes stale with the next machine or commit, so the figures
live in bench/HISTORY.md and the code names the constraint."""

from __future__ import annotations

import ast
import io
import re
import tokenize

from tests.conftest import ROOT

FOLDERS = ("lab", "ui", "app_pages")
# a duration in milliseconds, "N-core", or "X instead of Y" with numbers
TIMING = re.compile(r"\d ?ms\b|\d-core\b|\d+(\.\d+)? (ms |s |MB )?instead of \d")


def prose(path) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring in ``path``."""
    source = path.read_text(encoding="utf-8")
    found = [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline)
             if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                first = node.body[0].lineno
                found += [(first + i, line) for i, line in enumerate(doc.splitlines())]
    return found


def test_no_comment_or_docstring_quotes_a_timing():
    quoted = [f"{path.relative_to(ROOT)}:{line}: {text.strip()}" for folder in FOLDERS
              for path in sorted((ROOT / folder).rglob("*.py")) for line, text in prose(path) if TIMING.search(text)]
    assert not quoted, "move the figure to bench/HISTORY.md, keep the reason:\n" + "\n".join(quoted)


def test_the_check_finds_a_timing(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""Fast: 52 ms instead of 80."""\n\nX = 1  # about 0.4 s on the 2-core machine\n')
    assert sorted(line for line, text in prose(sample) if TIMING.search(text)) == [1, 3]
