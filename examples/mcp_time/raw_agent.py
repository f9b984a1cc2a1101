"""The same meeting planner as a program that speaks MCP itself, with no SDK: newline-delimited
JSON-RPC to the server command it is given, as an agent written in any language does. It
prints the meeting's local times as JSON.

    python raw_agent.py <server command ...>
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from time_agent import ATTEMPTS, MEETING, ZONES


def main(command: list[str]) -> int:
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    ids = iter(range(1, 1_000_000))

    def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        number = next(ids)
        line = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        server.stdin.write(json.dumps(line).encode() + b"\n")
        server.stdin.flush()
        while True:
            answer = server.stdout.readline()
            if not answer:
                raise ConnectionError("the server closed the connection")
            message = json.loads(answer)
            if message.get("id") == number:
                return message  # type: ignore[no-any-return]

    client = {"name": "raw-agent", "version": "1"}
    request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": client})  # fmt: skip
    server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    server.stdin.flush()
    local = {}
    for zone in ZONES:
        arguments = {"source_timezone": "UTC", "time": MEETING, "target_timezone": zone}
        for _ in range(ATTEMPTS):
            message = request("tools/call", {"name": "convert_time", "arguments": arguments})
            result = message.get("result")
            if result is None or result.get("isError"):
                continue  # a JSON-RPC error or a tool error: try again
            answer = json.loads(result["content"][0]["text"])
            local[zone] = answer["target"]["datetime"][11:16]
            break
    server.stdin.close()
    server.wait(30)
    print(json.dumps(local))
    return 0 if len(local) == len(ZONES) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
