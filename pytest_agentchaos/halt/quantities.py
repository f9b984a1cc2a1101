"""The same value said again in another writing (issue 29, item 8): a short answer restated
in new words — "1,280 m", "about 1.28 km", "4,200 feet", "roughly 0.8 miles", "1.2k",
"一千二百" after "1203" — brings nothing new, whatever its words.

- :func:`unit_at` reads the unit after a number (length, mass, time, temperature, in English
  and Chinese): a :class:`Quantity` in the dimension's base unit, with the precision the
  number is written to (half a unit of its last significant digit).
- :class:`Known` keeps the numbers and quantities a run has said and tells which of a step's
  numbers restate one of them: the same quantity in another unit, within the precision of the
  rounder writing; or a round number (``1200``, ``1.2k``) that is an earlier, more precise
  number (``1203``) rounded. A number rounder than everything said before is news.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["Known", "Quantity", "precision", "unit_at"]

#: Units by dimension: each name (casefolded) with its factor to the dimension's base unit
#: (metre, kilogram, second, degree Celsius).
_UNITS: dict[str, tuple[str, float]] = {}
for _dim, _table in {
    "length": {
        ("mm", "millimetre", "millimetres", "millimeter", "millimeters", "毫米"): 0.001,
        ("cm", "centimetre", "centimetres", "centimeter", "centimeters", "厘米"): 0.01,
        ("m", "metre", "metres", "meter", "meters", "米"): 1.0,
        ("km", "kilometre", "kilometres", "kilometer", "kilometers", "公里", "千米"): 1000.0,
        ("in", "inch", "inches", "英寸"): 0.0254,
        ("ft", "foot", "feet", "英尺"): 0.3048,
        ("yd", "yard", "yards", "码"): 0.9144,
        ("mi", "mile", "miles", "英里"): 1609.344,
    },
    "mass": {
        ("mg", "milligram", "milligrams", "毫克"): 1e-6,
        ("g", "gram", "grams", "克"): 0.001,
        ("kg", "kilogram", "kilograms", "kilo", "kilos", "公斤", "千克"): 1.0,
        ("t", "tonne", "tonnes", "吨"): 1000.0,
        ("lb", "lbs", "pound", "pounds", "磅"): 0.45359237,
        ("oz", "ounce", "ounces", "盎司"): 0.028349523125,
    },
    "time": {
        ("s", "sec", "secs", "second", "seconds", "秒", "秒钟"): 1.0,
        ("min", "mins", "minute", "minutes", "分钟"): 60.0,
        ("h", "hr", "hrs", "hour", "hours", "小时", "个小时"): 3600.0,
        ("day", "days", "天"): 86400.0,
        ("week", "weeks", "周", "星期"): 604800.0,
    },
}.items():
    for _names, _factor in _table.items():
        for _name in _names:
            _UNITS[_name] = (_dim, _factor)
#: Temperatures: (scale, offset) to Celsius.
_DEGREES = {"°c": (1.0, 0.0), "℃": (1.0, 0.0), "°f": (5 / 9, -32.0), "℉": (5 / 9, -32.0)}

_UNIT = re.compile(
    r"\s?(°\s?[CF]\b|℃|℉|"
    + "|".join(sorted((re.escape(u) for u in _UNITS if not u.isascii()), key=len, reverse=True))
    + r"|[A-Za-z]+\b)"
)


@dataclass(frozen=True)
class Quantity:
    """A number with its unit: ``dimension``, ``value`` in the base unit, ``tolerance`` (half a
    unit of the number's last significant digit, in the base unit), and ``written`` (the
    number as :func:`.values.number` writes it)."""

    dimension: str
    value: float
    tolerance: float
    written: str
    #: the unit's factor to the base unit (two quantities in one unit compare exactly)
    unit: float = 1.0


def precision(written: str) -> float:
    """Half a unit of the last significant digit of a number written canonically ("1280":
    5.0, "1.28": 0.005, "4200": 50.0, "7": 0.5)."""
    if "." in written:
        return 0.5 * 10.0 ** -len(written.partition(".")[2])
    digits = written.lstrip("-")
    zeros = len(digits) - len(digits.rstrip("0")) if digits.strip("0") else 0
    return 0.5 * 10.0**zeros


def unit_at(written: str, after: str) -> Quantity | None:
    """The quantity a number (``written`` canonically) makes with the unit that opens
    ``after`` (the text right after the number), or None when no known unit follows."""
    match = _UNIT.match(after[:16])
    if not match:
        return None
    unit = match[1].replace(" ", "").casefold()
    try:
        number = float(written)
    except ValueError:
        return None
    if unit in _DEGREES:
        scale, offset = _DEGREES[unit]
        return Quantity("temperature", (number + offset) * scale, precision(written) * scale,
                        written, scale)  # fmt: skip
    known = _UNITS.get(unit) or _UNITS.get(match[1])
    if known is None:
        return None
    dimension, factor = known
    return Quantity(dimension, number * factor, precision(written) * factor, written, factor)


@dataclass
class Known:
    """The numbers and quantities a run has said (the latest ``limit`` of each)."""

    limit: int = 500
    numbers: deque[str] = field(default_factory=deque)
    quantities: deque[Quantity] = field(default_factory=deque)
    #: numbers found to restate another, with the number they restate
    aliases: dict[str, str] = field(default_factory=dict)

    def restated(
        self,
        numbers: Iterable[str],
        quantities: Iterable[Quantity],
        approximate: Iterable[str] = (),
    ) -> dict[str, str]:
        """Which of a step's ``numbers`` (canonical) restate a number said before: each with
        the number it restates (then learns the step's numbers and quantities). Only the
        ``approximate`` numbers (said to be rounded: "about 1,200", "1.2k", "一千二百左右")
        are compared as rounded: "page 8490" after "page 8489" is the next page."""
        approximate = set(approximate)
        found: dict[str, str] = {}
        numbers = [n for n in numbers if _numeric(n)]
        quantities = list(quantities)
        said = set(self.numbers)
        for q in quantities:
            if q.written in said:
                continue
            for old in self.quantities:
                # in another unit, within the rounder writing's precision (in one unit,
                # another number is another value)
                near = abs(old.value - q.value) <= max(old.tolerance, q.tolerance) * 1.0001
                if old.dimension == q.dimension and old.unit != q.unit and near:
                    found[q.written] = old.written
                    break
        for n in numbers:
            if n in self.aliases and n not in found:
                found[n] = self.aliases[n]
            if n in said or n in found or n not in approximate:
                continue
            old_n = self._rounded_from(n)
            if old_n is not None:
                found[n] = old_n
        for n, earlier in found.items():
            if len(self.aliases) < self.limit:
                self.aliases[n] = earlier
        for n in numbers:
            if n not in said:
                self.numbers.append(n)
                said.add(n)
        self.quantities.extend(quantities)
        while len(self.numbers) > self.limit:
            self.numbers.popleft()
        while len(self.quantities) > self.limit:
            self.quantities.popleft()
        return found

    def _rounded_from(self, written: str) -> str | None:
        """The earlier, more precise number that ``written`` is rounded from: only a round
        number of at least two significant digits and at least 100 ("1200", not "20")."""
        value = float(written)
        half = precision(written)
        if abs(value) < 100 or half < 5 or "." in written:
            return None
        significant = written.lstrip("-").rstrip("0")
        if len(significant) < 2:
            return None  # "1000" rounds too much to say which number it was
        for old in reversed(self.numbers):
            if precision(old) < half and abs(float(old) - value) <= half:
                return old
        return None


def _numeric(written: str) -> bool:
    if not any(c.isdigit() for c in written[:32]):
        return False
    try:
        float(written)
    except ValueError:
        return False
    return True
