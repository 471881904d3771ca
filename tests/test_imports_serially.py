"""ui.imports: the modules a fresh server's sessions import one at a time."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from ui import imports as route

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


def before_page_modules(path: Path) -> set[str]:
    """The modules a page names in its ``before_page(...)`` call (strings, or ``*MODEL_MODULES``)."""
    for node in ast.parse(path.read_text()).body:
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "before_page":
            names = set()
            for arg in call.args:
                if isinstance(arg, ast.Starred):
                    names |= set(getattr(route, arg.value.id))
                else:
                    names.add(arg.value)
            return names
    raise AssertionError(f"{path.name} never calls before_page()")


def test_the_serial_imports_cover_every_module_a_page_imports():
    ours = {"streamlit", "ui.imports"}  # Streamlit is loaded before any script runs; route is where this happens
    for page in sorted((ROOT / "app_pages").glob("*.py")):
        missing = top_level_imports(page) - set(route.PAGE_MODULES) - before_page_modules(page) - ours
        assert not missing, (f"{page.name} imports {sorted(missing)} "
                             "outside ui.imports.PAGE_MODULES and its before_page()")


def test_the_pages_modules_leave_tensorflow_out():
    """What every page imports does not import TensorFlow (5-9 s): the home page needs none,
    and the BERT page draws a stored run without it. Model modules do import it."""
    code = ("import sys; from ui import imports as route; route.import_serially(); "
            "assert 'tensorflow' not in sys.modules, 'PAGE_MODULES import TensorFlow'; "
            "import lab.tokenize, lab.vectors, lab.stored, lab.models; "
            "assert 'tensorflow' not in sys.modules, 'an output type imports TensorFlow'; "
            "route.import_serially(*route.MODEL_MODULES); assert 'tensorflow' in sys.modules")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    for page in ("bert.py", "compare.py", "home.py"):
        assert not before_page_modules(ROOT / "app_pages" / page) & {"tensorflow"}, page


def test_import_serially_imports_whole_modules():
    route.import_serially("json", "lab.tokenize")
    assert hasattr(sys.modules["lab.tokenize"], "word_tokens")


# app.py run as three sessions' runs on a server without TensorFlow (the home page, no
# warm-up): how many times each sent the hidden preload box (ui.charts.preload)
PRELOAD_RUNS = """
import json, sys
from streamlit.testing.v1 import AppTest
from ui import charts
sent, real = [], charts.preload
charts.preload = lambda: sent.append(1) or real()
counts = []
for session in range(2):
    at = AppTest.from_file("app.py", default_timeout=120).run()
    before = len(sent)
    at.run()  # a full rerun of the same session (as a sidebar change makes)
    counts.append([before, len(sent) - before, [str(e.value) for e in at.exception]])
print(json.dumps({"counts": counts, "tensorflow": "tensorflow" in sys.modules}))
"""


def test_the_preload_box_goes_to_each_session_once_while_the_server_is_cold():
    """Each browser gets the hidden chart on its session's first run (it has no chart code
    yet), and not again on that session's later runs."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), LAB_WARMUP="0")
    done = subprocess.run([sys.executable, "-c", PRELOAD_RUNS], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert not result["tensorflow"]
    first, second = result["counts"]
    assert first == [1, 0, []], "the first session: once, on its first run only"
    assert second == [2, 0, []], "a new session gets its own box"
