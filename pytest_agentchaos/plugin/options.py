"""The plugin's command-line options and ini keys, and the session settings they give."""

from __future__ import annotations

import argparse
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ChaosConfigError
from ..profiles.profile import ProfileRegistry, builtin_dir
from .summary import SEED_KEY, TRACES_KEY

if TYPE_CHECKING:
    from ..harness.settings import SessionSettings

__all__ = [
    "OPTIONS",
    "PEERS",
    "PREFIX",
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


def _seed(value: str) -> int:
    try:
        seed = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a non-negative integer, got {value!r}"
        ) from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value!r}")
    return seed


@dataclass(frozen=True)
class AutoRuns:
    """``--chaos-runs=auto:MAX``: up to ``max`` runs, stopped once the pass rate is decided."""

    max: int


def parse_runs(raw: str, flag: str = "--chaos-runs") -> int | AutoRuns:
    """``--chaos-runs=K`` or ``auto:MAX``, whole numbers written in digits (no sign, space or
    ``_``); a bad one is a ``ChaosConfigError`` naming the option and what is allowed."""
    from ..harness.spec import MAX_RUNS

    auto = raw[:5].lower() == "auto:"
    digits = raw[5:] if auto else raw
    runs = int(digits) if re.fullmatch(r"[0-9]{1,6}", digits, re.ASCII) else -1
    if auto and not 2 <= runs <= MAX_RUNS:
        raise ChaosConfigError(f"{flag}: auto:MAX: expected MAX from 2 to {MAX_RUNS}, got {raw!r}")
    if not 1 <= runs <= MAX_RUNS:
        raise ChaosConfigError(f"{flag}: expected 1 to {MAX_RUNS} runs, got {raw!r}")
    return AutoRuns(runs) if auto else runs


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
            "type": _seed,
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
    """The session's settings from options and ini keys; a bad one is a usage error."""
    from ..harness import settings as s

    replay = None
    if option(config, "replay") is not None:
        from ..harness.replay import load_source

        try:
            replay = load_source(option(config, "replay"), config.invocation_params.dir)
        except ChaosConfigError as exc:
            raise pytest.UsageError(f"{_PREFIX}: {exc}") from None
    seed_option = option(config, "seed")
    profile_option = option(config, "profile")
    runs_option: Any = option(config, "runs")
    if runs_option is not None:
        try:
            runs_option = parse_runs(runs_option, f"{flag_prefix(config)}runs")
        except ChaosConfigError as exc:
            raise pytest.UsageError(f"{_PREFIX}: {exc}") from None
    auto_runs = isinstance(runs_option, AutoRuns)
    if isinstance(runs_option, AutoRuns):
        runs_option = runs_option.max
    runs = runs_option or 1
    adopted = False
    if replay is not None:  # the recorded ones, unless given
        seed_option, profile_option, runs, adopted = replay.options(
            seed_option, profile_option, runs_option, registry
        )
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and SEED_KEY in workerinput:
        seed = int(workerinput[SEED_KEY])
    else:
        seed = seed_option if seed_option is not None else random.SystemRandom().randrange(10**9)
    source = "--chaos-profile" if profile_option is not None else "ini chaos_profile"
    if profile_option is not None:
        default_profile = profile_option
    else:
        default_profile = str(config.getini("chaos_profile")).strip() or "none"
    try:
        profiles = s.parse_profile_names(default_profile, source)
        default_profile = profiles[0]
        for name in profiles:
            path = registry.path(name)
            if adopted and path is None:
                continue
            # The built-in `none` is known good: skip parsing it: runs without chaos stay cheap.
            if path is None or path.parent.resolve() != builtin_dir().resolve() or name != "none":
                registry.get(name)
    except ChaosConfigError as exc:
        text = str(exc)
        text = text if text.startswith(source) else f"{source}: {text}"
        raise pytest.UsageError(f"{_PREFIX}: {text}") from None
    try:
        report_dir, trace_dir = s.artifact_dirs(
            option(config, "report-dir"),
            str(config.getini("chaos_report_dir")),
            option(config, "trace-dir"),
            config.rootpath,
        )
        if replay is not None and any(
            d is not None and replay.reads_from(d) for d in (report_dir, trace_dir)
        ):
            # never overwrite the recording it replays: its own folder of the report dir
            report_dir, trace_dir = replay.own_dirs(report_dir, trace_dir)
        html = s.parse_html(option(config, "html"), config.invocation_params.dir)
        temp_traces = html is not None and trace_dir is None
        if temp_traces:  # the report reads the traces: the controller's folder (made once
            # every setting is checked, see pytest_configure), in workers too
            given = (workerinput or {}).get(TRACES_KEY)
            trace_dir = Path(given) if given else None
        return s.SessionSettings(
            seed=seed,
            default_profile=default_profile,
            profile_option=profile_option,
            virtual_sleep=_ini_bool(config, "chaos_virtual_sleep"),
            freeze_time=_ini_bool(config, "chaos_freeze_time"),
            trace_dir=trace_dir,
            report_dir=report_dir,
            trace_max_value=s.ini_int(
                config.getini("chaos_trace_max_value"),
                "ini chaos_trace_max_value",
                minimum=s.MIN_TRACE_MAX_VALUE,
            ),
            allow_hosts=s.parse_allow(config.getini("chaos_allow_hosts"), "ini chaos_allow_hosts"),
            wall_timeout=s.parse_wall_timeout(
                config.getini("chaos_wall_timeout"), "ini chaos_wall_timeout"
            ),
            runs=runs,
            auto_runs=auto_runs and replay is None,  # a replay runs every recorded run
            profiles=profiles,
            replay=replay,
            html=html,
            temp_traces=temp_traces,
            baseline=s.baseline_path(
                option(config, "baseline"),
                str(config.getini("chaos_baseline")),
                config.invocation_params.dir,
                config.rootpath,
                save=option(config, "baseline-save"),
            ),
            baseline_save=option(config, "baseline-save"),
            flag_prefix=flag_prefix(config),
            tolerances=s.tolerances(config.getini("chaos_baseline_tolerances")),
        )
    except ChaosConfigError as exc:
        raise pytest.UsageError(f"{_PREFIX}: {exc}") from None


def _ini_bool(config: pytest.Config, key: str) -> bool:
    from ..harness.settings import ini_bool

    return ini_bool(config.getini(key), f"ini {key}")


def flag_prefix(config: pytest.Config) -> str:
    """How printed commands and messages spell our options: ``--chaos-``, or ``--agentchaos-``
    when another plugin has one of our ``--chaos-*`` names."""
    from .peers import SHORT_PREFIX, Peers

    peers = config.pluginmanager.get_plugin(PEERS)
    return peers.prefix if isinstance(peers, Peers) else SHORT_PREFIX
