"""Every repository path a document or a configuration file's comment names exists.

A path here is a word whose first part is one of the repository's top-level files or
folders (``ui/memory.py``, ``deploy/README.md``, ``lab/assets/elmo_mini/``), read
from the repository's root or, for a Markdown link, from the document's folder. Paths
outside the repository (``/etc/context-lab.env``, ``~/.cache/context-lab``) are not its
business; ``/opt/context-lab/...`` is where deploy/ installs the repository, so it counts
as the repository. bench/HISTORY.md is a log: it names files as they were when it was
written, and is left out.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

INSTALLED = "/opt/context-lab/"  # deploy/README.md's checkout
LOGS = {"bench/HISTORY.md"}

# the documents, and the configuration files whose comments (lines from their comment sign on) are read
DOCS = sorted(p for p in ROOT.glob("**/*.md") if ".venv" not in p.parts and "node_modules" not in p.parts
              and ".pytest_cache" not in p.parts and p.relative_to(ROOT).as_posix() not in LOGS)
CONFIGS = {".streamlit/config.toml": "#", "Makefile": "#", "pyproject.toml": "#", "requirements.txt": "#",
           "requirements-dev.txt": "#", "requirements-models.txt": "#", ".ci/run": "#",
           "deploy/nginx/context-lab.conf": "#", "deploy/systemd/context-lab@.service": "#"}

WORD = re.compile(r"[A-Za-z0-9_./@~-]+")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def top_level() -> set[str]:
    return {p.name for p in ROOT.iterdir() if p.name not in (".git", ".venv", ".pytest_cache")}


def named_paths(text: str) -> set[str]:
    """The words of ``text`` that look like repository paths (relative to the root)."""
    tops = top_level()
    found = set()
    for word in WORD.findall(text):
        word = word.rstrip(".,:;)")
        if word.startswith(INSTALLED):
            word = word[len(INSTALLED):]
        if "/" not in word or word.startswith(("/", "~", "./", "../")) or "*" in word:
            continue
        if word.split("/", 1)[0] in tops:
            found.add(word)
    return found


def comments(path: str, sign: str) -> str:
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    return "\n".join(line.split(sign, 1)[1] for line in lines if sign in line)


def missing_in_doc(doc: Path) -> list[str]:
    text = doc.read_text(encoding="utf-8")
    missing = [p for p in named_paths(text) if not (ROOT / p).exists() and not (doc.parent / p).exists()]
    for target in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        if not (doc.parent / target).resolve().exists():
            missing.append(target)
    return sorted(set(missing))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_document_names_only_paths_that_exist(doc):
    assert not missing_in_doc(doc), f"{doc.relative_to(ROOT)} names what the repository does not hold"


@pytest.mark.parametrize("path", sorted(CONFIGS))
def test_a_config_comment_names_only_paths_that_exist(path):
    missing = sorted(p for p in named_paths(comments(path, CONFIGS[path])) if not (ROOT / p).exists())
    assert not missing, f"{path}'s comments name what the repository does not hold: {missing}"


def test_the_check_sees_a_stale_path(tmp_path):
    """The two stale comments .streamlit/config.toml had: the check finds them."""
    assert named_paths("swept out (ui/server/memory.py), and ui/warmup.py freezes") == {"ui/server/memory.py",
                                                                                         "ui/warmup.py"}
    assert not (ROOT / "ui/server/memory.py").exists() and not (ROOT / "ui/warmup.py").exists()
    assert named_paths("/etc/context-lab.env and ~/.cache/context-lab and /opt/context-lab/deploy/README.md") == \
        {"deploy/README.md"}
    doc = tmp_path / "x.md"
    doc.write_text("[gone](nothing-here.md) and [there](https://example.org/a.md)\n")
    assert missing_in_doc(doc) == ["nothing-here.md"]
