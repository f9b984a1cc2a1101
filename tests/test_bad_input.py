"""Bad input, as a new user (or an attacker) gives it: one clear line, at the earliest point.

Every case names one bad input and the exact first line of the error the user sees: on stderr
for a bad option, ini key or selected profile (a usage error, exit code 4); in the collection
error of the module for a bad marker (``pytest-agentchaos: bad chaos marker`` then
``<nodeid>: <message>``); at setup for a bad marker a conftest adds; as the exception raised
by the ``chaos`` API inside a test. None may end in an INTERNALERROR or show a traceback
through the plugin's own code.

In the expected lines ``{root}`` is the pytester directory, ``{real}`` the same resolved,
``{profiles}`` its ``chaos_profiles`` directory, and ``…`` stands for text that varies (a
directory searched, an object's address); everything else must match exactly.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import hypothesis.internal.observability  # noqa: F401 - keeps in-process runs fast
import pytest

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.escape import BackoffPolicy, BreakerPolicy, EscapePolicy, LoopPolicy
from pytest_agentchaos.faults import FaultPlan
from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.inject.session import UnreadableUsage
from pytest_agentchaos.profiles import Budgets
from pytest_agentchaos.repair import ToolSpec

USAGE = "ERROR: pytest-agentchaos: "
BUILTINS = "flaky, malformed, none, outage, quiet, rate_limited, spiral"
KINDS = (
    "bad_tool_arguments, connection_error, corrupt_snapshot, crash, empty_completion, "
    "empty_output, error_in_body, garbled_output, http_error, injected_instruction, latency, "
    "lost_reply, malformed_params, no_finish_reason, paraphrased_output, partial_output, "
    "protocol_error, rate_limit, repeated_output, slow_first_token, stale_output, stream_cut, "
    "timeout"
)
SELECTORS = "tools, channels, probability, first, nth, every, max_count, window"
BUDGETS = "max_steps, max_tool_calls, max_model_calls, max_seconds, max_tokens"
CHAOS_ARGS = (
    "profile, seed, faults, virtual_sleep, freeze_time, allow_hosts, wall_timeout, runs, "
    "min_pass_rate, schedule, beyond, explore, " + BUDGETS
)
NOT_A_NAME = "is not a profile name (letters, digits, '_', '-', '.'; no paths)"
NOT_A_HOST = "is not a host name, an IP address, a network (10.0.0.0/8), 'localhost' or '*'"
CATEGORIES = (
    "timeout, rate_limit, auth, validation, not_found, server_error, connection, llm_refusal, "
    "unknown"
)
MUTATIONS = (
    "wrong_type, reformat_date, out_of_range, missing_required, invalid_enum, unknown_key, "
    "formatted_number, unit_suffix, scalar_for_list"
)
LOOP_KEYS = (
    "min_period, max_period, repeats_period_1, repeats, error_streak, state_repeats, "
    "state_window, node_visits, node_window_events, node_window_seconds, text_similarity, "
    "error_streak_window, error_numbers, error_wording, nudge_tokens, ignore_fields, keys"
)
NOT_JSON = "expected JSON data (string, number, boolean, null, list or table), got"
HUGE = 9 * int("1" * 400)  # 400 nines: an integer no float can hold
LONG_NAME = "a" * 300  # longer than a file name may be
#: How messages show it: values in one-line errors are cut to 80 characters.
SHOWN_LONG_NAME = "'" + LONG_NAME[:76] + "..."

#: A file of the plugin's own code, as it shows in a traceback or an INTERNALERROR.
PLUGIN_FILE = re.compile(r"pytest_agentchaos[/\\][\w/\\.]*\.py\b")


# -- helpers ------------------------------------------------------------------------------


def _fill(pytester: pytest.Pytester, text: str) -> str:
    """``expected`` with the pytester paths put in."""
    return (
        text.replace("{profiles}", str(pytester.path / "chaos_profiles"))
        .replace("{real}", str(pytester.path.resolve()))
        .replace("{root}", str(pytester.path))
    )


def line_pattern(expected: str) -> str:
    """An fnmatch pattern matching exactly ``expected`` (``…`` matches anything)."""
    return "*".join(
        re.sub(r"[][*?]", lambda m: f"[{m.group()}]", part) for part in expected.split("…")
    )


def assert_clean(result: pytest.RunResult) -> None:
    """No INTERNALERROR and no traceback through the plugin's own code."""
    output = "\n".join([*result.outlines, *result.errlines])
    assert "INTERNALERROR" not in output, output
    frames = [line for line in output.splitlines() if PLUGIN_FILE.search(line)]
    assert not frames, "the user sees the plugin's own code:\n" + "\n".join(frames)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """An in-process run; without assertion rewriting and the cache, which these runs do not
    need (rewriting alone scans every installed distribution: half of a run's time)."""
    return pytester.runpytest("--assert=plain", "-p", "no:cacheprovider", *args)


def ini(pytester: pytest.Pytester, *lines: str) -> None:
    body = "\n".join(["[pytest]", "asyncio_default_fixture_loop_scope = function", *lines])
    pytester.makeini(body + "\n")


def write_profiles(pytester: pytest.Pytester, profiles: Mapping[str, str | bytes]) -> None:
    for name, text in profiles.items():
        path = pytester.path / "chaos_profiles" / f"{name}.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())


# -- 1-3: options, ini keys and profile files: usage errors -------------------------------


@dataclass(frozen=True)
class Usage:
    """A run with bad options / ini lines / profile files and the first line on stderr."""

    expected: str
    args: tuple[str, ...] = ()
    ini: tuple[str, ...] = ()
    profiles: Mapping[str, str | bytes] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)


def opt(id: str, args: str | tuple[str, ...], expected: str, **kw: Any) -> Any:
    args = (args,) if isinstance(args, str) else args
    return pytest.param(Usage(expected, args=args, **kw), id=f"option-{id}")


def ini_case(id: str, lines: str | tuple[str, ...], expected: str, **kw: Any) -> Any:
    lines = (lines,) if isinstance(lines, str) else lines
    return pytest.param(Usage(USAGE + expected, ini=lines, **kw), id=f"ini-{id}")


def prof(id: str, text: str | bytes, expected: str, **others: str) -> Any:
    """Profile ``bad`` (``text``) selected with ``--chaos-profile=bad``; ``expected`` follows
    ``<its path>: ``."""
    return pytest.param(
        Usage(
            f"{USAGE}--chaos-profile: {{profiles}}/bad.toml: {expected}",
            args=("--chaos-profile=bad",),
            profiles={"bad": text, **others},
        ),
        id=f"profile-{id}",
    )


def fault(body: str, expected: str, id: str) -> Any:
    """One ``[[faults]]`` table in profile ``bad``; ``expected`` follows ``faults[0]: ``."""
    return prof(f"fault-{id}", f"[[faults]]\n{body}\n", f"faults[0]: {expected}")


def escape(table: str, body: str, expected: str, id: str) -> Any:
    """One ``[escape...]`` table in profile ``bad``; ``expected`` follows ``[table]: ``."""
    return prof(f"escape-{id}", f"[{table}]\n{body}\n", f"[{table}]: {expected}")


SEED = "…: error: argument --chaos-seed: expected a non-negative integer, got "

OPTION_CASES = [
    opt("profile-empty", "--chaos-profile=", f"{USAGE}--chaos-profile: '' {NOT_A_NAME}"),
    opt(
        "profile-unknown",
        "--chaos-profile=nope",
        f"{USAGE}--chaos-profile: chaos profile 'nope': not found; available: {BUILTINS} "
        "(searched …)",
    ),
    opt(
        "profile-parent-path",
        "--chaos-profile=../x",
        f"{USAGE}--chaos-profile: '../x' {NOT_A_NAME}",
    ),
    opt(
        "profile-absolute-path",
        "--chaos-profile=/etc/passwd",
        f"{USAGE}--chaos-profile: '/etc/passwd' {NOT_A_NAME}",
    ),
    opt(
        "profile-file-name",
        "--chaos-profile=flaky.toml",
        f"{USAGE}--chaos-profile: chaos profile 'flaky.toml': not found; available: {BUILTINS} "
        "(searched …)",
    ),
    opt(
        "profile-name-too-long",
        f"--chaos-profile={LONG_NAME}",
        f"{USAGE}--chaos-profile: chaos profile {SHOWN_LONG_NAME}: not found; available: "
        f"{BUILTINS} (searched …)",
    ),
    opt("seed-negative", "--chaos-seed=-1", SEED + "'-1'"),
    opt("seed-not-a-number", "--chaos-seed=abc", SEED + "'abc'"),
    opt("seed-float", "--chaos-seed=1.5", SEED + "'1.5'"),
    opt("seed-empty", "--chaos-seed=", SEED + "''"),
    opt(
        "trace-dir-empty",
        "--chaos-trace-dir=",
        f"{USAGE}--chaos-trace-dir: expected a directory, got an empty path",
    ),
    opt(
        "trace-dir-is-a-file",
        "--chaos-trace-dir=afile",
        f"{USAGE}--chaos-trace-dir: {{real}}/afile exists and is not a directory",
        files={"afile": "not a directory"},
    ),
    opt(
        "trace-dir-under-a-file",
        "--chaos-trace-dir=afile/traces",
        f"{USAGE}--chaos-trace-dir: cannot create {{real}}/afile/traces: Not a directory",
        files={"afile": "not a directory"},
    ),
    opt(
        "trace-dir-unknown-user",
        "--chaos-trace-dir=~nosuchuser-agentchaos/traces",
        f"{USAGE}--chaos-trace-dir: cannot create ~nosuchuser-agentchaos/traces: "
        "Could not determine home directory.",
    ),
]

