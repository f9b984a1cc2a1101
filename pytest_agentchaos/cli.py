"""``python -m pytest_agentchaos``: command-line tools that read what chaos runs left behind.

``diff A.json B.json`` prints where two runs' traces part ways. Exit codes, as ``diff(1)``'s:
0 the runs are the same, 1 they differ, 2 a file is not a trace (one line on stderr) or the
command line is wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

__all__ = ["main"]

SAME, DIFFERENT, TROUBLE = 0, 1, 2
PROG = "python -m pytest_agentchaos"


def _parser() -> argparse.ArgumentParser:
    from .report.diff import CONTEXT, MAX_BYTES

    parser = argparse.ArgumentParser(
        prog=PROG, description="Tools for the traces pytest-agentchaos writes."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    diff = commands.add_parser(
        "diff",
        help="the first divergence between two runs' traces",
        description="Print where two runs' traces part ways: the first event that differs, the "
        "events around it, and the fault decisions that differ. Exit status: 0 the same, 1 "
        "different, 2 trouble (a file that is no trace, a bad option).",
    )
    diff.add_argument("a", metavar="A.json", help="a trace file (--chaos-report-dir's traces/)")
    diff.add_argument("b", metavar="B.json", help="the trace file to compare it with")
    diff.add_argument("--json", action="store_true", help="print JSON for machines")
    diff.add_argument(
        "--context",
        type=_count,
        default=CONTEXT,
        metavar="N",
        help=f"events shown before the divergence and after it (default: {CONTEXT})",
    )
    diff.add_argument(
        "--max-bytes",
        type=_count,
        default=MAX_BYTES,
        metavar="N",
        help=f"the largest trace file read (default: {MAX_BYTES}, 256 MiB)",
    )
    return parser


def _count(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if not 0 <= number <= 2**40:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {value!r}")
    return number


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` names (default: ``sys.argv[1:]``); returns the exit status."""
    args = _parser().parse_args(argv)
    from .report.diff import TraceFileError, diff_data, diff_lines, diff_traces, read_trace_file

    try:
        a = read_trace_file(args.a, args.max_bytes)
        b = read_trace_file(args.b, args.max_bytes)
    except TraceFileError as exc:
        sys.stderr.write(f"{PROG} diff: {exc}\n")
        return TROUBLE
    found = diff_traces(a, b, context=args.context)
    if args.json:  # ASCII: a lone surrogate from an agent's output is escaped, not an error
        data = diff_data(found, (args.a, args.b))
        _write(json.dumps(data, indent=1, ensure_ascii=True, default=str))
    else:
        _write("\n".join(diff_lines(found)))
    return SAME if found.identical else DIFFERENT


def _write(text: str) -> None:
    """``text`` and a newline on stdout, whatever its encoding can show escaped."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    sys.stdout.write(text.encode(encoding, "backslashreplace").decode(encoding) + "\n")
