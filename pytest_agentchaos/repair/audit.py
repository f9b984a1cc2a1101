"""The intent audit: a repaired call is checked as a whole before it is returned.

Whatever proposed its values (a rule, the inferer, a model), a repaired call is declined,
naming why, when:

- a value of the call as sent that the task states is gone (a key dropped, or its value
  replaced by one that is not derived from it): a filter the user asked for must not vanish.
  An amount counts as stated when the task gives it with its currency, in the currency's
  major or minor unit (``10000`` for "100 euros");
- a value that changed cites no evidence (no step of the repair says where it came from);
- one span of the task fills two fields that were filled by reading the task;
- an amount is in another currency than the field's description states (the number alone
  would be read in the field's currency);
- a new or changed value is one the task writes only to refuse it ("not gold", "instead of
  ORD-12").

Currencies are read from standard data: the Unicode names of currency signs (``$`` is DOLLAR
SIGN) and ISO 4217-shaped codes next to an amount.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from .negation import refused_in_task
from .paths import get
from .reading import leaf_values
from .results import RepairStep
from .words import find_word

__all__ = ["audit", "currency_of", "described_currency", "stated_amount", "task_states"]

#: Strategies that remove a value: a value the task states must not vanish by them.
_DROPPING = frozenset({"drop_unknown_key", "drop_exclusive_key"})
#: Strategies that put another value in a field, not one derived from what was there (a
#: bound, a cut, a value the rules read elsewhere): a value the task states may be replaced
#: by them only with another value the task writes. A model's proposal is not among them:
#: translating what the task says ("pounds" as ``GBP``) is what a model is plugged in for,
#: and its step names it as the evidence.
_REPLACING = frozenset({
    *_DROPPING, "rejected_value_correction", "clamp_value", "length_correction",
    "infer_missing_param",
})  # fmt: skip
#: Strategies that may leave out a value the task states, because the field's description
#: says leaving it out means that value ("all regions" where none given is all of them).
_LEAVING_OUT = frozenset({"default_value_assignment", "enum_value_correction"})
#: Strategies that fill a value by reading the task (a bound or a sign put right is read
#: from the task too: "the task says 2").
_READING = frozenset({
    "infer_missing_param", "rejected_value_correction", "model_proposal", "clamp_value",
})  # fmt: skip


def task_states(value: Any, task: str) -> bool:
    """Whether the task writes ``value`` as it is (a text of two characters or more, or a
    number), as words of its own."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        text = str(value)
        at = find_word(task, text)
        while at >= 0:
            before, after = task[at - 1 : at], task[at + len(text) : at + len(text) + 2]
            if before != "." and not (after[:1] == "." and after[1:].isdigit()):
                return True
            at = find_word(task, text, at + 1)
        return False
    if not isinstance(value, str) or len(value.strip()) < 2 or len(value) > 200:
        return False
    return find_word(task.casefold(), value.strip().casefold()) >= 0 or _day_written(value, task)


_ISO_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?")


def _day_written(value: str, task: str) -> bool:
    """Whether the task writes the day of an ISO date with its month's English name ("1
    November", "Nov 1st"): the same day, whether or not it gives the year."""
    import calendar

    match = _ISO_DAY.fullmatch(value.strip())
    if match is None or not 1 <= int(match[2]) <= 12:
        return False
    month, day = int(match[2]), int(match[3])
    names = "|".join({calendar.month_name[month].lower(), calendar.month_abbr[month].lower()})
    nth = rf"0?{day}(?:st|nd|rd|th)?"
    text = task[:4000].casefold()
    return bool(
        re.search(rf"(?<!\d){nth}\s+(?:of\s+)?(?:{names})\b", text)
        or re.search(rf"\b(?:{names})\.?\s+{nth}(?!\d)", text)
    )


