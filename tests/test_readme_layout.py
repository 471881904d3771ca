"""The developers' guide's layout section (docs/developers.md, linked from the README)
matches the tree: every folder and module it names exists where it puts it (indentation
nests an entry in the folder above it)."""

import re

from tests.conftest import ROOT

GUIDE = (ROOT / "docs" / "developers.md").read_text(encoding="utf-8")


def named_paths() -> list[str]:
    """The paths the layout block names: its first column (``a/``, ``b.py``), and modules
    listed together (``quiz.py, errors.py``), each under the folders that enclose it."""
    block = GUIDE.split("## Layout", 1)[1].split("```", 2)[1]
    folders: dict[int, str] = {}
    paths = []
    for line in block.splitlines():
        entry = re.match(r"( *)([^\s,]+(?:, [^\s,]+)*)", line)
        if not entry or not re.search(r"(/|\.py,?)$", entry.group(2).split()[0]):
            continue  # a line that goes on describing the entry above
        depth = len(entry.group(1))
        parent = "".join(folders[d] for d in sorted(folders) if d < depth)
        names = [n.strip(",") for n in entry.group(2).split(", ")] if "," in entry.group(2) else [entry.group(2)]
        for name in names:
            paths.append(parent + name)
        folders = {d: f for d, f in folders.items() if d < depth}
        if names[0].endswith("/"):
            folders[depth] = names[0]
    return paths


def test_every_path_in_the_layout_exists():
    paths = named_paths()
    assert {"app.py", "app_pages/", "ui/server/", "lab/models/", "lab/elmo_training/"} <= set(paths), paths
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"docs/developers.md's layout names what the tree does not hold: {missing}"
