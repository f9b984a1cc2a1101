"""A checkout agent whose payment step must not charge twice when it is reborn.

The agent runs one order in four steps: read the cart, reserve the stock, charge the card,
e-mail the receipt. A crash after the charge brings it back from a snapshot taken before the
charge, so the charge step runs again. The payment gateway, like many, charges every
request it gets (it only records the idempotency key, so the order can be looked up later).

With the runner's idempotency ledger (``agent.effect = runner.effect``) the replayed charge
returns the receipt recorded the first time, and a charge whose response was lost is looked up
at the gateway (the ``reconcile`` hook) instead of being sent again. Without it (``effect`` calls
straight through) the card is charged twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_agentchaos.phoenix import StepReport

ORDER = "order-1042"
STAGES = ("cart", "reserve", "charge", "email", "done")
CART = {"sku-espresso": 2, "sku-grinder": 1}
PRICES = {"sku-espresso": 1250, "sku-grinder": 8900}  # cents

#: ``effect(key, fn, *args, **kwargs)``: how the agent makes a side-effecting call.
Effect = Callable[..., Any]


def direct(key: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """No ledger: the call is made every time the step runs."""
    return fn(*args, **kwargs)


class Gateway:
    """The card processor. It charges every request; ``lose_first_response``: the first charge
    goes through but its response is lost on the way back."""

    def __init__(self, *, lose_first_response: bool = False) -> None:
        self.charges: list[dict[str, Any]] = []
        self.lose_first_response = lose_first_response

    def charge(self, order: str, amount_cents: int, idempotency_key: str) -> dict[str, Any]:
        """Charge ``amount_cents`` for ``order``; returns the receipt."""
        receipt = {
            "receipt": f"rcpt-{len(self.charges) + 1:04d}",
            "order": order,
            "amount_cents": amount_cents,
            "idempotency_key": idempotency_key,
        }
        self.charges.append(receipt)
        if self.lose_first_response:
            self.lose_first_response = False
            raise ConnectionError("connection reset by the gateway after the charge was accepted")
        return receipt

    def find(self, idempotency_key: str) -> tuple[bool, Any]:
        """Reconciliation: whether a charge with this key went through, and its receipt."""
        for receipt in self.charges:
            if receipt["idempotency_key"] == idempotency_key:
                return True, receipt
        return False, None


class Mailer:
    """Sends e-mails (and remembers them)."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, to: str, subject: str, idempotency_key: str) -> str:
        """Send one e-mail; returns its message id."""
        self.sent.append({"to": to, "subject": subject, "idempotency_key": idempotency_key})
        return f"msg-{len(self.sent)}"


class CheckoutAgent:
    """Runs :data:`ORDER` step by step: ``charge`` and ``send`` are its tools; ``effect`` is
    how it makes their side-effecting calls (:func:`direct` until a runner's ledger is set)."""

    def __init__(self, charge: Callable[..., Any], send: Callable[..., Any]) -> None:
        self.charge = charge
        self.send = send
        self.effect: Effect = direct
        self.stage = "cart"
        self.total = 0
        self.receipt: str | None = None

    def step(self, n: int) -> StepReport:
        """Do the next stage of the order."""
        if self.stage == "cart":
            self.total = sum(PRICES[sku] * qty for sku, qty in CART.items())
            self.stage = "reserve"
        elif self.stage == "reserve":
            self.stage = "charge"
        elif self.stage == "charge":
            key = f"{ORDER}-charge"
            receipt = self.effect(
                key, self.charge, order=ORDER, amount_cents=self.total, idempotency_key=key
            )
            self.receipt = receipt["receipt"]
            self.stage = "email"
        elif self.stage == "email":
            key = f"{ORDER}-receipt-mail"
            self.effect(
                key,
                self.send,
                to="ana@example.com",
                subject=f"Receipt {self.receipt}",
                idempotency_key=key,
            )
            self.stage = "done"
        progress = STAGES.index(self.stage)
        return StepReport(output=self.stage, progress=progress, done=self.stage == "done")

    def to_state(self) -> dict[str, Any]:
        """Where the order is."""
        return {"stage": self.stage, "total": self.total, "receipt": self.receipt}

    def from_state(self, state: dict[str, Any]) -> None:
        """Back to a snapshot's stage of the order."""
        self.stage = state["stage"]
        self.total = state["total"]
        self.receipt = state["receipt"]
