"""The labelled loop corpus (``fixtures/loops/``): load, check, turn into trace events, score.

The format and the labelling rules are in ``fixtures/loops/README.md``. Scoring reads the
detections a detector raised (each with the index of the action that raised it) against the
labels:

- an **alarm** is the start of a loop episode (a ``loop`` detection);
- a labelled loop is **found** when an alarm falls in its window: from the first action of its
  third occurrence (``start + 2 * period``) to two periods after that occurrence ends
  (``start + 5 * period - 1``), and before the loop ends;
- an alarm is **true** when it falls anywhere from ``start + 2 * period`` to the loop's end plus
  one period (an alarm that lands while the loop runs, or as it winds down), **early** when it
  falls inside a loop before its third occurrence, and **false** otherwise;
- **lateness**: actions from the end of the third occurrence to the first alarm, per found loop;
- **silence**: a loop that ended is silent when no alarm falls in the period after its end.

Check a file: ``python bench/loop_corpus.py fixtures/loops/x.json`` (prints each problem).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_agentchaos.trace.events import (
    Event,
    ModelCall,
    ModelResult,
    RunEnded,
    Step,
    ToolCall,
    ToolResult,
)

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "loops"
#: The two halves (fixtures/loops/README.md): rules are developed on ``dev`` only; the bench's
#: recorded figures are those of ``test``, which nobody developing the rules reads.
SPLITS = ("dev", "test")

KINDS = frozenset(
    {
        "plain",
        "volatile",
        "error_message",
        "error_streak",
        "chatter",
        "occurrences",
        "period",
        "state",
        "hub",
        "ends",
        "healthy",
        "prefix",
        "handle",
        "args",
        "short_text",
        "transient",
    }
)
_CASE_KEYS = {"id", "source", "note", "kinds", "loop", "loops", "actions"}
_ACTION_KEYS = {
    "tool": {"tool", "args", "result", "error", "message", "status", "channel", "dt"},
    "model": {"model", "input", "output", "error", "message", "dt"},
    "step": {"step", "state", "dt"},
    "state": {"state", "dt"},
}


@dataclass(frozen=True)
class Labelled:
    """One labelled loop of a case."""

    start: int
    period: int
    end: int | None


@dataclass(frozen=True)
class Case:
    """One labelled run."""

    id: str
    file: str
    source: str
    note: str
    kinds: tuple[str, ...]
    loop: bool
    loops: tuple[Labelled, ...]
    actions: tuple[dict[str, Any], ...]


def _form(action: Any) -> str | None:
    if not isinstance(action, dict):
        return None
    for form in ("tool", "model", "step"):
        if form in action:
            return form
    return "state" if "state" in action else None


def check_case(raw: Any, where: str) -> list[str]:
    """Every problem with one case, as lines naming ``where``; empty when it is well formed."""
    if not isinstance(raw, dict):
        return [f"{where}: a case must be an object"]
    problems = []
    missing = _CASE_KEYS - raw.keys()
    extra = raw.keys() - _CASE_KEYS
    if missing:
        problems.append(f"{where}: missing keys {sorted(missing)}")
    if extra:
        problems.append(f"{where}: unknown keys {sorted(extra)}")
    if missing:
        return problems
    for key in ("id", "source", "note"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            problems.append(f"{where}: {key} must be a non-empty string")
    kinds = raw["kinds"]
    if not isinstance(kinds, list) or not kinds or not set(kinds) <= KINDS:
        problems.append(f"{where}: kinds must be a non-empty list of {sorted(KINDS)}")
    actions = raw["actions"]
    if not isinstance(actions, list) or not actions:
        return [*problems, f"{where}: actions must be a non-empty list"]
    for i, action in enumerate(actions):
        form = _form(action)
        if form is None:
            problems.append(f"{where}: action {i} is none of tool/model/step/state: {action!r}")
            continue
        unknown = action.keys() - _ACTION_KEYS[form]
        if unknown:
            problems.append(f"{where}: action {i} ({form}) has unknown keys {sorted(unknown)}")
        if form in ("tool", "model") and not isinstance(action[form], str):
            problems.append(f"{where}: action {i}: {form} must be a string")
        if form == "tool" and "error" not in action and "result" not in action:
            problems.append(f"{where}: action {i}: a tool action needs result or error")
        if form == "tool" and "error" in action and "result" in action:
            problems.append(f"{where}: action {i}: a tool action has result or error, not both")
        if form == "model" and "error" not in action and "output" not in action:
            problems.append(f"{where}: action {i}: a model action needs output or error")
        if "dt" in action and not (isinstance(action["dt"], (int, float)) and action["dt"] >= 0):
            problems.append(f"{where}: action {i}: dt must be a number >= 0")
    if not isinstance(raw["loop"], bool):
        problems.append(f"{where}: loop must be true or false")
    loops = raw["loops"]
    if not isinstance(loops, list):
        return [*problems, f"{where}: loops must be a list"]
    if raw["loop"] is True and not loops:
        problems.append(f"{where}: loop is true but loops is empty")
    if raw["loop"] is False and loops:
        problems.append(f"{where}: loop is false but loops is not empty")
    n = len(actions)
    for j, loop in enumerate(loops):
        if not isinstance(loop, dict) or set(loop) != {"start", "period", "end"}:
            problems.append(f"{where}: loops[{j}] must have exactly start, period, end")
            continue
        start, period, end = loop["start"], loop["period"], loop["end"]
        if not (isinstance(start, int) and 0 <= start < n):
            problems.append(f"{where}: loops[{j}].start must be an action index")
            continue
        if not (isinstance(period, int) and period >= 1):
            problems.append(f"{where}: loops[{j}].period must be an int >= 1")
            continue
        if end is not None and not (isinstance(end, int) and start < end <= n):
            problems.append(f"{where}: loops[{j}].end must be null or an index after start")
            continue
        if (end if end is not None else n) - start < 3 * period:
            problems.append(
                f"{where}: loops[{j}] has fewer than three occurrences "
                f"(start {start}, period {period}, end {end}, {n} actions)"
            )
    return problems


def files(split: str = "all") -> list[Path]:
    """The corpus files of one half (``"dev"``, ``"test"``) or of both (``"all"``)."""
    if split not in (*SPLITS, "all"):
        raise ValueError(f"split must be one of {SPLITS} or 'all', not {split!r}")
    halves = SPLITS if split == "all" else (split,)
    return [path for half in halves for path in sorted((CORPUS / half).glob("*.json"))]


def split_of(case: Case) -> str:
    """``"dev"`` or ``"test"``: the half a loaded case came from."""
    return case.file.split("/", 1)[0]


def load(paths: Iterable[Path] | None = None, split: str = "all") -> list[Case]:
    """Every case of the corpus files (``fixtures/loops/<split>/*.json`` by default, both
    halves for ``"all"``); raises ``ValueError`` listing every problem when a file is malformed
    or an id repeats (across both halves)."""
    if paths is None:
        paths = files(split)
    files_ = list(paths)
    cases: list[Case] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path in files_:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        name = _name(Path(path))
        raw_cases = data.get("cases") if isinstance(data, dict) else None
        if not isinstance(raw_cases, list):
            problems.append(f"{path}: expected an object with a list 'cases'")
            continue
        for i, raw in enumerate(raw_cases):
            where = f"{name}#{i} ({raw.get('id') if isinstance(raw, dict) else '?'})"
            found = check_case(raw, where)
            if found:
                problems.extend(found)
                continue
            if raw["id"] in seen:
                problems.append(f"{where}: id also used in {seen[raw['id']]}")
            seen[raw["id"]] = name
            cases.append(
                Case(
                    raw["id"],
                    name,
                    raw["source"],
                    raw["note"],
                    tuple(raw["kinds"]),
                    raw["loop"],
                    tuple(Labelled(lp["start"], lp["period"], lp["end"]) for lp in raw["loops"]),
                    tuple(raw["actions"]),
                )
            )
    if problems:
        raise ValueError("\n".join(problems))
    return cases


def _name(path: Path) -> str:
    """``half/file.json`` for a corpus file, the bare name for any other."""
    return f"{path.parent.name}/{path.name}" if path.parent.name in SPLITS else path.name


def to_events(case: Case) -> tuple[list[Event], list[int]]:
    """The case as trace events, ending with ``RunEnded``, and for each event the index of the
    action it came from (the last action's for ``RunEnded``)."""
    events: list[Event] = []
    owner: list[int] = []
    t = 0.0
    calls: dict[str, int] = {}

    def add(event: Event, i: int) -> None:
        events.append(event)
        owner.append(i)

    for i, action in enumerate(case.actions):
        t += float(action.get("dt", 0))
        step = i + 1
        form = _form(action)
        if form == "tool":
            name = action["tool"]
            channel = action.get("channel", "tool")
            index = calls[name] = calls.get(name, 0) + 1
            args = action.get("args", {})
            args = args if isinstance(args, dict) else {"input": args}
            add(ToolCall(step, t, tool=name, index=index, args=args, channel=channel), i)
            if "error" in action:
                result = ToolResult(
                    step,
                    t,
                    tool=name,
                    index=index,
                    ok=False,
                    error_type=action["error"],
                    message=action.get("message"),
                    status=action.get("status"),
                    channel=channel,
                )
            else:
                result = ToolResult(
                    step,
                    t,
                    tool=name,
                    index=index,
                    output=action["result"],
                    status=action.get("status"),
                    channel=channel,
                )
            add(result, i)
        elif form == "model":
            name = action["model"]
            index = calls["model:" + name] = calls.get("model:" + name, 0) + 1
            add(ModelCall(step, t, model=name, index=index, input=action.get("input")), i)
            if "error" in action:
                add(
                    ModelResult(
                        step,
                        t,
                        model=name,
                        index=index,
                        ok=False,
                        error_type=action["error"],
                        message=action.get("message"),
                    ),
                    i,
                )
            else:
                add(ModelResult(step, t, model=name, index=index, output=action["output"]), i)
        else:
            add(Step(step, t, label=action.get("step"), state=action.get("state")), i)
    # the run ends as a chaos run does, so a loop the last actions no longer continue closes
    add(RunEnded(len(case.actions), t), len(case.actions) - 1)
    return events, owner


# -- slices ----------------------------------------------------------------------------------


def _json_text(value: str) -> bool:
    text = value.strip()
    if not text or text[0] not in "{[":
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _letters(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _letters(k, out)
            _letters(v, out)
    elif isinstance(value, list):
        for item in value:
            _letters(item, out)


def _cjk_share(case: Case) -> float:
    """The share of CJK characters among the letters of every string in the case."""
    texts: list[str] = []
    _letters(list(case.actions), texts)
    cjk = letters = 0
    for text in texts:
        for ch in text:
            if ch.isalpha():
                letters += 1
                if (
                    "\u3040" <= ch <= "\u30ff"
                    or "\u3400" <= ch <= "\u9fff"
                    or "\uf900" <= ch <= "\ufaff"
                ):
                    cjk += 1
    return cjk / letters if letters else 0.0


def slices_of(case: Case) -> list[str]:
    """The representation slices a case belongs to, derived from its actions: ``result:dict``,
    ``result:json_text``, ``result:prose`` (a tool result of that form), ``failure:message``,
    ``failure:no_message`` (a failed call with or without error text), ``state:given`` or
    ``state:none``, ``chat_only`` (model calls and no tool), ``lang:zh`` or ``lang:en`` (at
    least a fifth of the letters CJK)."""
    found: set[str] = set()
    tools = state = False
    for action in case.actions:
        form = _form(action)
        if "state" in action:
            state = True
        if form == "tool":
            tools = True
            if "error" in action:
                found.add("failure:message" if action.get("message") else "failure:no_message")
            else:
                result = action["result"]
                if isinstance(result, (dict, list)):
                    found.add("result:dict")
                elif isinstance(result, str):
                    found.add("result:json_text" if _json_text(result) else "result:prose")
        elif form == "model" and "error" in action:
            found.add("failure:message" if action.get("message") else "failure:no_message")
    found.add("state:given" if state else "state:none")
    if not tools:
        found.add("chat_only")
    found.add("lang:zh" if _cjk_share(case) >= 0.2 else "lang:en")
    return sorted(found)


# -- scoring ---------------------------------------------------------------------------------

#: A detector under test: the case's events -> (event index, kind) of each detection, where
#: kind is "loop" (an alarm: an episode begins) or "loop_broken".
Detector = Callable[[Sequence[Event]], list[tuple[int, str]]]


@dataclass
class Score:
    """What one detector did on the corpus."""

    name: str
    loops: int = 0
    found: int = 0
    alarms: int = 0
    true_alarms: int = 0
    early: int = 0
    lateness: list[int] = field(default_factory=list)  # actions after the 3rd occurrence ends
    ended: int = 0
    silent: int = 0
    closed_in_time: int = 0
    missed: list[str] = field(default_factory=list)
    false: list[str] = field(default_factory=list)
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # kind -> [loops, found]

    @property
    def precision(self) -> float:
        return self.true_alarms / self.alarms if self.alarms else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.loops if self.loops else 1.0


def score_case(case: Case, detections: list[tuple[int, str]], score: Score) -> None:
    """Add one case's detections (action index, kind) to ``score``."""
    n = len(case.actions)
    alarms = sorted(i for i, kind in detections if kind == "loop")
    closes = sorted(i for i, kind in detections if kind == "loop_broken")
    score.alarms += len(alarms)
    for i in alarms:
        inside = [lp for lp in case.loops if lp.start <= i < (lp.end if lp.end is not None else n)]
        true = [
            lp
            for lp in case.loops
            if lp.start + 2 * lp.period <= i < (lp.end + lp.period if lp.end is not None else n)
        ]
        if true:
            score.true_alarms += 1
        elif inside:
            score.early += 1
            score.false.append(f"{case.id}: early alarm at action {i}")
        else:
            score.false.append(f"{case.id}: false alarm at action {i}")
    for lp in case.loops:
        score.loops += 1
        third = lp.start + 3 * lp.period - 1  # last action of the third occurrence
        last = min(lp.start + 5 * lp.period - 1, (lp.end if lp.end is not None else n) - 1)
        hits = [i for i in alarms if lp.start + 2 * lp.period <= i <= last]
        for kind in case.kinds:
            tally = score.by_kind.setdefault(kind, [0, 0])
            tally[0] += 1
            tally[1] += bool(hits)
        if hits:
            score.found += 1
            score.lateness.append(hits[0] - third)
        else:
            score.missed.append(f"{case.id}: loop at {lp.start} (period {lp.period}) not found")
        if lp.end is not None and lp.end < n:
            score.ended += 1
            after = range(lp.end, min(n, lp.end + lp.period))
            if not any(i in after for i in alarms):
                score.silent += 1
            if any(lp.end <= i < lp.end + lp.period for i in closes) or not hits:
                score.closed_in_time += 1


def run(cases: Sequence[Case], name: str, detector: Detector) -> Score:
    """Score ``detector`` on every case."""
    score = Score(name)
    for case in cases:
        events, owner = to_events(case)
        found = [(owner[i], kind) for i, kind in detector(events) if 0 <= i < len(owner)]
        score_case(case, found, score)
    return score


#: A detector over the case's actions themselves (the baselines): actions -> (action index,
#: kind) of each detection.
ActionDetector = Callable[[Sequence[dict[str, Any]]], list[tuple[int, str]]]


def run_actions(cases: Sequence[Case], name: str, detector: ActionDetector) -> Score:
    """Score a detector that reads the actions rather than trace events."""
    score = Score(name)
    for case in cases:
        score_case(case, detector(case.actions), score)
    return score


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or None
    try:
        cases = load(paths)
    except ValueError as exc:
        print(exc)
        return 1
    loops = sum(len(c.loops) for c in cases)
    print(f"{len(cases)} cases ({sum(c.loop for c in cases)} looping, {loops} loops): well formed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
