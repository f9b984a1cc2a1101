"""The session's one-line notes around the chaos summary: the header, where a replay's report
went, why a replay selects no test, and the search's sections (breaking points, tests not
searched). Plain text from plain values: the pytest plugin prints them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["header_lines", "no_recorded_test", "replay_note", "search_sections"]


def header_lines(settings: Any) -> list[str]:
    """The header: the profile(s), the session seed, the runs, and how to replay the session
    (``settings``: a :class:`~..harness.settings.SessionSettings`)."""
    profiles = ",".join(settings.profiles) or settings.default_profile
    runs = f" runs={'auto:' * settings.auto_runs}{settings.runs}" if settings.runs > 1 else ""
    line = f"agentchaos: profile={profiles} seed={settings.seed}{runs}"
    if settings.replay is None:
        return [f"{line} (replay with {settings.flag_prefix}seed={settings.seed})"]
    # --chaos-seed would draw the faults from today's plan, not the recorded ones
    return [line, f"agentchaos: replaying the fault decisions recorded in {settings.replay.path}"]


def replay_note(
    place: Any, report_dir: Path | None, replay_path: Path | None, *, asked_for_report: bool
) -> str | None:
    """Where a replay's report went: ``place`` (a :class:`~..harness.replay.ReplayPlace`) for
    a session that re-ran part of a recording under its seed, ``replay_path`` for
    ``--chaos-replay``; None: nothing to say."""
    if place is not None:
        where = (
            f"its report is in {report_dir}"
            if report_dir is not None
            else "its report was not written (its folder cannot be made)"
        )
        return (
            f"agentchaos: this session ran {place.rerun} of the {place.recorded} runs recorded "
            f"in {place.recording / 'index.json'} again under their seed: {where}; the "
            "recording is left as it was"
        )
    if replay_path is None or (report_dir is None and not asked_for_report):
        return None
    where = (
        f"its report is in {report_dir}"
        if report_dir is not None
        else "no report written (it would overwrite what it replays)"
    )
    return f"agentchaos: replaying {replay_path}: {where}"


def no_recorded_test(path: Path, recorded: Sequence[str]) -> str:
    """Why ``--chaos-replay`` cannot run: none of the tests collected has a recorded run."""
    known = ", ".join(sorted(recorded)[:3])
    return (
        f"--chaos-replay: {path}: none of the tests collected here has a "
        f"recorded run in it (it has {len(recorded)}: {known}"
        f"{', ...' if len(recorded) > 3 else ''}); run pytest from the rootdir the "
        "recording ran from"
    )


def search_sections(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[str]]]:
    """The search's sections of the terminal summary, each a title and its lines: the
    breaking point of each test that has one, and the tests that ran once, not searched."""
    sections: list[tuple[str, list[str]]] = []
    found = [(r.get("test"), r["breaking_point"]) for r in rows if r.get("breaking_point")]
    if found:
        lines = [
            f"{node_id}: {point.get('description', point)}"
            for node_id, point in sorted(found, key=lambda f: str(f[0]))
        ]
        sections.append(("agentchaos: breaking points", lines))
    kept = sorted({(str(r.get("test")), r["not_searched"]) for r in rows if r.get("not_searched")})
    if kept:
        lines = [f"{node_id}: ran once, not searched: {why}" for node_id, why in kept]
        sections.append((f"agentchaos: {len(kept)} chaos test(s) not searched", lines))
    return sections