INI_CASES = [
    ini_case(
        "profile-unknown",
        "chaos_profile = nope",
        f"ini chaos_profile: chaos profile 'nope': not found; available: {BUILTINS} (searched …)",
    ),
    ini_case("profile-path", "chaos_profile = ../x", f"ini chaos_profile: '../x' {NOT_A_NAME}"),
    ini_case(
        "profile-broken",
        "chaos_profile = bad",
        "ini chaos_profile: {profiles}/bad.toml: [escape.loops]: unknown key 'max_perod'; "
        f"allowed: {LOOP_KEYS}",
        profiles={"bad": "[escape.loops]\nmax_perod = 8\n"},
    ),
    ini_case(
        "profiles-dir-missing",
        "chaos_profiles_dir = nowhere",
        "ini chaos_profiles_dir: {root}/nowhere is not a directory",
    ),
    ini_case(
        "profiles-dir-is-a-file",
        "chaos_profiles_dir = afile",
        "ini chaos_profiles_dir: {root}/afile is not a directory",
        files={"afile": "not a directory"},
    ),
    ini_case(
        "profiles-dir-missing-list-profiles",
        "chaos_profiles_dir = nowhere",
        "ini chaos_profiles_dir: {root}/nowhere is not a directory",
        args=("--chaos-list-profiles",),
    ),
    ini_case(
        "virtual-sleep-maybe",
        "chaos_virtual_sleep = maybe",
        "ini chaos_virtual_sleep: expected true or false, got 'maybe'",
    ),
    ini_case(
        "freeze-time-maybe",
        "chaos_freeze_time = maybe",
        "ini chaos_freeze_time: expected true or false, got 'maybe'",
    ),
    ini_case(
        "wall-timeout-negative",
        "chaos_wall_timeout = -1",
        "ini chaos_wall_timeout: must be >= 0 seconds, got -1",
    ),
    ini_case(
        "wall-timeout-abc",
        "chaos_wall_timeout = abc",
        "ini chaos_wall_timeout: expected a finite number of seconds, got 'abc'",
    ),
    ini_case(
        "wall-timeout-1e9",
        "chaos_wall_timeout = 1e9",
        "ini chaos_wall_timeout: must be <= 86400 seconds, got 1000000000.0",
    ),
    ini_case(
        "wall-timeout-nan",
        "chaos_wall_timeout = nan",
        "ini chaos_wall_timeout: expected a finite number of seconds, got nan",
    ),
    ini_case(
        "trace-max-value-0",
        "chaos_trace_max_value = 0",
        "ini chaos_trace_max_value: must be >= 1024, got 0",
    ),
    ini_case(
        "trace-max-value-x",
        "chaos_trace_max_value = x",
        "ini chaos_trace_max_value: expected an integer >= 1024, got 'x'",
    ),
    ini_case(
        "trace-max-value-float",
        "chaos_trace_max_value = 1.5",
        "ini chaos_trace_max_value: expected an integer >= 1024, got '1.5'",
    ),
    ini_case(
        "allow-hosts-space",
        "chaos_allow_hosts = bad host!",
        f"ini chaos_allow_hosts[0]: 'bad host!' {NOT_A_HOST}",
    ),
    ini_case(
        "allow-hosts-bad-cidr",
        "chaos_allow_hosts = 10.0.0.0/33",
        "ini chaos_allow_hosts[0]: '10.0.0.0/33' is not an IP network such as 10.0.0.0/8",
    ),
    ini_case(
        "allow-hosts-second-line",
        ("chaos_allow_hosts =", "    example.com", "    -bad-.com"),
        f"ini chaos_allow_hosts[1]: '-bad-.com' {NOT_A_HOST}",
    ),
    ini_case(
        "allow-hosts-wildcard-subdomain",
        "chaos_allow_hosts = *.example.com",
        f"ini chaos_allow_hosts[0]: '*.example.com' {NOT_A_HOST}",
    ),
    ini_case(
        "allow-hosts-port",
        "chaos_allow_hosts = example.com:8080",
        f"ini chaos_allow_hosts[0]: 'example.com:8080' {NOT_A_HOST}",
    ),
    ini_case(
        "allow-hosts-label-too-long",
        f"chaos_allow_hosts = {'a' * 64}.com",
        f"ini chaos_allow_hosts[0]: '{'a' * 64}.com' {NOT_A_HOST}",
    ),
    ini_case(
        "allow-hosts-url",
        "chaos_allow_hosts = http://example.com",
        f"ini chaos_allow_hosts[0]: 'http://example.com' {NOT_A_HOST}",
    ),
    ini_case(
        "allow-hosts-bad-ipv4",
        "chaos_allow_hosts = 300.1.1.1",
        f"ini chaos_allow_hosts[0]: '300.1.1.1' {NOT_A_HOST}",
    ),
]

