"""Why a chaos run was stopped, in words: the text of a hard halt, read from the trace."""

from __future__ import annotations

from ..errors import BudgetExhausted, HaltSwallowed, HardHalt, WallTimeout
from ..saferepr import safe_str
from ..trace.trace import Trace
from ..verdicts.verdict import usage

__all__ = ["halt_explanation", "swallowed_note"]

#: Most lines of thread stacks shown in a failure (the trace file keeps them all).
MAX_STACK_LINES = 60


def _used(trace: Trace) -> str:
    u = usage(trace)
    return (
        f"  used: steps={u['steps']} tool_calls={u['tool_calls']} model_calls={u['model_calls']} "
        f"virtual_seconds={u['seconds']:g} tokens={u['tokens']}"
    )


def _stacks(trace: Trace) -> list[str]:
    for halt in reversed(trace.hard_halts()):
        stacks = halt.detail.get("stacks") if isinstance(halt.detail, dict) else None
        if isinstance(stacks, str) and stacks:
            lines = stacks.splitlines()
            shown = lines[-MAX_STACK_LINES:]
            cut = len(lines) - len(shown)
            head = [f"  ... ({cut} earlier lines in the trace)"] if cut else []
            return ["  the agent's threads when the watchdog stopped it:", *head,
                    *("    " + line for line in shown)]  # fmt: skip
    return []


def halt_explanation(trace: Trace, halt: HardHalt) -> str:
    """What stopped the run and what it had used; for a swallowed halt, the halt it swallowed."""
    inner = halt.halt if isinstance(halt, HaltSwallowed) else halt
    if isinstance(inner, BudgetExhausted):
        lines = [
            f"agentchaos: hard budget {inner.budget}={inner.limit:g} exhausted: "
            f"{inner.budget.removeprefix('max_')} would have reached {inner.count:g}",
            _used(trace),
        ]
    else:
        text = safe_str(inner.message, 2000)
        prefix = "" if text.startswith("pytest-agentchaos") else "agentchaos: "
        lines = [f"{prefix}{text}", _used(trace)]
        if isinstance(inner, WallTimeout):
            lines.extend(_stacks(trace))
    if isinstance(halt, HaltSwallowed):
        lines.append(swallowed_note(inner, unwound=True))
    return "\n".join(lines)


def swallowed_note(halt: HardHalt, *, unwound: bool) -> str:
    """The line that says the agent caught a hard halt and carried on."""
    name = type(halt).__name__
    if unwound:
        return (
            f"  (the agent caught {name} and carried on; pytest-agentchaos raised it again in "
            "the agent's code until it reached the test: hard halts derive from BaseException "
            "precisely so that `except Exception` cannot hold them)"
        )
    return (
        f"  (the agent caught {name} and carried on; it derives from BaseException precisely "
        "so that `except Exception` cannot)"
    )
