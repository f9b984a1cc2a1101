"""The session's option values and ini keys, as raw values, and the settings they give.

The pytest plugin reads its options and ini keys into :class:`RawOptions` and asks
:func:`session_settings` for the session's :class:`~.settings.SessionSettings`; a bad value is
one ``ChaosConfigError`` line naming the option or key and what is allowed (the plugin makes it
a usage error). Importing this module is cheap: the option table's value parsers live here.
"""

from __future__ import annotations

import argparse
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ChaosConfigError

if TYPE_CHECKING:
    from ..profiles.profile import ProfileRegistry
    from .settings import SessionSettings

__all__ = [
    "INI_KEYS",
    "SEED_KEY",
    "TRACES_KEY",
    "AutoRuns",
    "RawOptions",
    "parse_explore",
    "parse_runs",
    "parse_seed",
    "session_settings",
]

#: Where an xdist worker finds the controller's session seed.
SEED_KEY = "agentchaos_seed"
#: Where an xdist worker finds the controller's temporary trace dir (``--chaos-html`` without
#: a report dir).
TRACES_KEY = "agentchaos_traces"


def parse_seed(value: str) -> int:
    """``--chaos-seed=N``: a non-negative integer (an ``argparse`` type: a bad one is the
    command line's own error)."""
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
    from .spec import MAX_RUNS

    auto = raw[:5].lower() == "auto:"
    digits = raw[5:] if auto else raw
    runs = int(digits) if re.fullmatch(r"[0-9]{1,6}", digits, re.ASCII) else -1
    if auto and not 2 <= runs <= MAX_RUNS:
        raise ChaosConfigError(f"{flag}: auto:MAX: expected MAX from 2 to {MAX_RUNS}, got {raw!r}")
    if not 1 <= runs <= MAX_RUNS:
        raise ChaosConfigError(f"{flag}: expected 1 to {MAX_RUNS} runs, got {raw!r}")
    return AutoRuns(runs) if auto else runs


def parse_explore(raw: str, flag: str = "--chaos-explore") -> int:
    """``--chaos-explore=N``: N schedules, a whole number written in digits; a bad one is a
    ``ChaosConfigError`` naming the option and what is allowed."""
    from .spec import MAX_EXPLORE

    found = int(raw) if re.fullmatch(r"[0-9]{1,7}", raw, re.ASCII) else -1
    if not 1 <= found <= MAX_EXPLORE:
        raise ChaosConfigError(f"{flag}: expected 1 to {MAX_EXPLORE} schedules, got {raw!r}")
    return found


@dataclass(frozen=True)
class RawOptions:
    """The session's options and ini keys as pytest hands them over, unparsed."""

    #: the rootdir (ini paths are relative to it) and the directory pytest was run from
    rootpath: Path
    cwd: Path
    #: how printed commands spell the options: ``--chaos-`` or ``--agentchaos-``
    flag_prefix: str = "--chaos-"
    seed: int | None = None
    profile: str | None = None
    runs: str | None = None
    replay: str | None = None
    html: str | None = None
    trace_dir: str | None = None
    report_dir: str | None = None
    baseline: str | None = None
    baseline_save: bool = False
    #: ini keys by name (``chaos_profile`` ...), as ``config.getini`` gives them
    ini: Mapping[str, Any] = field(default_factory=dict)
    #: an xdist worker's input from its controller (None: not a worker)
    workerinput: Mapping[str, Any] | None = None