PROFILE_CASES = [
    prof("invalid-toml", "faults = [\n", "invalid TOML: Invalid value (at end of document)"),
    prof(
        "invalid-toml-duplicate-key",
        'description = "a"\ndescription = "b"\n',
        "invalid TOML: Cannot overwrite a value (at line 2, column 18)",
    ),
    prof(
        "not-utf8",
        b'description = "caf\xe9"\n',
        "not UTF-8 text (byte 0xe9 at offset 18); TOML files must be UTF-8",
    ),
    prof(
        "arrays-thousands-deep",
        "x = " + "[" * 5000 + "]" * 5000 + "\n",
        "invalid TOML: nested deeper than 32 levels",
    ),
    prof(
        "inline-tables-thousands-deep",
        "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n",
        "invalid TOML: nested deeper than 32 levels",
    ),
    prof(
        "table-header-thousands-deep",
        "[" + ".".join(["t"] * 5000) + "]\n",
        "invalid TOML: nested deeper than 32 levels",
    ),
    prof(
        "unknown-top-level-key",
        'descripton = "x"\n',
        "unknown key 'descripton'; allowed: description, extends, budgets, faults, escape, "
        "repair, halt, phoenix",
    ),
    prof("description-not-a-string", "description = 5\n", "description: expected a string, got 5"),
    prof(
        "extends-missing",
        'extends = "ghost"\n',
        f"extends: chaos profile 'ghost': not found; available: bad, {BUILTINS} (searched …)",
    ),
    prof(
        "extends-itself",
        'extends = "bad"\n',
        "extends: 'bad' extends itself, but no other profile 'bad' is there to build on (a "
        "profile may extend its own name only to shadow one in a later directory: …)",
    ),
    prof(
        "extends-cycle",
        'extends = "other"\n',
        "'extends' cycle: bad -> other -> bad",
        other='extends = "bad"\n',
    ),
    prof("extends-not-a-string", "extends = 5\n", "extends: expected a profile name, got 5"),
    prof("extends-path", 'extends = "../x"\n', f"extends: '../x' {NOT_A_NAME}"),
    prof(
        "extends-name-too-long",
        f'extends = "{LONG_NAME}"\n',
        f"extends: chaos profile {SHOWN_LONG_NAME}: not found; available: bad, {BUILTINS} "
        "(searched …)",
    ),
    prof("budgets-zero", "[budgets]\nmax_steps = 0\n", "budgets: max_steps: must be > 0, got 0"),
    prof(
        "budgets-unknown-key",
        "[budgets]\nmax_stepz = 5\n",
        f"budgets: unknown budget 'max_stepz'; allowed: {BUDGETS}",
    ),
    prof(
        "budgets-seconds-text",
        '[budgets]\nmax_seconds = "1h"\n',
        "budgets: max_seconds: expected a finite number of seconds, got '1h'",
    ),
    prof(
        "budgets-seconds-inf",
        "[budgets]\nmax_seconds = inf\n",
        "budgets: max_seconds: expected a finite number of seconds, got inf",
    ),
    prof(
        "budgets-seconds-huge-integer",
        f"[budgets]\nmax_seconds = {HUGE}\n",
        f"budgets: max_seconds: expected a finite number of seconds, got {str(HUGE)[:20]}…",
    ),
    prof(
        "budgets-tokens-float",
        "[budgets]\nmax_tokens = 1.5\n",
        "budgets: max_tokens: expected an integer, got 1.5",
    ),
    prof("budgets-not-a-table", "budgets = 5\n", "budgets: budgets must be a table/dict, got 5"),
    prof(
        "faults-a-table",
        "[faults]\nkind = 'timeout'\n",
        "faults: 'faults' must be a list of fault tables, got {'kind': 'timeout'}",
    ),
    prof(
        "faults-of-numbers",
        "faults = [1]\n",
        "faults[0]: a fault must be a table/dict with a 'kind', got 1",
    ),
    fault("seconds = 5", "missing 'kind'", "no-kind"),
    fault(
        "kind = 'explode'", f"kind: unknown fault kind 'explode'; allowed: {KINDS}", "unknown-kind"
    ),
    fault("kind = 5", "kind: expected a fault kind name (a string), got 5", "kind-not-a-string"),
    fault(
        "kind = 'timeout'\nstatus = 500",
        f"unknown key 'status' for fault kind 'timeout'; allowed: seconds, and selector keys "
        f"{SELECTORS}",
        "key-of-another-kind",
    ),
    fault(
        "kind = 'connection_error'\nseconds = 5",
        "unknown key 'seconds' for fault kind 'connection_error'; allowed: selector keys "
        f"{SELECTORS}",
        "key-for-a-kind-without-keys",
    ),
    fault("kind = 'timeout'\nprobability = 2", "probability: must be <= 1, got 2", "probability-2"),
    fault(
        "kind = 'timeout'\nprobability = 'high'",
        "probability: expected a finite number, got 'high'",
        "probability-text",
    ),
    fault("kind = 'timeout'\nfirst = 0", "first: must be >= 1, got 0", "first-0"),
    fault("kind = 'timeout'\nnth = []", "nth: must not be an empty list", "nth-empty"),
    fault("kind = 'timeout'\nnth = [1, 0]", "nth[1]: must be >= 1, got 0", "nth-item-0"),
    fault(
        "kind = 'timeout'\nevery = 1.5", "every: expected an integer >= 1, got 1.5", "every-float"
    ),
    fault(
        "kind = 'timeout'\nmax_count = -1", "max_count: must be >= 1, got -1", "max-count-negative"
    ),
    fault(
        "kind = 'timeout'\nwindow = [10, 5]",
        "window: window end 5 must be after start 10",
        "window-reversed",
    ),
    fault(
        "kind = 'timeout'\nwindow = [1]",
        "window: expected [start, end] in virtual seconds, got [1]",
        "window-one-number",
    ),
    fault(
        f"kind = 'timeout'\nwindow = [0, {HUGE}]",
        f"window: expected a finite number, got {str(HUGE)[:20]}…",
        "window-huge-integer",
    ),
    fault(
        "kind = 'timeout'\ntools = ''",
        "tools: expected a tool-name glob (a non-empty string), got ''",
        "tools-empty",
    ),
    fault(
        "kind = 'timeout'\ntools = [5]",
        "tools[0]: expected a tool-name glob (a non-empty string), got 5",
        "tools-number",
    ),
    fault(
        "kind = 'timeout'\nchannels = 'smtp'",
        "channels: 'smtp' is not one of tool, http, model, step, snapshot",
        "channels-unknown",
    ),
    fault(
        "kind = 'malformed_params'\nchannels = ['model']",
        "kind 'malformed_params' cannot apply to channels ['model']; it applies to tool, http",
        "channels-the-kind-cannot-hit",
    ),
    fault(
        "kind = 'http_error'\nstatus = 200",
        "status: HTTP status must be a 4xx or 5xx code (400-599), got 200",
        "status-200",
    ),
    fault(
        "kind = 'http_error'\nstatus = '500'",
        "status: expected an HTTP status code (an integer from 400 to 599), got '500'",
        "status-text",
    ),
    fault(
        "kind = 'timeout'\nseconds = 1e8",
        "seconds: must be <= 10000000, got 100000000.0",
        "seconds-out-of-range",
    ),
    fault("kind = 'timeout'\nseconds = -1", "seconds: must be >= 0, got -1", "seconds-negative"),
    fault(
        f"kind = 'timeout'\nseconds = {HUGE}",
        f"seconds: expected a finite number, got {str(HUGE)[:20]}…",
        "seconds-huge-integer",
    ),
    fault(
        "kind = 'latency'\nseconds = [1, 2, 3]",
        "seconds: expected seconds or [low, high], got [1, 2, 3]",
        "seconds-three-numbers",
    ),
    fault(
        "kind = 'rate_limit'\nretry_after = 'soon'",
        "retry_after: expected a finite number, got 'soon'",
        "retry-after-text",
    ),
    fault(
        "kind = 'http_error'\nbody = 1979-05-27T07:32:00Z",
        f"body: {NOT_JSON} datetime datetime.datetime(1979, 5, 27, 7, 32, "
        "tzinfo=datetime.timezone.utc)",
        "body-datetime",
    ),
    fault(
        "kind = 'http_error'\nbody = {when = 1979-05-27}",
        f"body.when: {NOT_JSON} date datetime.date(1979, 5, 27)",
        "body-nested-date",
    ),
    fault(
        "kind = 'http_error'\nbody = nan",
        "body: expected JSON data, got the non-finite number nan",
        "body-nan",
    ),
    fault(
        "kind = 'malformed_params'\nmutations = ['explode']",
        f"mutations[0]: 'explode' is not one of {MUTATIONS}",
        "mutation-unknown",
    ),
    fault(
        "kind = 'garbled_output'\nmode = 'scramble'",
        "mode: 'scramble' is not one of truncate, non_json",
        "garble-mode-unknown",
    ),
    prof("escape-not-a-table", "escape = 5\n", "[escape] must be a table"),
    escape(
        "escape",
        "foo = 1",
        "unknown key 'foo'; allowed: loops, classifier, backoff, breaker, max_breaker_wait, "
        "interventions",
        "unknown-key",
    ),
    escape(
        "escape.loops",
        "max_perod = 8",
        f"unknown key 'max_perod'; allowed: {LOOP_KEYS}",
        "loops-typo",
    ),
    prof(
        "escape-loops-not-a-table",
        "[escape]\nloops = 5\n",
        "[escape.loops]: loops must be a table/dict, got 5",
    ),
    escape(
        "escape.loops",
        "min_period = 5\nmax_period = 3",
        "min_period: must be <= max_period (3), got 5",
        "loops-min-above-max",
    ),
    escape("escape.loops", "repeats = 1", "repeats: must be >= 2, got 1", "loops-repeats-1"),
    escape(
        "escape.loops",
        "node_window_seconds = 0",
        "node_window_seconds: must be > 0 seconds, got 0",
        "loops-window-0",
    ),
    escape(
        "escape.backoff",
        "jitter = 'random'",
        "jitter: 'random' is not one of full, equal, none",
        "backoff-jitter",
    ),
    escape("escape.backoff", "factor = 0.5", "factor: must be >= 1, got 0.5", "backoff-factor"),
    escape(
        "escape.backoff",
        "max_attempts = 0",
        "max_attempts: must be >= 1, got 0",
        "backoff-attempts-0",
    ),
    escape(
        "escape.backoff",
        "retries = 3",
        "unknown key 'retries'; allowed: base, factor, max_delay, jitter, max_attempts, "
        "retry_after_cap",
        "backoff-unknown-key",
    ),
    escape(
        "escape.breaker",
        "failure_threshold = 0",
        "failure_threshold: must be >= 1, got 0",
        "breaker-threshold-0",
    ),
    escape(
        "escape.breaker",
        "reset_timeout = '30s'",
        "reset_timeout: expected a finite number of seconds, got '30s'",
        "breaker-reset-text",
    ),
    escape(
        "escape.breaker",
        "threshold = 3",
        "unknown key 'threshold'; allowed: failure_threshold, reset_timeout, "
        "half_open_max_calls, window",
        "breaker-unknown-key",
    ),
    escape(
        "escape.classifier",
        "escalate = 'yes'",
        "escalate: expected a boolean, got 'yes'",
        "classifier-escalate-text",
    ),
    escape(
        "escape.classifier",
        "escalate_after = 5\nwindow = 3",
        "window: must be >= escalate_after (5), got 3",
        "classifier-window-short",
    ),
    escape(
        "escape.classifier",
        "status = {abc = 'timeout'}",
        "status.abc: expected an HTTP status 100-599, '4xx' or '5xx' as the key",
        "classifier-status-key",
    ),
    escape(
        "escape.classifier",
        "status = {404 = 'persistent'}",
        f"status.404: unknown category 'persistent'; allowed: {CATEGORIES}",
        "classifier-status-category",
    ),
    escape(
        "escape.classifier",
        "exceptions = {'not-a-name' = 'timeout'}",
        "exceptions.not-a-name: expected an exception class name (e.g. 'ReadTimeout') as the key",
        "classifier-exception-name",
    ),
    escape(
        "escape.classifier",
        "patterns = {timeout = '('}",
        "patterns.timeout[0]: invalid regular expression '(': missing ), unterminated "
        "subpattern at position 0",
        "classifier-bad-regex",
    ),
    escape(
        "escape",
        "interventions = ['retry', 'pray']",
        "interventions[1]: 'pray' is not one of retry, explore, rollback, escalate, stop",
        "interventions-unknown",
    ),
    escape(
        "escape",
        "interventions = 'retry'",
        "interventions: expected a list of retry, explore, rollback, escalate, stop, got 'retry'",
        "interventions-not-a-list",
    ),
    escape(
        "escape",
        "max_breaker_wait = -1",
        "max_breaker_wait: must be >= 0 seconds, got -1",
        "max-breaker-wait-negative",
    ),
    escape(
        "escape.loops",
        f"max_period = {10**20}",
        f"max_period: must be <= …, got {10**20}",
        "loops-max-period-huge",
    ),
    escape(
        "escape.breaker",
        f"failure_threshold = {10**20}",
        f"failure_threshold: must be <= …, got {10**20}",
        "breaker-threshold-huge",
    ),
    pytest.param(
        Usage(
            f"{USAGE}--chaos-profile: {{profiles}}/…: 'extends' chain longer than … profiles",
            args=("--chaos-profile=bad",),
            profiles={
                "bad": 'extends = "p1"\n',
                **{f"p{i}": f'extends = "p{i + 1}"\n' for i in range(1, 1100)},
                "p1100": "",
            },
        ),
        id="profile-extends-chain-1100-long",
    ),
    prof(
        "repair-unknown-key",
        "[repair]\nx = 1\n",
        "[repair]: unknown key 'x'; allowed: threshold, max_attempts, fuzzy_score, strategies, "
        "synonyms, error_patterns",
    ),
    prof(
        "repair-threshold-above-one",
        "[repair]\nthreshold = 2\n",
        "[repair]: threshold: must be <= 1, got 2",
    ),
    prof(
        "repair-unknown-strategy",
        "[repair.strategies]\nguess = false\n",
        "[repair.strategies]: unknown key 'guess'; allowed: default_value_assignment, "
        "infer_missing_param, llm_infer_missing_param, rename_key, drop_unknown_key, "
        "schema_type_conversion, wrap_in_list, wrap_in_object, split_compound, unwrap_list, "
        "enum_value_correction, date_format_correction, format_correction, pattern_correction, "
        "clamp_value, "
        "length_correction, timezone_correction, date_year_correction, drop_exclusive_key, "
        "rejected_value_correction, unit_conversion, json_repair, model_proposal, unwrap_object, "
        "range_order_correction, person_name_correction",
    ),
    prof(
        "repair-pattern-without-field",
        '[[repair.error_patterns]]\nregex = "E17"\nkind = "missing"\n',
        "[repair]: error_patterns[0]: regex: needs a (?P<field>...) group naming the parameter",
    ),
    prof(
        "halt-unknown-key",
        "[halt]\nvibes = 1\n",
        "[halt]: unknown key 'vibes'; allowed: strikes, window, lexical_overlap, cjk_overlap, "
        "semantic_similarity, cjk_semantic_similarity, stagnation_steps, novelty_steps, "
        "threshold, weights, max_steps, max_seconds, max_tokens",
    ),
    prof(
        "halt-bad-weight",
        "[halt.weights]\ndrift = 2\n",
        "[halt]: weights.drift: must be <= 1, got 2",
    ),
    prof(
        "phoenix-unknown-key",
        "[phoenix]\nlives = 9\n",
        "[phoenix]: unknown key 'lives'; allowed: interval, keep, max_rebirths, backoff, "
        "backoff_factor, max_backoff, stagnation_rounds, relapse_steps",
    ),
    prof(
        "phoenix-bad-interval",
        "[phoenix]\ninterval = 0\n",
        "[phoenix]: interval: must be >= 1, got 0",
    ),
]


