"""The plugin's fixtures: ``agentchaos`` (``chaos``), which builds the test's run through
:func:`..harness.run.build_run`, ``chaos_mcp_proxy``, and the variant a parametrized chaos test
is. The plugin's module re-exports them, so pytest finds them there."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ChaosConfigError
from ..harness.spec import RunSpec
from .options import PREFIX
from .state import ATTEMPT, RUN, SPEC, STATE, VARIANT, PluginState, cwd_relative, variant_of

if TYPE_CHECKING:
    from ..inject.chaos import Chaos

__all__ = ["_variant", "chaos", "chaos_mcp_proxy"]

_PREFIX = PREFIX


@pytest.fixture(name=VARIANT)
def _variant(request: pytest.FixtureRequest) -> Any:
    """The run of a chaos test this item is (see ``harness.variants``)."""
    return request.param


def _last_resort(config: pytest.Config) -> Any:
    """What the watchdog writes before it ends the process: past pytest's output capture."""

    def write(text: str) -> None:
        capman = config.pluginmanager.getplugin("capturemanager")
        try:
            if capman is not None:
                capman.suspend_global_capture(in_=True)
        finally:
            sys.stderr.write("\n" + "+" * 30 + " agentchaos watchdog " + "+" * 30 + "\n")
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    return write


@pytest.fixture
def chaos_mcp_proxy(agentchaos: Chaos, tmp_path: Path) -> Iterator[Any]:
    """Start the chaos MCP proxy around a test for an agent in any language:
    ``proxy = chaos_mcp_proxy(["python", "-m", "my_server"])`` gives ``proxy.argv``, the
    command the agent starts as its MCP server (the proxy with this test's profile and seed),
    and after the agent ended its session ``proxy.trace()``, the proxy's trace;
    ``chaos_mcp_proxy.serve([...])`` starts the proxy serving MCP over streamable HTTP on
    127.0.0.1 (give the agent ``served.url``; ``served.stop()``, then ``served.trace()``;
    a test whose own code connects to it allows the address: ``allow_hosts=["127.0.0.1"]``).
    A proxy still serving at the test's end is stopped."""
    from ..adapters.mcp_client.fixture import ProxyFactory

    factory = ProxyFactory(agentchaos, tmp_path)
    try:
        yield factory
    finally:
        factory.close()


@pytest.fixture(name="agentchaos")  # also ``chaos``, unless another plugin has it: .peers
def chaos(request: pytest.FixtureRequest) -> Iterator[Chaos]:
    """Inject the test's chaos profile into tools, HTTP and model calls, on virtual time.

    ``chaos.wrap(fn)`` / ``chaos.wrap_tools(...)`` / ``chaos.http`` / ``chaos.model(fn)`` /
    ``chaos.step()``; ``chaos.trace``, ``chaos.seed``, ``chaos.profile``, ``chaos.clock``.
    """
    from ..harness.run import build_run

    item = request.node
    if ATTEMPT in item.stash:  # a re-run of the body (plugin.body): its own run's chaos
        yield item.stash[ATTEMPT]
        return
    state = request.config.stash[STATE]
    spec: RunSpec = item.stash.get(SPEC, None) or RunSpec()
    if spec.error is not None:
        pytest.fail(spec.error, pytrace=False)
    variant = variant_of(item)
    if variant is not None:
        if variant.auto:
            _skip_if_decided(item, state, variant, spec)
        spec = variant.apply(spec)
    replay = state.settings.replay
    try:
        recorded = replay.recorded(item.nodeid) if replay is not None else None
        with build_run(
            state.settings,
            spec,
            item.nodeid,
            state.registry,
            replay_id=cwd_relative(request.config, item.nodeid),
            last_resort=_last_resort(request.config),
            recorded=recorded,
        ) as run:
            item.stash[RUN] = run
            state.live[item.nodeid] = item
            yield run.chaos
            return
    except ChaosConfigError as exc:
        message = f"{_PREFIX}: {exc}"
    pytest.fail(message, pytrace=False)  # outside the except: one message, not a chain


def _skip_if_decided(item: pytest.Item, state: PluginState, variant: Any, spec: RunSpec) -> None:
    """``--chaos-runs=auto:MAX``: skip a run of a case whose pass rate is decided already."""
    from ..harness.auto import case_key

    reason = state.auto.skip_reason(case_key(item.nodeid, variant), spec.min_pass_rate)
    if reason is not None:
        pytest.skip(reason)
