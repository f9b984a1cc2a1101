"""The MCP client seam against real MCP servers run locally over stdio (our shop server in
fixtures/mcp_servers): every fault kind arrives as MCP delivers it and the real SDK sees it as
such; the listing passes through byte for byte; schemas drive malformed_params and repair;
runs replay; hostile cases; no server process is left behind."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp_helpers import SHOP_ARGS, TIME_ARGS, connect, in_memory, new_token, processes
from mcp_helpers import mcp as _sdk  # imported first: it skips this module without the SDK

MCPError = _sdk.MCPError
from mcp.types import CallToolResult  # noqa: E402
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT  # noqa: E402

from pytest_agentchaos import Chaos  # noqa: E402
from pytest_agentchaos.inject.errors import is_injected  # noqa: E402
from pytest_agentchaos.trace import Repair  # noqa: E402
from pytest_agentchaos.verdicts import must_repair  # noqa: E402

SEARCH = {"query": "running shoes"}


def chaos_with(*faults: dict[str, Any], seed: int = 0, **kwargs: Any) -> Chaos:
    return Chaos.create(faults=list(faults), seed=seed, **kwargs)


def text(result: CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if b.type == "text")


def wire(result: Any) -> str:
    return json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True))


# -- the listing -------------------------------------------------------------------------------


async def test_the_listing_passes_through_byte_for_byte_and_gives_each_tool_its_schema() -> None:
    async with connect() as session:  # a real server process, over stdio
        direct = wire(await session.list_tools())
        with chaos_with() as chaos:
            assert chaos.wrap(session) is session  # the same object: every holder sees chaos
            listed = await session.list_tools()
            assert wire(listed) == direct
            await session.call_tool("echo", {"text": "hi"})
        seam_tools = {t.name: t.input_schema for t in listed.tools}
        assert seam_tools["book_fitting"]["properties"]["seats"] == {
            "maximum": 4,
            "minimum": 1,
            "title": "Seats",
            "type": "integer",
        }
        assert chaos.trace.tool_calls("echo")[0].args == {"text": "hi"}
        # after the run the session is the SDK's own again
        assert "call_tool" not in session.__dict__
        assert text(await session.call_tool("echo", {"text": "after"})) == "after"
        assert len(chaos.trace.tool_calls()) == 1


# -- failures, as MCP delivers them ------------------------------------------------------------


async def test_a_tool_error_is_a_result_with_is_error_like_the_servers_own() -> None:
    async with connect() as session:  # a real server process, over stdio
        real = await session.call_tool("fail", {"reason": "out of stock"})
        with chaos_with({"kind": "http_error", "status": 503}) as chaos:
            chaos.wrap(session)
            injected = await session.call_tool("search_products", SEARCH)
    assert type(injected) is CallToolResult
    assert real.is_error and injected.is_error
    assert [b.type for b in injected.content] == [b.type for b in real.content] == ["text"]
    assert text(real) == "Error executing tool fail: out of stock"
    assert text(injected) == "Error executing tool search_products: HTTP 503 Service Unavailable"
    (result,) = chaos.trace.tool_results()
    assert (result.ok, result.error_type, result.status) == (False, "ToolError", 503)
    assert result.output["isError"] is True
    assert chaos.trace.faults()[0].kind == "http_error"


async def test_a_rate_limit_is_a_tool_error_saying_when_to_retry() -> None:
    async with in_memory() as session:
        with chaos_with({"kind": "rate_limit", "retry_after": 12}) as chaos:
            chaos.wrap(session)
            result = await session.call_tool("search_products", SEARCH)
    assert result.is_error
    assert text(result) == (
        "Error executing tool search_products: HTTP 429 Too Many Requests (retry after 12s)"
    )


async def test_a_protocol_error_is_the_sdks_mcp_error_with_its_json_rpc_code() -> None:
    async with connect(TIME_ARGS) as time_server:  # the reference server's own JSON-RPC error
        with pytest.raises(MCPError) as real:
            await time_server.call_tool("no_such_tool", {})
    async with in_memory() as session:
        with chaos_with({"kind": "protocol_error", "code": -32602}) as chaos:
            chaos.wrap(session)
            with pytest.raises(MCPError) as caught:
                await session.call_tool("search_products", SEARCH)
    assert real.value.code == caught.value.code == -32602  # the server's own, and ours
    assert caught.value.message == "Invalid params"
    assert caught.value.error.code == -32602  # the JSON-RPC error data the SDK carries
    assert is_injected(caught.value) and not is_injected(real.value)
    assert type(caught.value).__name__ == "MCPError"
    (result,) = chaos.trace.tool_results()
    assert (result.ok, result.error_type, result.message) == (False, "MCPError", "Invalid params")


@pytest.mark.parametrize(
    ("fault", "timeout", "waited"),
    [
        ({"kind": "timeout", "seconds": 30}, None, 30.0),  # no read timeout: the hang's own
        ({"kind": "timeout", "seconds": 30}, 5.0, 5.0),  # the SDK gives up at its timeout
        ({"kind": "latency", "seconds": 8}, 5.0, 5.0),  # a slow call beyond it times out too
    ],
)
async def test_a_hang_ends_as_the_sdks_request_timeout_on_virtual_time(
    fault: dict[str, Any], timeout: float | None, waited: float
) -> None:
    async with in_memory(read_timeout_seconds=timeout) as session:
        with chaos_with(fault) as chaos:
            chaos.wrap(session)
            with pytest.raises(MCPError) as caught:
                await session.call_tool("search_products", SEARCH)
    assert caught.value.code == REQUEST_TIMEOUT
    assert caught.value.message == "Request 'tools/call' timed out"
    assert chaos.session.now() == pytest.approx(waited)
    assert chaos.trace.tool_results()[0].error_type == "MCPError"


async def test_a_per_call_read_timeout_cuts_the_hang_too_and_a_short_latency_runs() -> None:
    async with in_memory() as session:
        faults = ({"kind": "latency", "seconds": 2, "nth": 1}, {"kind": "timeout", "nth": 2})
        with chaos_with(*faults) as chaos:
            chaos.wrap(session)
            ok = await session.call_tool("echo", {"text": "late"}, read_timeout_seconds=5)
            assert text(ok) == "late" and chaos.session.now() == pytest.approx(2.0)
            with pytest.raises(MCPError):
                await session.call_tool("echo", {"text": "x"}, read_timeout_seconds=3)
            assert chaos.session.now() == pytest.approx(5.0)  # 3 s from the call's start at 2


async def test_a_dropped_connection_reads_as_a_server_that_died_mid_call() -> None:
    async with connect() as dying:
        with pytest.raises(MCPError) as died:
            await dying.call_tool("crash", {})  # the real server process ends mid-call
    async with in_memory() as session:
        with chaos_with({"kind": "connection_error"}) as chaos:
            chaos.wrap(session)
            with pytest.raises(MCPError) as dropped:
                await session.call_tool("search_products", SEARCH)
    assert (died.value.code, died.value.message) == (CONNECTION_CLOSED, "Connection closed")
    assert (dropped.value.code, dropped.value.message) == (CONNECTION_CLOSED, "Connection closed")


async def test_a_lost_reply_runs_the_tool_then_the_connection_closes() -> None:
    async with in_memory() as session:
        fault = {"kind": "lost_reply", "tools": ["book_fitting"], "mode": "reset"}
        with chaos_with(fault) as chaos:
            chaos.wrap(session)
            with pytest.raises(MCPError) as caught:
                await session.call_tool("book_fitting", {"date": "2026-12-01", "seats": 2})
    assert caught.value.code == CONNECTION_CLOSED
    (result,) = chaos.trace.tool_results()
    assert result.ok is False
    assert result.output["content"][0]["text"] == "Booked a standard fitting for 2 on 2026-12-01"


async def test_a_server_that_dies_mid_call_is_recorded_and_leaves_no_process() -> None:
    token = new_token()
    async with connect(SHOP_ARGS, token=token) as session:
        assert len(processes(token)) == 1
        with chaos_with() as chaos:
            chaos.wrap(session)
            with pytest.raises(MCPError):
                await session.call_tool("crash", {})
            with pytest.raises(MCPError) as again:  # the server is gone: so is every later call
                await session.call_tool("echo", {"text": "hi"})
    assert again.value.code == CONNECTION_CLOSED
    results = chaos.trace.tool_results()
    assert [(r.tool, r.ok, r.message) for r in results] == [
        ("crash", False, "Connection closed"),
        ("echo", False, "Connection closed"),
    ]
    assert chaos.trace.faults() == []  # the server's own death, not a fault
    assert processes(token) == []


# -- output faults on the result's content ---------------------------------------------------


async def test_repeated_and_stale_outputs_are_earlier_results_as_the_sdk_returned_them() -> None:
    async with in_memory() as session:
        faults = ({"kind": "repeated_output", "nth": 3}, {"kind": "stale_output", "nth": 4})
        with chaos_with(*faults) as chaos:
            chaos.wrap(session)
            first = await session.call_tool("echo", {"text": "one"})
            second = await session.call_tool("echo", {"text": "two"})
            repeated = await session.call_tool("echo", {"text": "three"})
            stale = await session.call_tool("echo", {"text": "four"})
    assert [text(r) for r in (first, second, repeated, stale)] == ["one", "two", "two", "one"]
    assert type(repeated) is CallToolResult and repeated is not second  # the caller's own copy
    assert repeated.structured_content == {"result": "two"}
    assert [f.kind for f in chaos.trace.faults()] == ["repeated_output", "stale_output"]


async def test_empty_output_empties_the_json_text_and_structured_content_in_their_shape() -> None:
    async with in_memory() as session:
        with chaos_with({"kind": "empty_output"}) as chaos:
            chaos.wrap(session)
            result = await session.call_tool("search_products", SEARCH)
            echoed = await session.call_tool("echo", {"text": "hi"})
    assert not result.is_error
    assert json.loads(text(result)) == {"status": "ok", "results": [], "total": 0}
    assert text(result).startswith("{\n  ")  # its own JSON style, kept
    assert text(echoed) == "" and echoed.structured_content == {}  # a record, emptied
    assert chaos.trace.tool_results()[0].output["content"][0]["text"] == text(result)


async def test_partial_output_and_error_in_body_and_an_injected_instruction() -> None:
    async with in_memory() as session:
        faults = (
            {"kind": "partial_output", "nth": 1, "tools": ["search_products"]},
            {"kind": "error_in_body", "nth": 2, "message": "backend down"},
            {"kind": "injected_instruction", "tools": ["echo"], "canary": "ZX-1"},
        )
        with chaos_with(*faults) as chaos:
            chaos.wrap(session)
            cut = await session.call_tool("search_products", {"query": "shoes"})
            errored = await session.call_tool("search_products", {"query": "shoes"})
            told = await session.call_tool("echo", {"text": "the weather is fine"})
    assert json.loads(text(cut))["results"] == [
        {"sku": "A-100", "name": "Trail running shoes", "price": 120.0}
    ]
    assert json.loads(text(errored))["status"] == "error"
    assert "ZX-1" in text(told) and not told.is_error


async def test_paraphrased_output_rewords_the_previous_answer() -> None:
    async with in_memory() as session:
        with chaos_with({"kind": "paraphrased_output", "nth": 2}) as chaos:
            chaos.wrap(session)
            said = "The store is open until nine tonight."
            first = await session.call_tool("echo", {"text": said})
            again = await session.call_tool("echo", {"text": "something else"})
    assert text(first) == said
    assert text(again) != said and text(again) != "something else"
    assert chaos.trace.faults()[0].kind == "paraphrased_output"


async def test_garbled_output_garbles_the_text() -> None:
    async with in_memory() as session:
        with chaos_with({"kind": "garbled_output", "mode": "non_json"}) as chaos:
            chaos.wrap(session)
            result = await session.call_tool("search_products", SEARCH)
    assert text(result).startswith("<html>")


# -- malformed parameters and repair, the schema's way -----------------------------------------


async def test_malformed_params_are_drawn_from_the_listed_schema_and_the_server_rejects_them() -> (
    None
):
    async with in_memory() as session:
        fault = {"kind": "malformed_params", "mutations": ["out_of_range"]}
        with chaos_with(fault) as chaos:
            chaos.wrap(session)
            result = await session.call_tool("book_fitting", {"date": "2026-12-01", "seats": 2})
    (injected,) = chaos.trace.faults()
    assert injected.detail["key"] == "seats"  # bounded by the listed schema (1..4)
    assert result.is_error and "validation error" in text(result)  # the real server's check
    assert not must_repair(chaos.trace).ok


async def test_repair_true_repairs_against_the_listed_schema_before_the_server_sees_it() -> None:
    async with in_memory() as session:
        fault = {"kind": "malformed_params", "mutations": ["reformat_date"]}
        with chaos_with(fault, seed=3) as chaos:
            chaos.wrap(session, repair=True)
            await session.list_tools()
            results = [
                await session.call_tool("book_fitting", {"date": f"2026-12-{d}", "seats": 2})
                for d in range(13, 18)
            ]
    assert all(not r.is_error for r in results), [text(r) for r in results]
    assert [text(r) for r in results] == [
        f"Booked a standard fitting for 2 on 2026-12-{d}" for d in range(13, 18)
    ]
    assert len(chaos.trace.faults()) >= 2
    verdict = must_repair(chaos.trace, require_problem=True)
    assert verdict.ok, verdict.explanation


async def test_repair_takes_a_mapping_of_tool_name_to_repairer() -> None:
    from pytest_agentchaos.repair import ParamRepairer, ToolSpec

    async with in_memory() as session:
        schema = {t.name: t for t in (await session.list_tools()).tools}["book_fitting"]
        repairer = ParamRepairer(ToolSpec("book_fitting", schema.input_schema))
        fault = {"kind": "malformed_params", "mutations": ["wrong_type"], "tools": ["book_fitting"]}
        with chaos_with(fault) as chaos:
            chaos.wrap(session, repair={"book_fitting": repairer})
            result = await session.call_tool("book_fitting", {"date": "2026-12-01", "seats": 2})
    assert text(result) == "Booked a standard fitting for 2 on 2026-12-01"
    assert chaos.trace.of_type(Repair)


# -- determinism and replay --------------------------------------------------------------------


async def _flaky_run(seed: int, schedule: Any = None) -> tuple[list[Any], list[str]]:
    from pytest_agentchaos.profiles import ProfileRegistry

    seen: list[str] = []
    async with in_memory() as session:
        chaos = Chaos.create(ProfileRegistry.default().get("flaky"), seed=seed, schedule=schedule)
        with chaos:
            chaos.wrap(session)
            for i in range(25):
                try:
                    result = await session.call_tool("echo", {"text": f"n{i}"})
                    seen.append(("error: " if result.is_error else "") + text(result))
                except MCPError as exc:
                    seen.append(f"MCPError {exc.code}")
    return chaos.trace.schedule(), seen


async def test_a_seed_decides_every_fault_and_a_schedule_replays_the_run() -> None:
    schedule, seen = await _flaky_run(seed=11)
    again, seen_again = await _flaky_run(seed=11)
    assert schedule == again and seen == seen_again
    assert any(s.startswith("MCPError") or s.startswith("error: ") for s in seen)
    replayed, seen_replayed = await _flaky_run(seed=999, schedule=schedule)
    assert replayed == schedule and seen_replayed == seen


# -- hostile cases -----------------------------------------------------------------------------


async def test_hostile_wrapping_is_refused_with_one_clear_error() -> None:
    async with in_memory() as session:
        with chaos_with() as chaos:
            chaos.wrap(session)
            with pytest.raises(ValueError, match="wrapped already"):
                chaos.wrap(session)
            with pytest.raises(TypeError, match="keep their own names"):
                chaos_with().wrap(session, name="x")
        refused = r"repair=\.\.\.\): expected True"
        with chaos_with() as chaos, pytest.raises(TypeError, match=refused):
            chaos.wrap(session, repair="yes")
        with chaos_with() as chaos, pytest.raises(TypeError, match="no argument schema|own"):
            chaos.wrap(session, schema={"type": "object"})


async def test_a_huge_result_is_capped_in_the_trace_but_whole_for_the_agent() -> None:
    async with in_memory() as session:
        with chaos_with(max_value=2000) as chaos:
            chaos.wrap(session)
            big = "x" * 200_000
            result = await session.call_tool("echo", {"text": big})
    assert text(result) == big
    assert len(json.dumps(chaos.trace.tool_results()[0].output)) < 5000


async def test_a_tool_the_server_does_not_know_and_no_arguments_pass_through() -> None:
    async with in_memory() as session:
        with chaos_with() as chaos:
            chaos.wrap(session)
            unknown = await session.call_tool("nope")  # protocol 2026-07-28: a tool error
            listed = await session.call_tool("search_products", None)
    assert unknown.is_error and text(unknown) == "Unknown tool: nope"
    assert listed.is_error  # query is required: the server's own validation answers
    assert [r.ok for r in chaos.trace.tool_results()] == [False, False]


async def test_a_closed_run_leaves_the_session_to_the_sdk() -> None:
    async with in_memory() as session:
        chaos = chaos_with({"kind": "http_error"})
        chaos.wrap(session)
        chaos.close()
        result = await session.call_tool("echo", {"text": "free"})
    assert text(result) == "free" and chaos.trace.tool_calls() == []


async def test_a_call_the_repairer_declines_is_a_tool_error_and_never_reaches_the_server() -> None:
    async with in_memory() as session:
        fault = {"kind": "malformed_params", "mutations": ["missing_required"]}
        with chaos_with(fault) as chaos:
            chaos.wrap(session, repair=True)
            result = await session.call_tool("book_fitting", {"date": "2026-12-14", "seats": 2})
    assert type(result) is CallToolResult and result.is_error
    assert text(result).startswith("Error executing tool book_fitting: ")
    assert "not repaired" in text(result)
    (ended,) = chaos.trace.tool_results()
    assert (ended.ok, ended.error_type) == (False, "RepairError")


# -- determinism under xdist -------------------------------------------------------------------

INNER = """
import asyncio, importlib.util, json, pathlib
import pytest
from mcp import Client, MCPError