@pytest.mark.parametrize("case", OPTION_CASES + INI_CASES + PROFILE_CASES)
def test_bad_option_ini_key_or_profile_is_a_one_line_usage_error(
    pytester: pytest.Pytester, case: Usage
) -> None:
    ini(pytester, *case.ini)
    write_profiles(pytester, case.profiles)
    for name, text in case.files.items():
        (pytester.path / name).write_text(text, encoding="utf-8")
    pytester.makepyfile(test_agent="def test_agent(chaos):\n    pass\n")
    result = run(pytester, *case.args)
    pattern = line_pattern(_fill(pytester, case.expected))
    result.stderr.fnmatch_lines([pattern])
    assert_clean(result)
    if case.expected.startswith(USAGE):  # (argparse prints its usage line first)
        first = next((line for line in result.errlines if line.strip()), "")
        assert fnmatch.fnmatchcase(first, pattern), f"the first line on stderr is {first!r}"
    assert result.ret == pytest.ExitCode.USAGE_ERROR


# -- 4: markers -----------------------------------------------------------------------------

#: Defined in the test module of marker cases that need it.
BOOM = """
class Boom:
    def __repr__(self):
        raise RuntimeError("repr exploded")
"""


def mark(id: str, marker: str, expected: str, **profiles: str) -> Any:
    return pytest.param(marker, expected, profiles, id=id)


C = "@pytest.mark.chaos: "
F0 = C + "faults[0]: "
HALT = "@pytest.mark.must_halt: "
ESCAPE = "@pytest.mark.must_escape: "
NOT_FOUND = f"not found; available: {BUILTINS} (searched …)"
REPR_FAILED = "<Boom object (repr failed: RuntimeError)>"
ONE_POSITIONAL = C + "takes at most one positional argument, the profile name"
FAULT_KEYS = f"allowed: seconds, and selector keys {SELECTORS}"

