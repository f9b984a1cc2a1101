"""The same reading taken again through another tool, in other words, is no news: a call that
works and states only numbers the run already had confirms, it does not act. An action on an
item named before (closing a known ticket) is work, whatever it repeats of its id."""

from __future__ import annotations

from pytest_agentchaos.halt.monitor import HaltMonitor

READINGS = [
    ("shell", "consumer-groups --describe: total LAG 1203 across 12 partitions"),
    ("http_get", "The dashboard panel agrees: lag sits at 1203 messages right now."),
    ("jmx_query", "records-lag-max summed over the consumers: 1203."),
    ("shell", "kcat offsets: end minus committed is 1203 as well."),
    ("prometheus", "kafka_consumergroup_lag{group='order-svc'} = 1203"),
    ("http_get", "Burrow reports the group OK, total lag 1203."),
    ("shell", "One more look with the admin client: 1203 behind."),
    ("jmx_query", "Broker-side metric, same figure: 1203."),
]


def _halt_step(monitor: HaltMonitor, steps: list[tuple[str, str, dict[str, str]]]) -> int | None:
    for n, (tool, text, args) in enumerate(steps):
        if monitor.observe(text, tool=tool, ok=True, args=args).halt:
            return n
    return None


def test_the_same_reading_through_one_tool_after_another_halts() -> None:
    monitor = HaltMonitor(task="check the consumer lag of order-events; alert above 10000",
                          embedder="lexical")  # fmt: skip
    assert _halt_step(monitor, [(t, x, {}) for t, x in READINGS]) is not None


def test_closing_tickets_named_before_is_work() -> None:
    monitor = HaltMonitor(task="work through today's after-sales queue", embedder="lexical")
    ids = [f"T-61{n:02d}" for n in range(10, 18)]
    steps = [("ticket_query", f"Ticket {t}: refund requested, order found.", {"ticket": t})
             for t in ids]  # fmt: skip
    steps += [("ticket_close", f"Follow-up on {t}: customer confirmed, closed.", {"ticket": t})
              for t in ids]  # fmt: skip
    assert _halt_step(monitor, steps) is None


def test_acting_on_an_amount_read_before_is_work() -> None:
    # a guard (review): writes that carry only a number read earlier (refund it, post it,
    # report it) each do something new; the run must not halt
    monitor = HaltMonitor(task="Refund order 88123 in full and close the case", embedder="lexical")
    steps = [("get_order", "Order 88123: balance due 249.99 USD, paid by card."),
             ("refund", "Refunded 249.99 to the card on file."),
             ("send_email", "Receipt for the 249.99 refund emailed to the customer."),
             ("update_ledger", "Ledger entry posted: -249.99."),
             ("close_case", "Case closed; 249.99 returned."),
             ("notify", "Slack note to #billing: 249.99 refunded.")]  # fmt: skip
    assert _halt_step(monitor, [(t, x, {}) for t, x in steps]) is None
