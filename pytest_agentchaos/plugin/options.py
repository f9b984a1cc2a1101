"""The plugin's command-line options and ini keys, and the session settings they give."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ChaosConfigError
from ..harness.options import AutoRuns, parse_runs, parse_seed
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


def _search_options() -> tuple[tuple[str, dict[str, Any]], ...]:
    from .search import SEARCH_OPTIONS

    return SEARCH_OPTIONS


#: Every option, by its name after ``--agentchaos-`` / ``--chaos-``: ``addoption``'s arguments.
OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "profile",
        {
            "metavar": "NAME",
            "default": None,
            "help": "chaos profile for tests that use the chaos fixture or markers; several "
            "separated by commas run each test under each (default: ini chaos_profile, else "
            "'none')",
        },
    ),
    (
        "seed",
        {
            "metavar": "N",
            "type": parse_seed,
            "default": None,
            "help": "session seed for every fault decision (default: random, shown in the header)",
        },
    ),
    (
        "runs",
        {
            "metavar": "K",
            "default": None,
            "help": "run each chaos test under K seeds derived from the session seed, each its "
            "own test; a test passes if all K do (pass^k; default: 1); auto:MAX runs up to MAX "
            "and skips the rest once the pass rate is decided",
        },
    ),
    (
        "html",
        {
            "metavar": "FILE",
            "default": None,
            "help": "write a self-contained HTML report of the chaos tests to FILE: a filterable "
            "table, and per test its verdicts, replay command and timeline (default: none)",
        },
    ),
    (
        "baseline",
        {
            "metavar": "FILE",
            "default": None,
            "help": "compare each chaos test's metrics with the baseline FILE; regressions "
            "beyond the tolerances fail the session (default: ini chaos_baseline, or none)",
        },
    ),
    (
        "baseline-save",
        {
            "action": "store_true",
            "default": False,
            "help": "write this session's metrics into the baseline file instead of comparing "
            "(tests not run keep their entries)",
        },
    ),
    (
        "replay",
        {
            "metavar": "PATH",
            "default": None,
            "help": "re-run the tests recorded in PATH (a trace file, or a report dir / its "
            "index.json) with the fault decisions their traces recorded; other tests are "
            "deselected",
        },
    ),
    (
        "list-profiles",
        {
            "action": "store_true",
            "default": False,
            "help": "list the chaos profiles available here and exit",
        },
    ),
    (
        "trace-dir",
        {
            "metavar": "DIR",
            "default": None,
            "help": "write each chaos test's trace as JSON into DIR (default: not written)",
        },
    ),
    (
        "report-dir",
        {
            "metavar": "DIR",
            "default": None,
            "help": "write report artifacts into DIR: each chaos test's trace (DIR/traces/) and "
            "DIR/index.json (default: ini chaos_report_dir, or none)",
        },
    ),
)

OPTIONS = (*OPTIONS, *_search_options())


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
    parser.addini("chaos_profile", "default chaos profile (default: none)", default="none")
    parser.addini(
        "chaos_profiles_dir",
        "directory of user chaos profiles, relative to the rootdir (default: chaos_profiles)",
        default="chaos_profiles",
    )
    parser.addini(
        "chaos_virtual_sleep",
        "make the agent's time virtual in chaos tests: time.sleep and asyncio.sleep advance "
        "the virtual clock, and time.time/monotonic/datetime.now follow it (default: false)",
        default="false",
    )
    parser.addini(
        "chaos_freeze_time",
        "only make time.time/monotonic/datetime.now follow the virtual clock, leaving sleeps "
        "real (default: false; a loop that sleeps until the clock moves would never end)",
        default="false",
    )
    parser.addini(
        "chaos_allow_hosts",
        "hosts a chaos test may reach over the network (host names, addresses, networks such "
        "as 10.0.0.0/8, 'localhost' for loopback, '*' for any; default: none)",
        type="linelist",
        default=[],
    )
    parser.addini(
        "chaos_wall_timeout",
        "real seconds a chaos test may run before the watchdog stops its agent "
        "(default: 300; 0 turns the watchdog off)",
        default="300",
    )
    parser.addini(
        "chaos_report_dir",
        "directory for report artifacts (traces, index.json), relative to the rootdir",
        default="",
    )
    parser.addini(
        "chaos_baseline",
        "baseline file of the chaos tests' metrics, relative to the rootdir",
        default="",
    )
    parser.addini(
        "chaos_baseline_tolerances",
        "how far a metric may regress from the baseline, one per line: 'steps = +20%', "
        "'pass_rate = -5pt', 'tokens = off' (default: pass_rate -5pt, counts and time +20%)",
        type="linelist",
        default=[],
    )
    parser.addini(
        "chaos_trace_max_value",
        "largest value (characters of JSON) a trace keeps of one argument or output; larger "
        "ones keep a head, their size and a digest (default: 65536)",
        default="65536",
    )


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
