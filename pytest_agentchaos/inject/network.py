"""No real network from a chaos test: sockets reach only the hosts the test allows.

While installed, :class:`NetworkGuard` refuses name lookups (``getaddrinfo``,
``gethostbyname``) and connections (``connect``, ``connect_ex``, ``sendto``) of every Python
socket to a host outside the :class:`AllowList`, whatever client the agent uses (requests,
urllib, http.client, aiohttp, raw sockets). Local IPC (Unix sockets) is not network and is left
alone. Loopback is *not* allowed unless listed (``localhost``), since a local server is as real
as a remote one.

A refusal is reported through a callback that records it in the run's trace and returns a hard
halt (:class:`~pytest_agentchaos.errors.NetworkBlocked`), so an agent that swallows the error
still fails its test.
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..config import fail
from ..patching import Patches
from ..saferepr import safe_repr, short

__all__ = ["AllowList", "NetworkGuard", "parse_allow_hosts"]

if TYPE_CHECKING:
    import ipaddress

    IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_LOOPBACK = ("127.0.0.0/8", "::1/128")
_LABEL = r"(?!-)[a-z0-9_-]{1,63}(?<!-)"
#: A dotted run of digits is an IP address or nothing (never a host name): 300.1.1.1.
_NUMERIC = re.compile(r"[0-9.]+")
_HOSTNAME = re.compile(rf"(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*\.?")


@dataclass(frozen=True)
class AllowList:
    """Hosts a chaos test may reach: host names, IP addresses and networks; ``*`` for any."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()  # noqa: UP037
    any: bool = False
    entries: tuple[str, ...] = field(default=(), compare=False)

    def allows_host(self, host: str) -> bool:
        """Whether a host name or address literal is allowed."""
        if self.any:
            return True
        name = host.lower().rstrip(".")
        if name in self.hosts:
            return True
        ip = _ip(name)
        return ip is not None and any(ip in net for net in self.networks)

    def __bool__(self) -> bool:
        return self.any or bool(self.hosts) or bool(self.networks)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    import ipaddress  # loaded on first use: start-up stays cheap

    try:
        return ipaddress.ip_address(text.split("%", 1)[0])  # drop an IPv6 zone id
    except ValueError:
        return None


def _not_a_host(value: str) -> str:
    return (
        f"{short(value)} is not a host name, an IP address, a network (10.0.0.0/8), "
        "'localhost' or '*'"
    )


def parse_allow_hosts(values: object, where: str) -> AllowList:
    """Validate a list of allowed hosts: ``"api.example.com"``, ``"10.0.0.7"``,
    ``"10.0.0.0/8"``, ``"::1"``, ``"localhost"`` (all of loopback) or ``"*"`` (anything)."""
    if values is None:
        return AllowList()
    import ipaddress

    if isinstance(values, str) or not isinstance(values, (list, tuple)):
        raise fail(
            where, f"expected a list of host names or addresses, got {safe_repr(values, 80)}"
        )
    hosts: set[str] = set()
    networks: list[IPNetwork] = []
    any_host = False
    for i, value in enumerate(values):
        at = f"{where}[{i}]"
        if not isinstance(value, str) or not value.strip():
            raise fail(at, f"expected a host name or address, got {short(value)}")
        entry = value.strip().lower()
        if entry == "*":
            any_host = True
        elif entry == "localhost":
            hosts.add("localhost")
            networks.extend(ipaddress.ip_network(net) for net in _LOOPBACK)
        elif "/" in entry and "://" not in entry:
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise fail(at, f"{short(value)} is not an IP network such as 10.0.0.0/8") from None
        elif _ip(entry) is not None:
            networks.append(ipaddress.ip_network(entry.split("%", 1)[0]))
        elif _HOSTNAME.fullmatch(entry) and not _NUMERIC.fullmatch(entry):
            hosts.add(entry.rstrip("."))
        else:  # a URL, a bad address such as 300.1.1.1, spaces ...
            raise fail(at, _not_a_host(value))
    return AllowList(frozenset(hosts), tuple(networks), any_host, tuple(str(v) for v in values))


