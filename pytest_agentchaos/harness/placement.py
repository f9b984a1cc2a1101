"""Where a session's report goes when it runs again only some of the runs recorded in its
report dir under the recording's seed (the printed replay command of one test)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path

from .replay import ReplayPlace, replay_place
from .settings import SessionSettings

__all__ = ["place_report"]


def place_report(
    settings: SessionSettings, collected: Iterable[str]
) -> tuple[SessionSettings, ReplayPlace] | None:
    """The settings whose report dir, trace dir and HTML file are the report dir's ``replay/``
    folder, so the recording stays whole for a later ``--chaos-replay``, and the place; None:
    the report is written where the settings say. A folder that cannot be made means no
    report dir at all: nothing is written rather than over the recording."""
    if settings.report_dir is None or settings.replay is not None:
        return None
    place = replay_place(settings.report_dir, settings.seed, collected)
    if place is None:
        return None
    own: Path | None = place.report_dir
    try:
        (place.report_dir / "traces").mkdir(parents=True, exist_ok=True)
    except OSError:
        own = None
    html = settings.html
    if html is not None:
        html = own / html.name if own is not None else None
    placed = dataclasses.replace(
        settings,
        report_dir=own,
        trace_dir=own / "traces" if own is not None else None,
        html=html,
    )
    return placed, place
