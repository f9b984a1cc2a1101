"""Scripted models (deterministic, offline) for the chat agent: one for each way an agent
spirals that the halt monitor knows, a model that gets out of its spiral when nudged, and a
model that makes real progress (which the ``spiral`` profile's faults turn into a spiral).

A model is a callable ``prompt -> reply``. ``Script`` says its opening replies once, then its
loop round and round: a model stuck in its spiral.
"""

from __future__ import annotations

from collections.abc import Sequence


class Script:
    """Says ``opening`` once, then ``loop`` round and round. ``calls``: how often it was
    really asked (a call a fault answered in its place does not reach it)."""

    def __init__(self, opening: Sequence[str], loop: Sequence[str]) -> None:
        self.opening, self.loop = list(opening), list(loop)
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        n, self.calls = self.calls, self.calls + 1
        if n < len(self.opening):
            return self.opening[n]
        return self.loop[(n - len(self.opening)) % len(self.loop)]


BUILD_TASK = "Find out why the nightly build of the billing service fails"


def exact_spiral() -> Script:
    """Says the very same thing every turn."""
    return Script(
        ["I'll start with the log of last night's build of the billing service."],
        ["The build still fails. Let me look at the build log again."],
    )


def paraphrase_spiral() -> Script:
    """Says the same thing every turn in other words: no two replies share most of their
    words, and none names anything new. Only their meaning repeats."""
    return Script(
        ["I'll start with the log of last night's build of the billing service."],
        [
            "I still don't know why the nightly build fails, so I'll read the build log again.",
            "The reason the nightly build fails is still unclear to me; let me go through the "
            "build log once more.",
            "I haven't found out why the nightly build is failing. I'm going to reread its "
            "build log.",
            "Why does the nightly build fail? I can't tell yet, so back to the build log.",
            "The cause of the nightly build failure still escapes me; I will check the build "
            "log again.",
            "What makes the nightly build fail is still unknown to me. Reading the build log "
            "another time.",
        ],
    )


TESTS_TASK = "Make the tests in tests/test_dates.py pass"
RUN_TESTS = "CALL run_tests tests/test_dates.py"


class TestsFailed(Exception):
    """The test run failed (the tool's own error, not an injected one)."""


def run_tests(path: str) -> str:
    """The test-runner tool: the import the model keeps "fixing" is still broken."""
    raise TestsFailed(
        f"1 failed, 4 passed in {path}: test_parse_date: ImportError: cannot import name "
        "'parse_date' from 'dates'"
    )


def apology_spiral() -> Script:
    """Runs the tests, then apologises, says it fixed the import and runs them again: the
    same failure every time."""
    return Script(
        [RUN_TESTS],
        [
            f"Sorry, my mistake: I've fixed the import in dates.py.\n{RUN_TESTS}",
            f"Apologies, I have now corrected the import; this should work now.\n{RUN_TESTS}",
            f"I'm sorry, that was my mistake. I have fixed it properly this time.\n{RUN_TESTS}",
        ],
    )


DATES_TASK = "Fix the failing test test_parse_date in tests/test_dates.py"


def drifting() -> Script:
    """Starts on the failing test, then wanders off, topic by topic, and never comes back."""
    return Script(
        [
            "Reading tests/test_dates.py: test_parse_date expects parse_date to keep the timezone.",
            "parse_date in dates.py drops the tzinfo when it parses an ISO string.",
            "Time zones are a fascinating subject: the railways made them necessary in 1883.",
            "Before standard time, each town kept its own local noon by the sun.",
            "Sundials were the clocks of antiquity; the Egyptians built the first ones.",
            "Speaking of Egypt, the pyramids at Giza were finished around 2560 BC.",
            "Pyramid builders were paid in bread and beer, historians believe.",
        ],
        [
            "Brewing beer is one of humanity's oldest crafts.",
            "Bread and beer share their yeast, which bakers still prize.",
        ],
    )


PARCEL_TASK = "查询订单 8812 的物流状态"


def chinese_spiral() -> Script:
    """A parcel-tracking agent that cannot reach the carrier and says so again and again:
    sometimes in the same words, sometimes in other words."""
    return Script(
        ["正在查询订单 8812 的物流信息。"],
        [
            "抱歉，暂时查不到订单 8812 的物流信息，我再查一次。",
            "订单 8812 的物流信息目前还是查不到，我再试一下。",
            "抱歉，暂时查不到订单 8812 的物流信息，我再查一次。",
            "还是没有查到这个订单的物流状态，我重新查询一下。",
        ],
    )


SHIPMENT_TASK = "Find out where order 8812 is"


class NudgeAware:
    """Stuck on the same answer until its prompt carries a supervisor's nudge; then it
    changes its approach (asks the carrier instead of the shop) and finishes."""

    def __init__(self) -> None:
        self.calls = 0
        self.nudged_at: int | None = None

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        if self.nudged_at is None and "Supervisor:" in prompt:
            self.nudged_at = self.calls
            return "Changing approach: asking the carrier about order 8812 directly."
        if self.nudged_at is not None:
            return "FINAL: order 8812 left the Leipzig hub on Monday; delivery on Thursday."
        if self.calls == 1:
            return "Let me check the shop's order page for order 8812."
        return "The shop's order page still says it is being processed. Let me check it again."


class WarehouseSearch:
    """Makes real progress on its own: each answer checks one more warehouse (new numbers
    every time), and it needs ``warehouses`` real answers to finish. Under the ``spiral``
    profile most calls never reach it: its previous answer comes back, repeated or
    paraphrased."""

    def __init__(self, warehouses: int = 40) -> None:
        self.warehouses = warehouses
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        n = self.calls
        if n >= self.warehouses:
            return f"FINAL: order 8812 is in warehouse W-{n:02d}."
        return (
            f"I checked warehouse W-{n:02d} ({n} of {self.warehouses}): {n * 37 + 5} parcels "
            f"scanned, order 8812 is not there. Moving on to warehouse W-{n + 1:02d}."
        )
