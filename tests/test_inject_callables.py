"""Python tools wrapped with `Chaos.wrap` / `wrap_tools`: identity kept, faults applied
before the real tool runs, and every call traced with step indexes and virtual times."""

from __future__ import annotations

import inspect
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.faults import parse_faults
from pytest_agentchaos.faults.mutations import apply_mutation
from pytest_agentchaos.inject import (
    Chaos,
    InjectedConnectionError,
    InjectedFault,
    InjectedHTTPError,
    InjectedTimeout,
)
from pytest_agentchaos.profiles import inline_profile
from pytest_agentchaos.trace import FaultInjected, RunEnded, RunStarted, ToolCall, ToolResult


class Counter:
    """A tool with a side effect we can watch."""

    def __init__(self):
        self.calls: list[dict] = []

    def search(self, query: str, limit: int = 5) -> dict:
        """Search the catalogue."""
        self.calls.append({"query": query, "limit": limit})
        return {"query": query, "results": [f"{query}-{i}" for i in range(limit)]}


def book_flight(origin: str, destination: str, date: str, seats: int = 1) -> dict:
    """Book a flight; returns the booking."""
    return {"origin": origin, "destination": destination, "date": date, "seats": seats}


# -- identity --------------------------------------------------------------------------------


class TestIdentity:
    def test_keeps_name_doc_signature(self, make_chaos):
        chaos = make_chaos()
        wrapped = chaos.wrap(book_flight)
        assert wrapped.__name__ == "book_flight"
        assert wrapped.__doc__ == "Book a flight; returns the booking."
        assert inspect.signature(wrapped) == inspect.signature(book_flight)
        assert wrapped.__wrapped__ is book_flight

    def test_async_stays_a_coroutine_function(self, make_chaos):
        async def fetch(url: str, *, retries: int = 3) -> str:
            """Fetch a URL."""
            return url

        wrapped = make_chaos().wrap(fetch)
        assert inspect.iscoroutinefunction(wrapped)
        assert wrapped.__name__ == "fetch"
        assert wrapped.__doc__ == "Fetch a URL."
        assert inspect.signature(wrapped) == inspect.signature(fetch)

    def test_sync_stays_sync(self, make_chaos):
        wrapped = make_chaos().wrap(book_flight)
        assert not inspect.iscoroutinefunction(wrapped)

    def test_custom_name_is_trace_name(self, make_chaos):
        chaos = make_chaos()
        wrapped = chaos.wrap(book_flight, name="flights.book")
        wrapped("AMS", "LIS", "2025-03-01")
        assert [c.tool for c in chaos.trace.tool_calls()] == ["flights.book"]
        # frameworks read __name__ as the tool's name: it matches the trace's
        assert wrapped.__name__ == "flights.book"
        assert wrapped.__doc__ == book_flight.__doc__

    @pytest.mark.parametrize("bad", [None, 42, "search", {"a": 1}])
    def test_non_callable_raises_type_error(self, make_chaos, bad):
        with pytest.raises(TypeError, match="callable"):
            make_chaos().wrap(bad)

    def test_callable_object_named_by_class(self, make_chaos):
        class Lookup:
            def __call__(self, key):
                return key.upper()

        chaos = make_chaos()
        assert chaos.wrap(Lookup())("x") == "X"
        assert chaos.trace.tool_calls()[0].tool == "Lookup"

    async def test_async_callable_object(self, make_chaos):
        class Lookup:
            async def __call__(self, key):
                return key.upper()

        chaos = make_chaos()
        assert await chaos.wrap(Lookup())("x") == "X"
        assert chaos.trace.tool_results()[0].output == "X"


# -- clean calls -----------------------------------------------------------------------------


