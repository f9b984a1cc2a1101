"""The httpx channel: routes declared on `chaos.http` (a respx router), with the plan's
faults applied before a request reaches its route. No test touches the real network: every
URL is mocked, except the loopback server used to show that `close()` un-mocks httpx."""

from __future__ import annotations

import http.server
import json
import threading

import httpx
import pytest
import respx

from pytest_agentchaos.errors import NetworkBlocked
from pytest_agentchaos.faults.mutations import apply_mutation
from pytest_agentchaos.inject import Chaos, ChaosRouter
from pytest_agentchaos.trace import FaultInjected, ToolCall, ToolResult

API = "https://api.example.test"


@pytest.fixture
def client():
    with httpx.Client() as c:
        yield c


@pytest.fixture
async def aclient():
    async with httpx.AsyncClient() as c:
        yield c


def _events(chaos):
    return list(chaos.trace)[1:]


# -- clean requests ---------------------------------------------------------------------------


class TestRoutes:
    def test_router_is_a_respx_router(self, make_chaos):
        chaos = make_chaos()
        assert isinstance(chaos.http, ChaosRouter)
        assert isinstance(chaos.http, respx.MockRouter)
        assert chaos.http is chaos.http  # one router per run

    def test_sync_request_reaches_route_and_is_traced(self, make_chaos, client):
        chaos = make_chaos()
        route = chaos.http.get(f"{API}/search", name="search").respond(json={"hits": [1, 2]})
        resp = client.get(f"{API}/search", params={"q": "shoes"})
        assert resp.status_code == 200 and resp.json() == {"hits": [1, 2]}
        assert route.call_count == 1
        call, result = _events(chaos)
        assert isinstance(call, ToolCall) and isinstance(result, ToolResult)
        assert (call.tool, call.channel, call.index, call.step) == ("search", "http", 1, 1)
        assert call.args == {"method": "GET", "url": f"{API}/search", "params": {"q": "shoes"}}
        assert (result.tool, result.ok, result.status, result.output) == (
            "search",
            True,
            200,
            {"hits": [1, 2]},
        )

    async def test_async_request(self, make_chaos, aclient):
        chaos = make_chaos()
        chaos.http.post(f"{API}/book", name="book").respond(201, json={"id": "B1"})
        resp = await aclient.post(f"{API}/book", json={"flight": "TP123"})
        assert resp.status_code == 201 and resp.json() == {"id": "B1"}
        (call,) = chaos.trace.tool_calls()
        assert call.args == {"method": "POST", "url": f"{API}/book", "json": {"flight": "TP123"}}
        assert chaos.trace.tool_results()[0].status == 201

    def test_unnamed_route_is_method_host_path(self, make_chaos, client):
        chaos = make_chaos()
        chaos.http.get(f"{API}/v1/weather").respond(json={"t": 20})
        client.get(f"{API}/v1/weather", params={"city": "Lisbon"})
        assert chaos.trace.tool_calls()[0].tool == "GET api.example.test/v1/weather"
        assert chaos.trace.tool_results()[0].tool == "GET api.example.test/v1/weather"

    def test_route_name_is_fault_target(self, make_chaos, client):
        chaos = make_chaos({"kind": "http_error", "status": 500, "tools": "search"})
        chaos.http.get(f"{API}/search", name="search").respond(json={})
        chaos.http.get(f"{API}/other", name="other").respond(json={})
        assert client.get(f"{API}/other").status_code == 200
        assert client.get(f"{API}/search").status_code == 500
        assert [f.target for f in chaos.trace.faults()] == ["search"]

    def test_unmocked_url_is_a_hard_halt_and_is_traced(self, make_chaos, client):
        chaos = make_chaos({"kind": "http_error", "status": 500})  # no fault on an undeclared URL
        chaos.http.get(f"{API}/search", name="search").respond(json={})
        with pytest.raises(NetworkBlocked, match="blocked a real HTTP request: GET https://unm"):
            client.get("https://unmocked.example.test/x?q=1")
        assert chaos.trace.tool_calls() == [] and chaos.trace.faults() == []
        (halt,) = chaos.trace.hard_halts()
        assert (halt.reason, halt.detail["url"]) == (
            "network",
            "GET https://unmocked.example.test/x",
        )
        # swallowed, it still halts the run: every later call raises again
        assert isinstance(chaos.session.halted, NetworkBlocked)
        with pytest.raises(NetworkBlocked):
            client.get(f"{API}/search")

    def test_real_route_error_status_is_a_failed_result(self, make_chaos, client):
        chaos = make_chaos()
        chaos.http.get(f"{API}/missing", name="missing").respond(404, json={"error": "nope"})
        assert client.get(f"{API}/missing").status_code == 404
        (result,) = chaos.trace.tool_results()
        assert (result.ok, result.status, result.output) == (False, 404, {"error": "nope"})
        assert chaos.trace.errors() == [result]

    def test_route_side_effect_exception_recorded_and_raised(self, make_chaos, client):
        chaos = make_chaos()
        chaos.http.get(f"{API}/x", name="x").mock(side_effect=httpx.ConnectTimeout)
        with pytest.raises(httpx.ConnectTimeout):
            client.get(f"{API}/x")
        (result,) = chaos.trace.tool_results()
        assert (result.ok, result.error_type) == (False, "ConnectTimeout")


