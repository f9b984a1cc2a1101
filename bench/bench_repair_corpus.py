"""Parameter repair quality on the labelled corpus in ``fixtures/repair/``.

For every malformed call: ``ParamRepairer`` (rule-based inferer, default policy) repairs it
with the case's task, clock and tool error. Printed: fixed exactly as labelled (goal >= 95% of
the fixable calls), wrong repairs of fixable calls, fixable calls declined, unfixable calls
"repaired" into other arguments anyway (goal 0), per category, and apart from those the
unfixable calls that are valid by their schema and came with no error, which the repairer
passes as they are (nothing tells it that anything is wrong); and the median time per repair
next to the median time of one schema validation of the same call (the baseline every repair
pays for anyway), as a ratio. Issue 12's bound is a median <= 1 ms.

Run: .venv/bin/python bench/bench_repair_corpus.py [-v]   (-v lists every miss)
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from repair_corpus import Case, Score, load  # noqa: E402

from pytest_agentchaos.repair import ParamRepairer, ToolSpec  # noqa: E402


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    cases = load()
    specs: dict[tuple[str, str], ToolSpec] = {}
    total = Score()
    by_category: dict[str, Score] = defaultdict(Score)
    times: list[float] = []
    validations: list[float] = []
    lines: list[str] = []
    for case in cases:
        key = (case.file, case.tool)
        if key not in specs:
            specs[key] = ToolSpec.from_schema(case.tool, case.schema)
        spec = specs[key]
        repairer = ParamRepairer(spec)
        start = time.perf_counter_ns()
        result = repairer.repair(case.args, case.error, case.task, case.now)
        times.append((time.perf_counter_ns() - start) / 1e6)
        start = time.perf_counter_ns()
        spec.is_valid(case.args)
        validations.append((time.perf_counter_ns() - start) / 1e6)
        label = total.add(case, result.ok, result.args)
        by_category[case.category].add(case, result.ok, result.args)
        if label in ("wrong", "missed", "invented", "passed"):
            lines.append(_miss(case, label, result))
    print(f"{len(cases)} calls over {len(specs)} tools in {len({c.file for c in cases})} files")
    print(f"{'category':<12} {'fixable':>7} {'fixed':>6} {'wrong':>6} {'missed':>6} "
          f"{'unfixable':>9} {'invented':>8} {'passed':>6}")  # fmt: skip
    for name in sorted(by_category):
        s = by_category[name]
        print(f"{name:<12} {s.fixable:>7} {s.fixed:>6} {s.wrong:>6} {s.missed:>6} "
              f"{s.unfixable:>9} {s.invented:>8} {s.passed:>6}")  # fmt: skip
    rate = total.fixed / total.fixable if total.fixable else 0.0
    median, base = statistics.median(times), statistics.median(validations)
    print(
        f"fixed {total.fixed}/{total.fixable} fixable ({rate:.1%}); wrong {total.wrong}; "
        f"missed {total.missed}; invented {total.invented}/{total.unfixable} unfixable; "
        f"passed unchanged {total.passed} (valid by their schema, no error: nothing to act on)"
    )
    print(
        f"time per repair: median {median:.3f} ms (one validation {base:.3f} ms, ratio "
        f"{median / base:.1f}x); p90 {statistics.quantiles(times, n=10)[-1]:.3f} ms"
    )
    if verbose:
        print("\n".join(lines))
    ok = rate >= 0.95 and total.invented == 0 and total.unfixable >= 60 and len(cases) >= 250
    ok = ok and len(specs) >= 40 and median <= 1.0
    print(
        f"RESULT bench_repair_corpus: fixed={rate:.3f} invented={total.invented} "
        f"passed={total.passed} "
        f"cases={len(cases)} tools={len(specs)} median_ms={median:.3f} goal fixed>=0.95 "
        f"invented=0 cases>=250 tools>=40 unfixable>=60 median<=1ms {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


def _miss(case: Case, label: str, result: object) -> str:
    got = getattr(result, "args", None)
    reason = getattr(result, "reason", "")
    want = "decline" if case.expected is None else case.expected
    return (
        f"  [{label}] {case.id} ({case.category}): args={case.args!r}\n"
        f"      want {want!r}\n      got  {got!r} -- {reason}"
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv))
