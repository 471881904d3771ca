"""This request's access (``lab.access``): restricted or not, from its connection's address."""

from __future__ import annotations

import os

import streamlit as st

from lab import access


def restricted() -> bool:
    """Whether this request gets the shared server's view (``lab.access.restricted``): no
    custom model source, its sentences not stored. Outside a script run (a warm-up thread)
    Streamlit reports no address: this machine's."""
    return access.restricted(client_address(), os.environ.get("LAB_SHARED"))


def client_address() -> str | None:
    """The connection's remote address, None from this machine's loopback (Streamlit's
    ``st.context.ip_address``: the websocket's peer, or the client a trusted proxy on
    loopback names in X-Forwarded-For, as uvicorn reads it). A run without a connection has
    none: AppTest's stands in an object that is not a string, read as None as well."""
    address = st.context.ip_address
    return address if isinstance(address, str) else None


def sidebar_note(is_restricted: bool) -> str:
    """What the sidebar says about this request's access (``lab.access.sidebar_note``):
    whether other machines can reach this server (``server.address``) and what they get."""
    reachable = access.reachable_from_network(st.get_option("server.address"))
    return access.sidebar_note(is_restricted, reachable, os.environ.get("LAB_SHARED"))
