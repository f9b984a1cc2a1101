"""Newline-delimited JSON-RPC, as MCP's stdio transport carries it: cutting a byte stream into
messages, and writing the messages the chaos proxy answers with itself."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = [
    "LINE_LIMIT",
    "READ_SIZE",
    "Lines",
    "dumps",
    "error_response",
    "key",
    "read_result",
    "small_reads",
]

#: The longest line (one JSON-RPC message) read from either side.
LINE_LIMIT = 64 * 1024 * 1024
#: How much a read of a pipe asks for. asyncio's pipes ask for 256 KiB, a buffer the allocator
#: maps and unmaps on every read: that tripled the CPU a relayed call costs.
READ_SIZE = 64 * 1024


class Lines:
    """Cuts a byte stream into lines: ``on_line`` gets each whole line (with its newline);
    :meth:`feed` returns ``False`` once a line grows past ``limit`` without ending."""

    def __init__(self, on_line: Callable[[bytes], None], limit: int = LINE_LIMIT) -> None:
        self.on_line = on_line
        self.limit = limit
        self._rest = b""

    def feed(self, data: bytes) -> bool:
        if self._rest:
            data = self._rest + data
        start = 0
        find = data.find
        on_line = self.on_line
        while (end := find(b"\n", start)) >= 0:
            on_line(data[start : end + 1])
            start = end + 1
        self._rest = data[start:] if start < len(data) else b""
        return len(self._rest) <= self.limit

    def end(self) -> None:
        """The stream ended: a last line without its newline is a line too."""
        rest, self._rest = self._rest, b""
        if rest.strip():
            self.on_line(rest + b"\n")


class _Opaque:
    """A ``tools/call`` result the SDK's types do not read: passed on as the server sent it."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def model_dump(self, **_: Any) -> Any:
        return self.data


def small_reads(transport: Any) -> None:
    """Make an asyncio read pipe ask for :data:`READ_SIZE` bytes a read."""
    if isinstance(getattr(transport, "max_size", None), int):
        transport.max_size = READ_SIZE


def key(request_id: Any) -> Any:
    """A request id as a dict key (JSON-RPC ids are strings or numbers; 1 and "1" differ)."""
    return request_id if type(request_id) is int else json.dumps(request_id)


def dumps(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def read_result(data: Any) -> Any:
    """A ``tools/call`` result read with the SDK's types (a ``CallToolResult``)."""
    from mcp.types import CallToolResult

    try:
        return CallToolResult.model_validate(data)
    except Exception:  # another shape (a task, input required): passed on as it came
        return _Opaque(data)


def error_response(request_id: Any, exc: BaseException) -> bytes:
    """The JSON-RPC error response for ``exc`` (an ``MCPError``'s own code and message)."""
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    if isinstance(code, int):
        body: dict[str, Any] = {"code": code, "message": str(getattr(error, "message", exc))}
        data = getattr(error, "data", None)
        if data is not None:
            body["data"] = data
    else:
        body = {"code": -32603, "message": f"{type(exc).__name__}: {exc}"}
    return dumps({"jsonrpc": "2.0", "id": request_id, "error": body})
