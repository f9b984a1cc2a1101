"""Verdict equivalence of the loop detection before and after a change that must not alter it
(a speed-up): every case of ``fixtures/loops`` (both halves) run at the defaults, recorded per
case as what a reader of the verdicts sees, and compared with a saved baseline.

Recorded per case, without any of the case's text (the test half is read by no one developing
rules; only whether its verdicts moved is reported):

- each ``Detection`` the harness raised: its trace position, kind, loop kind, rule, stream,
  period, repeats, began and detected steps, and a digest of its whole detail;
- per action, the alarms the detector returned (kind, rule, new, repeats, period);
- the partition of the actions by key (each key numbered by its first occurrence), and by
  coarse key: two keyings with the same partition are the same keying whatever their digests.

And the bench's realistic call stream (``bench_loop_detector.realistic_calls``), keyed and
observed the same way.

Run: ``python bench/loop_equivalence.py save FILE`` on the code before, then
``python bench/loop_equivalence.py check FILE`` after: prints each case whose record moved
(by id and field, never its content) and exits 1 when any did.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_loop_detector import realistic_calls  # noqa: E402
from loop_corpus import load, to_events  # noqa: E402

from pytest_agentchaos.escape.keys import Keyer  # noqa: E402
from pytest_agentchaos.escape.loops import LoopDetector  # noqa: E402
from pytest_agentchaos.escape.observer import LoopObserver  # noqa: E402


def _h(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _numbered(items: list[Any]) -> list[int]:
    seen: dict[Any, int] = {}
    return [seen.setdefault(item, len(seen)) for item in items]


class _Recording(LoopDetector):
    def __init__(self, policy: Any = None) -> None:
        super().__init__(policy)
        self.keys: list[Any] = []
        self.alarms: list[list[list[Any]]] = []

    def observe(self, key, step, t, *, state=None, node=None):  # type: ignore[no-untyped-def]
        loops = super().observe(key, step, t, state=state, node=node)
        self.keys.append(key)
        self.alarms.append(
            [[lp.kind, lp.rule, lp.stream, lp.new, lp.repeats, lp.period] for lp in loops]
        )
        return loops


def record_case(events: list[Any]) -> dict[str, Any]:
    observer = LoopObserver()
    detector = _Recording(observer.detector.policy)
    observer.detector = detector
    for event in events:
        observer(event)
    detections = []
    for d in observer.detections:
        detail = d.detail
        detections.append(
            {
                "at": d.at_event,
                "kind": d.kind,
                "step": d.step,
                "loop_kind": detail.get("loop_kind"),
                "rule": detail.get("rule"),
                "stream": detail.get("stream"),
                "period": detail.get("period"),
                "repeats": detail.get("repeats"),
                "began": detail.get("began_step"),
                "detected": detail.get("detected_step"),
                "detail": _h(detail),
            }
        )
    return {
        "detections": detections,
        "alarms": _h(detector.alarms),
        "keys": _h(_numbered(detector.keys)),
        "coarse": _h(_numbered([k.coarse for k in detector.keys])),
        "fired": any(d["kind"] == "loop" for d in detections),
    }


def record_bench(n: int = 5000) -> dict[str, Any]:
    keyer, detector = Keyer(), LoopDetector()
    keys, alarms = [], []
    for i, (args, result, state) in enumerate(realistic_calls(n)):
        key = keyer.tool("search", args, result=result)
        keys.append(key)
        loops = detector.observe(key, i, float(i), state=state)
        alarms.append([[lp.kind, lp.rule, lp.new, lp.repeats] for lp in loops])
    return {"keys": _h(_numbered(keys)), "alarms": _h(alarms), "distinct": len(set(keys))}


def record() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for case in load(split="all"):
        events, _owner = to_events(case)
        out[case.id] = record_case(events)
    out["__bench__"] = record_bench()
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("save", "check"):
        print(__doc__)
        return 2
    path = Path(argv[2])
    now = record()
    if argv[1] == "save":
        path.write_text(json.dumps(now, sort_keys=True, indent=1))
        fired = sum(1 for v in now.values() if v.get("fired"))
        print(f"saved {len(now) - 1} cases ({fired} fired) and the bench stream to {path}")
        return 0
    before = json.loads(path.read_text())
    moved = 0
    for case in sorted(set(before) | set(now)):
        if case not in before or case not in now:
            print(f"{case}: only in {'before' if case in before else 'now'}")
            moved += 1
            continue
        fields = [k for k in before[case] if before[case][k] != now[case].get(k)]
        if fields:
            moved += 1
            print(f"{case}: {', '.join(fields)} moved")
    print(f"{len(now) - 1} cases + bench stream: {moved} moved")
    return 1 if moved else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
