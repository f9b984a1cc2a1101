"""No real network from a chaos test, whatever the agent uses; only the hosts a test allows.

A real HTTP server on loopback counts the connections it accepts: a refused request must never
reach it, and an allowed one must.
"""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_agentchaos.errors import ChaosConfigError, NetworkBlocked
from pytest_agentchaos.inject.network import AllowList, NetworkGuard, parse_allow_hosts


class _Counted(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        self.hits.append(self.path)
        body = b"real"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[int, list[str]]]:
    """A loopback HTTP server: (port, paths it was asked for)."""
    hits: list[str] = []
    handler = type("Handler", (_Counted,), {"hits": hits})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01})
    thread.start()
    yield httpd.server_address[1], hits
    httpd.shutdown()
    httpd.server_close()
    thread.join()


CLIENTS = """
import http.client
import socket
import urllib.request

import pytest

PORT = {port}
URL = f"http://127.0.0.1:{{PORT}}/x"


def swallow(fn):
    try:
        fn()
    except BaseException:
        pass


def test_urllib(chaos):
    swallow(lambda: urllib.request.urlopen(URL, timeout=2))


def test_http_client(chaos):
    swallow(lambda: http.client.HTTPConnection("127.0.0.1", PORT, timeout=2).request("GET", "/x"))


def test_raw_socket(chaos):
    swallow(lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2))


def test_by_host_name(chaos):
    swallow(lambda: urllib.request.urlopen(f"http://localhost:{{PORT}}/x", timeout=2))


def test_httpx_imported_during_the_test(chaos):
    import httpx

    swallow(lambda: httpx.get(URL))


@pytest.mark.chaos(allow_hosts=["localhost"])
def test_allowed_loopback(chaos):
    assert urllib.request.urlopen(URL, timeout=2).read() == b"real"


def test_plain_tests_are_untouched():
    assert urllib.request.urlopen(URL, timeout=2).read() == b"real"
"""


def test_every_client_is_refused_even_when_the_agent_swallows_it(
    pytester: pytest.Pytester, server: tuple[int, list[str]]
) -> None:
    port, hits = server
    pytester.makepyfile(test_clients=CLIENTS.format(port=port))
    # A fresh process, respx's own plugin off: httpx is first imported inside the test.
    result = pytester.runpytest_subprocess("-p", "no:respx", "-p", "no:randomly", timeout=120)
    result.assert_outcomes(failed=5, passed=2)
    result.stdout.fnmatch_lines_random(
        [
            f"pytest-agentchaos: blocked a real network connection to 127.0.0.1:{port} "
            "(getaddrinfo): a chaos test may not reach the network; declare the request on "
            "chaos.http, or allow the host with @pytest.mark.chaos(allow_hosts=[[]...[]]) or "
            "ini chaos_allow_hosts",
            f"pytest-agentchaos: blocked a real network connection to localhost:{port} "
            "(getaddrinfo)*",
            f"pytest-agentchaos: blocked a real HTTP request: GET http://127.0.0.1:{port}/x "
            "matches no route declared on chaos.http*",
            "FAILED *::test_urllib*",
            "FAILED *::test_http_client*",
            "FAILED *::test_raw_socket*",
            "FAILED *::test_by_host_name*",
            "FAILED *::test_httpx_imported_during_the_test*",
        ]
    )
    assert hits == ["/x", "/x"]  # only the allowed test and the plain one got through
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_hosts_allowed_in_the_ini_file_are_reached(
    pytester: pytest.Pytester, server: tuple[int, list[str]]
) -> None:
    port, hits = server
    pytester.makeini("[pytest]\nchaos_allow_hosts =\n    127.0.0.0/8\n    api.example.com\n")
    pytester.makepyfile(
        f"""
        import urllib.request

        def test_reaches_the_local_server(chaos):
            assert urllib.request.urlopen("http://127.0.0.1:{port}/ok", timeout=2).read() == b"real"
        """
    )
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=1)
    assert hits == ["/ok"]


def test_an_allowed_host_passes_through_the_http_router(
    pytester: pytest.Pytester, server: tuple[int, list[str]]
) -> None:
    port, hits = server
    pytester.makepyfile(
        f"""
        import httpx
        import pytest

        @pytest.mark.chaos(allow_hosts=["127.0.0.1"], faults=[{{"kind": "http_error"}}])
        def test_declared_routes_get_faults_undeclared_allowed_hosts_go_through(chaos):
            chaos.http.get("https://api.test/x", name="x").respond(json={{}})
            assert httpx.get("https://api.test/x").status_code == 500  # declared: faulted
            assert httpx.get("http://127.0.0.1:{port}/real").text == "real"  # allowed: real
            assert chaos.trace.schedule()[0]["target"] == "x"
        """
    )
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=1)
    assert hits == ["/real"]


