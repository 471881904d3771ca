"""Who may choose a model and have their sentences stored (``lab.access``), for each kind
of address a server sees, under each ``LAB_SHARED``."""

import pytest

from lab import access

# what st.context.ip_address gives a server: None for 127.0.0.1 and ::1
FROM_THIS_MACHINE = [None, "127.0.0.1", "127.0.1.1", "127.255.255.254", "::1", "::ffff:127.0.0.1",
                     "::ffff:127.3.2.1", " 127.0.0.1 "]
FROM_ELSEWHERE = ["192.168.1.20", "10.0.0.7", "172.16.5.4", "192.0.2.2", "8.8.8.8", "0.0.0.0",
                  "fe80::1", "fe80::1%eth0", "fd00::2", "2001:db8::5", "::ffff:192.168.1.20",
                  "::ffff:10.0.0.7", "::", "localhost", "not an address", ""]


@pytest.mark.parametrize("address", FROM_THIS_MACHINE)
def test_this_machine_is_loopback(address):
    assert access.is_loopback(address)


@pytest.mark.parametrize("address", FROM_ELSEWHERE)
def test_every_other_address_is_not(address):
    assert not access.is_loopback(address)


@pytest.mark.parametrize("unset", [None, "", "  ", "auto", "maybe", "2"])
def test_by_default_only_other_machines_are_restricted(unset):
    assert access.setting(unset) == "local"
    assert not any(access.restricted(a, unset) for a in FROM_THIS_MACHINE)
    assert all(access.restricted(a, unset) for a in FROM_ELSEWHERE)


@pytest.mark.parametrize("on", ["1", "true", "YES", " on "])
def test_lab_shared_1_restricts_everyone(on):
    assert access.setting(on) == "everyone"
    assert all(access.restricted(a, on) for a in FROM_THIS_MACHINE + FROM_ELSEWHERE)


@pytest.mark.parametrize("off", ["0", "false", "No", "off"])
def test_lab_shared_0_restricts_no_one(off):
    assert access.setting(off) == "no one"
    assert not any(access.restricted(a, off) for a in FROM_THIS_MACHINE + FROM_ELSEWHERE)


@pytest.mark.parametrize(("bind", "reachable"), [
    (None, True), ("", True), ("0.0.0.0", True), ("::", True), ("192.168.1.20", True),
    ("lab.example.org", True), ("127.0.0.1", False), ("127.0.1.1", False), ("::1", False),
    ("localhost", False), ("LOCALHOST ", False),
])
def test_which_bind_addresses_other_machines_reach(bind, reachable):
    assert access.reachable_from_network(bind) is reachable


def test_the_sidebar_says_what_the_network_gets():
    assert "Shared server" in access.sidebar_note(True, True, "1")
    assert "Shared server" in access.sidebar_note(True, True, None)
    assert access.sidebar_note(False, False, None) == ""  # bound to loopback: nothing to say
    assert "other devices get the shared view" in access.sidebar_note(False, True, None)
    assert "LAB_SHARED=0" in access.sidebar_note(False, True, "0")


def test_the_report_names_the_setting():
    assert "LAB_SHARED=1" in access.describe("yes")
    assert "LAB_SHARED=0" in access.describe("off")
    assert "other machines" in access.describe(None)


def test_the_deploy_unit_restricts_every_request():
    """Behind nginx every connection comes from the proxy: the unit sets LAB_SHARED=1 (an
    environment file may still say 0, which systemd lets override it)."""
    from tests.conftest import ROOT

    unit = (ROOT / "deploy/systemd/context-lab@.service").read_text().splitlines()
    settings = [w for line in unit if line.startswith("Environment=") for w in line.split("=", 1)[1].split()]
    assert "LAB_SHARED=1" in settings
