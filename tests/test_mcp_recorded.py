"""What the trace records of an MCP tool's result: its wire form, read from the JSON text
pydantic writes (one C call each way) instead of dumped and then encoded again by the trace.
The record is the same as ``capture(wire_form(result))``, the way it was recorded before,
for every kind of result a server sends (text, structured content, errors, images, embedded
resources, annotations) and for hostile ones (huge ints, NaN, bytes, objects whose repr
raises, cycles, models with private attributes or their own ``model_dump``, 10 MB of text).
So with the proxy, which records an answer it relays as it is from the line it read."""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_helpers import mcp as _sdk  # imported first: it skips this module without the SDK

Client = _sdk.Client
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.mcpserver.utilities.types import Image  # noqa: E402
from mcp.types import (  # noqa: E402
    Annotations,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)
from pydantic import PrivateAttr  # noqa: E402

from pytest_agentchaos import Chaos  # noqa: E402
from pytest_agentchaos.adapters.mcp_client.results import recorded_form, wire_form  # noqa: E402
from pytest_agentchaos.trace.values import DEFAULT_MAX_VALUE, capture  # noqa: E402

LIMITS = [300, 4096, DEFAULT_MAX_VALUE]
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def before(result: Any, limit: int) -> Any:
    """What the seam recorded of ``result`` before it read the JSON text."""
    return capture(wire_form(result), limit)


def now(result: Any, limit: int) -> Any:
    return capture(recorded_form(result), limit)


# -- a real server: each kind of result, direct and through the seam ------------------------


def server() -> MCPServer:
    app = MCPServer("kinds")

    @app.tool()
    def say(text: str) -> str:
        """Text back."""
        return text

    @app.tool()
    def lookup(sku: str) -> dict[str, Any]:
        """Structured content."""
        return {"sku": sku, "price": 19.99, "tags": ["é", "中", "😀"], "stock": None}

    @app.tool()
    def broken(reason: str) -> str:
        """A tool error."""
        raise ToolError(reason)

    @app.tool()
    def picture() -> Image:
        """An image."""
        return Image(data=PNG, format="png")

    @app.tool()
    def mixed() -> list[Any]:
        """Blocks of several kinds, annotated."""
        return [
            TextContent(text="caption", annotations=Annotations(audience=["user"], priority=0.5)),
            ImageContent(data=base64.b64encode(PNG).decode(), mime_type="image/png"),
            EmbeddedResource(
                resource=TextResourceContents(
                    uri="file:///notes.txt", text="notes", mime_type="text/plain"
                )
            ),
        ]

    @app.tool()
    def odd_numbers() -> dict[str, Any]:
        """Floats JSON has no word for."""
        return {"nan": math.nan, "inf": math.inf, "big": 10**40, "tiny": 5e-324}

    return app


CALLS = [
    ("say", {"text": "hello"}),
    ("say", {"text": "x" * 300_000}),  # cut in the trace
    ("lookup", {"sku": "A-100"}),
    ("broken", {"reason": "out of stock"}),
    ("picture", {}),
    ("mixed", {}),
    ("odd_numbers", {}),
]


@pytest.mark.parametrize("max_value", [2000, DEFAULT_MAX_VALUE])
async def test_the_trace_records_every_kind_of_result_as_it_did_before(max_value) -> None:
    async with Client(server()) as client:
        session = client.session
        direct = [await session.call_tool(name, args) for name, args in CALLS]
        with Chaos.create(seed=1, max_value=max_value) as chaos:
            chaos.wrap(session)
            seen = [await session.call_tool(name, args) for name, args in CALLS]
    assert seen == direct  # the agent gets the server's results
    results = chaos.trace.tool_results()
    assert [r.tool for r in results] == [name for name, _ in CALLS]
    for result, got in zip(direct, results, strict=True):
        assert got.output == before(result, max_value)
        assert got.ok is not result.is_error
    failed = results[3]
    assert (failed.error_type, failed.message) == (
        "ToolError",
        "Error executing tool broken: out of stock",
    )
    assert results[4].output["content"][0]["type"] == "image"
    assert results[6].output["structuredContent"]["nan"] is None  # as the wire has it


async def test_an_injected_tool_error_records_as_before() -> None:
    async with Client(server()) as client:
        with Chaos.create(faults=[{"kind": "http_error", "status": 503}], seed=1) as chaos:
            chaos.wrap(client.session)
            result = await client.session.call_tool("say", {"text": "hi"})
    (got,) = chaos.trace.tool_results()
    assert result.is_error
    assert got.output == before(result, DEFAULT_MAX_VALUE)
    assert (got.ok, got.status) == (False, 503)


# -- hostile results: the same record whichever way it is read ----------------------------------


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class WithPrivate(CallToolResult):
    _seen: int = PrivateAttr(default=7)


class OwnDump(CallToolResult):
    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
        return {"dumped": "its own way"}


def cyclic() -> dict[str, Any]:
    loop: dict[str, Any] = {"name": "loop"}
    loop["self"] = loop
    return loop