def session_settings(raw: RawOptions, registry: ProfileRegistry) -> SessionSettings:
    """The session's settings from its raw options and ini keys, every one checked (and each
    profile named loaded) before anything is installed; a bad one is a ``ChaosConfigError``."""
    from . import settings as s

    replay = None
    if raw.replay is not None:
        from .replay import load_source

        replay = load_source(raw.replay, raw.cwd)
    seed_option, profile_option = raw.seed, raw.profile
    runs_option: int | None = None
    auto_runs = False
    if raw.runs is not None:
        parsed = parse_runs(raw.runs, f"{raw.flag_prefix}runs")
        auto_runs = isinstance(parsed, AutoRuns)
        runs_option = parsed.max if isinstance(parsed, AutoRuns) else parsed
    runs = runs_option or 1
    adopted = False
    if replay is not None:  # the recorded ones, unless given
        seed_option, profile_option, runs, adopted = replay.options(
            seed_option, profile_option, runs_option, registry
        )
    workerinput = raw.workerinput
    if workerinput is not None and SEED_KEY in workerinput:
        seed = int(workerinput[SEED_KEY])
    else:
        seed = seed_option if seed_option is not None else random.SystemRandom().randrange(10**9)
    profiles, default_profile = _profiles(raw, profile_option, registry, adopted=adopted)
    report_dir, trace_dir = s.artifact_dirs(
        raw.report_dir, str(raw.ini["chaos_report_dir"]), raw.trace_dir, raw.rootpath
    )
    if replay is not None and any(
        d is not None and replay.reads_from(d) for d in (report_dir, trace_dir)
    ):
        # never overwrite the recording it replays: its own folder of the report dir
        report_dir, trace_dir = replay.own_dirs(report_dir, trace_dir)
    html = s.parse_html(raw.html, raw.cwd)
    temp_traces = html is not None and trace_dir is None
    if temp_traces:  # the report reads the traces: the controller's folder (made once
        # every setting is checked, see the plugin's configure), in workers too
        given = (workerinput or {}).get(TRACES_KEY)
        trace_dir = Path(given) if given else None
    ini = raw.ini
    return s.SessionSettings(
        seed=seed,
        default_profile=default_profile,
        profile_option=profile_option,
        virtual_sleep=s.ini_bool(ini["chaos_virtual_sleep"], "ini chaos_virtual_sleep"),
        freeze_time=s.ini_bool(ini["chaos_freeze_time"], "ini chaos_freeze_time"),
        trace_dir=trace_dir,
        report_dir=report_dir,
        trace_max_value=s.ini_int(
            ini["chaos_trace_max_value"],
            "ini chaos_trace_max_value",
            minimum=s.MIN_TRACE_MAX_VALUE,
        ),
        allow_hosts=s.parse_allow(ini["chaos_allow_hosts"], "ini chaos_allow_hosts"),
        wall_timeout=s.parse_wall_timeout(ini["chaos_wall_timeout"], "ini chaos_wall_timeout"),
        runs=runs,
        auto_runs=auto_runs and replay is None,  # a replay runs every recorded run
        profiles=profiles,
        replay=replay,
        html=html,
        temp_traces=temp_traces,
        baseline=s.baseline_path(
            raw.baseline,
            str(ini["chaos_baseline"]),
            raw.cwd,
            raw.rootpath,
            save=raw.baseline_save,
        ),
        baseline_save=raw.baseline_save,
        flag_prefix=raw.flag_prefix,
        tolerances=s.tolerances(ini["chaos_baseline_tolerances"]),
    )


def _profiles(
    raw: RawOptions, profile_option: str | None, registry: ProfileRegistry, *, adopted: bool
) -> tuple[tuple[str, ...], str]:
    """The profiles each chaos test runs under and the default one, each loaded (a bad one
    fails now); an error names where the names came from (the option or the ini key)."""
    from ..profiles.profile import builtin_dir
    from .settings import parse_profile_names

    source = "--chaos-profile" if profile_option is not None else "ini chaos_profile"
    if profile_option is not None:
        default_profile = profile_option
    else:
        default_profile = str(raw.ini["chaos_profile"]).strip() or "none"
    try:
        profiles = parse_profile_names(default_profile, source)
        for name in profiles:
            path = registry.path(name)
            if adopted and path is None:
                continue
            # The built-in `none` is known good: skip parsing it: runs without chaos stay cheap.
            if path is None or path.parent.resolve() != builtin_dir().resolve() or name != "none":
                registry.get(name)
    except ChaosConfigError as exc:
        text = str(exc)
        raise ChaosConfigError(text if text.startswith(source) else f"{source}: {text}") from None
    return profiles, profiles[0]


#: The ini keys :func:`session_settings` reads.
INI_KEYS: Sequence[str] = (
    "chaos_profile",
    "chaos_report_dir",
    "chaos_virtual_sleep",
    "chaos_freeze_time",
    "chaos_trace_max_value",
    "chaos_allow_hosts",
    "chaos_wall_timeout",
    "chaos_baseline",
    "chaos_baseline_tolerances",
)
