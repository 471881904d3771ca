"""A restricted request (``lab.access``): with LAB_SHARED=1 every one, by default one from
another machine; nobody there can point the server at a path or URL."""

from streamlit.testing.v1 import AppTest

from lab import sources
from tests.conftest import ROOT


def run_elmo_page(**params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages/elmo.py"), default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def source_choices(at, label: str) -> list[str]:
    return list(next(s for s in at.sidebar.selectbox if s.label == label).options)


def test_shared_server_offers_no_free_form_source(monkeypatch):
    monkeypatch.setenv("LAB_SHARED", "1")
    at = run_elmo_page()
    assert not at.exception
    assert len(at.sidebar.text_input) == 0  # no custom handle or folder box
    for label in ("BERT", "ELMo"):
        choices = source_choices(at, label)
        assert "Custom handle or folder..." not in choices and choices[0] == "Embedded (offline)"
        assert len(choices) == 1 + sum(p.family == label.lower() for p in sources.PRESETS)
    assert any("Shared server" in c.value for c in at.sidebar.caption)


def test_a_link_with_a_custom_source_is_ignored_with_a_notice(monkeypatch, tmp_path):
    monkeypatch.setenv("LAB_SHARED", "1")
    at = run_elmo_page(elmo_src="custom", elmo_custom=str(tmp_path))
    assert not at.exception
    assert any("shared server" in i.value and "ELMo source in the link is ignored" in i.value for i in at.info)
    assert any("ELMo-mini" in c.value for c in at.caption)  # still the embedded model
    assert "elmo_custom" not in at.query_params and "elmo_src" not in at.query_params


def test_the_environment_source_stays_choosable_on_a_shared_server(monkeypatch, tmp_path):
    monkeypatch.setenv("LAB_SHARED", "1")
    monkeypatch.setenv("LAB_ELMO_SOURCE", str(tmp_path))  # not a model: the page says so
    at = run_elmo_page()
    assert f"Configured on this server: {tmp_path}" in source_choices(at, "ELMo")
    assert any(str(tmp_path) in e.value for e in at.error)  # and the page says it cannot load it


def test_a_private_server_keeps_the_custom_choice(monkeypatch):
    monkeypatch.delenv("LAB_SHARED", raising=False)
    at = run_elmo_page()
    assert "Custom handle or folder..." in source_choices(at, "ELMo")
    # server.address unset: Streamlit listens on every interface, and the sidebar says so
    assert any("Reachable from the network" in c.value for c in at.sidebar.caption)


def test_a_request_from_another_machine_is_restricted_by_default(monkeypatch, tmp_path):
    """The address as Streamlit reports a phone's (the end-to-end check from another network
    namespace is tests/test_network_access.py)."""
    from ui import access

    monkeypatch.delenv("LAB_SHARED", raising=False)
    monkeypatch.setattr(access, "client_address", lambda: "192.168.1.20")
    at = run_elmo_page(elmo_src="custom", elmo_custom=str(tmp_path))
    assert not at.exception
    assert "Custom handle or folder..." not in source_choices(at, "ELMo")
    assert any("ELMo source in the link is ignored" in i.value for i in at.info)
    assert any("Shared server" in c.value for c in at.sidebar.caption)


def test_xsrf_protection_stays_on():
    import tomllib

    from streamlit import config

    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text()).get("server", {})
    assert server.get("enableXsrfProtection", True) is True and server.get("enableCORS", True) is True
    assert config.get_option("server.enableXsrfProtection") is True
