"""A small agent that plans a meeting across time zones with tools from a real MCP server: the
reference time server (``mcp-server-time`` from PyPI), started locally over stdio.

It converts a meeting time into each participant's zone with the server's ``convert_time``
tool, retrying a call that fails (a tool error, an MCP error) a few times: the escape its
chaos suite checks. The zones have no daylight saving time, so the answers do not depend on
the day the suite runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

#: the reference time server, with UTC as its local zone
SERVER = (sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC")
#: a meeting at 09:30 UTC, and when it is for each participant
MEETING = "09:30"
ZONES = {
    "Asia/Tokyo": "18:30",
    "Asia/Kolkata": "15:00",
    "Africa/Nairobi": "12:30",
    "America/Bogota": "04:30",
}
ATTEMPTS = 5


@contextlib.asynccontextmanager
async def time_server(read_timeout: float = 10.0) -> AsyncIterator[ClientSession]:
    """A session with the time server (stopped on exit); a request waits ``read_timeout``."""
    params = StdioServerParameters(command=SERVER[0], args=list(SERVER[1:]))
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write, read_timeout_seconds=read_timeout) as session,
        ):
            await session.initialize()
            yield session


@contextlib.asynccontextmanager
async def time_server_at(url: str, read_timeout: float = 10.0) -> AsyncIterator[ClientSession]:
    """A session with a time server served over MCP's streamable HTTP at ``url``."""
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write, read_timeout_seconds=read_timeout) as session,
    ):
        await session.initialize()
        yield session


async def ask(session: ClientSession, tool: str, arguments: dict[str, Any]) -> Any:
    """One tool call, tried again when it fails; its JSON answer."""
    problem = ""
    for _ in range(ATTEMPTS):
        try:
            result = await session.call_tool(tool, arguments)
        except MCPError as exc:  # a protocol error, a timeout, a dropped connection
            problem = exc.message
            continue
        text = "".join(getattr(block, "text", "") for block in result.content)
        if result.is_error:  # the tool failed (or its arguments were refused)
            problem = text
            continue
        return json.loads(text)
    raise RuntimeError(f"{tool} failed {ATTEMPTS} times; last: {problem}")


async def plan_meeting(session: ClientSession, time: str = MEETING) -> dict[str, str]:
    """The meeting's local time in each zone of :data:`ZONES`."""
    await session.list_tools()
    local = {}
    for zone in ZONES:
        answer = await ask(
            session,
            "convert_time",
            {"source_timezone": "UTC", "time": time, "target_timezone": zone},
        )
        local[zone] = answer["target"]["datetime"][11:16]
    return local
