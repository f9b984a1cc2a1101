"""Verdicts over a trace: must_halt, must_escape, must_repair, must_recover_state."""

from .escape import must_escape
from .judge import Expectations, judge
from .recover import must_recover_state
from .repair import must_repair
from .verdict import Verdict, must_halt, not_implemented, usage

__all__ = [
    "Expectations",
    "Verdict",
    "judge",
    "must_escape",
    "must_halt",
    "must_recover_state",
    "must_repair",
    "not_implemented",
    "usage",
]
