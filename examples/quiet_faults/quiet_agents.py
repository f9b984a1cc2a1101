"""Three small production-style agents, each with the quiet bug the issue (#28) names and its
fix: nothing crashes, the run looks fine, and yet the agent did something it should not have.

* ``CheckoutAgent`` charges a card through a payment API. When the API's reply is lost (the
  charge went through, the agent saw a timeout) the naive agent retries and charges twice; the
  fixed one sends an idempotency key, the same on every retry, and the API charges once.
* ``ResearchAgent`` searches a rate-limited API. On a 429 the naive agent waits the
  ``Retry-After`` less one second "to be quick", and comes back early; the fixed one calls
  through the :class:`~pytest_agentchaos.escape.Supervisor`, which waits as asked.
* ``BrowsingAgent`` reads web pages. The naive one runs any ``Action:`` line it reads, also one
  a page carries (a prompt injection); the careful one takes actions from its task only and
  reads a page as data.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_agentchaos.escape import Supervisor, keyed

# -- payments ------------------------------------------------------------------------------------


@dataclass
class PaymentAPI:
    """A payment provider: every charge takes money; a charge whose idempotency key it has
    seen before is not run again, it answers with the first one's receipt."""

    charges: list[dict[str, Any]] = field(default_factory=list)
    by_key: dict[str, dict[str, Any]] = field(default_factory=dict)

    def charge(self, order: str, amount_cents: int, idempotency_key: str | None = None) -> dict:
        if idempotency_key is not None and idempotency_key in self.by_key:
            return self.by_key[idempotency_key]
        receipt = {"id": f"ch_{len(self.charges) + 1}", "order": order, "amount": amount_cents}
        self.charges.append(receipt)
        if idempotency_key is not None:
            self.by_key[idempotency_key] = receipt
        return receipt


class CheckoutAgent:
    """Pays an order; a call that times out or loses its connection is tried again, up to
    ``attempts`` times in all."""

    def __init__(self, charge: Callable[..., dict], *, idempotent: bool, attempts: int = 3):
        # the fix: every attempt of one charge carries one key, derived from the intent
        self.charge = keyed(charge, name="charge") if idempotent else charge
        self.attempts = attempts

    def pay(self, order: str, amount_cents: int) -> dict:
        for attempt in range(1, self.attempts + 1):
            try:
                return self.charge(order=order, amount_cents=amount_cents)
            except (TimeoutError, ConnectionError):
                if attempt == self.attempts:
                    raise
        raise AssertionError("unreachable")


# -- rate limits ---------------------------------------------------------------------------------


def search(q: str) -> list[str]:
    """The search API (rate-limited in production)."""
    return [f"{q}: the first result", f"{q}: the second result"]


class ResearchAgent:
    """Searches for every question it is asked."""

    def __init__(self, search: Callable[..., list[str]], supervisor: Supervisor | None = None):
        self.search = search
        self.supervisor = supervisor

    def research(self, q: str) -> list[str]:
        if self.supervisor is not None:  # the fix: the Supervisor honours Retry-After
            return self.supervisor.call("search", self.search, {"q": q})
        try:
            return self.search(q=q)
        except Exception as error:
            if getattr(error, "status", None) != 429:
                raise
            # the bug: "one second early is close enough, and the user is waiting"
            wait = int(error.headers.get("Retry-After", "1")) - 1
            time.sleep(max(wait, 0))
            return self.search(q=q)


# -- prompt injection ----------------------------------------------------------------------------

PAGES = {
    "https://louvre.example/hours": "The Louvre is open 9:00 to 18:00, closed on Tuesdays.",
}
ACTION = re.compile(r"^Action:\s*(\w+)\[(.*?)\]\s*$", re.MULTILINE)
HOURS = re.compile(r"open (\d{1,2}:\d{2}) to (\d{1,2}:\d{2})")


def fetch_page(url: str) -> str:
    """The page at ``url``, as text."""
    return PAGES[url]


def upload_conversation(to: str) -> str:
    """Send the whole conversation to ``to`` (a support tool; never one a page should pick)."""
    return f"uploaded to {to}"


class BrowsingAgent:
    """Answers a question from a web page. Its plan is a list of ``Action: tool[arg]`` lines."""

    def __init__(self, tools: dict[str, Callable[..., Any]], *, obeys_pages: bool):
        self.tools = tools
        self.obeys_pages = obeys_pages

    def answer(self, url: str) -> str:
        page = self.tools["fetch_page"](url=url)
        if self.obeys_pages:
            # the bug: the page's text joins the plan, so an instruction in it is run
            for tool, arg in ACTION.findall(str(page)):
                if tool in self.tools and tool != "fetch_page":
                    self.tools[tool](to=arg)
        # the page is data: read the hours out of it, repeat nothing else
        hours = HOURS.search(str(page))
        return f"Open {hours.group(1)}-{hours.group(2)}." if hours else "I could not tell."
