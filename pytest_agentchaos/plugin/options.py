"""The plugin's command-line options and ini keys, and the session settings they give."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ChaosConfigError
from ..harness.option_table import INI, OPTIONS
from ..harness.options import AutoRuns, parse_runs
from ..profiles.profile import ProfileRegistry

if TYPE_CHECKING:
    from ..harness.settings import SessionSettings

__all__ = [
    "OPTIONS",
    "PEERS",
    "PREFIX",
    "AutoRuns",
    "add_options",
    "asked_for_chaos",
    "dest",
    "flag_prefix",
    "option",
    "parse_runs",
    "registry_of",
    "settings_of",
]

PREFIX = "pytest-agentchaos"
#: The name the plugin that handles other chaos plugins' names is registered under.
PEERS = "agentchaos-peers"
_PREFIX = PREFIX


def dest(name: str) -> str:
    """Where option ``name`` (e.g. ``report-dir``) is stored: ``agentchaos_report_dir``, so
    another plugin's ``--chaos-report-dir`` (dest ``chaos_report_dir``) never collides."""
    return "agentchaos_" + name.replace("-", "_")


def option(config: pytest.Config, name: str) -> Any:
    """The value of option ``name`` (e.g. ``seed``), given as ``--agentchaos-`` or ``--chaos-``."""
    return config.getoption(dest(name))


def asked_for_chaos(config: pytest.Config) -> bool:
    """Whether the session was asked for chaos: a ``--chaos-*`` option given, or a profile
    other than ``none`` in ini ``chaos_profile`` (a session that then runs no chaos test
    says so)."""
    if any(option(config, name) != attrs.get("default") for name, attrs in OPTIONS):
        return True
    return str(config.getini("chaos_profile")).strip() not in ("", "none")


def add_options(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Add the ``--agentchaos-*`` options (their ``--chaos-*`` twins come once every installed
    plugin has added its own options, see :class:`.peers.Peers`) and the ``chaos_*`` ini keys."""
    from .peers import Peers

    group = parser.getgroup(
        "pytest-agentchaos",
        "chaos testing for tool-using agents (each --agentchaos-* option is also --chaos-*, "
        "unless another plugin has that name: the header says so)",
    )
    for name, attrs in OPTIONS:
        group.addoption(f"--agentchaos-{name}", dest=dest(name), **attrs)
    pluginmanager.register(Peers(group, OPTIONS), PEERS)
    for key in INI:
        default = list(key.default) if isinstance(key.default, list) else key.default
        parser.addini(key.name, key.help, type=key.type, default=default)


def registry_of(config: pytest.Config) -> ProfileRegistry:
    configured = str(config.getini("chaos_profiles_dir"))
    user_dir = config.rootpath / configured
    if configured != "chaos_profiles" and not user_dir.is_dir():
        raise pytest.UsageError(f"{_PREFIX}: ini chaos_profiles_dir: {user_dir} is not a directory")
    return ProfileRegistry.default(user_dir)


def settings_of(config: pytest.Config, registry: ProfileRegistry) -> SessionSettings:
    """The session's settings from options and ini keys (:mod:`..harness.options`); a bad one
    is a usage error."""
    from ..harness.options import INI_KEYS, RawOptions, session_settings

    raw = RawOptions(
        rootpath=config.rootpath,
        cwd=config.invocation_params.dir,
        flag_prefix=flag_prefix(config),
        ini={key: config.getini(key) for key in INI_KEYS},
        workerinput=getattr(config, "workerinput", None),
        seed=option(config, "seed"),
        profile=option(config, "profile"),
        runs=option(config, "runs"),
        replay=option(config, "replay"),
        html=option(config, "html"),
        trace_dir=option(config, "trace-dir"),
        report_dir=option(config, "report-dir"),
        baseline=option(config, "baseline"),
        baseline_save=option(config, "baseline-save"),
    )
    try:
        return session_settings(raw, registry)
    except ChaosConfigError as exc:
        raise pytest.UsageError(f"{_PREFIX}: {exc}") from None


def flag_prefix(config: pytest.Config) -> str:
    """How printed commands and messages spell our options: ``--chaos-``, or ``--agentchaos-``
    when another plugin has one of our ``--chaos-*`` names."""
    from .peers import SHORT_PREFIX, Peers

    peers = config.pluginmanager.get_plugin(PEERS)
    return peers.prefix if isinstance(peers, Peers) else SHORT_PREFIX
