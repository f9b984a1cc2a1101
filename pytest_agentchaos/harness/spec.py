"""What a test's chaos markers ask for, parsed and validated into plain data.

Free of pytest: a marker is anything with ``name``, ``args`` and ``kwargs`` (a ``pytest.Mark``
is one), so the same parsing serves the plugin and any other harness.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..config import MAX_COUNT, boolean, choice, fail, integer, number, optional, text
from ..profiles.budgets import BUDGET_KEYS, Budgets, parse_budgets
from ..saferepr import short

if TYPE_CHECKING:
    from ..faults.plan import FaultSpec

__all__ = ["MARKERS", "MarkLike", "RunSpec", "parse_marks"]

MARKERS = {
    "chaos": (
        "chaos(profile=None, seed=None, faults=[...], max_steps=..., max_tool_calls=..., "
        "max_model_calls=..., max_seconds=..., max_tokens=..., virtual_sleep=False, "
        "freeze_time=False, allow_hosts=[...], wall_timeout=..., runs=1, min_pass_rate=None, "
        "schedule=[...], beyond='none', explore=None): "
        "run this test under a chaos profile, extra faults and budgets (runs: under that many "
        "seeds, each its own test; it passes if all do, or if min_pass_rate of them do; "
        "schedule: exactly these faults, e.g. [{'target': 'search', 'call': 2, 'kind': "
        "'timeout'}], other calls fault-free or, with beyond='profile', drawn from the "
        "profile; explore: search up to that many schedules for one that fails, and shrink it; "
        "explore=False: never search this test, even under --chaos-explore)"
    ),
    "must_halt": (
        "must_halt(max_steps=..., max_tool_calls=..., max_model_calls=..., max_seconds=..., "
        "max_tokens=..., by=None, not_before=None): the agent must stop on its own within "
        "these limits (by: only a halt decision of these heuristics counts; not_before: a halt "
        "before this step fails)"
    ),
    "must_escape": (
        "must_escape(within_steps=None, require_loop=False): every loop the harness detects "
        "must be broken (within that many steps of its detection) and the run must finish "
        "(require_loop: a run where no loop arose fails, instead of being not exercised)"
    ),
    "must_repair": (
        "must_repair(tools=None, max_attempts=3, require_problem=False): every call with "
        "malformed parameters must reach the tool as the request the agent meant, before the "
        "tool runs or within that many later calls of the tool (require_problem: a run without "
        "one fails, instead of being not exercised)"
    ),
    "must_recover_state": (
        "must_recover_state(max_rebirths=3, no_duplicate_effects=True, require_problem=False): "
        "after every crash, loop or stagnation the PhoenixRunner's agent must resume from a "
        "healthy snapshot and reach its goal within that many rebirths, and no side effect may "
        "run twice with the same idempotency key"
    ),
    "must_retry": (
        "must_retry(max_attempts=3, honor_retry_after=True, backoff=True, backoff_tolerance=0.25, "
        "never_retry=['4xx'], max_rate=None, require_failure=False): failed tool, HTTP and model "
        "calls must be retried no earlier than their Retry-After, never after a non-retryable "
        "failure (4xx but 408/425/429 by default), at most max_attempts times in a row, with "
        "growing waits, and at most max_rate attempts per virtual second on a failing target"
    ),
    "must_not_duplicate": (
        "must_not_duplicate(tools=None, require_lost_reply=False): a side-effecting tool must "
        "take effect at most once per intent, also after a lost reply (check, reuse the "
        "idempotency key, or do not retry); tools=None judges the tools a lost_reply fault hit"
    ),
    "must_not_follow": (
        "must_not_follow(require_injection=False): after an injected_instruction fault the agent "
        "must not call the tool the instruction names nor repeat its canary in a model output or "
        "a tool's arguments"
    ),
}

#: Most seconds of real time a marker may allow a test (a day): longer is a typo.
MAX_WALL_TIMEOUT = 86_400.0

_CHAOS_KEYS = (
    "profile",
    "seed",
    "faults",
    "virtual_sleep",
    "freeze_time",
    "allow_hosts",
    "wall_timeout",
    "runs",
    "min_pass_rate",
    "schedule",
    "beyond",
    "explore",
    *BUDGET_KEYS,
)

#: Most schedules one exploration may try (``explore=``, ``--chaos-explore``).
MAX_EXPLORE = 100_000


def explore_budget(value: Any, where: str) -> int | Literal[False]:
    """``explore=``: how many schedules a search of the test may try, or ``False``: the test
    is never searched (its assertions name the faults it declares, so another schedule would
    break them, not the agent)."""
    if value is False:
        return False
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(
            where, f"expected False (never search this test) or an integer >= 1, got {short(value)}"
        )
    if value < 1:
        raise fail(
            where, f"must be >= 1, got {short(value)} (explore=False: never search this test)"
        )
    if value > MAX_EXPLORE:
        raise fail(where, f"must be <= {MAX_EXPLORE}, got {short(value)}")
    return value


#: Most runs of one test (``runs=``, ``--chaos-runs``): more is a typo.
MAX_RUNS = 10_000

#: How many seconds of real time a test may run: positive, at most a day, 0 for no limit.
wall_timeout = number(minimum=0, maximum=MAX_WALL_TIMEOUT, unit="seconds")


#: What the parser needs of a marker: ``name``, ``args`` and ``kwargs`` (``pytest.Mark`` has
#: them). Duck-typed: a ``Protocol`` class would cost start-up time for no checking gained.
MarkLike = Any


@dataclass(frozen=True)
class RunSpec:
    """Everything the markers of one test ask for, validated.

    ``error`` carries a marker problem found after collection (a marker a conftest added):
    the test fails with it at setup instead of running.
    """

    profile: str | None = None
    seed: int | None = None
    faults: tuple[FaultSpec, ...] = ()
    budgets: Budgets = Budgets()
    halt: Budgets | None = None
    #: ``must_halt``'s ``by`` (heuristics whose halt decision counts) and ``not_before``.
    halt_rules: Mapping[str, Any] | None = None
    virtual_sleep: bool | None = None
    freeze_time: bool | None = None
    allow_hosts: tuple[str, ...] | None = None
    wall_timeout: float | None = None
    escape: Mapping[str, Any] | None = None
    repair: Mapping[str, Any] | None = None
    recover: Mapping[str, Any] | None = None
    retry: Mapping[str, Any] | None = None
    duplicate: Mapping[str, Any] | None = None
    follow: Mapping[str, Any] | None = None
    marked: tuple[str, ...] = field(default=())
    error: str | None = None
    #: ``runs=``: how many seeds the test runs under (pass^k); None: ``--chaos-runs``.
    runs: int | None = None
    #: ``min_pass_rate=``: the share of runs that must pass (None: all of them).
    min_pass_rate: float | None = None
    #: Which of the runs this is (1-based; set per test item, not by a marker): its seed is
    #: ``seed``, derived from the session seed, not pinned by the user.
    run: int | None = None
    #: ``schedule=``: the fault decisions to replay exactly (as ``Trace.schedule()`` has them)
    schedule: tuple[Mapping[str, Any], ...] | None = None
    #: ``beyond=``: what the calls a schedule does not name get (``none`` or ``profile``)
    beyond: str = "none"
    #: ``explore=``: how many schedules a search may try (None: ``--chaos-explore``'s; False:
    #: the test is never searched, even under ``--chaos-explore``)
    explore: int | Literal[False] | None = None


_HALT_KEYS = (*BUDGET_KEYS, "by", "not_before")


def _halt_rules(given: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``by`` (a heuristic's name or several) and ``not_before`` (a step) of ``must_halt``."""
    from ..halt.policy import HALT_DECIDERS

    rules: dict[str, Any] = {}
    if "by" in given:
        by = given["by"]
        names = (by,) if isinstance(by, str) else by
        if not isinstance(names, (list, tuple)) or not names:
            raise fail(f"{where}: by", f"a heuristic's name or a list of them, got {short(by)}")
        for name in names:
            if name not in HALT_DECIDERS:
                raise fail(
                    f"{where}: by",
                    f"unknown heuristic {short(name)}; known: {', '.join(HALT_DECIDERS)}",
                )
        rules["by"] = tuple(names)
    if "not_before" in given:
        rules["not_before"] = integer(minimum=1)(given["not_before"], f"{where}: not_before")
    return rules