def stated_amount(value: Any, task: str) -> bool:
    """Whether a number is an amount of money the task states with its currency (``100
    euros``), in the currency's major or minor unit (10000 cents): ISO 4217's minor units."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    from .money import minor_scale, stated_amounts

    for number, currencies in stated_amounts(task):
        scale = minor_scale(currencies)
        if value == number or (scale is not None and value == round(number * 10**scale)):
            return True
    return False


def audit(
    original: Mapping[str, Any],
    repaired: Mapping[str, Any],
    task: str | None,
    steps: Sequence[RepairStep],
    descriptions: Mapping[tuple[str | int, ...], str] | None = None,
) -> str | None:
    """Why the repaired call must be declined, or None when it passes (see the module)."""
    text = (task or "")[:8000]
    used = [s for s in steps if s.ok]
    before = dict(leaf_values(original))
    after = dict(leaf_values(repaired))
    after_values = [v for v in after.values()]
    if text:
        for sent_at, value in before.items():
            if not (task_states(value, text) or stated_amount(value, text)):
                continue
            path = _renamed(sent_at, used)  # judged where the rename pass moved it
            if path in after and _same(after[path], value):
                continue
            if _serialised(sent_at, original, after):
                continue  # the object holding it sent as its own JSON text: nothing lost
            step = _step_at(used, path)
            new = after.get(path)
            # a value a bound, a cut or a rule's reading replaced in its own field survives
            # only as an exact copy elsewhere, not as a part of a longer value
            exact = step is not None and step.strategy in _REPLACING and path in after
            if _survives(value, sent_at, before, after_values, text, exact=exact):
                continue  # moved (renamed, regrouped) or normalised into a list
            if (
                step is not None
                and step.strategy in _REPLACING - _DROPPING
                and path in after
                and (task_states(new, text) or _spoken(value) == new)
            ):
                continue  # the task's own writing of the new value is its evidence
            gone = not any(p[: len(path)] == path for p in after)  # not even as an item
            if (
                gone
                and (step is None or step.strategy not in _DROPPING)
                and _spread(value, before, after)
            ):
                continue  # split into new values or merged into one, each cited by a step
            if gone and step is not None and step.strategy not in _LEAVING_OUT:
                return f"the task states {value!r} ({_field(path)}), and the repair would drop it"
            if step is None or step.strategy in _REPLACING:
                return (
                    f"the task states {value!r} ({_field(path)}), and the repair would "
                    "drop or replace it"
                )
    for path, value in after.items():
        if path in before and _same(before[path], value):
            continue
        if _step_at(used, path) is None and not any(_same(v, value) for v in before.values()):
            return f"{_field(path)} = {value!r} is cited by no step of the repair"
        if (
            isinstance(value, str)
            and refused_in_task(value, text)
            and not _takes_refusals(path, (descriptions or {}).get(path, ""))
        ):
            return f"{_field(path)} = {value!r}, and the task writes it only to refuse it"
    if text:
        read = [s for s in used if s.strategy in _READING and isinstance(s.after, (str, int))]
        # the fields a task token fills: those the call sent it in, kept, and those read
        holders: dict[str, list[str]] = {}
        for path, value in before.items():
            if (
                isinstance(value, (str, int))
                and path in after
                and _same(after[path], value)
                and (task_states(value, text))
            ):
                holders.setdefault(str(value).lower(), []).append(_field(path))
        for step in read:
            key = str(step.after).lower()
            if isinstance(step.after, bool) or (len(key) < 2 and not isinstance(step.after, int)):
                continue
            fields = holders.setdefault(key, [])
            if step.field not in fields:
                fields.append(step.field)
            if len(fields) > 1 and _mentions(text, key, len(fields)) < len(fields):
                return (
                    f"{step.after!r} fills both {fields[0]} and {step.field}, and the task "
                    "writes it " + _times(_mentions(text, key, len(fields)))
                )
    for path, value in before.items():
        if path not in after or after[path] == value or not isinstance(value, str):
            continue
        sent = currency_of(value)
        wanted = described_currency((descriptions or {}).get(path, ""))
        if sent and wanted and _other_currency(sent, wanted):
            return (
                f"{value!r} is in {sent}, and {_field(path)} is in {wanted}: converting it "
                "is for a tool the user supplies"
            )
    return None


#: Words by which a field holds what the user does not want ("avoid", "exclude_tags"): the
#: task refusing a value is then what puts it there.
_REFUSAL_FIELDS = re.compile(
    r"avoid|exclu|except|without|skip|ignor|block|deny|denied|ban|omit|negative|forbid|reject",
    re.IGNORECASE,
)


def _takes_refusals(path: tuple[str | int, ...], description: str) -> bool:
    """Whether the field at ``path`` (or an object or list holding it) holds what is not
    wanted, by its name's words or its description."""
    names = " ".join(str(p) for p in path if isinstance(p, str))
    return bool(_REFUSAL_FIELDS.search(names) or _REFUSAL_FIELDS.search(description[:500]))