def test_a_users_own_respx_router_still_answers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import httpx
        import respx

        def test_both_routers(chaos):
            chaos.http.get("https://api.test/ours", name="ours").respond(json={"who": "chaos"})
            with respx.mock(assert_all_called=False) as mine:
                mine.get("https://api.test/theirs").respond(json={"who": "user"})
                assert httpx.get("https://api.test/theirs").json() == {"who": "user"}
                assert httpx.get("https://api.test/ours").json() == {"who": "chaos"}
            assert [c.tool for c in chaos.trace.tool_calls()] == ["ours"]
        """
    )
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=1)


# -- the guard as a library ----------------------------------------------------------------------


def _refuse(blocked: list[str]) -> Any:
    def refuse(target: str, via: str) -> NetworkBlocked:
        blocked.append(f"{via} {target}")
        return NetworkBlocked(target)

    return refuse


def test_the_guard_refuses_udp_and_lets_local_ipc_through() -> None:
    blocked: list[str] = []
    guard = NetworkGuard(AllowList(), _refuse(blocked))
    guard.install()
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, pytest.raises(NetworkBlocked):
            udp.sendto(b"x", ("192.0.2.1", 53))
        left, right = socket.socketpair()  # Unix sockets: local IPC, not network
        with left, right:
            left.sendall(b"ping")
            assert right.recv(4) == b"ping"
        with pytest.raises(NetworkBlocked):
            socket.gethostbyname("example.com")
    finally:
        guard.uninstall()
    assert blocked == ["socket.sendto 192.0.2.1:53", "gethostbyname example.com"]
    assert socket.socket.connect is not None and "guard" not in repr(socket.getaddrinfo)
    # The methods socket.socket inherits from _socket.socket are inherited again, not copied.
    assert {"connect", "connect_ex", "sendto"}.isdisjoint(vars(socket.socket))


def test_uninstall_leaves_alone_what_someone_else_patched_since() -> None:
    real = socket.getaddrinfo
    guard = NetworkGuard(AllowList(), _refuse([]))
    guard.install()
    theirs = object()
    try:
        socket.getaddrinfo = theirs  # type: ignore[assignment] # a later patcher, still active
        guard.uninstall()
        assert socket.getaddrinfo is theirs
        assert "connect" not in vars(socket.socket)  # the rest was undone
    finally:
        socket.getaddrinfo = real


def test_addresses_an_allowed_name_resolves_to_are_allowed(monkeypatch: Any) -> None:
    """Connecting by address after resolving an allowed name (what every client does)."""
    monkeypatch.setattr(
        socket, "getaddrinfo", lambda *a, **k: [(socket.AF_INET, 1, 6, "", ("203.0.113.7", 443))]
    )
    blocked: list[str] = []
    guard = NetworkGuard(parse_allow_hosts(["api.example.com"], "t"), _refuse(blocked))
    guard.install()
    try:
        assert socket.getaddrinfo("api.example.com", 443)[0][4][0] == "203.0.113.7"
        assert guard._allowed("203.0.113.7")
        assert not guard._allowed("203.0.113.8")
        with pytest.raises(NetworkBlocked):
            socket.getaddrinfo("evil.example.com", 443)
    finally:
        guard.uninstall()
    assert blocked == ["getaddrinfo evil.example.com:443"]


@pytest.mark.parametrize(
    ("entry", "host", "allowed"),
    [
        ("localhost", "127.0.0.1", True),
        ("localhost", "127.8.9.10", True),
        ("localhost", "::1", True),
        ("localhost", "10.0.0.1", False),
        ("10.0.0.0/8", "10.200.0.1", True),
        ("10.0.0.0/8", "11.0.0.1", False),
        ("API.Example.com", "api.example.com", True),
        ("api.example.com", "api.example.com.", True),
        ("api.example.com", "www.example.com", False),
        ("*", "anything.at.all", True),
        ("fe80::1", "fe80::1%eth0", True),
    ],
)
def test_allow_list_matching(entry: str, host: str, allowed: bool) -> None:
    assert parse_allow_hosts([entry], "t").allows_host(host) is allowed


def test_an_empty_allow_list_allows_nothing() -> None:
    assert not AllowList()
    assert not AllowList().allows_host("127.0.0.1")
    with pytest.raises(ChaosConfigError, match=r"^t: expected a list of host names or addresses"):
        parse_allow_hosts("localhost", "t")
