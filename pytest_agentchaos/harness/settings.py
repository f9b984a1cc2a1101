"""Session-wide settings (what command-line options and ini keys say), validated.

The plugin reads options and ini keys as raw values and hands them here; a bad value is one
``ChaosConfigError`` line naming the option or key and what is allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import fail, integer, number
from ..inject.network import parse_allow_hosts
from ..profiles.profile import ProfileRegistry
from ..saferepr import safe_repr
from ..trace.values import DEFAULT_MAX_VALUE
from .spec import wall_timeout

__all__ = [
    "DEFAULT_WALL_TIMEOUT",
    "MIN_TRACE_MAX_VALUE",
    "SessionSettings",
    "ini_bool",
    "ini_number",
    "parse_trace_dir",
]

#: Real seconds a chaos test may run before the watchdog stops it (0: no watchdog).
DEFAULT_WALL_TIMEOUT = 300.0
#: The smallest cap on a recorded value: room for a truncation marker and some head.
MIN_TRACE_MAX_VALUE = 1024

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


@dataclass(frozen=True)
class SessionSettings:
    """What the whole session shares: the seed and the defaults of every chaos test."""

    seed: int = 0
    default_profile: str = "none"
    #: the --chaos-profile given, if any (the replay command repeats it)
    profile_option: str | None = None
    virtual_sleep: bool = False
    freeze_time: bool = False
    trace_dir: Path | None = None
    #: --chaos-report-dir: traces in its traces/ folder, index.json at the end of the session
    report_dir: Path | None = None
    trace_max_value: int = DEFAULT_MAX_VALUE
    allow_hosts: tuple[str, ...] = ()
    wall_timeout: float = DEFAULT_WALL_TIMEOUT
    #: --chaos-runs: how many seeds each chaos test runs under (pass^k)
    runs: int = 1
    #: --chaos-runs=auto:MAX: ``runs`` is MAX, and a test's runs stop once it is decided
    auto_runs: bool = False
    #: --chaos-profile=a,b: the profiles each chaos test runs under (the matrix); one name:
    #: no matrix, the default profile only
    profiles: tuple[str, ...] = ()
    #: --chaos-replay: the recorded runs to replay (a ``harness.replay.ReplaySource``)
    replay: Any = None
    #: --chaos-html: the HTML report written at the end of the session
    html: Path | None = None
    #: the trace dir is a temporary one, for the HTML report alone (removed at the end)
    temp_traces: bool = False
    #: --chaos-baseline (ini chaos_baseline): the file compared with, or written
    baseline: Path | None = None
    #: --chaos-baseline-save: write the baseline instead of comparing
    baseline_save: bool = False
    #: ini chaos_baseline_tolerances, parsed (``report.baseline.Tolerance`` by metric)
    tolerances: Any = None
    #: how printed commands spell the options: ``--agentchaos-`` when another plugin has one
    #: of our ``--chaos-*`` names (see ``plugin.peers``)
    flag_prefix: str = "--chaos-"


def ini_bool(raw: object, where: str) -> bool:
    """An ini boolean (``true``/``false``, ``1``/``0``, ``yes``/``no``, ``on``/``off``)."""
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise fail(where, f"expected true or false, got {safe_repr(raw, 80)}")


def ini_number(raw: object, where: str, *, minimum: float, maximum: float) -> float:
    """An ini number within the bounds."""
    value = _ini_value(raw)
    result: float = number(minimum=minimum, maximum=maximum)(value, where)
    return result


def ini_int(raw: object, where: str, *, minimum: int) -> int:
    """An ini integer of at least ``minimum``."""
    try:
        value: object = int(str(raw).strip())
    except ValueError:
        value = raw
    result: int = integer(minimum=minimum)(value, where)
    return result


def parse_trace_dir(raw: str | None, where: str) -> Path | None:
    """A directory for trace files: created if missing; an existing file is an error."""
    if raw is None:
        return None
    if not raw.strip():
        raise fail(where, "expected a directory, got an empty path")
    try:
        path = Path(raw).expanduser().resolve()
    except (RuntimeError, OSError) as exc:  # `~nobody/x`: an unknown user's home
        raise fail(where, f"cannot create {raw}: {exc}") from None
    if path.exists() and not path.is_dir():
        raise fail(where, f"{path} exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise fail(where, f"cannot create {path}: {exc.strerror or exc}") from None
    return path


def artifact_dirs(
    option: str | None, ini: str, trace_option: str | None, rootdir: Path
) -> tuple[Path | None, Path | None]:
    """The report dir (``--chaos-report-dir``, else ini ``chaos_report_dir`` relative to the
    rootdir) and the trace dir: ``--chaos-trace-dir``, else the report dir's ``traces/``."""
    where = "--chaos-report-dir"
    if option is None and ini.strip():
        option, where = str(rootdir / ini.strip()), "ini chaos_report_dir"
    report_dir = parse_trace_dir(option, where)
    trace_dir = parse_trace_dir(trace_option, "--chaos-trace-dir")
    if trace_dir is None and report_dir is not None:
        trace_dir = parse_trace_dir(str(report_dir / "traces"), where)
    return report_dir, trace_dir