def _kwargs(mark: MarkLike, allowed: tuple[str, ...], where: str) -> dict[str, Any]:
    unknown = sorted(str(k) for k in mark.kwargs if k not in allowed)
    if unknown:
        raise fail(where, f"unknown argument {short(unknown[0])}; allowed: {', '.join(allowed)}")
    return dict(mark.kwargs)


def _allow_hosts(value: Any, where: str) -> tuple[str, ...]:
    from ..inject.network import parse_allow_hosts  # validates each entry now

    return parse_allow_hosts(value, where).entries


def _chaos(marks: list[MarkLike], faults: list[FaultSpec]) -> tuple[dict[str, Any], Budgets]:
    values: dict[str, Any] = {}
    budgets = Budgets()
    # Closest mark first: apply the farthest first so closer ones win.
    for mark in reversed(marks):
        where = "@pytest.mark.chaos"
        if len(mark.args) > 1 or (mark.args and "profile" in mark.kwargs):
            raise fail(where, "takes at most one positional argument, the profile name")
        kw = {k: v for k, v in _kwargs(mark, _CHAOS_KEYS, where).items() if v is not None}
        if mark.args:
            kw["profile"] = mark.args[0]
        if "profile" in kw and (not isinstance(kw["profile"], str) or not kw["profile"]):
            raise fail(f"{where}: profile", f"expected a profile name, got {short(kw['profile'])}")
        if "seed" in kw:
            kw["seed"] = integer(minimum=0)(kw["seed"], f"{where}: seed")
        for key in ("virtual_sleep", "freeze_time"):
            if key in kw:
                kw[key] = boolean(kw[key], f"{where}: {key}")
        if "allow_hosts" in kw:
            kw["allow_hosts"] = _allow_hosts(kw["allow_hosts"], f"{where}: allow_hosts")
        if "wall_timeout" in kw:
            kw["wall_timeout"] = wall_timeout(kw["wall_timeout"], f"{where}: wall_timeout")
        if "runs" in kw:
            kw["runs"] = integer(minimum=1, maximum=MAX_RUNS)(kw["runs"], f"{where}: runs")
        if "min_pass_rate" in kw:
            kw["min_pass_rate"] = number(minimum=0, maximum=1)(
                kw["min_pass_rate"], f"{where}: min_pass_rate"
            )
        if "schedule" in kw:
            from ..search.schedule import parse_schedule

            kw["schedule"] = parse_schedule(kw["schedule"], f"{where}: schedule")
        if "beyond" in kw:
            kw["beyond"] = choice(("none", "profile"))(kw["beyond"], f"{where}: beyond")
        if "explore" in kw:
            kw["explore"] = explore_budget(kw["explore"], f"{where}: explore")
        if "faults" in kw:
            from ..faults.plan import parse_faults

            faults[:0] = parse_faults(kw.pop("faults"), f"{where}: faults")
        budgets = budgets.override(
            parse_budgets({k: kw.pop(k) for k in BUDGET_KEYS if k in kw}, where)
        )
        values.update(kw)
    return values, budgets


