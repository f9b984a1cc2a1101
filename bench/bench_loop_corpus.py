"""Loop detection quality on the labelled corpus (``fixtures/loops/``), at the defaults.

The harness's detection (``detect_loops``: the observer every chaos run uses) runs over each
labelled run, next to three simple baselines measured in the same run on the same cases:

- ``exact repeat x3``: the same action, byte for byte (arguments, result, model input and
  output), three times in a row;
- ``five identical calls``: the same tool with the same arguments on five tool calls in a row
  (whatever they returned; other actions in between ignored);
- ``three identical arguments``: the same, three in a row.

Printed per detector: precision (alarms that fall on a loop, from its third occurrence to one
period after it ends), recall (loops alarmed no earlier than their third occurrence and no
later than two periods after it), lateness (actions from the end of the third occurrence to
the alarm), and for loops that end, how many were silent (no new alarm within one period) and
closed in time (the episode closed within one period). The scoring rules are in
``bench/loop_corpus.py``; the labelling rules in ``fixtures/loops/README.md``.

Then the same figures per representation slice, derived from the actions themselves (a case
is in every slice one of its actions puts it in): tool results as a dict or list, as JSON text,
as prose; failures with and without a message; a state given or not; chat-only runs (model
calls, no tool); the language (``zh`` when at least a fifth of the case's letters are CJK).

Run: .venv/bin/python bench/bench_loop_corpus.py [--split dev|test|all] [-v]
[--hold-out FILE[,FILE]] (files left out: a round's held-out files)
(``-v`` lists every miss and false alarm; without it the test half's are only counted). The
RESULT line is the **test** half's by default: rules are developed on ``--split dev`` only
(fixtures/loops/README.md).
Goal (issue 29, on the test half): precision >= 0.97 and recall >= 0.97 overall, and >= 0.95
in every slice of >= 20 cases, with no baseline better on either.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hold_out  # noqa: E402
from loop_corpus import Case, Score, load, run, run_actions, slices_of  # noqa: E402

from pytest_agentchaos.escape import detect_loops  # noqa: E402
from pytest_agentchaos.trace.events import Event  # noqa: E402

GOAL = 0.97
SLICE_GOAL = 0.95
SLICE_MIN_CASES = 20


def harness(events: Sequence[Event]) -> list[tuple[int, str]]:
    """The harness's own detection, at its defaults."""
    return [
        (d.at_event, d.kind)
        for d in detect_loops(events)
        if d.kind in ("loop", "loop_broken") and d.at_event is not None
    ]


def _exact(action: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in action.items() if k != "dt"}, sort_keys=True, default=str)


def _episodes(flags: list[bool | None]) -> list[tuple[int, str]]:
    """Alarms where a condition becomes true, closes where it stops (None: unchanged)."""
    out, on = [], False
    for i, flag in enumerate(flags):
        if flag is None:
            continue
        if flag and not on:
            out.append((i, "loop"))
        elif on and not flag:
            out.append((i, "loop_broken"))
        on = flag
    return out


def exact_repeat(actions: Sequence[dict[str, Any]]) -> list[tuple[int, str]]:
    keys = [_exact(a) for a in actions]
    return _episodes([i >= 2 and keys[i] == keys[i - 1] == keys[i - 2] for i in range(len(keys))])


def identical_calls(n: int) -> Callable[[Sequence[dict[str, Any]]], list[tuple[int, str]]]:
    def detect(actions: Sequence[dict[str, Any]]) -> list[tuple[int, str]]:
        calls: list[str] = []
        flags: list[bool | None] = []
        for action in actions:
            if "tool" not in action:
                flags.append(None)  # only tool calls count; the rest leave the streak be
                continue
            calls.append(json.dumps([action["tool"], action.get("args")], sort_keys=True))
            flags.append(len(calls) >= n and len(set(calls[-n:])) == 1)
        return _episodes(flags)

    return detect


def _row(score: Score) -> str:
    late = score.lateness
    lateness = f"{statistics.mean(late):5.1f} / {max(late):3d}" if late else "    - /   -"
    silent = f"{score.silent}/{score.ended}"
    closed = f"{score.closed_in_time}/{score.ended}"
    return (
        f"{score.name:<26} {score.precision:9.3f} {score.recall:7.3f} {score.alarms:7d} "
        f"{score.early:6d} {len(score.false) - score.early:6d}   {lateness}   "
        f"{silent:>9} {closed:>9}"
    )


