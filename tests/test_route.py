"""ui.route: the modules a fresh server's sessions import one at a time."""

import ast
import sys
from pathlib import Path

from ui import route

ROOT = Path(__file__).resolve().parents[1]


def top_level_imports(path: Path) -> set[str]:
    """The modules a file imports at its top level (``from x import y`` gives x, or x.y
    where that is a module)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
            subs = {f"{node.module}.{a.name}" for a in node.names}
            names |= {s for s in subs if (ROOT / (s.replace(".", "/") + ".py")).exists()} or {node.module}
    return names


def test_the_serial_imports_cover_every_module_a_page_imports():
    ours = {"streamlit", "ui.route"}  # Streamlit is loaded before any script runs; route is where this happens
    for page in sorted((ROOT / "pages").glob("*.py")):
        missing = top_level_imports(page) - set(route.PAGE_MODULES) - ours
        assert not missing, f"{page.name} imports {sorted(missing)} outside ui.route.PAGE_MODULES"


def test_import_serially_imports_whole_modules():
    route.import_serially("json", "lab.tokenize")
    assert hasattr(sys.modules["lab.tokenize"], "word_tokens")
