"""The README's setup commands are the Makefile's and the docs': every `make` target it runs
is a rule of the Makefile, every variable it sets is one the Makefile reads and
docs/settings.md explains, every `LAB_*` setting is in docs/settings.md, and the port, the
Python versions and the folders it names are the ones the Makefile and the code use."""

from __future__ import annotations

import re

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
SETTINGS = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")


def commands() -> list[str]:
    """Every command the README gives: the lines of its code blocks and its inline code."""
    blocks = re.findall(r"```(?:bash)?\n(.*?)```", README, flags=re.S)
    lines = [line.split("#", 1)[0].strip() for block in blocks for line in block.splitlines()]
    inline = [" ".join(c.split()) for c in re.findall(r"`([^`]+)`", re.sub(r"```.*?```", "", README, flags=re.S))]
    return [c for c in lines + inline if c]


def make_calls() -> list[list[str]]:
    """The words after `make` in each command that runs it (with the settings before it)."""
    calls = []
    for c in commands():
        for part in re.split(r"&&|;", c):
            words = part.split()
            if "make" in words and all("=" in w for w in words[:words.index("make")]):  # not `apt install make`
                calls.append(words)
    return calls


def rules() -> set[str]:
    return set(re.findall(r"^([a-z][\w-]*):", MAKEFILE, flags=re.M))


def test_the_readme_runs_make_setup_and_make_run():
    assert ["make", "setup"] in make_calls() and ["make", "run"] in make_calls()


def test_every_make_target_and_variable_is_the_makefile_s_and_documented():
    for words in make_calls():
        i = words.index("make")
        for env in words[:i]:  # LAB_SHARED=1 make run
            name = env.split("=", 1)[0]
            assert re.fullmatch(r"LAB_\w+", name), words
            assert f"| `{name}` |" in SETTINGS, f"{name} is not in docs/settings.md"
        for word in words[i + 1:]:
            if "=" in word:
                name = word.split("=", 1)[0]
                read = re.search(rf"\$\({name}\)|^{name} *[?:]?=", MAKEFILE, flags=re.M)
                assert read, f"the Makefile reads no {name}"
                assert f"| `{name}` |" in SETTINGS, f"{name} is not in docs/settings.md"
            else:
                assert word in rules(), f"`make {word}` is not a rule of the Makefile"


def test_every_lab_setting_the_readme_names_is_documented():
    for name in set(re.findall(r"\bLAB_[A-Z_]+\b", README)):
        assert f"| `{name}` |" in SETTINGS, f"{name} is not in docs/settings.md"


def test_the_port_is_the_makefile_s():
    (port,) = re.findall(r"^PORT\s*\?=\s*(\d+)", MAKEFILE, flags=re.M)
    named = set(re.findall(r"localhost:(\d+)", README)) | set(re.findall(r"ufw allow (\d+)", README))
    assert named == {port}


def test_the_python_versions_are_the_makefile_s():
    (versions,) = re.findall(r"^PYTHONS\s*:=\s*(.+)$", MAKEFILE, flags=re.M)
    first, *rest = versions.split()
    said = f"{', '.join([first] + rest[:-1])} or {rest[-1]}"  # "3.11, 3.12 or 3.13"
    assert f"Python {said}" in README
    assert f"`make run PYTHON=python{rest[0]}`" in README  # the command that differs


def test_the_folders_to_delete_are_the_code_s_defaults(monkeypatch, tmp_path):
    from lab.board.store import data_dir
    from lab.reference import cache_dir

    monkeypatch.delenv("LAB_CACHE_DIR", raising=False)
    monkeypatch.delenv("LAB_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    for folder, found in (("~/.cache/context-lab", cache_dir()), ("~/.local/share/context-lab", data_dir())):
        assert f"`{folder}`" in README and f"`{folder}`" in SETTINGS
        assert found == tmp_path / folder.removeprefix("~/")
