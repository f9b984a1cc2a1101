"""The meeting planner's chaos suite, against the real MCP time server run locally.

In-process, the agent's session is put under chaos in one line (``chaos.wrap(session)``): under
``flaky`` its calls time out (the SDK's own request timeout, on virtual time), fail as tool
errors and lose their connection, and the agent's retries still plan the meeting; under
``malformed`` its arguments are corrupted against the tool's listed schema and repaired
(``repair=True``) or refused before the server sees them, and every answer is still right.

Through the proxy, an agent that speaks MCP itself (no SDK: any language) starts
``agentchaos-mcp`` where it would start the server (``chaos_mcp_proxy``), and the same faults
reach it on the wire; an agent that takes a URL is given the proxy serving MCP over streamable
HTTP on loopback (``chaos_mcp_proxy.serve``).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from time_agent import SERVER, ZONES, plan_meeting, time_server, time_server_at

from pytest_agentchaos import Chaos
from pytest_agentchaos.adapters.mcp_client.fixture import ProxyFactory

HERE = Path(__file__).resolve().parent


def plan_under(chaos: Chaos, **wrap: object) -> dict[str, str]:
    async def run() -> dict[str, str]:
        async with time_server() as session:
            chaos.wrap(session, **wrap)
            return await plan_meeting(session)

    return asyncio.run(run())


# not searched: asserts that seed 20's flaky faults fail a call
@pytest.mark.chaos(profile="flaky", seed=20, explore=False)
def test_under_the_flaky_profile_the_meeting_is_still_planned(chaos: Chaos) -> None:
    assert plan_under(chaos) == ZONES
    kinds = {f.kind for f in chaos.trace.faults()}
    assert kinds & {"timeout", "http_error", "connection_error"}, "no call failed: proves nothing"
    failed = [r for r in chaos.trace.tool_results() if not r.ok]
    assert {r.error_type for r in failed} <= {"MCPError", "ToolError"}  # as MCP delivers them


@pytest.mark.chaos(profile="malformed", seed=2)
@pytest.mark.must_repair
def test_under_the_malformed_profile_every_answer_is_the_one_asked_for(chaos: Chaos) -> None:
    assert plan_under(chaos, repair=True) == ZONES
    assert chaos.trace.faults("malformed_params"), "no call was corrupted: proves nothing"


# the description's "use 'UTC' if no target timezone provided by the user" holds only where a
# task shows the user gave none: a zone lost on the way is declined, and the agent tries again
@pytest.mark.chaos(profile="malformed", seed=7)
@pytest.mark.must_repair
def test_a_removed_target_zone_is_not_filled_with_the_source_zones_default(chaos: Chaos) -> None:
    assert plan_under(chaos, repair=True) == ZONES
    assert chaos.trace.faults("malformed_params"), "no call was corrupted: proves nothing"


@pytest.mark.chaos(profile="flaky", seed=2)
def test_an_agent_in_any_language_through_the_chaos_proxy(chaos_mcp_proxy: ProxyFactory) -> None:
    proxy = chaos_mcp_proxy(list(SERVER))
    agent = subprocess.run(
        [sys.executable, str(HERE / "raw_agent.py"), *proxy.argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=HERE,
    )
    assert agent.returncode == 0, agent.stderr
    assert json.loads(agent.stdout) == ZONES
    summary = agent.stderr.strip().splitlines()[-1]
    assert summary.startswith("agentchaos-mcp: the client closed the connection; ")
    trace = proxy.trace()
    assert trace.faults(), "the proxy injected nothing: proves nothing"
    assert len(trace.tool_calls("convert_time")) > len(ZONES)  # the failed calls, tried again


@pytest.mark.chaos(profile="flaky", seed=2, allow_hosts=["127.0.0.1"])  # the proxy's address
def test_an_agent_over_streamable_http_through_the_chaos_proxy(
    chaos_mcp_proxy: ProxyFactory,
) -> None:
    served = chaos_mcp_proxy.serve(list(SERVER))

    async def run() -> dict[str, str]:
        # the server starts when the session opens: its start-up is part of `initialize`
        async with time_server_at(served.url, read_timeout=30) as session:
            return await plan_meeting(session)

    assert asyncio.run(run()) == ZONES
    code, stderr = served.stop()
    assert code == 0, stderr
    summary = stderr.strip().splitlines()[-1]
    assert summary.startswith("agentchaos-mcp: the proxy was asked to stop; 1 MCP session, ")
    trace = served.trace()
    assert trace.faults(), "the proxy injected nothing: proves nothing"
    assert len(trace.tool_calls("convert_time")) > len(ZONES)  # the failed calls, tried again