# -- error faults ---------------------------------------------------------------------------


class TestErrorFaults:
    def test_timeout_raises_read_timeout_and_advances_clock(self, make_chaos, client):
        chaos = make_chaos({"kind": "timeout", "seconds": 20})
        route = chaos.http.get(f"{API}/search", name="search").respond(json={})
        with pytest.raises(httpx.ReadTimeout):
            client.get(f"{API}/search")
        assert route.call_count == 0
        assert chaos.clock.now() == 20
        (result,) = chaos.trace.tool_results()
        assert (result.ok, result.error_type, result.t) == (False, "ReadTimeout", 20.0)

    async def test_async_timeout(self, make_chaos, aclient):
        chaos = make_chaos({"kind": "timeout", "seconds": 15})
        route = chaos.http.get(f"{API}/search", name="search").respond(json={})
        with pytest.raises(httpx.ReadTimeout):
            await aclient.get(f"{API}/search")
        assert route.call_count == 0
        assert chaos.clock.now() == 15

    def test_connection_error_raises_connect_error(self, make_chaos, client):
        chaos = make_chaos({"kind": "connection_error"})
        route = chaos.http.get(f"{API}/search", name="search").respond(json={})
        with pytest.raises(httpx.ConnectError):
            client.get(f"{API}/search")
        assert route.call_count == 0
        assert chaos.trace.tool_results()[0].error_type == "ConnectError"

    async def test_async_connection_error(self, make_chaos, aclient):
        chaos = make_chaos({"kind": "connection_error"})
        chaos.http.get(f"{API}/search", name="search").respond(json={})
        with pytest.raises(httpx.ConnectError):
            await aclient.get(f"{API}/search")

    def test_http_error_is_a_response_with_that_status(self, make_chaos, client):
        chaos = make_chaos({"kind": "http_error", "status": 503})
        route = chaos.http.get(f"{API}/search", name="search").respond(json={"hits": []})
        resp = client.get(f"{API}/search")
        assert resp.status_code == 503
        assert resp.json() == {"error": "Service Unavailable", "status": 503}
        with pytest.raises(httpx.HTTPStatusError):
            resp.raise_for_status()
        assert route.call_count == 0
        call, fault, result = _events(chaos)
        assert isinstance(fault, FaultInjected) and fault.detail["status"] == 503
        assert (result.ok, result.status, result.error_type) == (False, 503, "HTTPStatusError")
        assert result.output == {"error": "Service Unavailable", "status": 503}

    def test_http_error_custom_body(self, make_chaos, client):
        chaos = make_chaos({"kind": "http_error", "status": 400, "body": "bad request, sorry"})
        chaos.http.get(f"{API}/search", name="search").respond(json={})
        resp = client.get(f"{API}/search")
        assert (resp.status_code, resp.text) == (400, "bad request, sorry")

    async def test_async_http_error(self, make_chaos, aclient):
        chaos = make_chaos({"kind": "http_error", "status": 502})
        chaos.http.get(f"{API}/search", name="search").respond(json={})
        assert (await aclient.get(f"{API}/search")).status_code == 502
        assert chaos.trace.tool_results()[0].status == 502

    def test_rate_limit_429_with_retry_after(self, make_chaos, client):
        chaos = make_chaos({"kind": "rate_limit", "retry_after": 12})
        route = chaos.http.get(f"{API}/search", name="search").respond(json={})
        resp = client.get(f"{API}/search")
        assert resp.status_code == 429
        assert resp.headers["Retry-After"] == "12"
        assert route.call_count == 0
        (result,) = chaos.trace.tool_results()
        assert (result.ok, result.status) == (False, 429)

    def test_retry_after_fault_then_success(self, make_chaos, client):
        chaos = make_chaos({"kind": "rate_limit", "retry_after": 2, "first": 1})
        route = chaos.http.get(f"{API}/search", name="search").respond(json={"ok": 1})
        assert client.get(f"{API}/search").status_code == 429
        assert client.get(f"{API}/search").json() == {"ok": 1}
        assert route.call_count == 1
        assert [r.ok for r in chaos.trace.tool_results()] == [False, True]

    def test_latency_then_route(self, make_chaos, client):
        chaos = make_chaos({"kind": "latency", "seconds": 3})
        route = chaos.http.get(f"{API}/search", name="search").respond(json={"ok": 1})
        assert client.get(f"{API}/search").json() == {"ok": 1}
        assert route.call_count == 1
        assert chaos.clock.now() == 3
        assert chaos.trace.tool_results()[0].t == 3.0


