"""`python -m lab fetch`, offline: a loopback server answers the hub's compressed downloads.

``hub.resolve`` asks ``HANDLE?tf-hub-format=compressed`` for a ``.tar.gz`` of the SavedModel
folder; ``HubServer`` answers that for tiny SavedModels built here (BERT preprocessor and
encoder from ``tests/hub_models.py``, an ELMo with the v3 signatures, a plain module), 404
for anything else, and can stall or trickle to test the timeouts.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import io
import os
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from lab import fetch, sources
from lab.__main__ import main
from tests.conftest import ROOT

SERVED = ("bert/encoder/1", "bert/preprocess/1", "elmo/1", "plain/1")


def tarball(folder: Path) -> bytes:
    """The SavedModel folder as TF Hub serves it: a .tar.gz of its contents."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(str(folder), arcname=".")
    return buf.getvalue()


class HubServer:
    """A TF Hub on 127.0.0.1: ``GET /<name>?tf-hub-format=compressed`` -> the tarball.

    A name in ``moved`` redirects to another name. ``/slow`` sends nothing for 3 s; ``/trickle``
    sends a byte every 0.1 s for 3 s. The server stops on leaving the ``with`` block, or by itself after 5 minutes.
    """

    def __init__(self, archives: dict[str, bytes], moved: dict[str, str] | None = None):
        self.archives, self.moved, self.requests = archives, moved or {}, []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append(self.path)
                name, _, query = self.path.lstrip("/").partition("?")
                if name == "slow":
                    time.sleep(3)
                elif name == "trickle":
                    self.send_response(200)
                    self.send_header("Content-Length", "1000")
                    self.end_headers()
                    for _ in range(30):
                        self.wfile.write(b"\0")
                        self.wfile.flush()
                        time.sleep(0.1)
                elif name in server.moved:  # as tfhub.dev now sends its handles on to Kaggle
                    self.send_response(302)
                    self.send_header("Location", f"/{server.moved[name]}?{query}")
                    self.end_headers()
                elif name in server.archives and query == "tf-hub-format=compressed":
                    body = server.archives[name]
                    self.send_response(200)
                    self.send_header("Content-Type", "application/x-tar")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                else:
                    self.send_error(404)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True

    def handle(self, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/{name}"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        self._bound = threading.Timer(300, self.httpd.shutdown)
        self._bound.daemon = True
        self._bound.start()
        return self

    def __exit__(self, *exc):
        self._bound.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()


class _Plain(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def __call__(self, x):
        return 2.0 * x


def run_cli(*argv: str) -> tuple[int, str, str]:
    """``python -m lab ...`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def env_from(stdout: str) -> dict[str, str]:
    """The ``export NAME=value`` lines the command printed."""
    lines = [line.strip()[len("export "):] for line in stdout.splitlines() if line.strip().startswith("export ")]
    return dict(line.split("=", 1) for line in lines)


@pytest.fixture(scope="module")
def folders(tmp_path_factory, hub_bert_dirs):
    """The SavedModel folders the server serves, by name."""
    from lab.models.elmo import ElmoConfig, ElmoModel
    from lab.models.elmo_io import export_saved_model

    root = tmp_path_factory.mktemp("served")
    enc_dir, pre_dir, _ = hub_bert_dirs
    elmo_dir = export_saved_model(ElmoModel(ElmoConfig.tiny(), seed=3), root / "elmo")
    tf.saved_model.save(_Plain(), str(root / "plain"))
    return dict(zip(SERVED, (enc_dir, pre_dir, elmo_dir, root / "plain")))


@pytest.fixture(scope="module")
def fetched(folders, tmp_path_factory):
    """`python -m lab fetch` (a fresh process, as a teacher runs it) of the four served
    models plus a missing one; the server is gone afterwards."""
    cache = tmp_path_factory.mktemp("classroom") / "hub"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TFHUB_", "LAB_", "TF_CPP"))}
    with HubServer({name: tarball(path) for name, path in folders.items()}) as server:
        handles = {name: server.handle(name) for name in (*SERVED, "missing/1")}
        res = subprocess.run([sys.executable, "-m", "lab", "fetch", "--dir", str(cache), *handles.values()],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return {"rc": res.returncode, "out": res.stdout, "err": res.stderr, "cache": cache, "handles": handles,
            "requests": list(server.requests)}


def module_dir(cache: Path, handle: str) -> Path:
    return cache / hashlib.sha1(handle.encode("utf8")).hexdigest()


def test_fetch_fills_the_tf_hub_cache_layout(fetched, folders):
    cache, handles = fetched["cache"], fetched["handles"]
    expected = set()
    for name in SERVED:
        folder = module_dir(cache, handles[name])
        assert (folder / "saved_model.pb").read_bytes() == (folders[name] / "saved_model.pb").read_bytes()
        assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == \
            sorted(p.relative_to(folders[name]) for p in folders[name].rglob("*"))
        assert handles[name] in Path(f"{folder}.descriptor.txt").read_text()
        expected |= {folder.name, f"{folder.name}.descriptor.txt"}
    assert {p.name for p in cache.iterdir()} == expected  # no lock or temporary files left
    assert sorted(fetched["requests"]) == sorted(f"/{n}?tf-hub-format=compressed" for n in (*SERVED, "missing/1"))


def test_fetch_reports_what_each_is_and_its_size(fetched, folders):
    out, handles, cache = fetched["out"], fetched["handles"], fetched["cache"]
    sizes = {name: fetch.folder_size(module_dir(cache, handles[name])) for name in SERVED}
    for name in SERVED:
        assert sizes[name] == fetch.folder_size(folders[name]) > 0
        assert f"{fetch.readable_size(sizes[name])} on disk, downloaded in" in out
    lines = out.splitlines()

    def report(name: str) -> str:  # the check's line under the line naming the handle
        at = next(i for i, line in enumerate(lines) if line.strip().endswith(handles[name]) and "[" not in line)
        return lines[at] + "\n" + lines[at + 1]

    assert "BERT encoder" in report("bert/encoder/1")
    assert (f"ok, load_bert runs it with {handles['bert/preprocess/1']}: 2 layers of width 16"
            in report("bert/encoder/1"))
    assert "BERT preprocessor" in report("bert/preprocess/1")
    assert "ok, hub.load runs its tokenize (3 pieces for 'The bank.')" in report("bert/preprocess/1")
    assert "ok, load_elmo runs it: 3 layers of width 32" in report("elmo/1")
    assert "ok, hub.load reads it (family unknown" in report("plain/1")
    assert f"{fetch.readable_size(sum(sizes.values()))} on disk in {cache} (4 of 5 handle(s) ready)" in out


def test_a_missing_handle_fails_alone_with_one_line(fetched):
    missing = fetched["handles"]["missing/1"]
    assert fetched["rc"] == 1
    said = (f"Could not download the model from {missing}: there is no model at that address "
            "(HTTP 404 Not Found). Check the handle (copy it from the model's page), or pick the embedded model.")
    assert fetched["err"].splitlines() == [f"error: {said}"]  # said once, and nothing else on stderr
    assert said not in fetched["out"] and "FAILED" not in fetched["out"]
    assert fetched["out"].count("  ok, ") == 4
    assert not module_dir(fetched["cache"], missing).exists()


def test_printed_environment_loads_the_models_with_no_network(fetched, folders, monkeypatch):
    """The server is gone: the printed lines alone must bring up both families."""
    from lab.models.bert_io import load_bert
    from lab.models.elmo_io import load_elmo

    handles = fetched["handles"]
    env = env_from(fetched["out"])
    assert env == {"TFHUB_CACHE_DIR": str(fetched["cache"]), "LAB_ELMO_SOURCE": handles["elmo/1"],
                   "LAB_BERT_SOURCE": handles["bert/encoder/1"],
                   "LAB_BERT_PREPROCESS": handles["bert/preprocess/1"]}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # A cached handle is read from disk: the short timeout for remote handles must not apply.
    monkeypatch.setenv("LAB_LOAD_TIMEOUT", "0.001")
    sentences = ["The central bank raised rates.", "We sat on the river bank."]
    bert = load_bert().run(sentences)
    ref = load_bert(str(folders["bert/encoder/1"]), str(folders["bert/preprocess/1"])).run(sentences)
    assert bert.tokens == ref.tokens and "bank" in bert.tokens[0]
    np.testing.assert_array_equal(bert.layers, ref.layers)
    words = [["The", "bank", "raised", "rates", "."], ["We", "sat", "on", "the", "bank"]]
    elmo = load_elmo().run(words)
    np.testing.assert_array_equal(elmo.layers, load_elmo(str(folders["elmo/1"])).run(words).layers)
    assert elmo.layers.shape == (3, 2, 5, 32)
    import tensorflow_hub as hub

    assert hub.resolve(handles["elmo/1"]) == str(module_dir(fetched["cache"], handles["elmo/1"]))


def test_fetching_again_reads_the_folder_and_needs_no_server(fetched):
    handles = [fetched["handles"][n] for n in SERVED]
    before = os.environ.get("TFHUB_CACHE_DIR")
    rc, out, err = run_cli("fetch", "--dir", str(fetched["cache"]), *handles)
    assert (rc, err) == (0, "")
    assert os.environ.get("TFHUB_CACHE_DIR") == before  # the command put the setting back
    assert out.count("already there, not downloaded again") == 4 and out.count("  ok, ") == 4
    assert "export LAB_ELMO_SOURCE=" + fetched["handles"]["elmo/1"] in out


def test_a_stalled_or_endless_download_gives_up(tmp_path):
    with HubServer({}) as server:
        slow, trickle = server.handle("slow"), server.handle("trickle")
        items = fetch.fetch([slow, trickle], tmp_path, timeout=0.5, max_time=1.0, out=io.StringIO())
    assert [f.error for f in items] == [
        sources.failure_sentence(slow, TimeoutError(), 0.5),
        sources.failure_sentence(trickle, fetch.TooLong("the download took longer than 1 s (--max-time)"))]
    assert items[0].error.startswith(f"Could not download the model from {slow}: no answer within 0.5 s.")
    assert list(tmp_path.iterdir()) == []  # the hub's lock and temporary folder are cleaned up


def test_a_redirected_handle_and_a_stale_lock(folders, tmp_path):
    """tfhub.dev redirects to Kaggle; a fetch killed earlier leaves the hub's lock file behind."""
    with HubServer({"plain/1": tarball(folders["plain/1"])}, moved={"tfhub/plain/1": "plain/1"}) as server:
        handle = server.handle("tfhub/plain/1")
        Path(f"{module_dir(tmp_path, handle)}.lock").write_text("otherhost.123.deadbeef")
        [item] = fetch.fetch([handle], tmp_path, timeout=0.5, out=io.StringIO())
    assert (item.error, item.kind) == ("", fetch.UNKNOWN)
    assert (module_dir(tmp_path, handle) / "saved_model.pb").exists()
    assert server.requests == ["/tfhub/plain/1?tf-hub-format=compressed", "/plain/1?tf-hub-format=compressed"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [module_dir(tmp_path, handle).name, f"{module_dir(tmp_path, handle).name}.descriptor.txt"])


TENSORFLOW_LINES = ("onednn", "cuda", "tensorflow binary", "absl::", "cpu_feature_guard")


def cli(*argv: str) -> subprocess.CompletedProcess:
    """``python -m lab ...`` in a fresh process, as a person runs it (TensorFlow not yet loaded)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TFHUB_", "LAB_", "TF_CPP"))}
    return subprocess.run([sys.executable, "-m", "lab", *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_not_a_url_fails_once_in_words_and_nothing_is_checked(tmp_path):
    res = cli("fetch", "--dir", str(tmp_path), "/models/elmo")
    assert res.returncode == 1
    said = ("error: Cannot fetch /models/elmo: it is not a web address. Give a TF Hub or Kaggle model's "
            "https:// handle; a local folder needs no fetching.")
    assert res.stderr.splitlines() == [said]  # once, and no TensorFlow start-up lines around it
    assert "/models/elmo: it is not" not in res.stdout
    assert "Checking that each loads" not in res.stdout  # nothing was fetched, so nothing is checked
    assert "export" not in res.stdout and "(0 of 1 handle(s) ready)" in res.stdout


def test_verbose_shows_tensorflow_and_the_full_error(tmp_path):
    res = cli("fetch", "--dir", str(tmp_path), "--verbose", "/models/elmo")
    assert res.returncode == 1
    assert "Traceback" in res.stderr and "lab.fetch: /models/elmo failed" in res.stderr
    assert res.stderr.count("error: Cannot fetch /models/elmo") == 1


def test_the_fetch_run_prints_no_tensorflow_lines(fetched):
    assert not [line for line in fetched["err"].splitlines() if any(t in line.lower() for t in TENSORFLOW_LINES)]


def test_default_handles_are_the_presets_and_an_encoder_brings_its_preprocessor():
    elmo = next(p for p in sources.PRESETS if p.family == "elmo")
    base = next(p for p in sources.PRESETS if "L-12_H-768" in p.handle)
    assert fetch.default_handles() == [elmo.handle, base.handle, base.preprocess]
    small = next(p for p in sources.PRESETS if "small_bert" in p.handle)
    assert fetch.with_preprocessors([small.handle]) == [small.handle, small.preprocess]
    assert fetch.with_preprocessors([small.preprocess, small.handle]) == [small.preprocess, small.handle]


def test_readable_size():
    assert [fetch.readable_size(n) for n in (950, 12_345, 357_612_345, 1_203_000_000)] == \
        ["950 B", "12.3 kB", "357.6 MB", "1.20 GB"]