MARKER_CASES = [
    mark(
        "chaos-unknown-kwarg", "chaos(sed=3)", C + f"unknown argument 'sed'; allowed: {CHAOS_ARGS}"
    ),
    mark("chaos-two-positionals", 'chaos("flaky", "none")', ONE_POSITIONAL),
    mark("chaos-positional-and-profile", 'chaos("flaky", profile="none")', ONE_POSITIONAL),
    mark("chaos-profile-number", "chaos(5)", C + "profile: expected a profile name, got 5"),
    mark(
        "chaos-profile-empty", 'chaos(profile="")', C + "profile: expected a profile name, got ''"
    ),
    mark(
        "chaos-profile-unknown", 'chaos("nope")', C + f"profile: chaos profile 'nope': {NOT_FOUND}"
    ),
    mark(
        "chaos-profile-name-too-long",
        f'chaos("{LONG_NAME}")',
        C + f"profile: chaos profile {SHOWN_LONG_NAME}: {NOT_FOUND}",
    ),
    mark(
        "chaos-profile-invalid-toml",
        'chaos("bad")',
        C + "profile: {profiles}/bad.toml: invalid TOML: Invalid value (at end of document)",
        bad="faults = [\n",
    ),
    mark(
        "chaos-profile-bad-fault",
        'chaos("bad")',
        C + "profile: {profiles}/bad.toml: faults[0]: probability: must be <= 1, got 2",
        bad="[[faults]]\nkind = 'timeout'\nprobability = 2\n",
    ),
    mark(
        "chaos-profile-extends-missing",
        'chaos("bad")',
        C + "profile: {profiles}/bad.toml: extends: chaos profile 'ghost': not found; available: "
        f"bad, {BUILTINS} (searched …)",
        bad='extends = "ghost"\n',
    ),
    mark("chaos-seed-negative", "chaos(seed=-1)", C + "seed: must be >= 0, got -1"),
    mark("chaos-seed-float", "chaos(seed=1.5)", C + "seed: expected an integer >= 0, got 1.5"),
    mark("chaos-seed-bool", "chaos(seed=True)", C + "seed: expected an integer >= 0, got True"),
    mark("chaos-max-steps-0", "chaos(max_steps=0)", C + "max_steps: must be > 0, got 0"),
    mark(
        "chaos-max-steps-float",
        "chaos(max_steps=1.5)",
        C + "max_steps: expected an integer, got 1.5",
    ),
    mark(
        "chaos-max-seconds-text",
        'chaos(max_seconds="1h")',
        C + "max_seconds: expected a finite number of seconds, got '1h'",
    ),
    mark(
        "chaos-max-tokens-negative", "chaos(max_tokens=-5)", C + "max_tokens: must be > 0, got -5"
    ),
    mark(
        "chaos-max-tool-calls-bool",
        "chaos(max_tool_calls=True)",
        C + "max_tool_calls: expected an integer, got True",
    ),
    mark(
        "chaos-max-seconds-huge-integer",
        "chaos(max_seconds=10**400)",
        C + "max_seconds: expected a finite number of seconds, got 1000…",
    ),
    mark(
        "chaos-max-steps-repr-raises",
        "chaos(max_steps=Boom())",
        C + f"max_steps: expected an integer, got {REPR_FAILED}",
    ),
    mark(
        "chaos-virtual-sleep-1",
        "chaos(virtual_sleep=1)",
        C + "virtual_sleep: expected a boolean, got 1",
    ),
    mark(
        "chaos-freeze-time-text",
        'chaos(freeze_time="no")',
        C + "freeze_time: expected a boolean, got 'no'",
    ),
    mark(
        "chaos-allow-hosts-string",
        'chaos(allow_hosts="example.com")',
        C + "allow_hosts: expected a list of host names or addresses, got 'example.com'",
    ),
    mark(
        "chaos-allow-hosts-bad-host",
        'chaos(allow_hosts=["bad host"])',
        C + f"allow_hosts[0]: 'bad host' {NOT_A_HOST}",
    ),
    mark(
        "chaos-allow-hosts-bad-cidr",
        'chaos(allow_hosts=["10.0.0.0/99"])',
        C + "allow_hosts[0]: '10.0.0.0/99' is not an IP network such as 10.0.0.0/8",
    ),
    mark(
        "chaos-allow-hosts-number",
        "chaos(allow_hosts=[5])",
        C + "allow_hosts[0]: expected a host name or address, got 5",
    ),
    mark(
        "chaos-allow-hosts-url",
        'chaos(allow_hosts=["https://api.example.com/v1"])',
        C + f"allow_hosts[0]: 'https://api.example.com/v1' {NOT_A_HOST}",
    ),
    mark(
        "chaos-wall-timeout-negative",
        "chaos(wall_timeout=-1)",
        C + "wall_timeout: must be >= 0 seconds, got -1",
    ),
    mark(
        "chaos-wall-timeout-1e9",
        "chaos(wall_timeout=1e9)",
        C + "wall_timeout: must be <= 86400 seconds, got 1000000000.0",
    ),
    mark(
        "chaos-wall-timeout-text",
        'chaos(wall_timeout="10s")',
        C + "wall_timeout: expected a finite number of seconds, got '10s'",
    ),
    mark(
        "chaos-faults-a-dict",
        'chaos(faults={"kind": "timeout"})',
        C + "faults: 'faults' must be a list of fault tables, got {'kind': 'timeout'}",
    ),
    mark(
        "chaos-faults-bytes",
        'chaos(faults=b"timeout")',
        C + "faults: 'faults' must be a list of fault tables, got b'timeout'",
    ),
    mark(
        "chaos-faults-repr-raises",
        "chaos(faults=Boom())",
        C + f"faults: 'faults' must be a list of fault tables, got {REPR_FAILED}",
    ),
    mark("chaos-fault-missing-kind", 'chaos(faults=[{"seconds": 5}])', F0 + "missing 'kind'"),
    mark(
        "chaos-fault-kind-list",
        'chaos(faults=[{"kind": ["timeout"]}])',
        F0 + "kind: expected a fault kind name (a string), got ['timeout']",
    ),
    mark(
        "chaos-fault-seconds-text",
        'chaos(faults=[{"kind": "timeout", "seconds": "5"}])',
        F0 + "seconds: expected a finite number, got '5'",
    ),
    mark(
        "chaos-fault-seconds-inf",
        'chaos(faults=[{"kind": "latency", "seconds": float("inf")}])',
        F0 + "seconds: expected a finite number, got inf",
    ),
    mark(
        "chaos-fault-status-repr-raises",
        'chaos(faults=[{"kind": "http_error", "status": Boom()}])',
        F0
        + f"status: expected an HTTP status code (an integer from 400 to 599), got {REPR_FAILED}",
    ),
    mark(
        "chaos-fault-retry-after-reversed",
        'chaos(faults=[{"kind": "rate_limit", "retry_after": [30, 5]}])',
        F0 + "retry_after: range low 30.0 is above high 5.0",
    ),
    mark(
        "chaos-fault-tools-number",
        'chaos(faults=[{"kind": "timeout", "tools": 5}])',
        F0 + "tools: expected a tool-name glob (a non-empty string), got 5",
    ),
    mark(
        "chaos-fault-channels-unknown",
        'chaos(faults=[{"kind": "timeout", "channels": ["smtp"]}])',
        F0 + "channels[0]: 'smtp' is not one of tool, http, model, step, snapshot",
    ),
    mark(
        "chaos-fault-nth-0",
        'chaos(faults=[{"kind": "timeout", "nth": 0}])',
        F0 + "nth: must be >= 1, got 0",
    ),
    mark(
        "chaos-fault-first-bool",
        'chaos(faults=[{"kind": "timeout", "first": True}])',
        F0 + "first: expected an integer >= 1, got True",
    ),
    mark(
        "chaos-fault-every-0",
        'chaos(faults=[{"kind": "timeout", "every": 0}])',
        F0 + "every: must be >= 1, got 0",
    ),
    mark(
        "chaos-fault-max-count-text",
        'chaos(faults=[{"kind": "timeout", "max_count": "3"}])',
        F0 + "max_count: expected an integer >= 1, got '3'",
    ),
    mark(
        "chaos-fault-mutations-unknown",
        'chaos(faults=[{"kind": "malformed_params", "mutations": "explode"}])',
        F0 + f"mutations: 'explode' is not one of {MUTATIONS}",
    ),
    mark(
        "chaos-fault-mode-unknown",
        'chaos(faults=[{"kind": "garbled_output", "mode": ["truncate", "x"]}])',
        F0 + "mode[1]: 'x' is not one of truncate, non_json",
    ),
    mark(
        "chaos-fault-window-text",
        'chaos(faults=[{"kind": "timeout", "window": "0-10"}])',
        F0 + "window: expected [start, end] in virtual seconds, got '0-10'",
    ),
    mark(
        "chaos-fault-probability-huge-integer",
        'chaos(faults=[{"kind": "timeout", "probability": 10**400}])',
        F0 + "probability: expected a finite number, got 1000…",
    ),
    mark(
        "chaos-fault-body-object",
        'chaos(faults=[{"kind": "http_error", "body": object()}])',
        F0 + f"body: {NOT_JSON} object <object object at …>",
    ),
    mark(
        "chaos-fault-body-int-key",
        'chaos(faults=[{"kind": "http_error", "body": {1: 2}}])',
        F0 + "body: expected JSON data (string keys), got the key 1",
    ),
    mark(
        "chaos-fault-body-100-deep",
        'chaos(faults=[{"kind": "http_error", "body": eval("[" * 100 + "]" * 100)}])',
        F0 + "body" + "[0]" * 64 + ": JSON data nested deeper than 64 levels",
    ),
    mark(
        "chaos-fault-int-key",
        'chaos(faults=[{"kind": "timeout", 1: 2}])',
        F0 + f"unknown key 1 for fault kind 'timeout'; {FAULT_KEYS}",
    ),
    mark(
        "chaos-fault-mixed-keys",
        'chaos(faults=[{"kind": "timeout", 1: 2, (1,): 3}])',
        F0 + f"unknown key … for fault kind 'timeout'; {FAULT_KEYS}",
    ),
    mark(
        "must-halt-positional",
        "must_halt(10)",
        HALT + f"takes keyword arguments only ({BUDGETS}, by, not_before)",
    ),
    mark(
        "must-halt-unknown-kwarg",
        "must_halt(max_step=3)",
        HALT + f"unknown argument 'max_step'; allowed: {BUDGETS}, by, not_before",
    ),
    mark("must-halt-0", "must_halt(max_steps=0)", HALT + "max_steps: must be > 0, got 0"),
    mark(
        "must-halt-nan",
        'must_halt(max_seconds=float("nan"))',
        HALT + "max_seconds: expected a finite number of seconds, got nan",
    ),
    mark(
        "must-halt-tokens-text",
        'must_halt(max_tokens="many")',
        HALT + "max_tokens: expected an integer, got 'many'",
    ),
    mark(
        "must-escape-positional",
        "must_escape(3)",
        ESCAPE + "takes keyword arguments only (within_steps, require_loop)",
    ),
    mark(
        "must-escape-unknown-kwarg",
        "must_escape(within=3)",
        ESCAPE + "unknown argument 'within'; allowed: within_steps, require_loop",
    ),
    mark(
        "must-escape-negative",
        "must_escape(within_steps=-1)",
        ESCAPE + "within_steps: must be >= 0, got -1",
    ),
    mark(
        "must-escape-text",
        'must_escape(within_steps="5")',
        ESCAPE + "within_steps: expected an integer >= 0, got '5'",
    ),
    mark(
        "must-escape-require-loop-text",
        'must_escape(require_loop="no")',
        ESCAPE + "require_loop: expected a boolean, got 'no'",
    ),
]