# -- argument and output faults ----------------------------------------------------------------


class TestPayloadFaults:
    def test_malformed_params_mutates_json_body(self, make_chaos, client):
        chaos = make_chaos(
            {"kind": "malformed_params", "mutations": ["wrong_type", "out_of_range"]}
        )
        received: list[dict] = []

        def capture(request):
            received.append(json.loads(request.content))
            return httpx.Response(200, json={"ok": True})

        chaos.http.post(f"{API}/book", name="book").mock(side_effect=capture)
        body = {"flight": "TP123", "seats": 2}
        assert client.post(f"{API}/book", json=body).status_code == 200
        (fault,) = chaos.trace.faults("malformed_params")
        assert fault.channel == "http" and fault.target == "book"
        assert received == [apply_mutation(body, fault.detail)]
        assert received[0] != body
        # the trace records what the agent sent
        assert chaos.trace.tool_calls()[0].args["json"] == body

    async def test_async_malformed_params_mutates_json_body(self, make_chaos, aclient):
        chaos = make_chaos({"kind": "malformed_params", "mutations": "missing_required"})
        received: list[dict] = []

        def capture(request):
            received.append(json.loads(request.content))
            return httpx.Response(200, json={})

        chaos.http.post(f"{API}/book", name="book").mock(side_effect=capture)
        await aclient.post(f"{API}/book", json={"flight": "TP123"})
        assert received == [{}]
        assert chaos.trace.faults()[0].detail["key"] == "flight"

    def test_malformed_params_mutates_query(self, make_chaos, client):
        chaos = make_chaos({"kind": "malformed_params", "mutations": "missing_required"})
        received: list[dict] = []

        def capture(request):
            received.append(dict(request.url.params))
            return httpx.Response(200, json={})

        chaos.http.get(f"{API}/search", name="search").mock(side_effect=capture)
        client.get(f"{API}/search", params={"q": "shoes"})
        assert received == [{}]

    def test_repeated_output_replays_previous_response(self, make_chaos, client):
        chaos = make_chaos({"kind": "repeated_output", "nth": 2})
        route = chaos.http.get(f"{API}/price", name="price")
        route.side_effect = [
            httpx.Response(200, json={"price": 100}),
            httpx.Response(200, json={"price": 250}),
            httpx.Response(200, json={"price": 300}),
        ]
        assert client.get(f"{API}/price").json() == {"price": 100}
        second = client.get(f"{API}/price")
        assert (second.status_code, second.json()) == (200, {"price": 100})
        assert route.call_count == 1
        assert client.get(f"{API}/price").json() == {"price": 250}
        outputs = [r.output for r in chaos.trace.tool_results()]
        assert outputs == [{"price": 100}, {"price": 100}, {"price": 250}]
        assert chaos.trace.faults()[0].index == 2

    async def test_async_repeated_output(self, make_chaos, aclient):
        chaos = make_chaos({"kind": "repeated_output", "nth": 2})
        route = chaos.http.get(f"{API}/price", name="price")
        route.side_effect = [httpx.Response(200, json={"p": 1}), httpx.Response(200, json={"p": 2})]
        assert (await aclient.get(f"{API}/price")).json() == {"p": 1}
        assert (await aclient.get(f"{API}/price")).json() == {"p": 1}
        assert route.call_count == 1

    def test_garbled_output_truncates_body(self, make_chaos, client):
        chaos = make_chaos({"kind": "garbled_output", "mode": "truncate"})
        payload = {"results": ["alpha", "beta", "gamma"]}
        route = chaos.http.get(f"{API}/search", name="search").respond(json=payload)
        resp = client.get(f"{API}/search")
        assert route.call_count == 1
        assert resp.status_code == 200
        with pytest.raises(json.JSONDecodeError):
            resp.json()
        assert json.dumps(payload).startswith(resp.text)
        assert len(resp.text) < len(json.dumps(payload))

    def test_garbled_output_non_json(self, make_chaos, client):
        chaos = make_chaos({"kind": "garbled_output", "mode": "non_json"})
        chaos.http.get(f"{API}/search", name="search").respond(json={"a": 1})
        resp = client.get(f"{API}/search")
        assert "<html" in resp.text
        with pytest.raises(json.JSONDecodeError):
            resp.json()


