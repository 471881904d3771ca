"""The app's import graph, read from the source: no circles, and imports flow one way.

Pages use ``ui`` and ``lab``, ``ui`` uses ``lab``, ``lab`` uses neither (nor Streamlit),
and only the figure builders import Plotly (STYLE.md, "The house"). Every ``import`` in
app.py, app_pages/, ui/ and lab/ counts, those inside functions too: a deferred import still
runs, just later, and a circle through one is still a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ui", "lab")  # folders of modules; app_pages/ holds scripts (no __init__.py)


# Modules outside lab.figures that import Plotly, and why each may.
PLOTLY_ALLOWED = {
    # shows the figures lab.figures builds (st.plotly_chart); imports go.Figure for its
    # type annotations only and builds no Figure
    "ui.charts": "go.Figure in annotations",
    # serializes one figure of each kind as st.plotly_chart does (plotly.io.to_json), so
    # that Plotly's first-use validation happens in the warm-up, not in a first view
    "ui.server.warmup": "plotly.io in the warm-up",
}


# The code that drives the app from outside: the shared harness, the benchmarks, the tests
# and the tools. Tests and benchmarks share only the harness, never each other's modules.
OUTSIDE = ("harness", "bench", "tests", "tools")


def project_files(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Module name -> file: app.py, app_pages/*.py and every module under ``packages``
    (by default ui/ and lab/)."""
    files = {"app": root / "app.py"} if (root / "app.py").is_file() else {}
    files |= {f"app_pages.{p.stem}": p for p in sorted((root / "app_pages").glob("*.py"))}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a ``from ... import`` reads from (``from . import x`` in
    ``lab.models.bert`` -> ``lab.models``)."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _parents(name: str) -> list[str]:
    """``lab.models.bert`` -> ``["lab", "lab.models"]``: the packages importing it runs first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def imports(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module -> project modules it imports, module -> other top-level packages it imports).

    ``import a.b`` and ``from a.b import c`` import ``a`` and ``a.b`` (a package's
    ``__init__``), and ``a.b.c`` where that is a module. A module's own packages are left
    out (Python imports them before the module itself), except where it takes names
    defined in their ``__init__`` (``from lab.models import load`` in ``lab.models.bert``).
    """
    files = project_files(root, packages)
    project = {"app", "app_pages", *packages}
    graph: dict[str, set[str]] = {}
    external: dict[str, set[str]] = {}
    for module, path in files.items():
        own = set(_parents(module))
        edges, others = set(), set()

        def add(target: str, named: bool = False) -> None:
            """``target`` and its packages; ``named``: ``target``'s own names are used."""
            for name in _parents(target) + [target]:
                if name in files and name != module and (name not in own or (named and name == target)):
                    edges.add(name)

        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in project:
                        add(alias.name, named=True)
                    else:
                        others.add(alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node, module, path.name == "__init__.py")
                top = base.split(".")[0]
                if not node.level and top not in project:
                    if top != "__future__":
                        others.add(top)
                    continue
                submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in files]
                add(base, named=len(submodules) < len(node.names))  # some names come from base itself
                for name in submodules:
                    add(name)
        graph[module], external[module] = edges, others
    return graph, external


def cycles(graph: dict[str, set[str]], limit: int = 50) -> list[list[str]]:
    """The elementary cycles of ``graph`` (each from its smallest module, in name order),
    at most ``limit`` of them: a path ``[a, b, c]`` stands for a -> b -> c -> a."""
    found: list[list[str]] = []
    for start in sorted(graph):
        stack = [(start, [start])]
        while stack and len(found) < limit:
            node, path = stack.pop()
            for nxt in sorted(graph.get(node, ()), reverse=True):
                if nxt == start:
                    found.append(path)
                elif nxt > start and nxt not in path:
                    stack.append((nxt, path + [nxt]))
    return sorted(found, key=lambda c: (len(c), c))


def _layer(module: str) -> str:
    return "app_pages" if module == "app" else module.split(".")[0]