@pytest.mark.parametrize(("marker", "expected", "profiles"), MARKER_CASES)
def test_bad_marker_is_a_one_line_collection_error(
    pytester: pytest.Pytester, marker: str, expected: str, profiles: Mapping[str, str]
) -> None:
    ini(pytester)
    write_profiles(pytester, profiles)
    pytester.makepyfile(
        test_bad="\n".join(
            [
                "import pytest",
                BOOM,
                "def test_fine():",
                "    pass",
                "",
                f"@pytest.mark.{marker}",
                "def test_agent():",
                "    pass",
                "",
            ]
        )
    )
    # (Without --continue-on-collection-errors pytest stops with exit code 2 after printing
    # the same error, and spends 0.2 s per run rendering the interruption.)
    result = run(pytester, "--continue-on-collection-errors")
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR collecting test_bad.py _*",
            "pytest-agentchaos: bad chaos marker",
            line_pattern(_fill(pytester, f"test_bad.py::test_agent: {expected}")),
        ],
        consecutive=True,
    )
    assert_clean(result)
    result.assert_outcomes(errors=1)


ADDED_MARKER_CASES = [
    mark(
        "added-chaos-unknown-kwarg",
        "chaos(sed=1)",
        C + f"unknown argument 'sed'; allowed: {CHAOS_ARGS}",
    ),
    mark(
        "added-chaos-profile-unknown",
        'chaos("nope")',
        C + f"profile: chaos profile 'nope': {NOT_FOUND}",
    ),
    mark(
        "added-chaos-profile-broken",
        'chaos("bad")',
        C + "profile: {profiles}/bad.toml: [escape.backoff]: jitter: 'random' is not one of full, "
        "equal, none",
        bad="[escape.backoff]\njitter = 'random'\n",
    ),
    mark(
        "added-chaos-fault",
        'chaos(faults=[{"kind": "timeout", "seconds": -1}])',
        F0 + "seconds: must be >= 0, got -1",
    ),
    mark(
        "added-chaos-huge-integer",
        "chaos(max_seconds=10**400)",
        C + "max_seconds: expected a finite number of seconds, got 1000…",
    ),
    mark("added-must-halt", "must_halt(max_steps=0)", HALT + "max_steps: must be > 0, got 0"),
    mark(
        "added-must-escape",
        'must_escape(within_steps="x")',
        ESCAPE + "within_steps: expected an integer >= 0, got 'x'",
    ),
]


@pytest.mark.parametrize(("marker", "expected", "profiles"), ADDED_MARKER_CASES)
def test_bad_marker_added_by_a_conftest_fails_that_test_at_setup(
    pytester: pytest.Pytester, marker: str, expected: str, profiles: Mapping[str, str]
) -> None:
    ini(pytester)
    write_profiles(pytester, profiles)
    pytester.makeconftest(
        "\n".join(
            [
                "import pytest",
                "",
                "def pytest_collection_modifyitems(items):",
                "    for item in items:",
                "        if item.name == 'test_agent':",
                f"            item.add_marker(pytest.mark.{marker})",
                "",
            ]
        )
    )
    pytester.makepyfile(test_bad="def test_fine():\n    pass\n\ndef test_agent():\n    pass\n")
    result = run(pytester)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at setup of test_agent _*",
            line_pattern(_fill(pytester, f"pytest-agentchaos: bad chaos marker: {expected}")),
        ],
        consecutive=True,
    )
    assert_clean(result)
    result.assert_outcomes(passed=1, errors=1)


# -- 5: the chaos API inside a test ---------------------------------------------------------


def search(query: str) -> str:
    """Search the web."""
    return query


