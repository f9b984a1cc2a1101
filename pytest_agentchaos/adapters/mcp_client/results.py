"""How faults reach an MCP client as MCP delivers them, built from the SDK's own types.

- A tool's failure (``http_error``, ``rate_limit``) is a ``CallToolResult`` with ``is_error``
  set and text content, worded as the SDK's server words a tool's exception
  (``Error executing tool <name>: ...``): the tool ran into trouble, the protocol did not.
- A protocol error (``protocol_error``) is a JSON-RPC error response: the SDK's ``MCPError``
  with its code and message.
- A timeout is the SDK's request timeout: ``MCPError`` with code ``REQUEST_TIMEOUT`` and the
  message the SDK's dispatcher gives it.
- A dropped connection (``connection_error``, a ``lost_reply`` reset) is the SDK's
  ``MCPError`` with code ``CONNECTION_CLOSED``, as when the server process dies mid-call.
- Output faults act on the result's content: each text block (JSON text stays JSON text) and
  the structured content, the result's type, ``is_error`` and other blocks kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel  # the mcp SDK's own dependency
from pydantic_core import from_json

from ...faults.effects import UNCHANGED, Failure
from ...faults.outputs import _via_json
from ...trace.values import captured_json

__all__ = ["content_text", "mcp_errors", "on_content", "recorded_form", "tool_error", "wire_form"]


def mcp_errors(tool: str) -> Callable[[Failure], BaseException | None]:
    """The builder of ``MCPError`` for an injected failure of ``tool``'s calls (``None`` for a
    failure MCP delivers as a result: a tool error)."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    def build(failure: Failure) -> BaseException | None:
        kind = failure.kind
        if kind == "timeout":
            return MCPError(code=REQUEST_TIMEOUT, message="Request 'tools/call' timed out")
        if kind in ("connection", "reset"):
            return MCPError(code=CONNECTION_CLOSED, message="Connection closed")
        if kind == "protocol":
            return MCPError(code=failure.status or -32603, message=failure.message)
        return None

    return build


def tool_error(tool: str, failure: Failure) -> Any:
    """The ``CallToolResult`` a server sends when ``tool`` failed (``is_error``, text)."""
    from mcp.types import CallToolResult, TextContent

    text = failure.message
    prefix = f"{tool}: "
    if text.startswith(prefix):  # the fault's message names the tool already
        text = text[len(prefix) :]
    return CallToolResult(
        content=[TextContent(text=f"Error executing tool {tool}: {text}")], is_error=True
    )


def content_text(result: Any) -> str:
    """The text blocks of a result, joined (what a tool error says)."""
    parts = [getattr(b, "text", "") for b in getattr(result, "content", ()) or ()]
    return "\n".join(p for p in parts if isinstance(p, str))


def wire_form(result: Any) -> Any:
    """A result as it goes on the wire (JSON data, aliases as in the spec): what the trace
    records."""
    dump = getattr(result, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json", by_alias=True, exclude_none=True)
        except Exception:  # a result the SDK cannot serialise: the trace shows its repr
            return result
    return result


def recorded_form(result: Any) -> Any:
    """What the trace records of a result: its :func:`wire_form`. A pydantic model's is read
    from the JSON text its serializer writes (the same data, in two C calls instead of a dump
    the trace then encodes again to measure and copy it); anything that text cannot stand for
    (an int too long to read, text pydantic cannot write) takes the wire form's own way."""
    kind = type(result)
    if isinstance(result, BaseModel) and kind.model_dump is _MODEL_DUMP:
        try:  # pydantic's own dump: its JSON text holds the same data as its JSON-mode dump
            text = kind.__pydantic_serializer__.to_json(result, by_alias=True, exclude_none=True)
        except Exception:  # not JSON-able as it stands: the wire form says how it is recorded
            pass
        else:
            captured = captured_json(text, _read_json)
            if captured is not None:
                return captured
    return wire_form(result)


_MODEL_DUMP = BaseModel.model_dump


def _read_json(text: str | bytes) -> Any:
    """JSON text pydantic wrote, read by pydantic's own reader: it refuses what the standard
    library's does (ints over 4300 digits, ``NaN`` and infinities), and pydantic writes no
    number that overflows a float (a finite float is written as its shortest repr)."""
    return from_json(text, allow_inf_nan=False)


def on_content(
    act: Callable[[Any], Any], result: Any, *, always: bool = False, json_text: bool = False
) -> Any:
    """``act`` applied to a ``CallToolResult``'s content: each text block's text and the
    structured content. Returns a new result, or :data:`UNCHANGED` when ``act`` changed
    nothing (with ``always``, the result itself then). With ``json_text``, a text block that
    holds a JSON object or array is acted on as that JSON and written back in its own style
    (a paraphrase rewords its prose values, not the text around them)."""
    if json_text:
        plain = act

        def act(value: Any) -> Any:
            found = _via_json(value, plain)
            return plain(value) if found is None else found

    content = getattr(result, "content", None)
    if not isinstance(content, list):
        return result if always else UNCHANGED
    changed = False
    blocks = []
    for block in content:
        text = getattr(block, "text", None)
        if getattr(block, "type", None) != "text" or not isinstance(text, str):
            blocks.append(block)
            continue
        new = act(text)
        if new is UNCHANGED or new == text:
            blocks.append(block)
            continue
        if isinstance(new, bytes):
            new = new.decode("utf-8", "replace")
        elif not isinstance(new, str):
            new = json.dumps(new, ensure_ascii=False, default=str)
        blocks.append(block.model_copy(update={"text": new}))
        changed = True
    structured = result.structured_content
    if structured is not None:
        new = act(structured)
        if new is not UNCHANGED and new != structured:
            structured, changed = new, True
    if not changed:
        return result if always else UNCHANGED
    return result.model_copy(update={"content": blocks, "structured_content": structured})