def test_the_graph_reads_every_kind_of_import(tmp_path):
    """On a small tree: imports inside functions, relative ones, ``from pkg import module``,
    a package's ``__init__``, and a module's own packages."""
    files = {
        "app.py": "from ui import frame\n",
        "app_pages/a.py": "def f():\n    import lab.models.bert\n",
        "ui/__init__.py": "",
        "ui/frame.py": "from . import state\nfrom .state import get\nimport streamlit as st\n",
        "ui/state.py": "from __future__ import annotations\nimport os\n",
        "lab/__init__.py": "",
        "lab/models/__init__.py": "def load():\n    from lab.models import bert\n",
        "lab/models/bert.py": "from lab.models import layers as nn\nfrom ..tokenize import split\n"
                              "from lab.models import SOMETHING\nimport plotly.graph_objects as go\n",
        "lab/models/layers.py": "",
        "lab/tokenize.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph, external = imports(tmp_path)
    assert graph["app"] == {"ui", "ui.frame"}
    assert graph["app_pages.a"] == {"lab", "lab.models", "lab.models.bert"}
    assert graph["ui.frame"] == {"ui.state"} and external["ui.frame"] == {"streamlit"}
    assert external["ui.state"] == {"os"}
    assert graph["lab.models"] == {"lab.models.bert"}
    # layers and tokenize; lab.models itself only for the name it defines (SOMETHING)
    assert graph["lab.models.bert"] == {"lab.models.layers", "lab.tokenize", "lab.models"}
    assert external["lab.models.bert"] == {"plotly"}
    assert cycles(graph) == [["lab.models", "lab.models.bert"]]


def test_the_real_graph_is_read():
    """The graph of this tree has the edges it must have (a parse that silently found
    nothing would pass every test below)."""
    graph, external = imports()
    assert {"app_pages.bert", "ui.frame", "lab.figures", "lab.models"} <= set(graph)
    assert "ui.charts" in graph["app_pages.bert"] and "lab.figures" in graph["ui.charts"]
    assert "lab.models.bert_io" in graph["lab.models"]  # inside load()
    assert "streamlit" in external["ui.frame"] and "plotly" in external["lab.figures.layout"]


def test_no_import_circles():
    graph, _ = imports()
    found = cycles(graph)
    assert not found, "import circles:\n" + "\n".join(" -> ".join(c + c[:1]) for c in found)


def test_no_import_circles_anywhere():
    """The app, the harness, the benchmarks, the tests and the tools together: no circle."""
    graph, _ = imports(packages=PACKAGES + OUTSIDE)
    assert {"harness.served", "bench.browser", "tests.browser"} <= set(graph)
    found = cycles(graph)
    assert not found, "import circles:\n" + "\n".join(" -> ".join(c + c[:1]) for c in found)


@pytest.mark.parametrize("layer, forbidden", [("bench", {"tests"}), ("tools", {"tests", "bench"}),
                                              ("tests", {"bench"}), ("harness", {"tests", "bench", "tools"})])
def test_tests_and_benchmarks_share_only_the_harness(layer, forbidden):
    graph, _ = imports(packages=PACKAGES + OUTSIDE)
    assert "harness.served" in graph["tests.browser"] and "harness.chromium" in graph["bench.browser"]
    wrong = sorted(f"{m} -> {t}" for m, targets in graph.items() if _layer(m) == layer
                   for t in targets if _layer(t) in forbidden)
    assert not wrong, f"{layer} imports {' or '.join(sorted(forbidden))}: " + ", ".join(wrong)


@pytest.mark.parametrize("layer, forbidden", [("lab", {"ui", "app_pages"}), ("ui", {"app_pages"})])
def test_imports_flow_from_pages_to_ui_to_lab(layer, forbidden):
    graph, _ = imports()
    wrong = sorted(f"{m} -> {t}" for m, targets in graph.items() if _layer(m) == layer
                   for t in targets if _layer(t) in forbidden)
    assert not wrong, f"{layer} imports {' or '.join(sorted(forbidden))}: " + ", ".join(wrong)


def test_ui_server_only_calls_down():
    """``ui.server`` (boot, warm-up, routes) sits above the rest of ``ui``: it may import
    ``ui`` and ``lab``; nothing else in ``ui`` imports it."""
    graph, _ = imports()
    assert "ui.model_cache" in graph["ui.server.warmup"]
    wrong = sorted(f"{m} -> {t}" for m, targets in graph.items() if _layer(m) == "ui" and not m.startswith("ui.server")
                   for t in targets if t == "ui.server" or t.startswith("ui.server."))
    assert not wrong, "ui imports ui.server: " + ", ".join(wrong)


def test_lab_never_imports_streamlit():
    _, external = imports()
    wrong = sorted(m for m, names in external.items() if _layer(m) == "lab" and "streamlit" in names)
    assert not wrong, f"lab modules importing streamlit: {wrong}"


def test_only_the_figure_builders_import_plotly():
    _, external = imports()
    builders = {m for m in external if m == "lab.figures" or m.startswith("lab.figures.")}
    wrong = sorted(m for m, names in external.items() if "plotly" in names and m not in builders | set(PLOTLY_ALLOWED))
    assert not wrong, f"modules importing plotly outside lab.figures: {wrong} (build figures in lab.figures)"
    stale = sorted(m for m in PLOTLY_ALLOWED if "plotly" not in external.get(m, ()))
    assert not stale, f"PLOTLY_ALLOWED names modules that no longer import plotly: {stale}"


def test_the_app_never_imports_the_training_toolchain():
    """ELMo-mini's training (``lab.elmo_training``) is offline work: the app reads what it
    wrote to ``lab/assets/elmo_mini/``, and never pulls its code into a server."""
    graph, _ = imports()
    training = "lab.elmo_training"
    wrong = sorted(m for m, names in graph.items() if not m.startswith(training)
                   and any(n == training or n.startswith(training + ".") for n in names))
    assert not wrong, f"modules importing the training toolchain: {wrong}"
