"""Who may point the server at a model of their choosing, and whose sentences it stores.

A *restricted* request gets the shared server's view: no custom model source (a box or a
link's), only the embedded models, the presets and the sources the environment configures;
and the sentences it runs on the BERT, ELMo, attention and ELMo vs BERT pages are never
written to disk (only the app's default sentences are). The class board stores its
sentences by design, for everyone.

``LAB_SHARED`` decides, per request, from the connection's address:

- unset (or empty): a request from this machine (a loopback address) keeps everything, one
  from anywhere else is restricted. The teacher's browser on the laptop is the first kind,
  thirty phones on the school's Wi-Fi the second; a plain ``make run`` listens on every
  interface (Streamlit's default), so this is the safe default.
- ``1`` (true, yes, on): every request is restricted, this machine's too (a department's
  servers behind a proxy, where every connection comes from the proxy: deploy/).
- ``0`` (false, no, off): no request is restricted: a server whose whole network is trusted.

Any other value counts as unset: a typo never opens the server to the network.
"""

from __future__ import annotations

import ipaddress
from typing import Literal

Setting = Literal["local", "everyone", "no one"]

ON = ("1", "true", "yes", "on")
OFF = ("0", "false", "no", "off")


def setting(value: str | None) -> Setting:
    """Whom ``LAB_SHARED``'s ``value`` restricts: ``"everyone"`` (1), ``"no one"`` (0), or
    ``"local"`` (unset or anything else): every request not from this machine."""
    v = (value or "").strip().lower()
    return "everyone" if v in ON else "no one" if v in OFF else "local"


def is_loopback(address: str | None) -> bool:
    """True for an address of this machine's loopback: 127.0.0.0/8, ``::1``, and IPv4's
    loopback as a dual-stack socket reports it (``::ffff:127.x.x.x``). ``None`` counts as
    loopback: Streamlit's ``st.context.ip_address`` is None for 127.0.0.1 and ``::1`` (and
    where a run has no connection at all: a test's, a warm-up's). Anything that does not
    parse as an address (a hostname, garbage) is not loopback."""
    if address is None:
        return True
    try:
        ip = ipaddress.ip_address(address.strip().split("%", 1)[0])  # fe80::1%eth0: the zone is not the address
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def restricted(address: str | None, value: str | None) -> bool:
    """Whether a request from ``address`` (the connection's remote address as Streamlit
    reports it; None from this machine) gets the shared server's view, under ``LAB_SHARED``
    = ``value`` (None: unset)."""
    who = setting(value)
    if who == "everyone":
        return True
    if who == "no one":
        return False
    return not is_loopback(address)


def reachable_from_network(bind_address: str | None) -> bool:
    """Whether a server bound to ``bind_address`` (``server.address``; None or "" when unset,
    where Streamlit listens on every interface) can be reached from other machines: every
    address but a loopback one (``127.0.0.1``, ``::1``, ``localhost``)."""
    if not bind_address or not bind_address.strip():
        return True
    if bind_address.strip().lower() == "localhost":
        return False
    try:
        return not ipaddress.ip_address(bind_address.strip()).is_loopback
    except ValueError:
        return True  # a host name: whatever it resolves to, assume others can reach it


def describe(value: str | None) -> str:
    """One line for a report: whom ``LAB_SHARED`` = ``value`` restricts."""
    return {"everyone": "yes, for every request (LAB_SHARED=1)",
            "no one": "no, every request may choose a model (LAB_SHARED=0)",
            "local": "for requests from other machines (LAB_SHARED unset)"}[setting(value)]


def sidebar_note(is_restricted: bool, reachable: bool, value: str | None) -> str:
    """What the sidebar says about access to a request: restricted or not (``restricted``),
    on a server other machines can reach or not (``reachable_from_network``), under
    ``LAB_SHARED`` = ``value``. Empty where there is nothing to say (this machine's browser
    on a server only it can reach)."""
    if is_restricted:
        return "Shared server: the models are set by whoever runs it."
    if not reachable:
        return ""
    if setting(value) == "no one":
        return ("Reachable from the network, and LAB_SHARED=0: anyone who opens it can point it "
                "at a model of their choosing, and their sentences are stored.")
    return ("Reachable from the network: other devices get the shared view (the models set "
            "here, their sentences not stored). Only this machine's browser can choose a model.")
