"""Verdicts over a trace: must_halt, must_escape, must_repair."""

from .escape import must_escape
from .judge import Expectations, judge
from .repair import must_repair
from .verdict import Verdict, must_halt, not_implemented, usage

__all__ = [
    "Expectations",
    "Verdict",
    "judge",
    "must_escape",
    "must_halt",
    "must_repair",
    "not_implemented",
    "usage",
]
