"""The plugin's command-line options and ini keys as plain data: what ``pytest --help`` and
the documentation's reference list, and what the plugin registers (``addoption`` / ``addini``
arguments). Imported by ``pytest --help``: it imports nothing but the cheap value parsers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .options import parse_seed

__all__ = [
    "BREAKING_RUNS",
    "DEFAULT_SCHEDULE_DIR",
    "INI",
    "OPTIONS",
    "SEARCH_OPTIONS",
    "IniKey",
]


@dataclass(frozen=True)
class IniKey:
    """One ini key: its name, its help text (which says the default), its default and its
    pytest ini type (None: a string)."""

    name: str
    help: str
    default: Any
    type: Literal["string", "paths", "pathlist", "args", "linelist", "bool"] | None = None


#: Where found schedules are kept (relative to the rootdir) unless ``--chaos-schedule-dir``.
DEFAULT_SCHEDULE_DIR = ".agentchaos/schedules"

#: Seeds each probed value of a breaking point runs under.
BREAKING_RUNS = 10

#: The search's options, by their name after ``--agentchaos-`` / ``--chaos-``.
SEARCH_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "explore",
        {
            "metavar": "N",
            "default": None,
            "help": "search up to N fault schedules per chaos test, re-running its body "
            "in-process on virtual time, and shrink the first that fails to a minimal one, "
            "printed as a marker and written to a schedule file; a failing test's own faults "
            "are shrunk too; each re-run gets fresh function-scoped fixtures, and a test "
            "marked xfail is not searched (default: off; chaos(explore=N) asks for one test, "
            "chaos(explore=False) keeps one out: it runs once, and the summary says so)",
        },
    ),
    (
        "schedule",
        {
            "metavar": "FILE",
            "default": None,
            "help": "run the test a schedule file names (written by --chaos-explore) under "
            "exactly its faults (default: none)",
        },
    ),
    (
        "breaking-point",
        {
            "metavar": "FAULT.PARAM",
            "default": None,
            "help": "after each chaos test, bisect one severity parameter (latency.seconds, "
            "rate_limit.retry_after, timeout.probability, timeout.first ...) to the least value "
            f"where the test's pass rate over {BREAKING_RUNS} seeds falls below its "
            "min_pass_rate (1 by default), and report it with the pass rate's interval there "
            "(default: off)",
        },
    ),
    (
        "schedule-dir",
        {
            "metavar": "DIR",
            "default": None,
            "help": "where --chaos-explore writes the schedules it finds and reads them back "
            f"to try first next time (default: {DEFAULT_SCHEDULE_DIR} under the rootdir)",
        },
    ),
)


#: The options other than the search's.
_GENERAL: tuple[tuple[str, dict[str, Any]], ...] = (
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

#: Every option, by its name after ``--agentchaos-`` / ``--chaos-``: ``addoption``'s arguments.
OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (*_GENERAL, *SEARCH_OPTIONS)

#: Every ini key, in the order ``pytest --help`` lists them.
INI: tuple[IniKey, ...] = (
    IniKey("chaos_profile", "default chaos profile (default: none)", default="none"),
    IniKey(
        "chaos_profiles_dir",
        "directory of user chaos profiles, relative to the rootdir (default: chaos_profiles)",
        default="chaos_profiles",
    ),
    IniKey(
        "chaos_virtual_sleep",
        "make the agent's time virtual in chaos tests: time.sleep and asyncio.sleep advance "
        "the virtual clock, and time.time/monotonic/datetime.now follow it (default: false)",
        default="false",
    ),
    IniKey(
        "chaos_freeze_time",
        "only make time.time/monotonic/datetime.now follow the virtual clock, leaving sleeps "
        "real (default: false; a loop that sleeps until the clock moves would never end)",
        default="false",
    ),
    IniKey(
        "chaos_allow_hosts",
        "hosts a chaos test may reach over the network (host names, addresses, networks such "
        "as 10.0.0.0/8, 'localhost' for loopback, '*' for any; default: none)",
        type="linelist",
        default=[],
    ),
    IniKey(
        "chaos_wall_timeout",
        "real seconds a chaos test may run before the watchdog stops its agent "
        "(default: 300; 0 turns the watchdog off)",
        default="300",
    ),
    IniKey(
        "chaos_report_dir",
        "directory for report artifacts (traces, index.json), relative to the rootdir",
        default="",
    ),
    IniKey(
        "chaos_baseline",
        "baseline file of the chaos tests' metrics, relative to the rootdir",
        default="",
    ),
    IniKey(
        "chaos_baseline_tolerances",
        "how far a metric may regress from the baseline, one per line: 'steps = +20%', "
        "'pass_rate = -5pt', 'tokens = off' (default: pass_rate -5pt, counts and time +20%)",
        type="linelist",
        default=[],
    ),
    IniKey(
        "chaos_trace_max_value",
        "largest value (characters of JSON) a trace keeps of one argument or output; larger "
        "ones keep a head, their size and a digest (default: 65536)",
        default="65536",
    ),
)
