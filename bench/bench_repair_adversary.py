"""Wrong repairs on unseen tools: a sweep of generated schemas, tasks, calls and errors
(:mod:`repair_adversary`). Prints, per kind of mistake, how many repairs left a value the
generator does not allow (a wrong repair) and how many calls were declined; ``-v`` lists
each wrong one. A repaired call is also repaired again, with no error: it must come back
unchanged.

    PYTHONPATH=. python bench/bench_repair_adversary.py [--seeds N] [-v]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from repair_adversary import NOW, judge, scenario  # noqa: E402

from pytest_agentchaos.repair import ParamRepairer, ToolSpec  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=3000)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("-v", action="store_true", help="list each wrong repair")
    opts = parser.parse_args(argv)
    wrong: Counter[str] = Counter()
    unstable = 0
    repaired = declined = 0
    for seed in range(opts.start, opts.start + opts.seeds):
        case = scenario(seed)
        repairer = ParamRepairer(ToolSpec.from_schema("tool", case.schema))
        result = repairer.repair(case.call, case.error, task=case.task, now=NOW)
        if not result.ok:
            declined += 1
            continue
        repaired += 1
        found = judge(case, result.args)
        for line in found:
            wrong[line.split(":")[0]] += 1
        if found and opts.v:
            print(
                f"seed {seed}: {'; '.join(found)}\n  task {case.task!r}\n  call {case.call}"
                f"\n  error {case.error!r}\n  got {result.args}\n  {result.reason}"
            )
        again = repairer.repair(result.args, task=case.task, now=NOW)
        if not (again.ok and again.args == result.args):
            unstable += 1
            if opts.v:
                print(f"seed {seed}: not a fixed point: {result.args} -> {again.args}")
    for kind, count in wrong.most_common():
        print(f"{kind:28} {count}")
    print(
        f"RESULT bench_repair_adversary: seeds={opts.seeds} repaired={repaired} "
        f"declined={declined} wrong={sum(wrong.values())} not_fixed_point={unstable}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