def _spoken(value: Any) -> str | None:
    from .reconcile import spoken_email

    return spoken_email(value) if isinstance(value, str) else None


def _serialised(
    path: tuple[str | int, ...], original: Any, after: Mapping[tuple[str | int, ...], Any]
) -> bool:
    """Whether an object or list holding ``path`` is now JSON text of that same object."""
    for depth in range(len(path) - 1, 0, -1):
        text = after.get(path[:depth])
        if isinstance(text, str) and text[:1] in "{[":
            try:
                return bool(json.loads(text) == get(original, path[:depth]))
            except (ValueError, KeyError, IndexError, TypeError):
                return False
    return False


def _survives(
    value: Any,
    path: tuple[str | int, ...],
    before: Mapping[tuple[str | int, ...], Any],
    after_values: list[Any],
    text: str,
    *,
    exact: bool = False,
) -> bool:
    """Whether a value the task states is still in the repaired call: as many copies as the
    call held, or, where the call held it twice and the task writes it once, one copy (one
    task token fills one field). Another field's value equal only up to case is another
    value (``id`` kept is not ``Id`` kept)."""
    kept = sum(_same(v, value) or (not exact and _holds(v, value)) for v in after_values)
    others = [v for p, v in before.items() if p != path and (_same(v, value) or _holds(v, value))]
    if kept > len(others):
        return True
    if not kept or not others or any(not (type(v) is type(value) and v == value) for v in others):
        return False
    written = str(value).strip()
    mentions, at = 0, find_word(text, written)
    while at >= 0 and mentions <= len(others):
        mentions, at = mentions + 1, find_word(text, written, at + 1)
    return mentions <= len(others)


_NUMBER = re.compile(r"(?:(?<![\w.])-)?\d+(?:\.\d+)?")  # "2026-12-15" holds no -12


def _spread(value: Any, before: Mapping[Any, Any], after: Mapping[Any, Any]) -> bool:
    """Whether a value that left its field is carried whole by the call's new values: split
    into parts ("Alice and Bob" as two names, "52.52, 13.40" as a latitude and a longitude)
    or merged into one ("-l" into "ls -l"). Every number of it is a new value's number, and
    every word of it a new value's word but one between two others (the "and" of a pair)."""
    if not isinstance(value, str):
        return False
    new = [v for p, v in after.items() if not (p in before and _same(before[p], v))]
    new_words = {w for v in new for w in _tokens(str(v)) if not w.isdigit()}
    new_numbers: set[float] = set()
    for v in new:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            new_numbers.add(float(v))
        elif isinstance(v, str):
            new_numbers.update(float(n) for n in _NUMBER.findall(v))
    numbers = [float(n) for n in _NUMBER.findall(value)]
    words = [w for w in _tokens(_NUMBER.sub(" ", value)) if w]
    if not words and not numbers:
        return False
    if any(n not in new_numbers for n in numbers):
        return False
    missing = [i for i, w in enumerate(words) if w not in new_words]
    return not missing or (len(missing) == 1 and 0 < missing[0] < len(words) - 1)


def _same(a: Any, b: Any) -> bool:
    if type(a) is type(b) and a == b:
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, str) and isinstance(b, str):
        return _norm(a) == _norm(b) and bool(_norm(a))
    if isinstance(b, str) and isinstance(a, (int, float)):
        return _norm(b) == _norm(str(a))
    return bool(a == b)


