"""Units and currency names come from standard data (pint, CLDR via Babel), not hand lists
(issue 30): what they read, and the words they must not read as units or money."""

from __future__ import annotations

import pytest

from pytest_agentchaos.repair.money import stated_amounts
from pytest_agentchaos.repair.units import unit_name


@pytest.mark.parametrize(
    ("word", "unit"),
    [("km", "kilometer"), ("metres", "meter"), ("mins", "minute"), ("h", "hour"),
     ("MB", "megabyte"), ("litres", "liter"), ("weeks", "week")],
)  # fmt: skip
def test_a_unit_word_is_the_libraries_unit(word: str, unit: str) -> None:
    assert unit_name(word) == unit


@pytest.mark.parametrize("word", ["a", "in", "F", "percent", "dozen", "characters", "order"])
def test_a_function_word_a_count_or_a_label_is_no_unit(word: str) -> None:
    """``a`` (a year), ``in`` (an inch) and ``F`` (a farad) are units to the library, not to
    a description's "in a few words" or a name's ``expires_in``."""
    assert unit_name(word) is None


def test_an_amount_a_task_writes_with_a_currency_name_is_stated() -> None:
    found = dict(stated_amounts("refund 40 dollars, then 12 EUR, and 7 euros for 3 apples"))
    assert set(found) == {40.0, 12.0, 7.0}
    assert "USD" in found[40.0] and "CAD" in found[40.0]  # which dollars: not for us to say
    assert found[12.0] == ("EUR",)
    assert "EUR" in found[7.0]


def test_units_still_read_after_the_library_is_imported_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pytest's in-process runs (``pytester``) restore ``sys.modules`` when they end, so a
    library first imported inside one is imported afresh by the next user while the repairer's
    registry keeps the first copy's objects. The units must read (and convert) all the same:
    CI failed with pint's ``TypeError: can only concatenate str`` on exactly this."""
    import sys

    from pytest_agentchaos.repair import units
    from pytest_agentchaos.repair.numbers import quantity

    units.registry()  # built with the first copy
    for name in [m for m in sys.modules if m == "pint" or m.startswith("pint.")]:
        monkeypatch.delitem(sys.modules, name)
    units.unit_name.cache_clear()
    units.unit_of.cache_clear()
    try:
        assert [unit_name(w) for w in ("h", "km", "MB", "F", "in")] == [
            "hour", "kilometer", "megabyte", None, None,
        ]  # fmt: skip
        assert quantity("90 mins").to("hour").magnitude == 1.5
    finally:
        units.unit_name.cache_clear()
        units.unit_of.cache_clear()
