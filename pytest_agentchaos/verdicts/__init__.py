"""Verdicts over a trace: must_halt, must_escape, must_repair, must_recover_state, must_retry,
must_not_duplicate, must_not_follow."""

from .duplicate import must_not_duplicate
from .escape import must_escape
from .follow import must_not_follow
from .judge import Expectations, judge
from .recover import must_recover_state
from .repair import must_repair
from .retry import must_retry
from .verdict import Verdict, must_halt, not_implemented, usage

__all__ = [
    "Expectations",
    "Verdict",
    "judge",
    "must_escape",
    "must_halt",
    "must_not_duplicate",
    "must_not_follow",
    "must_recover_state",
    "must_repair",
    "must_retry",
    "not_implemented",
    "usage",
]
