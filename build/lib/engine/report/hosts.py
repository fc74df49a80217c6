"""Which `Host` a request to `serve` (or a sweep's live view) may name: the address it is bound to.

A page on any site can make the browser resolve its own name to 127.0.0.1 (DNS rebinding) and then
read the server as same-origin; the browser still sends that name as `Host`. So a request is answered
only when its Host is a name of the address the server listens on, with its port:

- bound to loopback (127.0.0.1, ::1, localhost): localhost, 127.0.0.1 or [::1];
- bound to one address or name (--host X): X, and the loopback names;
- bound to every interface (0.0.0.0, ::): any IP address literal (no name to rebind), the loopback
  names, and this machine's host names.
"""

from __future__ import annotations

import ipaddress
import socket

LOOPBACK = frozenset({"localhost", "127.0.0.1", "[::1]"})
WILDCARD = frozenset({"", "0.0.0.0", "::", "[::]"})


def _bracketed(host: str) -> str:
    """How an address appears in a Host header: an IPv6 literal in brackets, names lowercased."""
    host = host.strip().lower()
    try:
        return f"[{host}]" if ipaddress.ip_address(host).version == 6 else host
    except ValueError:
        return host


def _split(header: str) -> tuple[str, int | None]:
    """'Example.org:8000' -> ('example.org', 8000); '[::1]:80' -> ('[::1]', 80); no port -> None."""
    header = header.strip().lower()
    if header.startswith("["):
        name, _, rest = header.partition("]")
        name, port = name + "]", rest.removeprefix(":")
    else:
        name, _, port = header.partition(":")
    if not port:
        return name, None
    return name, int(port) if port.isdigit() else -1


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
        return True
    except ValueError:
        return False


class HostCheck:
    """Whether a Host header names this server; the port is set once the server listens (it may be 0 before)."""

    def __init__(self, bound: str, port: int = 0):
        self.bound = _bracketed(bound)
        self.port = port
        self.any_ip = self.bound in WILDCARD
        names = set(LOOPBACK)
        if self.any_ip:
            names |= {_bracketed(socket.gethostname()), _bracketed(socket.getfqdn())}
        else:
            names.add(self.bound)
        self.names = frozenset(names)

    def allows(self, header: str | None) -> bool:
        if header is None:  # HTTP/1.0 tools; every browser sends Host, so no rebinding page comes without one
            return True
        name, port = _split(header)
        if (port if port is not None else 80) != self.port:
            return False
        return name in self.names or (self.any_ip and _is_ip(name))

    def expected(self) -> str:
        shown = sorted(self.names) + (["any IP address"] if self.any_ip else [])
        return ", ".join(f"{n}:{self.port}" for n in shown)


def exposed(bound: str) -> bool:
    """True when listening there lets other machines in (every interface, or a non-loopback address)."""
    b = _bracketed(bound)
    if b in WILDCARD:
        return True
    if b in LOOPBACK:
        return False
    try:
        return not ipaddress.ip_address(b.strip("[]")).is_loopback
    except ValueError:
        return True  # a name: whatever it resolves to