def _nested_schema(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def _model_run(output: Any, tokens: Callable[[Any], Any] | None = None) -> None:
    """One model call reporting ``output``'s usage, under ``max_tokens``."""
    chaos = Chaos.create(budgets=Budgets(max_tokens=100))
    try:
        chaos.model(lambda prompt: output, name="llm", tokens=tokens)("hi")
    finally:
        chaos.close()


ENTRY = {"channel": "tool", "target": "search", "index": 1, "kind": "timeout"}


def entry(**changes: Any) -> list[dict[str, Any]]:
    """A one-decision schedule: a 5 s timeout on call 1 of ``search``, with ``changes``
    (a value of ``...`` drops the key)."""
    out = {**ENTRY, "detail": {"seconds": 5}, **changes}
    return [{k: v for k, v in out.items() if v is not ...}]


def api(id: str, call: Callable[[Chaos], Any], error: type[BaseException], expected: str) -> Any:
    return pytest.param(call, error, expected, id=id)


CFG = ChaosConfigError
TOOLS = "chaos.wrap_tools(): tools: "
NOT_A_TOOL = "expected a tool (a function, a callable object or a framework's tool), got "
LONGEST_WAIT = "a wait lasts at most 1,000,000,000 s (about 31 years)"
SCHEMA = "chaos.wrap(search): schema: "
INVALID = SCHEMA + "not a valid JSON Schema: "
USAGE_100 = (
    "max_tokens=100 cannot be enforced: the token usage of model 'llm' call 1 cannot be read: "
)

API_CASES = [
    api(
        "wrap-not-callable",
        lambda c: c.wrap(42),
        TypeError,
        "chaos.wrap() needs a callable, got 42",
    ),
    api(
        "wrap-empty-name",
        lambda c: c.wrap(search, name=""),
        CFG,
        "chaos.wrap(): name: expected a non-empty tool name, got ''",
    ),
    api(
        "wrap-name-number",
        lambda c: c.wrap(search, name=5),
        CFG,
        "chaos.wrap(): name: expected a non-empty tool name, got 5",
    ),
    api(
        "schema-number",
        lambda c: c.wrap(search, schema=42),
        CFG,
        SCHEMA + "expected a JSON Schema object (a dict), got 42",
    ),
    api(
        "schema-string",
        lambda c: c.wrap(search, schema="x"),
        CFG,
        SCHEMA + "expected a JSON Schema object (a dict), got 'x'",
    ),
    api(
        "schema-minimum-text",
        lambda c: c.wrap(search, schema={"minimum": "zero"}),
        CFG,
        INVALID + "'zero' is not of type 'number' (at $.minimum)",
    ),
    api(
        "schema-properties-list",
        lambda c: c.wrap(search, schema={"properties": []}),
        CFG,
        INVALID + "[] is not of type 'object' (at $.properties)",
    ),
    api(
        "schema-type-typo",
        lambda c: c.wrap(search, schema={"type": "strng"}),
        CFG,
        INVALID + "'strng' is not valid under any of the given schemas (at $.type)",
    ),
    api(
        "schema-required-string",
        lambda c: c.wrap(search, schema={"type": "object", "required": "q"}),
        CFG,
        INVALID + "'q' is not of type 'array' (at $.required)",
    ),
    api(
        "schema-bad-pattern",
        lambda c: c.wrap(search, schema={"properties": {"q": {"pattern": "("}}}),
        CFG,
        INVALID + "'(' is not a 'regex' (at $.properties.q.pattern)",
    ),
    api(
        "schema-openai-format",
        lambda c: c.wrap(
            search,
            schema={"type": "function", "function": {"name": "s", "parameters": {"type": "objct"}}},
        ),
        CFG,
        INVALID + "'objct' is not valid under any of the given schemas (at $.type)",
    ),
    api(
        "schema-unknown-draft",
        lambda c: c.wrap(search, schema={"$schema": "http://example.com/nope"}),
        CFG,
        SCHEMA + "unknown $schema 'http://example.com/nope'",
    ),
    api(
        "schema-draft-number",
        lambda c: c.wrap(search, schema={"$schema": 5}),
        CFG,
        SCHEMA + "unknown $schema 5",
    ),
    api(
        "schema-draft-list",
        lambda c: c.wrap(search, schema={"$schema": []}),
        CFG,
        SCHEMA + "unknown $schema []",
    ),
    api(
        "schema-thousands-deep",
        lambda c: c.wrap(search, schema=_nested_schema(3000)),
        CFG,
        INVALID + "nested deeper than 64 levels",
    ),
    api(
        "wrap-tools-string",
        lambda c: c.wrap_tools("abc"),
        TypeError,
        TOOLS + "expected a mapping of name -> tool or a list of tools, got 'abc'",
    ),
    api(
        "wrap-tools-number",
        lambda c: c.wrap_tools(42),
        TypeError,
        TOOLS + "expected a mapping of name -> tool or a list of tools, got 42",
    ),
    api(
        "wrap-tools-unknown-schema",
        lambda c: c.wrap_tools({"search": search}, schemas={"unknown_tool": {"type": "object"}}),
        CFG,
        "chaos.wrap_tools(): schemas: a schema for 'unknown_tool', which is not among the "
        "tools: search",
    ),
    api(
        "wrap-tools-schemas-list",
        lambda c: c.wrap_tools({"search": search}, schemas=[{"type": "object"}]),
        CFG,
        "chaos.wrap_tools(): schemas: expected a mapping of tool name -> JSON Schema, got "
        "[{'type': 'object'}]",
    ),
    api(
        "wrap-tools-empty-name",
        lambda c: c.wrap_tools({"": search}),
        CFG,
        TOOLS + "expected a non-empty tool name as each key, got ''",
    ),
    api(
        "wrap-tools-name-number",
        lambda c: c.wrap_tools({5: search}),
        CFG,
        TOOLS + "expected a non-empty tool name as each key, got 5",
    ),
    api(
        "wrap-tools-not-callable",
        lambda c: c.wrap_tools({"search": 5}),
        TypeError,
        "chaos.wrap_tools(): tools['search']: " + NOT_A_TOOL + "5",
    ),
    api(
        "wrap-tools-list-not-callable",
        lambda c: c.wrap_tools([search, "lookup"]),
        TypeError,
        "chaos.wrap_tools(): tools[1]: " + NOT_A_TOOL + "'lookup'",
    ),
    api(
        "wrap-blank-name",
        lambda c: c.wrap(search, name="  "),
        CFG,
        "chaos.wrap(): name: expected a non-empty tool name, got '  '",
    ),
    api(
        "model-empty-name",
        lambda c: c.model(search, name=""),
        CFG,
        "chaos.model(): name: expected a non-empty model name, got ''",
    ),
    api(
        "model-name-number",
        lambda c: c.model(search, name=3),
        CFG,
        "chaos.model(): name: expected a non-empty model name, got 3",
    ),
    api(
        "step-label-number",
        lambda c: c.step(5),
        TypeError,
        "chaos.step(): label: expected the name of the step (a string) or None, got 5",
    ),
    api(
        "clock-sleep-negative",
        lambda c: c.clock.sleep(-1),
        ValueError,
        "clock.sleep(): seconds: cannot wait a negative or NaN time, got -1",
    ),
    api(
        "clock-sleep-nan",
        lambda c: c.clock.sleep(math.nan),
        ValueError,
        "clock.sleep(): seconds: cannot wait a negative or NaN time, got nan",
    ),
    api(
        "clock-sleep-huge",
        lambda c: c.clock.sleep(1e300),
        ValueError,
        "clock.sleep(): seconds: 1e+300 is too long: " + LONGEST_WAIT,
    ),
    api(
        "clock-sleep-inf",
        lambda c: c.clock.sleep(math.inf),
        ValueError,
        "clock.sleep(): seconds: inf is too long: " + LONGEST_WAIT,
    ),
    api(
        "clock-sleep-huge-integer",
        lambda c: c.clock.sleep(10**400),
        ValueError,
        "clock.sleep(): seconds: 1000… is too long: " + LONGEST_WAIT,
    ),
    api(
        "clock-sleep-text",
        lambda c: c.clock.sleep("5"),
        TypeError,
        "clock.sleep(): seconds: expected a number of seconds, got '5'",
    ),
    api(
        "clock-advance-past-the-end",
        lambda c: [c.clock.advance(6e8), c.clock.advance(6e8)],
        ValueError,
        "clock.advance(): seconds: 600000000.0 is too long: virtual time is at 6e+08 s and "
        "ends at 1,000,000,000 s (about 31 years)",
    ),
    api(
        "schema-openai-parameters-number",
        lambda c: c.wrap(search, schema={"type": "function", "function": {"parameters": 5}}),
        CFG,
        SCHEMA + "function: parameters: expected a JSON Schema object (a dict), got 5",
    ),
    api(
        "schema-openai-flat-parameters-list",
        lambda c: c.wrap(search, schema={"type": "function", "name": "s", "parameters": []}),
        CFG,
        SCHEMA + "parameters: expected a JSON Schema object (a dict), got []",
    ),
    api(
        "schema-openai-function-text",
        lambda c: c.wrap(search, schema={"type": "function", "function": "search"}),
        CFG,
        SCHEMA + "function: expected the function's definition (a dict with name, description "
        "and parameters), got 'search'",
    ),
    api(
        "schema-anthropic-input-schema-none",
        lambda c: c.wrap(search, schema={"name": "s", "input_schema": None}),
        CFG,
        SCHEMA + "input_schema: expected a JSON Schema object (a dict), got None",
    ),
    api(
        "tool-spec-openai-parameters-number",
        lambda c: ToolSpec.from_schema(None, {"type": "function", "function": {"parameters": 5}}),
        CFG,
        "ToolSpec.from_schema(): schema: function: parameters: expected a JSON Schema object "
        "(a dict), got 5",
    ),
    api(
        "wrap-tools-bad-schema",
        lambda c: c.wrap_tools([search], schemas={"search": {"type": "strng"}}),
        CFG,
        INVALID + "'strng' is not valid under any of the given schemas (at $.type)",
    ),
    api(
        "model-tokens-number",
        lambda c: c.model(search, tokens=3),
        TypeError,
        "chaos.model(): tokens must be a callable, got 3",
    ),
    api(
        "model-not-callable",
        lambda c: c.model(42),
        TypeError,
        "chaos.model() needs a callable, got 42",
    ),
    api(
        "model-usage-lots",
        lambda c: _model_run({"usage": {"total_tokens": "lots"}}),
        UnreadableUsage,
        USAGE_100 + "usage.total_tokens is 'lots', not a count",
    ),
    api(
        "model-usage-negative",
        lambda c: _model_run({"usage": {"input_tokens": -3}}),
        UnreadableUsage,
        USAGE_100 + "usage.input_tokens is -3, not a count",
    ),
    api(
        "model-token-counter-text",
        lambda c: _model_run("out", tokens=lambda out: "many"),
        UnreadableUsage,
        USAGE_100 + "the counter returned 'many', not a count",
    ),
    api(
        "schedule-string",
        lambda c: Chaos.create(schedule="abc"),
        CFG,
        "schedule: expected a list of decisions, got 'abc'",
    ),
    api(
        "schedule-dict",
        lambda c: Chaos.create(schedule={"a": 1}),
        CFG,
        "schedule: expected a list of decisions, got {'a': 1}",
    ),
    api(
        "schedule-entry-number",
        lambda c: Chaos.create(schedule=[5]),
        CFG,
        "schedule[0]: a schedule entry must be a table/dict, got 5",
    ),
    api(
        "schedule-entry-empty",
        lambda c: Chaos.create(schedule=[{}]),
        CFG,
        "schedule[0]: missing 'channel'",
    ),
    api(
        "schedule-missing-target",
        lambda c: Chaos.create(schedule=entry(target=...)),
        CFG,
        "schedule[0]: missing 'target'",
    ),
    api(
        "schedule-negative-seconds",
        lambda c: Chaos.create(schedule=entry(detail={"seconds": -1})),
        CFG,
        "schedule[0]: detail.seconds: must be >= 0, got -1",
    ),
    api(
        "schedule-unknown-kind",
        lambda c: Chaos.create(schedule=entry(kind="explode")),
        CFG,
        f"schedule[0]: kind: unknown fault kind 'explode'; allowed: {KINDS}",
    ),
    api(
        "schedule-detail-key-typo",
        lambda c: Chaos.create(schedule=entry(detail={"secs": 1})),
        CFG,
        "schedule[0]: detail: missing 'seconds' for kind 'timeout'",
    ),
    api(
        "schedule-detail-extra-key",
        lambda c: FaultPlan.from_schedule(entry(detail={"seconds": 1, "extra": 2})),
        CFG,
        "schedule[0]: detail: unknown key 'extra' for kind 'timeout'; allowed: seconds",
    ),
    api(
        "schedule-detail-for-keyless-kind",
        lambda c: FaultPlan.from_schedule(entry(kind="connection_error", detail={"x": 1})),
        CFG,
        "schedule[0]: detail: unknown key 'x' for kind 'connection_error'; allowed: none",
    ),
    api(
        "schedule-detail-not-a-table",
        lambda c: FaultPlan.from_schedule(entry(detail=[])),
        CFG,
        "schedule[0]: detail: expected a table of the decision's details, got []",
    ),
    api(
        "schedule-channel-unknown",
        lambda c: FaultPlan.from_schedule(entry(channel="smtp")),
        CFG,
        "schedule[0]: channel: 'smtp' is not one of tool, http, model, step, snapshot",
    ),
    api(
        "schedule-index-0",
        lambda c: FaultPlan.from_schedule(entry(index=0)),
        CFG,
        "schedule[0]: index: must be >= 1, got 0",
    ),
    api(
        "schedule-unknown-entry-key",
        lambda c: FaultPlan.from_schedule(entry(when=3)),
        CFG,
        "schedule[0]: unknown key 'when'; allowed: channel, target, index, kind, detail, fault",
    ),
    api(
        "schedule-duplicate-call",
        lambda c: FaultPlan.from_schedule(entry() + entry()),
        CFG,
        "schedule[1]: a second decision for call 1 of tool 'search'",
    ),
    api(
        "schedule-rate-limit-status",
        lambda c: FaultPlan.from_schedule(
            entry(kind="rate_limit", detail={"retry_after": 5, "status": 500})
        ),
        CFG,
        "schedule[0]: detail.status: 500 is not one of 429",
    ),
    api(
        "schedule-not-a-list",
        lambda c: FaultPlan.from_schedule(None),
        CFG,
        "schedule: expected a list of decisions, got None",
    ),
    api(
        "schedule-huge-integer-seconds",
        lambda c: FaultPlan.from_schedule(entry(detail={"seconds": 10**400})),
        CFG,
        "schedule[0]: detail.seconds: expected a finite number, got 1000…",
    ),
    api(
        "loop-policy-in-code",
        lambda c: LoopPolicy(max_period=0),
        CFG,
        "LoopPolicy: max_period: must be >= 1, got 0",
    ),
    api(
        "backoff-policy-in-code",
        lambda c: BackoffPolicy(jitter="random"),
        CFG,
        "BackoffPolicy: jitter: 'random' is not one of full, equal, none",
    ),
    api(
        "breaker-policy-in-code",
        lambda c: BreakerPolicy(failure_threshold=0),
        CFG,
        "BreakerPolicy: failure_threshold: must be >= 1, got 0",
    ),
    api(
        "escape-policy-from-dict",
        lambda c: EscapePolicy.from_dict({"loops": {"max_perod": 8}}),
        CFG,
        f"[escape.loops]: unknown key 'max_perod'; allowed: {LOOP_KEYS}",
    ),
]


@pytest.fixture
def chaos_run() -> Any:
    chaos = Chaos.create()
    yield chaos
    chaos.close()


@pytest.mark.parametrize(("call", "error", "expected"), API_CASES)
def test_bad_chaos_api_call_raises_one_clear_line(
    chaos_run: Chaos, call: Callable[[Chaos], Any], error: type[BaseException], expected: str
) -> None:
    with pytest.raises(BaseException) as exc:
        call(chaos_run)
    lines = str(exc.value).splitlines() or [""]
    pattern = ".*".join(re.escape(part) for part in expected.split("…"))
    assert re.fullmatch(pattern, lines[0]), f"{type(exc.value).__name__}: {lines[0]}"
    assert isinstance(exc.value, error), f"{type(exc.value).__name__}: {lines[0]}"
    assert len(lines) == 1, str(exc.value)


IN_TEST_CASES = [
    pytest.param(
        "chaos.wrap(42)",
        "E …TypeError: chaos.wrap() needs a callable, got 42",
        id="in-test-wrap-not-callable",
    ),
    pytest.param(
        'chaos.wrap(search, schema={"type": "strng"})',
        "E …pytest_agentchaos.errors.ChaosConfigError: chaos.wrap(search): schema: not a valid "
        "JSON Schema: 'strng' is not valid under any of the given schemas (at $.type)",
        id="in-test-wrap-bad-schema",
    ),
    pytest.param(
        'chaos.wrap_tools("abc")',
        "E …TypeError: " + TOOLS + "expected a mapping of name -> tool or a list of tools, "
        "got 'abc'",
        id="in-test-wrap-tools-string",
    ),
    pytest.param(
        "chaos.model(search, tokens=3)",
        "E …TypeError: chaos.model(): tokens must be a callable, got 3",
        id="in-test-model-tokens-number",
    ),
    pytest.param(
        'chaos.model(lambda prompt: {"usage": {"total_tokens": "lots"}}, name="llm")("hi")',
        "agentchaos: max_tokens=100 cannot be enforced: the token usage of model 'llm' call 1 "
        "cannot be read: usage.total_tokens is 'lots', not a count",
        id="in-test-model-usage-lots",
    ),
    pytest.param(
        'chaos.wrap(search, name="")',
        "E …ChaosConfigError: chaos.wrap(): name: expected a non-empty tool name, got ''",
        id="in-test-wrap-empty-name",
    ),
    pytest.param(
        "chaos.wrap(search, name=5)",
        "E …ChaosConfigError: chaos.wrap(): name: expected a non-empty tool name, got 5",
        id="in-test-wrap-name-number",
    ),
    pytest.param(
        'chaos.model(search, name="")',
        "E …ChaosConfigError: chaos.model(): name: expected a non-empty model name, got ''",
        id="in-test-model-empty-name",
    ),
    pytest.param(
        "chaos.model(search, name=b'llm')",
        "E …ChaosConfigError: chaos.model(): name: expected a non-empty model name, got b'llm'",
        id="in-test-model-name-bytes",
    ),
    pytest.param(
        'chaos.wrap_tools({"search": search, "lookup": None})',
        "E …TypeError: chaos.wrap_tools(): tools['lookup']: " + NOT_A_TOOL + "None",
        id="in-test-wrap-tools-not-callable",
    ),
    pytest.param(
        'chaos.wrap_tools([search, "lookup"])',
        "E …TypeError: chaos.wrap_tools(): tools[1]: " + NOT_A_TOOL + "'lookup'",
        id="in-test-wrap-tools-list-not-callable",
    ),
    pytest.param(
        'chaos.wrap_tools({"search": search}, schemas={"search": {"type": "strng"}})',
        "E …ChaosConfigError: chaos.wrap(search): schema: not a valid JSON Schema: 'strng' is "
        "not valid under any of the given schemas (at $.type)",
        id="in-test-wrap-tools-bad-schema",
    ),
    pytest.param(
        "chaos.step(label=3)",
        "E …TypeError: chaos.step(): label: expected the name of the step (a string) or None, "
        "got 3",
        id="in-test-step-label-number",
    ),
    pytest.param(
        "chaos.clock.sleep(-1)",
        "E …ValueError: clock.sleep(): seconds: cannot wait a negative or NaN time, got -1",
        id="in-test-clock-sleep-negative",
    ),
    pytest.param(
        'chaos.clock.sleep(float("nan"))',
        "E …ValueError: clock.sleep(): seconds: cannot wait a negative or NaN time, got nan",
        id="in-test-clock-sleep-nan",
    ),
    pytest.param(
        "chaos.clock.sleep(1e300)",
        "E …ValueError: clock.sleep(): seconds: 1e+300 is too long: " + LONGEST_WAIT,
        id="in-test-clock-sleep-huge",
    ),
    pytest.param(
        'chaos.clock.sleep(float("inf"))',
        "E …ValueError: clock.sleep(): seconds: inf is too long: " + LONGEST_WAIT,
        id="in-test-clock-sleep-inf",
    ),
    pytest.param(
        "__import__('time').sleep(1e300)",
        "E …ValueError: time.sleep(): seconds: 1e+300 is too long: " + LONGEST_WAIT,
        id="in-test-virtual-time-sleep-huge",
    ),
    pytest.param(
        "__import__('time').sleep(-2)",
        "E …ValueError: time.sleep(): seconds: cannot wait a negative or NaN time, got -2",
        id="in-test-virtual-time-sleep-negative",
    ),
    pytest.param(
        'chaos.wrap(search, schema={"type": "function", "function": {"name": "search", '
        '"parameters": 5}})',
        "E …ChaosConfigError: chaos.wrap(search): schema: function: parameters: expected a JSON "
        "Schema object (a dict), got 5",
        id="in-test-schema-openai-parameters-number",
    ),
]


@pytest.mark.parametrize(("body", "expected"), IN_TEST_CASES)
def test_bad_chaos_api_call_in_a_test_shows_one_line_and_no_plugin_frames(
    pytester: pytest.Pytester, body: str, expected: str
) -> None:
    ini(pytester)
    pytester.makepyfile(
        test_agent="\n".join(
            [
                "import pytest",
                "",
                "def search(query: str) -> str:",
                "    return query",
                "",
                "@pytest.mark.chaos(max_tokens=100, virtual_sleep=True)",
                "def test_agent(chaos):",
                f"    {body}",
                "",
            ]
        )
    )
    result = run(pytester)
    result.stdout.fnmatch_lines(["*_ test_agent _*", line_pattern(expected)])
    assert_clean(result)
    result.assert_outcomes(failed=1)


def test_the_table_has_at_least_100_cases() -> None:
    tables = [OPTION_CASES, INI_CASES, PROFILE_CASES, MARKER_CASES, ADDED_MARKER_CASES, API_CASES]
    tables.append(IN_TEST_CASES)
    ids = [case.id for table in tables for case in table]
    assert len(ids) == len(set(ids)) >= 100
    assert fnmatch.fnmatchcase("a[*]?b", line_pattern("a[*]?b"))
    assert not fnmatch.fnmatchcase("a[x]?b", line_pattern("a[*]?b"))


def test_chaos_create_takes_fault_tables_as_dicts_and_checks_them() -> None:
    with Chaos.create(faults=[{"kind": "timeout", "tools": ["search"]}]) as chaos:
        tool = chaos.wrap(lambda q: q, name="search")
        with pytest.raises(Exception, match="timed out"):
            tool("x")
    with pytest.raises(ChaosConfigError, match=r"Chaos.create\(\): faults\[0\]: kind: unknown"):
        Chaos.create(faults=[{"kind": "nope"}])
    with pytest.raises(ChaosConfigError, match="must be a table/dict"):
        Chaos.create(faults=[3])  # type: ignore[list-item]
