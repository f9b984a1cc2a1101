"""Parameter repair quality on the labelled corpus in ``fixtures/repair/``, by slice.

For every call: ``ParamRepairer`` (rule-based proposers, default policy) repairs it with the
case's task, clock and tool error. Cases fall into slices (issue 30):

- ``invalid_no_error``: the call breaks its schema (or what only its descriptions say) and no
  tool error came with it;
- ``invalid_with_error``: it breaks its schema and the tool's error came with it;
- ``valid_tool_error``: it is valid by its schema and only the tool's error says what is wrong;
- ``must_decline``: labelled ``"decline"`` (whatever else holds);
- ``valid``: a valid call with no error, expected back unchanged: passed unchanged counts as
  neither fixed nor declined.

Printed per slice and per category: fixed exactly as labelled, wrong repairs, declined fixable
calls, unfixable calls "repaired" anyway (goal 0); and the median and p99 time per repair next
to the median time of one jsonschema validation of the same call, measured in this process
after one untimed pass (what is imported or compiled on first use is paid once per process;
that pass's total is printed apart).

Run: .venv/bin/python bench/bench_repair_corpus.py [--split dev|test|all] [-v] [--by-file]
[--hold-out FILE[,FILE]]
[--model] (default split: test, the half the recorded figures come from; -v lists every miss;
``--by-file`` adds a table per corpus file (one writer's cases each);
``--model`` adds a scripted model proposer that answers with the label, to measure the
ceiling a correct model gives.)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import hold_out  # noqa: E402
from repair_corpus import SPLITS, Case, Score, load  # noqa: E402

from pytest_agentchaos.repair import ParamRepairer, ToolSpec  # noqa: E402

SLICES = ("invalid_no_error", "invalid_with_error", "valid_tool_error", "must_decline", "valid")


def slice_of(case: Case, spec: ToolSpec) -> str:
    """The slice a case measures (see the module's doc)."""
    if case.expected is None:
        return "must_decline"
    valid = isinstance(case.args, dict) and spec.is_valid(case.args)
    if valid and case.error is None:
        # valid and expected back unchanged; else only its description rules it out
        return "valid" if case.expected == case.args else "invalid_no_error"
    if valid:
        return "valid_tool_error"
    return "invalid_with_error" if case.error is not None else "invalid_no_error"


def _scripted(case: Case) -> Any:
    """A model proposer that answers every problem with the labelled value at its path."""
    from pytest_agentchaos.repair.proposers import scripted_model

    return scripted_model(case.expected) if case.expected is not None else None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="test")
    parser.add_argument("-v", action="store_true", dest="verbose")
    parser.add_argument("--model", action="store_true")
    parser.add_argument("--by-file", action="store_true", dest="by_file")
    parser.add_argument(
        "--hold-out",
        action="append",
        default=[],
        metavar="FILE[,FILE]",
        help="leave these corpus files out (a round's held-out files)",
    )
    opts = parser.parse_args(argv[1:])
    held = [name for value in opts.hold_out for name in value.split(",") if name]
    try:
        cases = hold_out.drop(load(split=opts.split), held, lambda c: c.file)
    except ValueError as exc:
        print(exc)
        return 2
    specs: dict[tuple[str, str], ToolSpec] = {}
    total = Score()
    by_category: dict[str, Score] = defaultdict(Score)
    by_slice: dict[str, Score] = defaultdict(Score)
    by_file: dict[str, Score] = defaultdict(Score)
    times: list[float] = []
    validations: list[float] = []
    lines: list[str] = []
    # one untimed pass first: imports made on first use (the units library, rapidfuzz,
    # dateutil) and what a spec compiles once are paid once per process, not per repair
    start = time.perf_counter_ns()
    for case in cases:
        key = (case.file, case.tool)
        if key not in specs:
            specs[key] = ToolSpec.from_schema(case.tool, case.schema)
        ParamRepairer(specs[key]).repair(case.args, case.error, case.task, case.now)
    warm = (time.perf_counter_ns() - start) / 1e6
    for case in cases:
        spec = specs[(case.file, case.tool)]
        model = _scripted(case) if opts.model else None
        repairer = ParamRepairer(spec, model=model)
        start = time.perf_counter_ns()
        result = repairer.repair(case.args, case.error, case.task, case.now)
        times.append((time.perf_counter_ns() - start) / 1e6)
        start = time.perf_counter_ns()
        spec.is_valid(case.args)
        validations.append((time.perf_counter_ns() - start) / 1e6)
        where = slice_of(case, spec)
        label = total.add(case, result.ok, result.args)
        by_category[case.category].add(case, result.ok, result.args)
        by_slice[where].add(case, result.ok, result.args)
        by_file[case.file].add(case, result.ok, result.args)
        if label in ("wrong", "missed", "invented", "passed"):
            lines.append(_miss(case, label, result, where))
    model_note = " (scripted model proposer)" if opts.model else ""
    print(
        f"split {opts.split}: {len(cases)} calls over {len(specs)} tools in "
        f"{len({c.file for c in cases})} files{model_note}"
    )
    _table("slice", SLICES, by_slice)
    _table("category", sorted(by_category), by_category)
    if opts.by_file:
        _table("file", sorted(by_file), by_file)
    rate = total.fixed / total.fixable if total.fixable else 0.0
    rates = {
        name: (s.fixed / s.fixable) for name, s in by_slice.items() if s.fixable and name != "valid"
    }
    low = min(rates.values(), default=0.0)
    median, base = statistics.median(times), statistics.median(validations)
    p99 = statistics.quantiles(times, n=100)[-1] if len(times) > 1 else times[0]
    print(
        f"fixed {total.fixed}/{total.fixable} fixable ({rate:.1%}); lowest slice {low:.1%}; "
        f"wrong {total.wrong}; missed {total.missed}; invented {total.invented}/"
        f"{total.unfixable} unfixable; passed unchanged {total.passed}"
    )
    print(f"first pass (imports and per-spec compilation on first use): {warm:.0f} ms")
    print(
        f"time per repair: median {median:.3f} ms, p99 {p99:.3f} ms; one jsonschema validation "
        f"of the same call {base:.3f} ms (median ratio {median / base:.1f}x, p99 ratio "
        f"{p99 / base:.1f}x)"
    )
    if opts.verbose:
        print("\n".join(lines))
    goal = 0.95 if opts.model else 0.85
    ok = rate >= goal and low >= 0.75 and total.invented == 0 and median <= 1.0 and p99 <= 10.0
    print(
        f"RESULT bench_repair_corpus: split={opts.split} fixed={rate:.3f} lowest_slice={low:.3f} "
        f"invented={total.invented} cases={len(cases)} tools={len(specs)} "
        f"median_ms={median:.3f} p99_ms={p99:.3f} goal fixed>={goal} lowest_slice>=0.75 "
        f"invented=0 median<=1ms p99<=10ms {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


def _table(title: str, names: Any, scores: dict[str, Score]) -> None:
    width = max(19, *(len(n) for n in names))
    print(f"{title:<{width}} {'fixable':>7} {'fixed':>6} {'wrong':>6} {'missed':>6} "
          f"{'unfixable':>9} {'declined':>8} {'invented':>8} {'passed':>6}")  # fmt: skip
    for name in names:
        s = scores.get(name, Score())
        print(f"{name:<{width}} {s.fixable:>7} {s.fixed:>6} {s.wrong:>6} {s.missed:>6} "
              f"{s.unfixable:>9} {s.declined:>8} {s.invented:>8} {s.passed:>6}")  # fmt: skip


def _miss(case: Case, label: str, result: object, where: str) -> str:
    got = getattr(result, "args", None)
    reason = getattr(result, "reason", "")
    want = "decline" if case.expected is None else case.expected
    error = "" if case.error is None else f"\n      error {case.error[:300]!r}"
    return (
        f"  [{label}] {case.id} ({case.category}, {where}): args={case.args!r}{error}\n"
        f"      task {case.task!r}\n"
        f"      want {want!r}\n      got  {got!r} -- {reason}"
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv))
