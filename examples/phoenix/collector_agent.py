"""The data collector of seed 001 (the Phoenix pattern): a crawler that collects a paged source's
items one page per step, is snapshotted as it goes, and falls into a logical loop on a bad page.

What it collected (its items and the next page to fetch) is its state: the runner snapshots it.
Its scratch memory is a cache of the pages it fetched (a retried step does not fetch again):
the runner's self-destruct clears it. The source's CDN serves page 7 stale on its first fetch:
an empty page whose ``next`` link points back at page 7. Cached, that page traps the collector:
step after step it reads page 7 from its cache, finds nothing new and is sent to page 7 again,
the seed's "keeps requesting the same page without getting new data". The runner sees the
loop, clears the cache and brings the collector back from its latest healthy snapshot; the
page, fetched afresh, is fine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_agentchaos.phoenix import StepReport

PAGES = 20
PER_PAGE = 2
STALE_PAGE = 7


def items_of(page: int) -> list[str]:
    """The items page ``page`` holds."""
    return [f"item-{page:02d}-{i}" for i in range(PER_PAGE)]


#: Everything the source holds, in order: what a collector that lost nothing and took nothing
#: twice ends with.
ALL_ITEMS = [item for page in range(1, PAGES + 1) for item in items_of(page)]


class PagedSource:
    """The remote API: page ``n`` holds two items and links to page ``n + 1``; the first
    fetch of ``stale_page`` comes from a stale CDN cache (no items, ``next`` pointing at
    itself)."""

    def __init__(self, pages: int = PAGES, stale_page: int | None = STALE_PAGE) -> None:
        self.pages = pages
        self.stale_page = stale_page
        self.fetches: dict[int, int] = {}

    def fetch_page(self, page: int) -> dict[str, Any]:
        """One page: ``{"page", "items", "next"}`` (``next`` is None on the last page)."""
        if not 1 <= page <= self.pages:
            raise ValueError(f"no page {page}")
        seen = self.fetches[page] = self.fetches.get(page, 0) + 1
        if page == self.stale_page and seen == 1:
            return {"page": page, "items": [], "next": page}
        return {
            "page": page,
            "items": items_of(page),
            "next": page + 1 if page < self.pages else None,
        }


class DataCollector:
    """Collects every item, one page per step, through ``fetch_page(page)``.

    The :class:`~pytest_agentchaos.phoenix.PhoenixRunner` drives it: ``step`` / ``to_state`` /
    ``from_state`` / ``reset``."""

    def __init__(self, fetch_page: Callable[[int], dict[str, Any]]) -> None:
        self.fetch_page = fetch_page
        self.items: list[str] = []
        self.next_page: int | None = 1
        self.cache: dict[int, dict[str, Any]] = {}  # scratch memory, not state

    def step(self, n: int) -> StepReport:
        """Fetch the next page (from the cache when it was fetched before) and keep its new
        items."""
        page = self.next_page
        if page is None:
            return StepReport(output="nothing left", progress=len(self.items), done=True)
        if page not in self.cache:
            self.cache[page] = self.fetch_page(page)
        body = self.cache[page]
        new = [item for item in body["items"] if item not in self.items]
        self.items.extend(new)
        self.next_page = body["next"]
        return StepReport(
            output=f"page {page}: {len(new)} new item(s), next {self.next_page}",
            progress=len(self.items),
            state={"next": self.next_page, "items": len(self.items)},
            done=self.next_page is None,
        )

    def to_state(self) -> dict[str, Any]:
        """What the collector has done: its items and the next page."""
        return {"items": list(self.items), "next_page": self.next_page}

    def from_state(self, state: dict[str, Any]) -> None:
        """Back to a snapshot's state."""
        self.items = list(state["items"])
        self.next_page = state["next_page"]

    def reset(self) -> None:
        """The self-destruct: forget every cached page (a stale one included)."""
        self.cache.clear()