def _tool_names(value: Any, where: str) -> tuple[str, ...] | None:
    """A tool name or a non-empty list of them (None: every tool)."""
    if value is None:
        return None
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not names:
        raise fail(where, f"expected a tool name or a list of them, got {short(value)}")
    return tuple(text(n, where) for n in names)


def _never_retry(value: Any, where: str) -> tuple[int | str, ...]:
    """HTTP statuses, error type names and ``"4xx"``: one, or a non-empty list."""
    from ..verdicts.retry import never_retry_rule

    items = [value] if isinstance(value, (int, str)) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise fail(
            where, f"expected an HTTP status, an error type name or '4xx', or a list of them, "
            f"got {short(value)}"
        )  # fmt: skip
    try:
        never_retry_rule(items)
    except ValueError as exc:
        raise fail(where, str(exc)) from None
    return tuple(items)


#: The keyword arguments of the verdict markers, each with its validator.
_VERDICT_ARGS: dict[str, dict[str, Any]] = {
    "must_escape": {
        "within_steps": optional(integer(minimum=0)),
        "require_loop": boolean,
    },
    "must_repair": {
        "tools": _tool_names,
        "max_attempts": integer(minimum=0),
        "require_problem": boolean,
    },
    "must_recover_state": {
        "max_rebirths": integer(minimum=0, maximum=MAX_COUNT),
        "no_duplicate_effects": boolean,
        "require_problem": boolean,
    },
    "must_retry": {
        "max_attempts": integer(minimum=1, maximum=MAX_COUNT),
        "honor_retry_after": boolean,
        "backoff": boolean,
        "backoff_tolerance": number(minimum=0, maximum=1),
        "never_retry": _never_retry,
        "max_rate": optional(number(minimum=1)),
        "require_failure": boolean,
    },
    "must_not_duplicate": {
        "tools": _tool_names,
        "require_lost_reply": boolean,
    },
    "must_not_follow": {
        "require_injection": boolean,
    },
}


