"""httpx2 (the openai 3.x and anthropic 2.x SDKs' HTTP client) through the run's router:
routes declared on `chaos.http` answer it, the plan's HTTP faults reach it as httpx2's own
exceptions, an undeclared host is refused naming the URL, and nothing stays patched after
the run."""

from __future__ import annotations

import asyncio
import http.server
import threading

import httpx2
import pytest

from pytest_agentchaos.errors import NetworkBlocked
from pytest_agentchaos.inject.network import parse_allow_hosts
from pytest_agentchaos.trace import Halt, ToolCall, ToolResult

API = "https://api.example.test"
REAL = (httpx2.HTTPTransport.handle_request, httpx2.AsyncHTTPTransport.handle_async_request)


def _real_transports() -> tuple[object, object]:
    return httpx2.HTTPTransport.handle_request, httpx2.AsyncHTTPTransport.handle_async_request


def test_a_declared_route_answers_httpx2_and_is_traced(make_chaos):
    chaos = make_chaos()
    route = chaos.http.get(f"{API}/search", name="search").respond(json={"hits": [1, 2]})
    with httpx2.Client() as client:
        response = client.get(f"{API}/search", params={"q": "shoes"})
    assert isinstance(response, httpx2.Response)
    assert response.status_code == 200 and response.json() == {"hits": [1, 2]}
    assert route.call_count == 1
    call = chaos.trace.of_type(ToolCall)[0]
    assert (call.tool, call.channel, call.args["params"]) == ("search", "http", {"q": "shoes"})


def test_async_clients_and_streamed_bodies_come_through_whole(make_chaos):
    chaos = make_chaos()
    body = b"".join(b"data: %d\n\n" % i for i in range(500))
    chaos.http.post(f"{API}/stream").respond(
        200, content=body, headers={"content-type": "text/event-stream"}
    )

    async def read() -> bytes:
        async with (
            httpx2.AsyncClient() as client,
            client.stream("POST", f"{API}/stream", json={"x": 1}) as response,
        ):
            return b"".join([chunk async for chunk in response.aiter_bytes()])

    assert asyncio.run(read()) == body
    with httpx2.Client() as client, client.stream("POST", f"{API}/stream") as response:
        assert b"".join(response.iter_bytes()) == body


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ({"kind": "timeout", "seconds": 5}, httpx2.ReadTimeout),
        ({"kind": "connection_error"}, httpx2.ConnectError),
    ],
)
def test_transport_faults_are_httpx2s_own_exceptions(make_chaos, fault, error):
    chaos = make_chaos(fault)
    chaos.http.get(f"{API}/search", name="search").respond(json={})
    with httpx2.Client() as client, pytest.raises(error) as caught:
        client.get(f"{API}/search")
    assert isinstance(caught.value, httpx2.TransportError)  # what SDKs catch and retry
    result = chaos.trace.of_type(ToolResult)[0]
    assert not result.ok


def test_a_status_fault_is_a_real_httpx2_response(make_chaos):
    chaos = make_chaos({"kind": "http_error", "status": 503})
    chaos.http.get(f"{API}/search", name="search").respond(json={"hits": []})
    with httpx2.Client() as client:
        response = client.get(f"{API}/search")
    assert response.status_code == 503
    with pytest.raises(httpx2.HTTPStatusError):
        response.raise_for_status()


def test_an_undeclared_host_is_refused_naming_the_url_and_client(make_chaos):
    chaos = make_chaos()
    chaos.http  # noqa: B018 - the router is started (routes or not)
    with httpx2.Client() as client, pytest.raises(NetworkBlocked, match="GET https://nowhere"):
        client.get("https://nowhere.test/x?secret=1")
    halt = chaos.trace.of_type(Halt)[0]
    assert halt.detail["via"] == "httpx2"
    assert "secret" not in halt.detail["url"]  # the query is not recorded


def test_an_allowed_host_reaches_the_real_server(make_chaos):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "5")
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        chaos = make_chaos(allow_hosts=parse_allow_hosts(["localhost"], "test"))
        chaos.http  # noqa: B018
        with httpx2.Client() as client:
            response = client.get(f"http://127.0.0.1:{server.server_port}/")
        assert response.text == "hello"
    finally:
        server.shutdown()
        server.server_close()


def test_a_client_on_its_own_transport_is_left_alone(make_chaos):
    chaos = make_chaos()
    chaos.http  # noqa: B018
    transport = httpx2.MockTransport(lambda request: httpx2.Response(201, text="mine"))
    with httpx2.Client(transport=transport) as client:
        assert client.get("https://nowhere.test/").text == "mine"
    assert not chaos.trace.of_type(ToolCall)


def test_nothing_stays_patched_after_the_run(make_chaos):
    chaos = make_chaos()
    chaos.http  # noqa: B018
    assert _real_transports() != REAL
    chaos.close()
    assert _real_transports() == REAL
    chaos.close()  # twice is fine
    assert _real_transports() == REAL


def test_a_monkeypatch_during_the_run_is_restored_in_order(make_chaos, monkeypatch):
    """The test's own stub of the transport, set after the run patched it, is undone by
    monkeypatch's teardown, and the run's undo does not clobber it meanwhile."""
    chaos = make_chaos()
    chaos.http  # noqa: B018
    theirs = lambda self, request: httpx2.Response(299)  # noqa: E731
    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", theirs)
    chaos.close()
    assert httpx2.HTTPTransport.handle_request is theirs
    monkeypatch.undo()
    from pytest_agentchaos.patching import sweep

    sweep()
    assert _real_transports() == REAL


def test_a_client_used_after_its_run_goes_to_the_real_transport(make_chaos):
    chaos = make_chaos()
    chaos.http  # noqa: B018
    chaos.session.close()  # the run is over; a straggler thread's request is not answered
    assert _real_transports() == REAL