class TestCleanCalls:
    def test_positional_and_keyword_args_recorded_by_name(self, make_chaos):
        chaos = make_chaos()
        wrapped = chaos.wrap(book_flight)
        out = wrapped("AMS", destination="LIS", date="2025-03-01")
        assert out == book_flight("AMS", "LIS", "2025-03-01")
        (call,) = chaos.trace.tool_calls()
        assert call.args == {"origin": "AMS", "destination": "LIS", "date": "2025-03-01"}
        assert call.channel == "tool"
        (result,) = chaos.trace.tool_results()
        assert result.ok and result.output == out and result.error_type is None

    def test_var_args_and_kwargs(self, make_chaos):
        def tool(a, b=2, *rest, flag=False, **extra):
            return (a, b, rest, flag, extra)

        chaos = make_chaos()
        wrapped = chaos.wrap(tool)
        assert wrapped(1, 3, 4, 5, flag=True, z=9) == (1, 3, (4, 5), True, {"z": 9})
        assert chaos.trace.tool_calls()[0].args == {  # the trace holds JSON data: lists
            "a": 1,
            "b": 3,
            "rest": [4, 5],
            "flag": True,
            "z": 9,
        }

    def test_positional_only(self, make_chaos):
        def tool(a, /, b):
            return a - b

        chaos = make_chaos()
        assert chaos.wrap(tool)(10, b=3) == 7
        assert chaos.trace.tool_calls()[0].args == {"a": 10, "b": 3}

    async def test_async_tool(self, make_chaos):
        calls = []

        async def lookup(city: str) -> dict:
            calls.append(city)
            return {"city": city, "temp": 21}

        chaos = make_chaos()
        wrapped = chaos.wrap(lookup)
        assert await wrapped("Lisbon") == {"city": "Lisbon", "temp": 21}
        assert calls == ["Lisbon"]
        assert chaos.trace.tool_results()[0].output == {"city": "Lisbon", "temp": 21}

    def test_index_counts_per_tool(self, make_chaos):
        chaos = make_chaos()
        a, b = chaos.wrap(lambda: 1, name="a"), chaos.wrap(lambda: 2, name="b")
        a(), b(), a(), a(), b()
        assert [(c.tool, c.index) for c in chaos.trace.tool_calls()] == [
            ("a", 1),
            ("b", 1),
            ("a", 2),
            ("a", 3),
            ("b", 2),
        ]
        assert [c.step for c in chaos.trace.tool_calls()] == [1, 2, 3, 4, 5]

    @settings(max_examples=30, deadline=None)
    @given(st.lists(st.sampled_from(["search", "book", "cancel"]), max_size=25))
    def test_profile_none_two_events_per_call(self, names):
        with Chaos.create(profile=None, seed=1) as chaos:
            tools = {
                n: chaos.wrap(lambda n=n, **kw: n, name=n) for n in ("search", "book", "cancel")
            }
            for n in names:
                assert tools[n](q=1) == n
        events = list(chaos.trace)
        assert isinstance(events[0], RunStarted)
        assert isinstance(events[-1], RunEnded) and events[-1].status == "completed"
        events = events[1:-1]
        assert len(events) == 2 * len(names)
        pairs = list(zip(events[0::2], events[1::2], strict=False))
        for (call, result), name in zip(pairs, names, strict=False):
            assert isinstance(call, ToolCall) and isinstance(result, ToolResult)
            assert call.tool == result.tool == name
            assert call.step == result.step
        assert not chaos.trace.faults()


# -- exceptions from the real tool -------------------------------------------------------------


class TestRealToolErrors:
    def test_recorded_and_reraised_unchanged(self, make_chaos):
        boom = KeyError("no such flight")

        def cancel(booking_id):
            raise boom

        chaos = make_chaos()
        with pytest.raises(KeyError) as info:
            chaos.wrap(cancel)("B123")
        assert info.value is boom
        (result,) = chaos.trace.tool_results()
        assert not result.ok
        assert result.error_type == "KeyError"
        assert "no such flight" in result.message
        assert chaos.trace.errors() == [result]

    async def test_async_recorded_and_reraised(self, make_chaos):
        class QuotaError(Exception):
            status_code = 402

        async def pay(amount):
            raise QuotaError("over quota")

        chaos = make_chaos()
        with pytest.raises(QuotaError, match="over quota"):
            await chaos.wrap(pay)(10)
        (result,) = chaos.trace.tool_results()
        assert (result.ok, result.error_type, result.status) == (False, "QuotaError", 402)


# -- error faults --------------------------------------------------------------------------


ERRORS = [
    ({"kind": "timeout", "seconds": 5}, InjectedTimeout, TimeoutError),
    ({"kind": "connection_error"}, InjectedConnectionError, ConnectionError),
    ({"kind": "http_error", "status": 503}, InjectedHTTPError, InjectedFault),
    ({"kind": "rate_limit", "retry_after": 7}, InjectedHTTPError, InjectedFault),
]