def results() -> list[Any]:
    text = [TextContent(text="hello")]
    return [
        CallToolResult(content=text),
        CallToolResult(content=text, structured_content={"a": [1, 2.5, None, True]}),
        CallToolResult(content=text, is_error=True),
        CallToolResult(content=[ImageContent(data="aGk=", mime_type="image/png")]),
        CallToolResult(content=text, structured_content={"x": math.nan, "y": -math.inf}),
        CallToolResult(content=text, structured_content={"n": 10**4299}),  # 4300 digits
        CallToolResult(content=text, structured_content={"n": 10**4300}),  # 4301: unreadable
        CallToolResult(content=text, structured_content={"n": 10**5000}),
        CallToolResult(content=text, structured_content={"b": b"bytes", "bad": b"\xff"}),
        CallToolResult(content=text, structured_content={"b": b"bytes"}),
        CallToolResult(content=text, structured_content={"s": {3, 1, 2}, "t": (1, "2")}),
        CallToolResult(content=text, structured_content={"k": {1: "a", "1": "b", None: 2}}),
        CallToolResult(content=text, structured_content={"lone": "\ud800"}),
        CallToolResult(content=text, structured_content={"obj": Unprintable()}),
        CallToolResult(content=text, structured_content=cyclic()),
        CallToolResult(content=[TextContent(text="é" * 5_000_000 + '"\\')]),  # 10 MB of UTF-8
        CallToolResult(content=text, meta={"io.modelcontextprotocol/x": {"deep": [[[]]]}}),
        WithPrivate(content=text, structured_content={"v": 1}),
        OwnDump(content=text),
        {"not": "a model"},
        "a string",
        None,
    ]


@pytest.mark.parametrize("limit", LIMITS)
@pytest.mark.parametrize("result", results(), ids=lambda r: type(r).__name__)
def test_a_hostile_result_records_as_before(result, limit) -> None:
    assert now(result, limit) == before(result, limit)


def test_a_model_with_its_own_dump_is_recorded_by_it() -> None:
    assert now(OwnDump(content=[]), DEFAULT_MAX_VALUE) == {"dumped": "its own way"}


def test_the_read_record_does_not_follow_later_changes_to_the_result() -> None:
    result = CallToolResult(content=[TextContent(text="hi")], structured_content={"a": [1]})
    shown = now(result, DEFAULT_MAX_VALUE)
    result.structured_content["a"].append(2)
    result.content[0].text = "changed"
    assert shown["structuredContent"] == {"a": [1]}
    assert shown["content"][0]["text"] == "hi"


_text = st.text(st.characters(codec="utf-8"), max_size=12)
structured = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**25), max_value=10**25)
    | st.floats()
    | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(_text, max_size=3),
    data=st.dictionaries(_text, structured, max_size=5) | st.none(),
    is_error=st.booleans(),
    limit=st.sampled_from(LIMITS),
)
def test_any_result_records_as_before(texts, data, is_error, limit) -> None:
    result = CallToolResult(
        content=[TextContent(text=t) for t in texts], structured_content=data, is_error=is_error
    )
    assert now(result, limit) == before(result, limit)


# -- the proxy: an answer it relays as it is, recorded from the line it read ------------------


def proxy_record(line: bytes, limit: int) -> Any:
    """What the proxy's relay records of ``line``, the server's answer to a plain call."""
    from pytest_agentchaos.adapters.mcp_client.relay import Relay

    with Chaos.create(seed=1, max_value=limit) as chaos:
        relay = Relay(chaos.session, ["unused"])
        relay._plain_calls[7] = chaos.session.begin("tool", "echo", {"text": "hi"})
        relay._read_server(line, forwarded=True)  # forwarded: nothing is written anywhere
    (result,) = chaos.trace.tool_results()
    return result.output, result.ok


def read_before(line: bytes, limit: int) -> Any:
    """What the relay recorded before: the result as ``json.loads`` read it, captured."""
    return capture(json.loads(line)["result"], limit)


ANSWERS = [
    {"content": [{"type": "text", "text": "hello"}], "isError": False},
    {"content": [{"type": "text", "text": "out of stock"}], "isError": True},
    {"content": [], "structuredContent": {"price": 1e15, "tags": ["é", "中"], "n": None}},
    {"content": [{"type": "text", "text": "x" * 200_000}]},  # cut in the trace
    {"content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]},
]


@pytest.mark.parametrize("limit", LIMITS)
@pytest.mark.parametrize("answer", ANSWERS, ids=range(len(ANSWERS)))
def test_the_proxy_records_an_answer_as_before(answer, limit) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": 7, "result": answer}).encode() + b"\n"
    output, ok = proxy_record(line, limit)
    assert output == read_before(line, limit)
    assert ok is not answer.get("isError", False)


@pytest.mark.parametrize(
    "result_text",
    [
        '{"content": [], "structuredContent": {"x": NaN, "y": -Infinity}}',
        '{"content": [], "structuredContent": {"x": 1e400}}',
        '{"content": [], "structuredContent": {"n": ' + "7" * 4300 + "}}",
        '{"content": [{"type": "text", "text": "\\ud800 lone"}]}',
    ],
    ids=["nan", "overflow", "4300 digits", "lone surrogate"],
)
def test_the_proxy_records_a_hostile_answer_as_before(result_text) -> None:
    line = ('{"jsonrpc": "2.0", "id": 7, "result": ' + result_text + "}\n").encode()
    output, _ = proxy_record(line, DEFAULT_MAX_VALUE)
    assert output == read_before(line, DEFAULT_MAX_VALUE)
    json.dumps(output, allow_nan=False)  # the trace holds JSON data whatever the server wrote


@pytest.mark.parametrize(
    "arguments",
    ['{"text": "hi", "n": 1.5}', '{"x": NaN, "y": 1e400}', '{"n": ' + "7" * 4300 + "}"],
    ids=["plain", "nan", "4300 digits"],
)
def test_the_proxy_records_a_call_as_before(arguments) -> None:
    from pytest_agentchaos.adapters.mcp_client.relay import Relay

    line = (
        '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", '
        '"arguments": ' + arguments + "}}\n"
    ).encode()
    with Chaos.create(seed=1) as chaos:
        relay = Relay(chaos.session, ["unused"])
        relay._read_client(line, forwarded=True)  # forwarded: nothing is written anywhere
    (call,) = chaos.trace.tool_calls()
    assert call.args == capture(json.loads(line)["params"]["arguments"], DEFAULT_MAX_VALUE)
