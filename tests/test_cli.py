"""`python -m lab info`, `python -m lab export` (the npz contract) and `python -m lab board purge`."""

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


def test_board_purge_deletes_expired_boards(tmp_path, monkeypatch, capsys):
    import time

    from lab.board.store import BoardStore

    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("LAB_BOARD_DB", raising=False)
    assert main(["board", "purge"]) == 0  # no database yet: said, and none made
    assert "no board database at" in capsys.readouterr().out and not (tmp_path / "boards.sqlite3").exists()
    new = BoardStore(days=1)
    board, _ = new.create("bat", (), bert_source="embedded", elmo_source="embedded")
    old = BoardStore(days=1, clock=lambda: time.time() - 2 * 86400)  # a board made two days ago
    old_board, _ = old.create("bank", (), bert_source="embedded", elmo_source="embedded")
    old.submit(old_board.id, "The bank.", None, browser="b", token="t")
    old.dispose()
    assert main(["board", "purge"]) == 0
    out = capsys.readouterr().out
    assert f"deleted 1 expired boards with their sentences from {tmp_path / 'boards.sqlite3'}" in out
    assert "1 open board(s) left" in out
    assert new.get(old_board.id) is None and new.entries(old_board.id) == [] and new.get(board.id) is not None
    assert main(["board", "purge", "--all"]) == 0
    assert "deleted 1 boards" in capsys.readouterr().out and new.get(board.id) is None
    new.dispose()


def test_board_purge_says_why_a_database_cannot_open(tmp_path, capsys):
    junk = tmp_path / "junk.sqlite3"
    junk.write_text("not a database")
    assert main(["board", "purge", "--db", f"sqlite:///{junk}"]) == 2
    err = capsys.readouterr().err
    assert f"error: the board database at {junk} cannot be opened" in err and "Traceback" not in err
    assert main(["board", "purge", "--db", "postgresql://user:secret@127.0.0.1:1/boards"]) == 2
    err = capsys.readouterr().err
    assert "cannot be opened" in err and "secret" not in err and "Traceback" not in err
