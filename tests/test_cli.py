"""`python -m lab info` and `python -m lab export` (the npz contract)."""

import os
import socket
import subprocess
import sys

from lab.__main__ import main
from lab.vectors import INPUT_LAYER
from tests.conftest import ROOT
from tests.specs import vectors_file


def test_export_bert_npz(tmp_path, embedded_bert):
    out = tmp_path / "v.npz"
    assert main(["export", "--model", "bert", "--out", str(out), "The bank.", "A river bank at dusk."]) == 0
    ref = embedded_bert.run(["The bank.", "A river bank at dusk."])
    z = vectors_file(out, ref)  # every array, without pickle, equal to the run's
    assert z["tokens"][0].tolist() == ["[CLS]", "the", "bank", ".", "[SEP]"] + [""] * 3
    assert z["layers"].shape == (7, 2, 8, 384) and z["attentions"].shape == (6, 2, 12, 8, 8)
    assert z["mask"].tolist()[0] == [1] * 5 + [0] * 3
    assert z["layer_names"][0] == INPUT_LAYER


def test_export_reports_bad_input(tmp_path, capsys):
    assert main(["export", "--model", "bert", "--out", str(tmp_path / "x.npz"), "  "]) == 2
    assert "empty" in capsys.readouterr().err


def test_info_lists_versions_and_sources():
    # as a person runs it: TensorFlow's log level not set, so only the command keeps it quiet
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_CPP")}
    res = subprocess.run([sys.executable, "-m", "lab", "info"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert "tensorflow" in res.stdout and "all-MiniLM-L6-v2" in res.stdout
    assert "elmo: default = embedded" in res.stdout and "https://tfhub.dev/google/elmo/3" in res.stdout
    assert not [line for line in res.stderr.splitlines()
                if any(t in line.lower() for t in ("onednn", "cuda", "tensorflow binary", "absl::"))], res.stderr


def test_an_unreachable_source_is_said_in_words(tmp_path):
    with socket.socket() as probe:  # a loopback port nothing listens on: the connection is refused at once
        probe.bind(("127.0.0.1", 0))
        handle = f"http://127.0.0.1:{probe.getsockname()[1]}/elmo/1"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_CPP")} | {"TFHUB_CACHE_DIR": str(tmp_path)}
    res = subprocess.run([sys.executable, "-m", "lab", "export", "--model", "elmo", "--source", handle,
                          "--out", str(tmp_path / "e.npz"), "The bank."], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 2
    assert res.stderr.splitlines() == [f"error: Could not download the model from {handle}: the server refused "
                                       "the connection. Run `python -m lab fetch` on a connected machine and copy "
                                       "the folder it fills (TFHUB_CACHE_DIR), or pick the embedded model."]


def test_export_elmo_npz_from_allennlp_files(tmp_path):
    from lab.models.elmo_io import load_elmo
    from lab.tokenize import split_words
    from tests.conftest import shared_fixture

    folder = shared_fixture("allennlp-elmo")
    out = tmp_path / "e.npz"
    sentences = ["The bank raised rates.", "We sat on the river bank ."]
    assert main(["export", "--model", "elmo", "--source", str(folder), "--out", str(out), *sentences]) == 0
    ref = load_elmo(str(folder)).run([split_words(s) for s in sentences])
    z = vectors_file(out, ref)  # every array, without pickle, equal to the run's
    assert z["tokens"][0].tolist() == ["The", "bank", "raised", "rates", "."] + [""] * 2
    assert z["layers"].shape == (3, 2, 7, 32)
    assert z["mask"].tolist()[0] == [1] * 5 + [0] * 2
    assert z["layer_names"].tolist() == [INPUT_LAYER, "lstm_outputs1", "lstm_outputs2"]
    assert "attentions" not in z and "input_word_ids" not in z


def test_export_embedded_elmo_npz(tmp_path):
    from lab.models.elmo_io import load_elmo
    from lab.tokenize import split_words

    out = tmp_path / "e.npz"
    sentences = ["The bank raised rates.", "We sat on the river bank ."]
    assert main(["export", "--model", "elmo", "--out", str(out), *sentences]) == 0
    z = vectors_file(out, load_elmo("embedded").run([split_words(s) for s in sentences]))
    assert z["tokens"][0].tolist() == ["The", "bank", "raised", "rates", "."] + [""] * 2