# -- lifecycle -------------------------------------------------------------------------------


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        body = b"real"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def loopback():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join()


class TestLifecycle:
    def test_close_stops_mocking(self, loopback):
        chaos = Chaos.create()
        chaos.http.get(f"{API}/x", name="x").respond(json={})
        with httpx.Client() as c:
            with pytest.raises(NetworkBlocked):
                c.get(loopback)  # while mocked, even loopback is refused
            chaos.close()
            n = len(chaos.trace)
            resp = c.get(loopback)
        assert (resp.status_code, resp.text) == (200, "real")
        assert len(chaos.trace) == n  # nothing recorded after close

    def test_with_block_stops_mocking(self, loopback):
        with Chaos.create() as chaos:
            chaos.http.get(f"{API}/x").respond(json={})
        assert httpx.get(loopback).text == "real"

    def test_close_twice(self, loopback):
        chaos = Chaos.create()
        chaos.http  # noqa: B018 - starts the router
        chaos.close()
        chaos.close()
        assert httpx.get(loopback).text == "real"

    def test_budget_applies_to_http(self, make_chaos, client):
        from pytest_agentchaos.errors import BudgetExhausted
        from pytest_agentchaos.profiles import Budgets

        chaos = make_chaos(budgets=Budgets(max_tool_calls=2))
        route = chaos.http.get(f"{API}/x", name="x").respond(json={})
        client.get(f"{API}/x")
        client.get(f"{API}/x")
        with pytest.raises(BudgetExhausted):
            client.get(f"{API}/x")
        assert route.call_count == 2