def parse_html(raw: str | None, cwd: Path) -> Path | None:
    """``--chaos-html=FILE`` (relative to ``cwd``): its folder is created if missing; a
    directory, or a folder that cannot be made, is an error."""
    where = "--chaos-html"
    if raw is None:
        return None
    if not raw.strip():
        raise fail(where, "expected a file, got an empty path")
    path = cwd / Path(raw).expanduser()
    if path.is_dir():
        raise fail(where, f"{path} is a directory, not a file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise fail(where, f"cannot create {path.parent}: {exc.strerror or exc}") from None
    return path


def baseline_path(
    option: str | None, ini: str, cwd: Path, rootdir: Path, *, save: bool
) -> Path | None:
    """The baseline file: ``--chaos-baseline`` (relative to ``cwd``), else ini
    ``chaos_baseline`` (relative to the rootdir); ``--chaos-baseline-save`` needs one."""
    if option is not None and not option.strip():
        raise fail("--chaos-baseline", "expected a file, got an empty path")
    if option is not None:
        return cwd / Path(option).expanduser()
    if ini.strip():
        return rootdir / Path(ini.strip()).expanduser()
    if save:
        raise fail(
            "--chaos-baseline-save",
            "names no file: give --chaos-baseline=FILE or ini chaos_baseline",
        )
    return None


def tolerances(lines: Sequence[str]) -> Any:
    """The ini tolerances of a baseline comparison, over the defaults (None: no line given,
    the defaults)."""
    if not any(line.strip() for line in lines):
        return None
    from ..report.baseline import parse_tolerances

    return parse_tolerances(list(lines), "ini chaos_baseline_tolerances")


def parse_profile_name(raw: str, where: str) -> str:
    """A profile name given on the command line or in an ini file."""
    return ProfileRegistry.check_name(raw, where)


def parse_profile_names(raw: str, where: str) -> tuple[str, ...]:
    """One profile name, or several separated by commas (a matrix: each chaos test runs
    under each), without repeats."""
    if "," not in raw:
        return (parse_profile_name(raw, where),)
    names = tuple(part.strip() for part in raw.split(","))
    for name in names:
        if not name:
            raise fail(where, f"an empty profile name in {raw!r}")
        parse_profile_name(name, where)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise fail(where, f"profile {repeated[0]!r} named twice in {raw!r}")
    return names


def parse_allow(raw: Sequence[str], where: str) -> tuple[str, ...]:
    """The ini list of allowed hosts."""
    return parse_allow_hosts(list(raw), where).entries


def _ini_value(raw: object) -> object:
    """An ini number as written: ``-1`` stays an int (so a message shows ``-1``, not ``-1.0``)."""
    text = str(raw).strip()
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            continue
    return raw


def parse_wall_timeout(raw: object, where: str) -> float:
    """The ini wall-clock limit of a chaos test, in real seconds (0: no watchdog)."""
    value = _ini_value(raw)
    result: float = wall_timeout(value, where)
    return result
