"""Readers of the trace for humans: the terminal summary row and the failure section."""

from .terminal import failure_section, format_row, replay_command, summary_row

__all__ = ["failure_section", "format_row", "replay_command", "summary_row"]
