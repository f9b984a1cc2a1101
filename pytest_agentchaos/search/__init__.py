"""Schedules as data, the search for a failing one, its shrinking and the bisection of a
fault's severity: free of pytest (the plugin and any other harness drive them)."""

from .schedule import (
    BEYOND,
    ScheduleFile,
    entries,
    marker_line,
    parse_schedule,
    read_schedule_file,
    write_schedule_file,
)

__all__ = [
    "BEYOND",
    "ScheduleFile",
    "entries",
    "marker_line",
    "parse_schedule",
    "read_schedule_file",
    "write_schedule_file",
]
