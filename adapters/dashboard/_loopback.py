"""What counts as this machine only: the addresses ``tickler ui`` may
listen on without a token, and the ``Host`` headers its page answers
then (a name a web page controls may resolve to 127.0.0.1: a browser that
follows such a name sends it as the ``Host``)."""

from __future__ import annotations

import ipaddress
import re
from typing import Final

_HOST: Final = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[^:\[\]]+))(?::\d{1,5})?")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (``127.0.0.0/8``, ``::1``,
    ``localhost``): anything else is reachable from elsewhere, so the
    dashboard needs a token there."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve anywhere
        return False


def is_loopback_host_header(value: str | None) -> bool:
    """Whether a request's ``Host`` names this machine: ``localhost``, an
    IPv4 loopback address or ``[::1]``, with or without a port. No other
    name is taken, however it resolves (DNS rebinding), and an IPv6
    address only in brackets, as URLs write it."""
    found = _HOST.fullmatch(value or "")
    if found is None:
        return False
    if found["v6"] is not None:
        return is_loopback(found["v6"]) and ":" in found["v6"]
    return is_loopback(found["name"])