class TestErrorFaults:
    @pytest.mark.parametrize(("fault", "exc_type", "builtin"), ERRORS)
    def test_raises_before_tool_runs(self, make_chaos, fault, exc_type, builtin):
        tool = Counter()
        chaos = make_chaos(fault)
        wrapped = chaos.wrap(tool.search)
        with pytest.raises(exc_type) as info:
            wrapped("shoes")
        assert isinstance(info.value, builtin)
        assert isinstance(info.value, Exception)
        assert info.value.injected is True
        assert info.value.fault is chaos.trace.faults()[0]
        assert tool.calls == []

    @pytest.mark.parametrize(("fault", "exc_type", "builtin"), ERRORS)
    async def test_async_raises_before_tool_runs(self, make_chaos, fault, exc_type, builtin):
        ran = []

        async def search(query):
            ran.append(query)
            return query

        chaos = make_chaos(fault)
        with pytest.raises(exc_type):
            await chaos.wrap(search)("shoes")
        assert ran == []

    def test_http_error_attributes(self, make_chaos):
        chaos = make_chaos({"kind": "http_error", "status": 503})
        with pytest.raises(InjectedHTTPError) as info:
            chaos.wrap(Counter().search)("x")
        exc = info.value
        assert exc.status == exc.status_code == 503
        assert exc.retry_after is None
        assert exc.body == {"error": "Service Unavailable", "status": 503}

    def test_rate_limit_attributes(self, make_chaos):
        chaos = make_chaos({"kind": "rate_limit", "retry_after": 7})
        with pytest.raises(InjectedHTTPError) as info:
            chaos.wrap(Counter().search)("x")
        exc = info.value
        assert exc.status == exc.status_code == 429
        assert exc.retry_after == 7
        assert exc.headers == {"Retry-After": "7"}

    def test_timeout_advances_virtual_clock(self, make_chaos):
        chaos = make_chaos({"kind": "timeout", "seconds": 12.5})
        with pytest.raises(TimeoutError, match="timed out after 12.5s"):
            chaos.wrap(Counter().search)("x")
        assert chaos.clock.now() == 12.5
        assert chaos.session.now() == 12.5

    async def test_async_timeout_advances_virtual_clock(self, make_chaos):
        async def search(q):
            return q

        chaos = make_chaos({"kind": "timeout", "seconds": 30})
        with pytest.raises(TimeoutError):
            await chaos.wrap(search)("x")
        assert chaos.clock.now() == 30

    def test_trace_of_failed_call(self, make_chaos):
        chaos = make_chaos({"kind": "timeout", "seconds": 5})
        with pytest.raises(TimeoutError):
            chaos.wrap(Counter().search)("shoes", limit=2)
        events = list(chaos.trace)[1:]
        assert [type(e) for e in events] == [ToolCall, FaultInjected, ToolResult]
        call, fault, result = events
        assert (call.tool, call.index, call.step, call.t) == ("search", 1, 1, 0.0)
        assert call.args == {"query": "shoes", "limit": 2}
        assert (fault.kind, fault.target, fault.channel, fault.index, fault.step, fault.t) == (
            "timeout",
            "search",
            "tool",
            1,
            1,
            0.0,
        )
        assert fault.detail == {"seconds": 5.0}
        assert (result.ok, result.error_type, result.step, result.t) == (
            False,
            "InjectedTimeout",
            1,
            5.0,
        )
        assert "timed out" in result.message

    def test_trace_status_for_injected_http_error(self, make_chaos):
        chaos = make_chaos({"kind": "http_error", "status": 502})
        with pytest.raises(InjectedHTTPError):
            chaos.wrap(Counter().search)("x")
        (result,) = chaos.trace.tool_results()
        assert (result.ok, result.error_type, result.status) == (False, "InjectedHTTPError", 502)
        assert "502" in result.message

    def test_nth_selector_hits_only_that_call(self, make_chaos):
        tool = Counter()
        chaos = make_chaos({"kind": "connection_error", "nth": 2})
        wrapped = chaos.wrap(tool.search)
        wrapped("a")
        with pytest.raises(ConnectionError):
            wrapped("b")
        wrapped("c")
        assert [c["query"] for c in tool.calls] == ["a", "c"]
        assert [r.ok for r in chaos.trace.tool_results()] == [True, False, True]

    def test_agent_can_catch_injected_fault_and_retry(self, make_chaos):
        tool = Counter()
        chaos = make_chaos({"kind": "timeout", "seconds": 2, "first": 2})
        wrapped = chaos.wrap(tool.search)
        for _attempt in range(5):
            try:
                out = wrapped("x", limit=1)
                break
            except TimeoutError:
                continue
        assert out == {"query": "x", "results": ["x-0"]}
        assert len(tool.calls) == 1
        assert chaos.clock.now() == 4


