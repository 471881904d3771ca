"""lab.locks: processes and threads sharing a cache folder compute each missing entry once.

Each worker counts its computations by appending a line to a file: the count the tests
check is of calls of the compute function, in whichever process they ran.
"""

import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from lab import stored
from lab.locks import entry_lock, lock_path
from tests.conftest import ROOT, SMALL_CORPUS

# A worker process: waits until every worker has started (a file each in ``ready``), then
# asks the run store for one run, computing it slowly (a random value: only the computing
# worker's can be read by the others) and counting each computation in ``count``.
RUN_WORKER = """
import json, os, sys, time
from pathlib import Path
from lab import stored

folder, key, count, ready, workers, seconds = sys.argv[1:7]
Path(ready, str(os.getpid())).touch()
while len(os.listdir(ready)) < int(workers):
    time.sleep(0.01)

def compute():
    with open(count, "a") as f:
        f.write(f"{os.getpid()}\\n")
    print("computing", flush=True)
    time.sleep(float(seconds))
    return {"value": os.urandom(8).hex()}

out = stored._read_or_compute(key, compute, stored.RunStore(folder), keep=True)
print(json.dumps(out), flush=True)
"""


def _env(**extra) -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), **extra)


def _start(script: str, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], cwd=ROOT, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _lines(path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_threads_asking_for_one_entry_compute_it_once(tmp_path):
    store, calls, answers = stored.RunStore(tmp_path / "runs"), [], []

    def compute():
        calls.append(threading.get_ident())
        time.sleep(0.2)  # long enough for every other thread to be waiting
        return {"value": os.urandom(8).hex()}

    def ask():
        answers.append(stored._read_or_compute("k", compute, store, keep=True))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert len(calls) == 1
    assert len(answers) == 6 and all(a == answers[0] for a in answers)
    assert store.get("k") == answers[0]
    assert not lock_path(store._path("k")).exists(), "the lock file was left behind"


def test_processes_asking_for_one_entry_compute_it_once(tmp_path):
    count, ready = tmp_path / "count", tmp_path / "ready"
    ready.mkdir()
    workers = [_start(RUN_WORKER, tmp_path / "runs", "k", count, ready, 3, 1.0) for _ in range(3)]
    outs = [w.communicate(timeout=60) for w in workers]
    assert [w.returncode for w in workers] == [0, 0, 0], [err[-2000:] for _, err in outs]
    answers = [json.loads(out.splitlines()[-1]) for out, _ in outs]
    assert len(_lines(count)) == 1, "more than one process computed the entry"
    assert all(a == answers[0] for a in answers)
    assert stored.RunStore(tmp_path / "runs").get("k") == answers[0]
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["k.pkl"], "a lock or temporary file was left"


def test_another_entry_is_computed_while_one_is(tmp_path):
    """The lock is per entry: a process computes one while another is still computing another."""
    (tmp_path / "ready-a").mkdir()
    (tmp_path / "ready-b").mkdir()
    slow = _start(RUN_WORKER, tmp_path / "runs", "a", tmp_path / "count", tmp_path / "ready-a", 1, 600)
    try:
        assert slow.stdout.readline().strip() == "computing"
        quick = _start(RUN_WORKER, tmp_path / "runs", "b", tmp_path / "count", tmp_path / "ready-b", 1, 0)
        out, err = quick.communicate(timeout=60)
        assert quick.returncode == 0, err[-2000:]
        assert slow.poll() is None, "the first entry is still being computed"
    finally:
        slow.kill()
        slow.communicate(timeout=10)
    assert len(_lines(tmp_path / "count")) == 2


def test_a_process_killed_while_computing_leaves_no_stale_lock(tmp_path):
    count, ready, runs = tmp_path / "count", tmp_path / "ready", tmp_path / "runs"
    ready.mkdir()
    worker = _start(RUN_WORKER, runs, "k", count, ready, 1, 600)
    assert worker.stdout.readline().strip() == "computing"
    with open(lock_path(runs / "k.pkl"), "rb") as f, pytest.raises(BlockingIOError):
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)  # it holds the lock
    worker.send_signal(signal.SIGKILL)
    worker.communicate(timeout=10)
    assert lock_path(runs / "k.pkl").exists(), "a killed process cannot remove its lock file"

    done = []
    asker = threading.Thread(target=lambda: done.append(
        stored._read_or_compute("k", lambda: {"value": "after"}, stored.RunStore(runs), keep=True)))
    asker.start()
    asker.join(timeout=10)
    assert done == [{"value": "after"}], "the next process waited on the killed one's lock"
    assert stored.RunStore(runs).get("k") == {"value": "after"}


