"""Readers of the trace for humans: summary rows and totals, failure sections, halt
explanations and the profile listing."""

from .explain import halt_explanation, swallowed_note
from .profiles import profile_listing
from .terminal import (
    QUIET_OUTCOMES,
    failure_section,
    format_row,
    replay_command,
    summary_lines,
    summary_row,
)

__all__ = [
    "QUIET_OUTCOMES",
    "failure_section",
    "format_row",
    "halt_explanation",
    "profile_listing",
    "replay_command",
    "summary_lines",
    "summary_row",
    "swallowed_note",
]
