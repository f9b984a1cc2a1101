"""Pattern fixes that would run a value's words together: the task's own spelling, or none."""

from __future__ import annotations

from pytest_agentchaos.repair.fixes import Context, Decline, Fix
from pytest_agentchaos.repair.mechanical import fix_pattern

SLUG = r"^[a-zA-Z0-9][a-zA-Z0-9._-]*$"


def test_words_are_not_run_together_into_a_new_name() -> None:
    ctx = Context(name="name", task="Create a release flag for the new onboarding flow.")
    assert isinstance(fix_pattern("New Onboarding Flow", SLUG, ctx), Decline)


def test_the_task_spelling_of_the_same_words_is_taken() -> None:
    ctx = Context(name="name", task="Create a release flag named checkout-v3.")
    fix = fix_pattern("checkout v3", SLUG, ctx)
    assert isinstance(fix, Fix) and fix.value == "checkout-v3"


def test_two_task_spellings_are_declined() -> None:
    ctx = Context(name="name", task="Flag checkout-v3, not checkout_v3.")
    assert isinstance(fix_pattern("checkout v3", SLUG, ctx), Decline)


def test_groups_of_a_code_still_lose_their_spaces() -> None:
    fix = fix_pattern("GB29 NWBK 6016", r"^[A-Z0-9]+$", Context(name="iban"))
    assert isinstance(fix, Fix) and fix.value == "GB29NWBK6016"
