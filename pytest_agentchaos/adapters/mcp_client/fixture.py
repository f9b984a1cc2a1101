"""What the ``chaos_mcp_proxy`` fixture hands a test: the command that starts the chaos MCP
proxy (``agentchaos-mcp``) in front of a stdio MCP server, with the test's profile and seed, for
an agent in any language to start where it would start the server; and the proxy's trace once
the agent is done. Free of pytest (the plugin's fixture builds one per test)."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...trace.trace import Trace

__all__ = ["McpProxy", "ProxyFactory"]

#: How a test starts the proxy: this Python, the proxy's module (the console script may not be
#: on PATH in a virtualenv that is not activated).
PROXY_MODULE = (sys.executable, "-m", "pytest_agentchaos.adapters.mcp_client.cli")


@dataclass(frozen=True)
class McpProxy:
    """One proxy command: ``argv`` (give it to the agent as its MCP server's command) and
    ``trace_path``, where the proxy writes its trace when the session ends."""

    argv: tuple[str, ...]
    trace_path: Path

    def trace(self) -> Trace:
        """The proxy's trace (after the agent ended the session; ``FileNotFoundError`` before)."""
        return Trace.from_json(self.trace_path.read_text(encoding="utf-8"))


class ProxyFactory:
    """``factory(server_argv)`` -> an :class:`McpProxy` with the run's profile and seed."""

    def __init__(self, chaos: Any, directory: Path) -> None:
        self.chaos = chaos
        self.directory = directory
        self._n = itertools.count(1)

    def __call__(self, server: Sequence[str], *, repair: bool = False) -> McpProxy:
        from ...profiles import builtin_dir

        if isinstance(server, str) or not server or not all(isinstance(a, str) for a in server):
            raise TypeError(
                "chaos_mcp_proxy(server): the MCP server's command as a list of strings, "
                f"got {server!r}"
            )
        profile = self.chaos.profile
        options = ["--profile", profile.name, "--seed", str(self.chaos.seed)]
        source = Path(profile.source)
        planned = self.chaos.trace.meta.get("faults") or []
        if profile.source == "<inline>" or len(planned) != len(profile.faults):
            if planned:
                raise ValueError(
                    "chaos_mcp_proxy: the proxy runs in its own process and loads its profile "
                    "by name; this test's faults are inline (a marker's faults=): put them in "
                    "a profile file"
                )
        elif source.parent.resolve() != builtin_dir().resolve():
            options += ["--profile-dir", str(source.parent)]
        trace_path = self.directory / f"mcp-proxy-{next(self._n)}.json"
        options += ["--trace", str(trace_path)]
        if repair:
            options.append("--repair")
        return McpProxy((*PROXY_MODULE, *options, "--", *server), trace_path)
