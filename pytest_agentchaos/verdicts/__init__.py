"""Verdicts over a trace: must_halt now; must_escape and must_repair join with their stacks."""

from .verdict import Verdict, must_halt, not_implemented, usage

__all__ = ["Verdict", "must_halt", "not_implemented", "usage"]
