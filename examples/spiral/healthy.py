"""Healthy agents whose work *looks* repetitive: the same sentence every turn, only the numbers
change. A halt monitor that stopped them would be wrong; what they have and a spiral has not
is new information every step (a page number, a row count, a percentage).

- ``Importer`` imports a catalogue page after page: "Imported page 3 of 12: 50 rows".
- ``Poller`` polls a long job: "still running, 40% done" ... "done".

Each is a scripted model that reads the last tool result from its prompt, and a tool.
"""

from __future__ import annotations

import re

IMPORT_TASK = "Import every page of the supplier catalogue into the shop database"
PAGES = 12
ROWS = 50


class Catalogue:
    """The import tool's backend: pages 1 to :data:`PAGES`, :data:`ROWS` rows each."""

    def __init__(self) -> None:
        self.imported: list[int] = []

    def import_page(self, page: str) -> str:
        """Import one page; says how many rows it added and how many there are in all."""
        n = int(page)
        if not 1 <= n <= PAGES:
            raise ValueError(f"no page {n}; the catalogue has {PAGES}")
        if n not in self.imported:
            self.imported.append(n)
        return f"Imported page {n} of {PAGES}: {ROWS} rows, {len(self.imported) * ROWS} in total."


class Importer:
    """Asks for the next page after each import, retries a page whose import failed, and
    gives its FINAL answer after the last page."""

    def __init__(self) -> None:
        self.done = 0  # the last page it saw imported

    def __call__(self, prompt: str) -> str:
        imported = re.search(r"Tool import_page: Imported page (\d+) of (\d+)", prompt)
        if imported:
            self.done = max(self.done, int(imported.group(1)))
        if self.done >= PAGES:
            return f"FINAL: imported all {PAGES} pages, {PAGES * ROWS} rows."
        page = self.done + 1
        if self.done == 0:
            return f"Starting the import with page 1 of {PAGES}.\nCALL import_page 1"
        return f"Page {self.done} is in; importing page {page}.\nCALL import_page {page}"


POLL_TASK = "Run the nightly export job exp-7 and report when it has finished"
JOB = "exp-7"


class ExportJob:
    """The job-status tool's backend: the job gets 15% further each time it is asked."""

    def __init__(self) -> None:
        self.percent = 0

    def job_status(self, job_id: str) -> str:
        """The job's state: still running (with how far it got) or done."""
        if job_id != JOB:
            raise KeyError(f"no job {job_id!r}")
        self.percent = min(100, self.percent + 15)
        if self.percent < 100:
            return f"Job {job_id} is still running, {self.percent}% done."
        return f"Job {job_id} is done: 1,200 rows exported to exports/{job_id}.csv."


class Poller:
    """Polls the job until it is done, then reports."""

    def __call__(self, prompt: str) -> str:
        status = re.search(r"Tool job_status: (.*)", prompt)
        if status is None or "failed" in status.group(0):
            return f"Checking on job {JOB}.\nCALL job_status {JOB}"
        if " is done" in status.group(1):
            return f"FINAL: {status.group(1)}"
        percent = re.search(r"(\d+)% done", status.group(1))
        at = percent.group(1) if percent else "?"
        return f"Job {JOB} is at {at}%; checking again.\nCALL job_status {JOB}"