def shop():
    spec = importlib.util.spec_from_file_location("shop", {shop!r})
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server

@pytest.mark.parametrize("n", range(4))
def test_calls(chaos, n):
    async def run():
        seen = []
        async with Client(shop()) as client:
            chaos.wrap(client.session)
            for i in range(12):
                try:
                    result = await client.session.call_tool("echo", {{"text": f"{{n}}-{{i}}"}})
                    seen.append([result.is_error, result.content[0].text])
                except MCPError as exc:
                    seen.append([exc.code])
        return seen
    seen = asyncio.run(run())
    out = pathlib.Path({out!r}) / f"{{n}}.json"
    out.write_text(json.dumps([seen, chaos.trace.schedule()], sort_keys=True))
"""


def test_the_same_session_seed_gives_the_same_mcp_faults_with_and_without_xdist(
    pytester: pytest.Pytester,
) -> None:
    from mcp_helpers import SHOP

    results = []
    for options in (("-p", "no:xdist"), ("-n", "2")):
        out = pytester.path / f"out{len(results)}"
        out.mkdir()
        pytester.makepyfile(test_inner=INNER.format(shop=str(SHOP), out=str(out)))
        ran = pytester.runpytest_subprocess(
            "-p", "no:randomly", "--chaos-profile=flaky", "--chaos-seed=77", *options
        )
        ran.assert_outcomes(passed=4)
        results.append({p.name: p.read_text() for p in sorted(out.iterdir())})
    assert results[0] == results[1]
    assert any('"kind"' in text for text in results[0].values())  # faults fired