# -- latency ------------------------------------------------------------------------------


class TestLatency:
    def test_delays_then_runs(self, make_chaos):
        seen_at = []
        chaos = make_chaos({"kind": "latency", "seconds": 4})

        def search(q):
            seen_at.append(chaos.clock.now())
            return q.upper()

        assert chaos.wrap(search)("x") == "X"
        assert seen_at == [4]
        call, result = chaos.trace.tool_calls()[0], chaos.trace.tool_results()[0]
        assert (call.t, result.t, result.ok, result.output) == (0.0, 4.0, True, "X")
        assert chaos.trace.faults()[0].detail == {"seconds": 4.0}

    async def test_async_delays_then_runs(self, make_chaos):
        chaos = make_chaos({"kind": "latency", "seconds": 3})
        seen_at = []

        async def search(q):
            seen_at.append(chaos.clock.now())
            return q

        assert await chaos.wrap(search)("x") == "x"
        assert seen_at == [3]

    def test_latency_range_is_drawn_within_bounds(self, make_chaos):
        chaos = make_chaos({"kind": "latency", "seconds": [1, 2]})
        wrapped = chaos.wrap(lambda: None, name="t")
        for _ in range(10):
            wrapped()
        delays = [f.detail["seconds"] for f in chaos.trace.faults()]
        assert len(delays) == 10
        assert all(1 <= d <= 2 for d in delays)
        assert chaos.clock.now() == pytest.approx(sum(delays))


# -- malformed params ----------------------------------------------------------------------


FLIGHT_SCHEMA = {
    "type": "object",
    "properties": {
        "origin": {"type": "string"},
        "destination": {"type": "string"},
        "date": {"type": "string", "format": "date"},
        "seats": {"type": "integer", "minimum": 1, "maximum": 9},
        "cabin": {"type": "string", "enum": ["economy", "business"]},
    },
    "required": ["origin", "destination", "date"],
}


def _capture():
    got: list[dict] = []

    def book(origin=None, destination=None, date=None, seats=1, cabin="economy", **extra):
        got.append(
            {
                "origin": origin,
                "destination": destination,
                "date": date,
                "seats": seats,
                "cabin": cabin,
                **extra,
            }
        )
        return "booked"

    return book, got


GOOD = {"origin": "AMS", "destination": "LIS", "date": "2025-03-01", "seats": 2, "cabin": "economy"}


