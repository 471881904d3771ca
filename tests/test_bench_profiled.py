"""bench/profiled_server.py wraps parts of the app by name: every name it wraps must still
exist, or bench/server_cpu.py's server fails on its first script run."""

import json
import os
import subprocess
import sys

from tests.conftest import ROOT

WRAP_ALL = """
import importlib, json, sys
sys.path.insert(0, "bench")
import profiled_server
mods = ["lab.models.bert_io", "lab.models.elmo_io", "lab.models.transformer", "lab.views", "lab.elmo_vs_bert",
        "lab.reference", "lab.figures"]
for m in mods:
    importlib.import_module(m)
profiled_server._install()
from lab.models.bert_io import EmbeddedBert
from lab.models.elmo_io import ElmoRunner
from lab import figures, views
print(json.dumps([getattr(f, "__timed__", False) for f in (EmbeddedBert.run, ElmoRunner.run, figures.heatmap,
                                                            views.word_pair)]))
"""


def test_every_part_it_times_is_still_there():
    done = subprocess.run([sys.executable, "-c", WRAP_ALL], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [True, True, True, True]