class NetworkGuard:
    """Refuses sockets to hosts outside ``allow`` until :meth:`uninstall`.

    ``refuse(target, via)`` is called for each refusal (``target`` is ``host:port``) and returns
    the exception to raise.
    """

    def __init__(self, allow: AllowList, refuse: Callable[[str, str], BaseException]) -> None:
        self.allow = allow
        self.refuse = refuse
        self._resolved: set[str] = set()  # addresses that allowed host names resolved to
        self._lock = threading.Lock()
        self._patches = Patches()

    def _allowed(self, host: object) -> bool:
        if not isinstance(host, str):
            return False
        if self.allow.allows_host(host):
            return True
        with self._lock:
            return host.split("%", 1)[0] in self._resolved

    def _check_address(self, sock: socket.socket, address: Any, via: str) -> None:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return  # Unix sockets and other local IPC are not network
        if not isinstance(address, tuple) or not address:
            return  # the real call reports the bad argument
        host = address[0]
        if not self._allowed(host):
            port = address[1] if len(address) > 1 else "?"
            raise self.refuse(f"{host}:{port}", via)

    def install(self) -> None:
        """Patch ``socket``'s connects, ``sendto`` and name lookups to refuse hosts that are
        not allowed (addresses an allowed name resolved to count as allowed)."""
        guard = self
        cls = socket.socket
        real_connect, real_connect_ex, real_sendto = cls.connect, cls.connect_ex, cls.sendto
        real_getaddrinfo = socket.getaddrinfo
        real_gethostbyname, real_gethostbyname_ex = socket.gethostbyname, socket.gethostbyname_ex

        def connect(self: socket.socket, address: Any) -> None:
            guard._check_address(self, address, "socket.connect")
            return real_connect(self, address)

        def connect_ex(self: socket.socket, address: Any) -> int:
            guard._check_address(self, address, "socket.connect_ex")
            return real_connect_ex(self, address)

        def sendto(self: socket.socket, data: Any, *rest: Any) -> int:
            guard._check_address(self, rest[-1] if rest else None, "socket.sendto")
            return real_sendto(self, data, *rest)

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            if host is None:  # a passive (bind) lookup: no network involved
                return real_getaddrinfo(host, port, *args, **kwargs)
            name = host.decode("idna") if isinstance(host, bytes) else str(host)
            if not guard.allow.allows_host(name):
                raise guard.refuse(f"{name}:{port}", "getaddrinfo")
            infos = real_getaddrinfo(host, port, *args, **kwargs)
            guard._remember(info[4][0] for info in infos if info[4])
            return infos

        def gethostbyname(host: str) -> str:
            if not guard.allow.allows_host(host):
                raise guard.refuse(host, "gethostbyname")
            address = real_gethostbyname(host)
            guard._remember([address])
            return address

        def gethostbyname_ex(host: str) -> Any:
            if not guard.allow.allows_host(host):
                raise guard.refuse(host, "gethostbyname_ex")
            found = real_gethostbyname_ex(host)
            guard._remember(found[2])
            return found

        patches: list[tuple[Any, str, Any]] = [
            (cls, "connect", connect),
            (cls, "connect_ex", connect_ex),
            (cls, "sendto", sendto),
            (socket, "getaddrinfo", getaddrinfo),
            (socket, "gethostbyname", gethostbyname),
            (socket, "gethostbyname_ex", gethostbyname_ex),
        ]
        for owner, name, replacement in patches:
            # an inherited method (socket.socket.connect is _socket.socket's) is removed
            # again on uninstall, not copied into the class
            self._patches.set(owner, name, replacement)

    def _remember(self, addresses: Iterable[object]) -> None:
        with self._lock:
            self._resolved.update(str(a).split("%", 1)[0] for a in addresses)

    def uninstall(self) -> None:
        """Put the real socket functions back; safe to call twice. A name someone replaced
        since (a ``monkeypatch`` of the test) is restored once it holds ours again (see
        :mod:`pytest_agentchaos.patching`)."""
        self._patches.undo()