class TestMalformedParams:
    @pytest.mark.parametrize(
        "mutation",
        [
            "wrong_type",
            "reformat_date",
            "out_of_range",
            "missing_required",
            "invalid_enum",
            "unknown_key",
        ],
    )
    def test_tool_receives_corrupted_args(self, make_chaos, mutation):
        book, got = _capture()
        chaos = make_chaos({"kind": "malformed_params", "mutations": mutation})
        # an unknown key is a corruption only where the schema refuses extra keys
        schema = {**FLIGHT_SCHEMA, "additionalProperties": False}
        wrapped = chaos.wrap(book, name="book", schema=schema)
        assert wrapped(**GOOD) == "booked"
        (fault,) = chaos.trace.faults("malformed_params")
        detail = fault.detail
        assert detail["mutation"] == mutation
        expected = apply_mutation(GOOD, detail)
        received = got[0]
        assert received != {**GOOD}
        if mutation == "missing_required":
            assert detail["key"] in FLIGHT_SCHEMA["required"]
            # the tool falls back to its default because the argument was dropped
            assert received[detail["key"]] is None
        else:
            assert received[detail["key"]] == detail["value"] == expected[detail["key"]]
        if mutation == "reformat_date":
            assert detail["key"] == "date" and received["date"] != "2025-03-01"
        if mutation == "out_of_range":
            assert detail["key"] == "seats" and not 1 <= received["seats"] <= 9
        if mutation == "invalid_enum":
            assert detail["key"] == "cabin"
            assert received["cabin"] not in ("economy", "business")
        # the trace shows the call as the agent made it
        assert chaos.trace.tool_calls()[0].args == GOOD

    def test_positional_call_is_corrupted_too(self, make_chaos):
        got = []

        def tool(city, days):
            got.append((city, days))
            return "ok"

        chaos = make_chaos({"kind": "malformed_params", "mutations": "wrong_type"})
        chaos.wrap(tool)("Lisbon", 3)
        detail = chaos.trace.faults()[0].detail
        assert detail["key"] in ("city", "days")
        assert got == [tuple(apply_mutation({"city": "Lisbon", "days": 3}, detail).values())]
        assert detail["value"] != detail["original"]

    def test_openai_style_schema_accepted(self, make_chaos):
        book, got = _capture()
        schema = {"type": "function", "function": {"name": "book", "parameters": FLIGHT_SCHEMA}}
        chaos = make_chaos({"kind": "malformed_params", "mutations": "invalid_enum"})
        chaos.wrap(book, schema=schema)(**GOOD)
        assert chaos.trace.faults()[0].detail["key"] == "cabin"
        assert got[0]["cabin"] not in ("economy", "business")

    def test_corrupted_call_can_make_tool_fail(self, make_chaos):
        ran = []

        def tool(city: str):
            ran.append(city)
            return city.upper()

        chaos = make_chaos({"kind": "malformed_params", "mutations": "missing_required"})
        with pytest.raises(TypeError):
            chaos.wrap(tool)(city="Lisbon")
        assert ran == []
        (result,) = chaos.trace.tool_results()
        assert (result.ok, result.error_type) == (False, "TypeError")

    async def test_async_tool_receives_corrupted_args(self, make_chaos):
        got = []

        async def tool(count: int):
            got.append(count)
            return count

        chaos = make_chaos({"kind": "malformed_params", "mutations": "wrong_type"})
        out = await chaos.wrap(tool)(count=4)
        detail = chaos.trace.faults()[0].detail
        assert (detail["mutation"], detail["key"]) == ("wrong_type", "count")
        assert got == [detail["value"]] and out == detail["value"]
        assert not isinstance(out, int)

    def test_no_applicable_mutation_means_no_fault(self, make_chaos):
        book, got = _capture()
        chaos = make_chaos({"kind": "malformed_params", "mutations": "invalid_enum"})
        chaos.wrap(book)(origin="AMS")  # no schema: no enum to break
        assert chaos.trace.faults() == []
        assert got[0]["origin"] == "AMS"


# -- repeated / garbled output ---------------------------------------------------------------


class TestOutputFaults:
    def test_repeated_output_returns_previous_without_calling(self, make_chaos):
        tool = Counter()
        chaos = make_chaos({"kind": "repeated_output", "nth": 2})
        wrapped = chaos.wrap(tool.search)
        first = wrapped("shoes", limit=1)
        second = wrapped("hats", limit=3)
        assert second == first == {"query": "shoes", "results": ["shoes-0"]}
        assert len(tool.calls) == 1
        results = chaos.trace.tool_results()
        assert [r.ok for r in results] == [True, True]
        assert results[1].output == first
        assert chaos.trace.faults()[0].kind == "repeated_output"

    def test_repeated_output_needs_a_previous_output(self, make_chaos):
        tool = Counter()
        chaos = make_chaos({"kind": "repeated_output"})
        wrapped = chaos.wrap(tool.search)
        wrapped("a", limit=1)  # nothing to repeat yet: runs for real
        assert wrapped("b", limit=1) == {"query": "a", "results": ["a-0"]}
        assert len(tool.calls) == 1
        assert [f.index for f in chaos.trace.faults()] == [2]

    async def test_async_repeated_output(self, make_chaos):
        calls = []

        async def now(tz):
            calls.append(tz)
            return f"12:00 {tz}"

        chaos = make_chaos({"kind": "repeated_output", "nth": 2})
        wrapped = chaos.wrap(now)
        assert await wrapped("UTC") == "12:00 UTC"
        assert await wrapped("CET") == "12:00 UTC"
        assert calls == ["UTC"]

    def test_garbled_truncate(self, make_chaos):
        tool = Counter()
        chaos = make_chaos({"kind": "garbled_output", "mode": "truncate"})
        out = chaos.wrap(tool.search)("shoes", limit=3)
        real = {"query": "shoes", "results": ["shoes-0", "shoes-1", "shoes-2"]}
        assert len(tool.calls) == 1  # the real tool ran
        assert isinstance(out, str)
        assert json.dumps(real).startswith(out) and len(out) < len(json.dumps(real))
        with pytest.raises(json.JSONDecodeError):
            json.loads(out)
        assert chaos.trace.tool_results()[0].output == out

    def test_garbled_non_json(self, make_chaos):
        chaos = make_chaos({"kind": "garbled_output", "mode": "non_json"})
        out = chaos.wrap(lambda: {"ok": True}, name="t")()
        assert isinstance(out, str) and out.lstrip().startswith("<html")
        with pytest.raises(json.JSONDecodeError):
            json.loads(out)

    def test_garbled_bytes_stay_bytes(self, make_chaos):
        chaos = make_chaos({"kind": "garbled_output", "mode": "truncate"})
        out = chaos.wrap(lambda: b'{"a": "bcdefgh"}', name="t")()
        assert isinstance(out, bytes) and b'{"a": "bcdefgh"}'.startswith(out)
        assert len(out) < len(b'{"a": "bcdefgh"}')

    async def test_async_garbled(self, make_chaos):
        async def t():
            return "abcdefgh"

        chaos = make_chaos({"kind": "garbled_output", "mode": "truncate"})
        assert await chaos.wrap(t)() == "abcd"