def _holds(container: Any, value: Any) -> bool:
    """Whether a text holds the whole of a value, word for word (``ENG-77`` holds 77,
    ``SKU-1180-B`` holds ``SKU-1180``): a fuller writing of the same thing."""
    if isinstance(value, bool) or not isinstance(container, str):
        return False
    text = str(value) if isinstance(value, (int, float)) else value
    if not isinstance(text, str) or len(_norm(text)) < 2:
        return False
    if isinstance(value, str) and len(value) < 3:
        return False
    # whole words of it, in order: "2026-03-01" holds no 301
    inner, outer = _tokens(text), _tokens(container)
    return any(outer[i : i + len(inner)] == inner for i in range(len(outer) - len(inner) + 1))


def _tokens(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def _renamed(path: tuple[str | int, ...], steps: Sequence[RepairStep]) -> tuple[str | int, ...]:
    """Where the rename steps moved the key at ``path`` (its own key or a parent's)."""
    for step in steps:
        if step.strategy != "rename_key" or not isinstance(step.after, str):
            continue
        for depth in range(len(path), 0, -1):
            if _field(path[:depth]) == step.field:
                path = (*path[: depth - 1], step.after, *path[depth:])
                break
    return path


def _step_at(steps: Sequence[RepairStep], path: tuple[str | int, ...]) -> RepairStep | None:
    """The last step whose field is ``path`` or holds it (a step on a list or object)."""
    shown = _field(path)
    found = None
    for step in steps:
        if (
            shown == step.field
            or shown.startswith(step.field + ".")
            or shown.startswith(step.field + "[")
            or (step.field == "(arguments)" and step.strategy != "json_repair")
        ):  # reading JSON text changes no value: it cites none
            found = step
    return found


def _field(path: tuple[str | int, ...]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(arguments)"


def _times(count: int) -> str:
    return {0: "nowhere", 1: "once", 2: "twice"}.get(count, f"{count} times")


def _mentions(text: str, key: str, enough: int = 2) -> int:
    """How often the task writes ``key`` as words of its own, counted up to ``enough``."""
    lowered, count, at = text.casefold(), 0, 0
    while count < enough:
        at = find_word(lowered, key.casefold(), at)
        if at < 0:
            break
        count, at = count + 1, at + 1
    return count


@lru_cache(maxsize=1)
def _signs() -> dict[str, str]:
    """Currency signs and the currency they name, from Unicode's own names."""
    found: dict[str, str] = {}
    for code in range(0x20, 0x20C1):
        char = chr(code)
        if unicodedata.category(char) == "Sc" and char != "\u00a4":  # ¤ names no currency
            name = unicodedata.name(char, "").lower().replace(" sign", "")
            found[char] = name.split()[-1] if name else char
    return found


_CODE = re.compile(r"(?<![A-Za-z])([A-Z]{3})(?![A-Za-z])")


def currency_of(text: str) -> str | None:
    """The currency an amount is written in: a sign's name (``$`` -> ``dollar``) or an ISO
    4217-shaped code next to a number (``25 USD``); None for a bare number."""
    head = text[:200]
    if not re.search(r"\d", head):
        return None
    for char in head:
        if char in _signs():
            return _signs()[char]
    code = _CODE.search(head)
    return str(code[1]).lower() if code else None


def _other_currency(sent: str, wanted: str) -> bool:
    """Whether two currencies, each a code, sign name or English name (``usd``, ``euro``),
    cannot be the same: by their ISO 4217 codes from CLDR (:mod:`.money`) where both are
    known (``usd`` is no ``euro``), else as written, a code against a code, a name against a
    name."""
    from .money import currency_codes

    codes, wanted_codes = set(currency_codes(sent)), set(currency_codes(wanted))
    if codes and wanted_codes:
        return not codes & wanted_codes
    return sent != wanted and (len(sent) == 3) == (len(wanted) == 3)


def described_currency(description: str) -> str | None:
    """The currency a field's description states (``in euros``, ``in USD``, ``€``)."""
    head = description[:1000]
    for char in head:
        if char in _signs():
            return _signs()[char]
    words = re.findall(r"[a-z]+", head.lower())
    for word in words:
        stem = word[:-1] if word.endswith("s") else word
        if stem in _signs().values() and len(stem) > 2 and stem != "cent":  # a minor unit
            return str(stem)
    code = re.search(r"\bin ([A-Z]{3})\b", head)
    return str(code[1]).lower() if code else None