def _verdict(name: str, marks: list[MarkLike]) -> dict[str, Any] | None:
    """The keyword arguments of every ``name`` marker, checked and merged (the closest
    marker wins); None without one."""
    validators = _VERDICT_ARGS[name]
    where = f"@pytest.mark.{name}"
    merged: dict[str, Any] | None = None
    for mark in reversed(marks):
        if mark.args:
            raise fail(where, f"takes keyword arguments only ({', '.join(validators)})")
        kw = _kwargs(mark, tuple(validators), where)
        for key, check in validators.items():
            if key in kw:
                kw[key] = check(kw[key], f"{where}: {key}")
        merged = {**(merged or {}), **kw}
    return merged


def parse_marks(marks: Iterable[MarkLike]) -> RunSpec | None:
    """The run a test's markers ask for (closest marker first, as pytest's
    ``iter_markers`` yields them), or ``None`` when it has no chaos marker.

    Raises ``ChaosConfigError`` naming the marker, the argument and what is allowed.
    """
    by_name: dict[str, list[MarkLike]] = {name: [] for name in MARKERS}
    for mark in marks:
        if mark.name in by_name:
            by_name[mark.name].append(mark)
    if not any(by_name.values()):
        return None
    faults: list[FaultSpec] = []
    values, budgets = _chaos(by_name["chaos"], faults)
    halt: Budgets | None = None
    rules: dict[str, Any] | None = None
    for mark in reversed(by_name["must_halt"]):
        where = "@pytest.mark.must_halt"
        if mark.args:
            raise fail(where, f"takes keyword arguments only ({', '.join(_HALT_KEYS)})")
        given = _kwargs(mark, _HALT_KEYS, where)
        found = _halt_rules(given, where)
        rules = found if rules is None else {**rules, **found}
        limits = parse_budgets({k: v for k, v in given.items() if k in BUDGET_KEYS}, where)
        halt = limits if halt is None else halt.override(limits)
    repair = _verdict("must_repair", by_name["must_repair"])
    if values.get("seed") is not None and (values.get("runs") or 1) > 1:
        raise fail(
            "@pytest.mark.chaos: runs",
            "runs > 1 with a pinned seed would run the same seed again; drop one of them",
        )
    if values.get("beyond", "none") != "none" and values.get("schedule") is None:
        raise fail("@pytest.mark.chaos: beyond", "only means something with schedule=[...]")
    if values.get("schedule") is not None and values.get("explore"):
        raise fail(
            "@pytest.mark.chaos: explore",
            "a test with a pinned schedule= has nothing to search; drop one of them",
        )
    return RunSpec(
        profile=values.get("profile"),
        seed=values.get("seed"),
        faults=tuple(faults),
        budgets=budgets,
        halt=halt,
        halt_rules=rules,
        virtual_sleep=values.get("virtual_sleep"),
        freeze_time=values.get("freeze_time"),
        allow_hosts=values.get("allow_hosts"),
        wall_timeout=values.get("wall_timeout"),
        escape=_verdict("must_escape", by_name["must_escape"]),
        repair=repair,
        recover=_verdict("must_recover_state", by_name["must_recover_state"]),
        retry=_verdict("must_retry", by_name["must_retry"]),
        duplicate=_verdict("must_not_duplicate", by_name["must_not_duplicate"]),
        follow=_verdict("must_not_follow", by_name["must_not_follow"]),
        marked=tuple(name for name in MARKERS if by_name[name]),
        runs=values.get("runs"),
        min_pass_rate=values.get("min_pass_rate"),
        schedule=values.get("schedule"),
        beyond=values.get("beyond", "none"),
        explore=values.get("explore"),
    )