# -- wrap_tools ----------------------------------------------------------------------------


class TestWrapTools:
    def test_dict_names_by_key_and_uses_schemas(self, make_chaos):
        book, got = _capture()
        chaos = make_chaos(
            {"kind": "malformed_params", "mutations": "invalid_enum", "tools": "book"}
        )
        tools = chaos.wrap_tools(
            {"book": book, "search": Counter().search}, schemas={"book": FLIGHT_SCHEMA}
        )
        assert set(tools) == {"book", "search"}
        tools["book"](**GOOD)
        tools["search"]("x", limit=1)
        assert [c.tool for c in chaos.trace.tool_calls()] == ["book", "search"]
        (fault,) = chaos.trace.faults()
        assert (fault.target, fault.detail["key"]) == ("book", "cabin")
        assert got[0]["cabin"] not in ("economy", "business")

    def test_list_names_by_dunder_name(self, make_chaos):
        def alpha():
            return "a"

        async def beta():
            return "b"

        chaos = make_chaos({"kind": "timeout", "seconds": 1, "tools": "alpha"})
        wrapped = chaos.wrap_tools([alpha, beta])
        assert isinstance(wrapped, list) and len(wrapped) == 2
        assert [w.__name__ for w in wrapped] == ["alpha", "beta"]
        with pytest.raises(TimeoutError):
            wrapped[0]()
        assert inspect.iscoroutinefunction(wrapped[1])
        assert [f.target for f in chaos.trace.faults()] == ["alpha"]

    @pytest.mark.parametrize("bad", ["search", 5, None])
    def test_rejects_non_collections(self, make_chaos, bad):
        with pytest.raises(TypeError):
            make_chaos().wrap_tools(bad)

    def test_rejects_non_callable_members(self, make_chaos):
        with pytest.raises(TypeError):
            make_chaos().wrap_tools({"a": "not callable"})


# -- profiles and selectors through Chaos.create -----------------------------------------------


class TestProfileFaults:
    def test_inline_profile_faults_apply(self):
        profile = inline_profile(
            "p", parse_faults([{"kind": "connection_error", "tools": "pay*"}], "p")
        )
        with Chaos.create(profile=profile) as chaos:
            search = chaos.wrap(lambda: "ok", name="search")
            pay = chaos.wrap(lambda: "paid", name="payment")
            assert search() == "ok"
            with pytest.raises(ConnectionError):
                pay()
        assert chaos.trace.meta["profile"] == "p"

    def test_create_faults_go_before_profile_faults(self):
        profile = inline_profile("p", parse_faults([{"kind": "connection_error"}], "p"))
        with (
            Chaos.create(
                profile=profile, faults=parse_faults([{"kind": "timeout", "seconds": 1}], "t")
            ) as chaos,
            pytest.raises(TimeoutError),
        ):
            chaos.wrap(lambda: 1, name="t")()
        assert [f.kind for f in chaos.trace.faults()] == ["timeout"]
        assert [f["kind"] for f in chaos.trace.meta["faults"]] == ["timeout", "connection_error"]