def _split(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg.startswith("--split="):
            return arg.split("=", 1)[1]
        if arg == "--split" and i + 1 < len(argv):
            return argv[i + 1]
    return "test"


def _slice_rows(cases: list[Case], detectors: list[tuple[str, Any, bool]]) -> list[str]:
    """Per slice: cases, then precision / recall / mean lateness of each detector."""
    members: dict[str, list[Case]] = {}
    for case in cases:
        for name in slices_of(case):
            members.setdefault(name, []).append(case)
    failing = []
    print(f"by slice (precision / recall / mean lateness; {', '.join(d[0] for d in detectors)}):")
    for name in sorted(members):
        group = members[name]
        cells = []
        for i, (label, detector, on_events) in enumerate(detectors):
            score = (run if on_events else run_actions)(group, label, detector)
            late = f"{statistics.mean(score.lateness):4.1f}" if score.lateness else "   -"
            cells.append(f"{score.precision:.2f}/{score.recall:.2f}/{late}")
            if (
                i == 0
                and len(group) >= SLICE_MIN_CASES
                and (score.precision < SLICE_GOAL or score.recall < SLICE_GOAL)
            ):
                failing.append(name)
        print(f"  {name:<18} {len(group):4d}   " + "   ".join(cells))
    return failing


def _refused(argv: list[str]) -> int | None:
    """``--help`` prints the usage (0); an unknown argument is refused (2): neither may fall
    through to measuring the default split, which is the test half."""
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return 0
    for i, arg in enumerate(argv):
        if arg in ("-v", "--split") or arg.startswith("--split="):
            continue
        if i > 0 and argv[i - 1] == "--split":
            continue
        print(
            f"unknown argument {arg!r}; allowed: -v, --split dev|test|all, --hold-out FILE "
            "(see --help)"
        )
        return 2
    return None


def main(argv: list[str]) -> int:
    try:
        held, argv = hold_out.parse(argv)
    except ValueError as exc:
        print(exc)
        return 2
    refused = _refused(argv)
    if refused is not None:
        return refused
    verbose = "-v" in argv
    split = _split(argv)
    try:
        cases: list[Case] = hold_out.drop(load(split=split), held, lambda c: c.file)
    except ValueError as exc:
        print(exc)
        return 2
    files = sorted({c.file for c in cases})
    loops = sum(len(c.loops) for c in cases)
    looping = sum(c.loop for c in cases)
    print(
        f"corpus ({split}): {len(cases)} cases ({looping} looping, {len(cases) - looping} not; "
        f"{loops} loops) from {', '.join(files)}"
    )
    detectors: list[tuple[str, Any, bool]] = [
        ("harness (defaults)", harness, True),
        ("exact repeat x3", exact_repeat, False),
        ("five identical calls", identical_calls(5), False),
        ("three identical arguments", identical_calls(3), False),
    ]
    scores = [
        (run if on_events else run_actions)(cases, label, detector)
        for label, detector, on_events in detectors
    ]
    print(
        f"{'detector':<26} {'precision':>9} {'recall':>7} {'alarms':>7} {'early':>6} "
        f"{'false':>6}   {'lateness':>11}   {'silent':>9} {'closed':>9}"
    )
    for score in scores:
        print(_row(score))
    ours = scores[0]
    kinds = sorted({k for s in scores for k in s.by_kind})
    print("recall by kind (loops found / loops):")
    for kind in kinds:
        cells = []
        for score in scores:
            total, found = score.by_kind.get(kind, [0, 0])
            cells.append(f"{found:>3}/{total:<3}")
        print(f"  {kind:<14} " + "   ".join(cells))
    failing = _slice_rows(cases, detectors)
    shown = ours.missed + ours.false
    if shown and split != "dev" and not verbose:
        # the test half's cases are read by no one developing rules: by default only a count
        print(f"harness misses and false alarms: {len(shown)} (-v lists them)")
    elif shown:
        print(f"harness misses and false alarms ({len(shown)}):")
        for line in shown if verbose else shown[:15]:
            print(f"  {line}")
        if not verbose and len(shown) > 15:
            print(f"  ... and {len(shown) - 15} more (-v lists them all)")
    beats = all(ours.precision >= s.precision and ours.recall >= s.recall for s in scores[1:])
    # an empty half (the test half not checked out) passes nothing
    ok = bool(cases) and ours.precision >= GOAL and ours.recall >= GOAL and not failing and beats
    below = f" slices below {SLICE_GOAL}: {', '.join(failing)}" if failing else ""
    print(
        f"RESULT bench_loop_corpus: split={split} precision={ours.precision:.3f} "
        f"recall={ours.recall:.3f} cases={len(cases)} goal precision>={GOAL} recall>={GOAL}, "
        f">={SLICE_GOAL} in every slice of >={SLICE_MIN_CASES} cases, no baseline better on "
        f"either{below} {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