# A worker that adds 1 to the number in a file, ``times`` times, reading and writing it under
# the lock: an increment lost shows two holders at once.
ADD_WORKER = """
import sys
from pathlib import Path
from lab.locks import entry_lock

entry, times = Path(sys.argv[1]), int(sys.argv[2])
for _ in range(times):
    with entry_lock(entry):
        n = int(entry.read_text() or 0)
        entry.write_text(str(n + 1))
"""


def test_the_lock_file_removed_on_each_release_still_excludes(tmp_path):
    """Each holder removes the lock file as it lets go; a waiter that got the removed file's
    lock must take the new one, or two processes would hold the lock at once."""
    entry = tmp_path / "n"
    entry.write_text("0")
    workers = [_start(ADD_WORKER, entry, 200) for _ in range(4)]
    outs = [w.communicate(timeout=60) for w in workers]
    assert [w.returncode for w in workers] == [0] * 4, [err[-2000:] for _, err in outs]
    assert entry.read_text() == "800"
    assert not lock_path(entry).exists()


def test_a_thread_may_take_a_lock_it_holds(tmp_path):
    with entry_lock(tmp_path / "e"):
        with entry_lock(tmp_path / "e"):
            assert lock_path(tmp_path / "e").exists()
        assert lock_path(tmp_path / "e").exists(), "the inner block released the outer one's lock"
    assert not lock_path(tmp_path / "e").exists()


def test_where_no_lock_file_can_be_made_the_block_runs_unlocked(tmp_path):
    """As in a cache folder that cannot be written (here: a file where the folder should be)."""
    (tmp_path / "file").write_text("")
    ran = []
    with entry_lock(tmp_path / "file" / "e"):
        ran.append(True)
    assert ran == [True]


# Two servers' first look at the ELMo vs BERT page's part of the reference corpus, on one
# fresh cache folder: each loads the embedded BERT, waits for the other (a file each in
# ``ready``), then prepares the model's baselines and top-layer index with its
# self-similarity table. Each computation is counted by a wrapper set in this script only.
CORPUS_WORKER = """
import json, os, sys, time
from pathlib import Path
from lab import reference
from lab.models import load

cache, corpus, count, ready = sys.argv[1:5]
Store = reference.ReferenceStore

def counted(name):
    compute = getattr(Store, name)

    def wrapper(self, *args):
        with open(count, "a") as f:
            f.write(f"{name}\\n")
        return compute(self, *args)

    setattr(Store, name, wrapper)

counted("_compute_baseline")
counted("_build_index")
model = load("bert", "embedded")
Path(ready, str(os.getpid())).touch()
while len(os.listdir(ready)) < 2:
    time.sleep(0.01)
store = Store(reference.load_corpus(corpus), cache)
store.prepare(model)
base, top = store.baseline(model), len(store.baseline(model).layer_names) - 1
ix = store.index(model, top)
print(json.dumps({"values": base.values.tolist(), "mean": base.mean.tolist(), "layers": base.layer_names,
                  "index": ix.unit.tolist(), "prepared": store.prepared("bert", model.source, model.label)}))
"""


def test_two_servers_compute_the_reference_corpus_once_and_read_the_same(tmp_path):
    count, ready, cache = tmp_path / "count", tmp_path / "ready", tmp_path / "cache"
    ready.mkdir()
    workers = [_start(CORPUS_WORKER, cache, SMALL_CORPUS, count, ready) for _ in range(2)]
    outs = [w.communicate(timeout=120) for w in workers]
    assert [w.returncode for w in workers] == [0, 0], [err[-2000:] for _, err in outs]
    first, second = (json.loads(out.splitlines()[-1]) for out, _ in outs)
    assert sorted(_lines(count)) == ["_build_index", "_compute_baseline"], "both servers computed an entry"
    assert first == second and first["prepared"]
    assert np.all(np.isfinite(first["values"])) and len(first["values"]) == len(first["layers"])
    (folder,) = {p.parent for p in cache.rglob("baseline.json")}
    assert not list(folder.glob("*.lock")) and not list(folder.glob(".*.tmp")), "a lock or temporary file was left"
