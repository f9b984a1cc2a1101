"""The report files of a proxy run, the plugin's own: ``--report-dir DIR`` writes the run's
trace into ``DIR/traces/`` and ``DIR/index.json`` (one entry: the proxy's run), ``--html FILE``
the HTML report; each by the writers the plugin uses for a test (:mod:`...report`)."""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ...trace.trace import Trace

__all__ = ["write_reports"]


def write_reports(
    trace: Trace,
    *,
    outcome: str,
    replay: Sequence[str],
    report_dir: Path | None,
    html: Path | None,
    trace_path: Path | None = None,
) -> tuple[list[str], list[str]]:
    """Write the report files of a finished proxy run: ``outcome`` is the index's (``passed``,
    ``failed``, ``interrupted``), ``replay`` the command that replays it, minus the trace
    (``--chaos-replay <the trace written>`` goes after its first word). ``trace_path``: the
    trace written already (``--trace``), used by the HTML report when there is no report dir.
    Returns (lines saying what was written, lines saying what could not be)."""
    from ...harness.run import safe_file_name
    from ...report.artifacts import TRACES, trace_file
    from ...report.session import end_session
    from ...report.terminal import summary_row

    said: list[str] = []
    errors: list[str] = []
    scratch = None
    try:
        if report_dir is not None:
            test_id = str(trace.meta.get("test") or "agentchaos-mcp")
            written = report_dir / TRACES / f"{safe_file_name(test_id)}.json"
            path: Path | None = written
            try:
                written.parent.mkdir(parents=True, exist_ok=True)
                trace.write(written, indent=1)
            except OSError as exc:
                errors.append(f"cannot write {written}: {exc.strerror or exc}")
                path = None
        elif trace_path is not None:
            path = trace_path
        else:  # the HTML report alone: it reads the trace from a file of its own
            scratch = tempfile.TemporaryDirectory(prefix="agentchaos-mcp-")
            path = Path(scratch.name) / "trace.json"
            trace.write(path)
        row = summary_row(trace, (), outcome)
        argv = [*replay[:1], "--chaos-replay", str(path), *replay[1:]] if path else list(replay)
        row.update(
            replay=shlex.join(argv),
            explanations={},
            trace_file=trace_file(path, report_dir) if path is not None else None,
        )
        end = end_session(
            [row],
            seed=int(trace.meta.get("seed", 0) or 0),
            profile_option=str(trace.meta.get("profile") or "none"),
            report_dir=report_dir,
            html=html,
        )
        errors.extend(line.removeprefix("agentchaos: ") for line in end.errors)
        if report_dir is not None and not errors:
            said.append(f"report: {report_dir}")
        said.extend(line.removeprefix("agentchaos: ") for line in end.lines)
    finally:
        if scratch is not None:
            scratch.cleanup()
    return said, errors
