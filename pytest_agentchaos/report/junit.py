"""JUnit ``<property>`` elements for a chaos test: what ``--junitxml`` carries into CI dashboards.

Each chaos test's profile, seeds, outcome, the exception that ended its run (``error``: type,
message and the user's frame), verdicts (``ok``; ``FAIL`` or ``not exercised`` with the
explanation), metrics (steps, tool and model calls, virtual seconds, tokens, faults by kind,
loops detected and escaped, repairs ok / declined / failed, halts by heuristic, budget or cap;
retries, duplicate effects and injected instructions followed, where a verdict counted them)
and the command that replays it, as ``agentchaos.*`` name / value pairs, built from the
summary row alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..verdicts.verdict import LABELS, PASS, Verdict
from .metrics import VERDICT_METRICS
from .terminal import row_error

__all__ = ["PREFIX", "junit_properties"]

#: Every property's name starts with this.
PREFIX = "agentchaos."
#: The longest verdict explanation a property carries (CI dashboards show attributes whole).
_EXPLANATION = 2000


def junit_properties(
    row: Mapping[str, Any], verdicts: Sequence[Verdict], replay: str
) -> list[tuple[str, str]]:
    """The ``(name, value)`` properties of one chaos test, from its summary row, verdicts
    and replay command (values are strings: JUnit attributes)."""
    faults = ",".join(f"{k}:{v}" for k, v in sorted(row.get("faults", {}).items())) or "none"
    props = [
        ("profile", str(row.get("profile", ""))),
        ("test_seed", str(row.get("seed", ""))),
        ("outcome", str(row.get("outcome", ""))),
        *([("error", error)] if (error := row_error(row, 500)) else []),
        ("replay", replay),
        ("steps", str(row.get("steps", 0))),
        ("tool_calls", str(row.get("tool_calls", 0))),
        ("model_calls", str(row.get("model_calls", 0))),
        ("virtual_seconds", f"{float(row.get('seconds', 0.0)):.3f}"),
        ("faults", faults),
    ]
    metrics = row.get("metrics") or {}
    for key in ("tokens", "loops", "escaped", "repairs_ok", "repairs_declined", "repairs_failed",
                *VERDICT_METRICS):  # fmt: skip
        if key in metrics:
            props.append((key, str(metrics[key])))
    if metrics.get("halts"):
        props.append(("halts", ",".join(f"{k}:{v}" for k, v in sorted(metrics["halts"].items()))))
    if row.get("halted"):
        props.append(("halted", "+".join(map(str, row["halted"]))))
    if row.get("capped"):
        props.append(("capped", "+".join(map(str, row["capped"]))))
    for verdict in verdicts:
        outcome = verdict.outcome
        text = LABELS[outcome]
        if outcome != PASS:
            text += f": {verdict.explanation[:_EXPLANATION]}"
        props.append((f"verdict.{verdict.name}", text))
    if verdicts:
        counts = {o: sum(v.outcome == o for v in verdicts) for o in LABELS}
        props.append(("verdicts", ",".join(f"{o}:{n}" for o, n in counts.items() if n)))
    return [(PREFIX + name, value) for name, value in props]
