"""Choosing and applying the strategy for one problem (the seed's SelectRepairStrategy and
ApplyRepairStrategy): what each kind of problem goes to, renames and drops of keys, the
checks of an inferer's answers, and whether a problem the tool's error named is gone."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..saferepr import safe_str
from .codes import recode
from .coerce import convert
from .date_layouts import fix_date
from .effective import relayout
from .enums import match_enum, normal
from .fixes import DROP, Context, Decline, Fix, schema_types, shown
from .mechanical import clamp, fix_format, fix_length, fix_pattern
from .paths import get, has
from .reconcile import reconcile, stated
from .refused import fix_past, fix_rejected
from .spec import Problem, ToolSpec, checker_for
from .words import find_word

__all__ = [
    "Renamed",
    "as_missing",
    "confidence_ok",
    "for_value",
    "rename_or_drop",
    "satisfied",
    "sound",
]


def for_value(
    kind: str, value: Any, schema: Mapping[str, Any], ctx: Context, expected: Any
) -> Fix | Decline | None:
    if kind == "type":
        if isinstance(value, (int, float)) and "string" in schema_types(schema):
            spelt = reconcile(value, schema, ctx)  # 77 where the task writes ENG-77
            if isinstance(spelt, Fix):
                return spelt
        converted = convert(value, schema, ctx)
        if isinstance(converted, Decline) and isinstance(value, str):
            spelt = reconcile(value, schema, ctx)  # "v2.1" where the task writes "3 (v2.1)"
            if isinstance(spelt, Fix):
                return spelt
        return converted
    if kind == "enum":
        if _everything(value, schema):
            why = f"{value!r} is what leaving the field out gives, its description says"
            return Fix("enum_value_correction", DROP, 0.9, why)
        # the tool's own list (from its error) before the schema's: the tool decides
        allowed = expected if isinstance(expected, list) else schema.get("enum")
        if not isinstance(allowed, list):
            allowed = [expected] if expected is not None else []
        matched = match_enum(value, allowed, ctx)
        if isinstance(matched, Decline) and allowed:
            coded = recode(value, {**schema, "enum": allowed}, ctx)  # "Germany" for "DE"
            return coded if isinstance(coded, Fix) else matched
        own = schema.get("enum")
        if isinstance(matched, Fix) and schema.get("x-listed-by-error"):
            other = _other_listed(value, matched.value, ctx)
            if other is not None:
                return other
        if (
            isinstance(matched, Fix)
            and isinstance(own, list)
            and value in own
            and isinstance(value, str)
            and normal(value) != normal(str(matched.value))
            and not (
                ctx.task and find_word(ctx.task.casefold(), str(matched.value).casefold()) >= 0
            )
        ):
            # a value the schema itself allows, refused by the tool's narrower list, is a
            # choice the model made, not a misspelling of the list's nearest value
            return Decline(
                "enum_value_correction",
                f"{shown(value)} is one of the schema's own values, which the tool refused: "
                f"not a misspelling of {matched.value!r}",
            )
        return matched
    if kind == "format":
        fmt = str(schema.get("format", expected or ""))
        if fmt in ("date", "date-time", "time") or _date_hint(schema) or "x-strftime" in schema:
            return fix_date(
                value, schema if "format" in schema else {**schema, "format": fmt}, ctx
            ) or Decline("date_format_correction", f"{value!r} is already that date")
        return fix_format(value, fmt, ctx)
    if kind == "pattern":
        pattern = schema.get("pattern", expected)
        dated = fix_date(value, schema, ctx)
        mechanical = fix_pattern(value, str(pattern), ctx)
        if isinstance(dated, Decline) and isinstance(mechanical, Fix) and _not_a_date(dated):
            return mechanical  # "+44 7700 900123" for digits alone: no date, a mark too many
        if dated is not None:
            return dated
        example = schema.get("x-layout-example")
        if isinstance(mechanical, Decline) and isinstance(value, str) and example:
            laid = relayout(value, str(example))  # the marks of the description's example
            if laid is not None:
                why = f"{shown(value)} with the marks of the described format {example!r}"
                return Fix("pattern_correction", laid, 0.9, why)
        if isinstance(mechanical, Decline):
            coded = recode(value, schema, ctx)  # "Germany" for "DE", "euros" for "EUR"
            if isinstance(coded, Fix):
                return coded
            spelt = reconcile(value, schema, ctx)  # the task writes the value that matches
            return spelt if isinstance(spelt, Fix) else mechanical
        return mechanical
    if kind == "range":
        return clamp(value, schema, ctx)
    if kind == "length":
        return fix_length(value, schema, ctx)
    if kind == "past":
        return fix_past(value, ctx)
    if kind == "rejected":
        return fix_rejected(value, schema, ctx, not_found=expected == "not_found")
    return None


def _not_a_date(declined: Decline) -> bool:
    """Whether a date repair declined because the value reads as no date at all."""
    return declined.reason.endswith("is not a date")


def _other_listed(value: Any, chosen: Any, ctx: Context) -> Decline | None:
    """A decline when the task writes ``value`` just as it was sent and the value chosen from
    the tool's own list (the branches or jobs it has) is another name, not the same one written
    differently (``release/2026.11`` for ``release/2026-11``) or in full (``e2e-chrome`` for
    ``e2e``, ``rm-everest`` for ``Everest``): ``dev`` is no ``develop`` the user asked for,
    the tool does not have it."""
    if not (isinstance(value, str) and isinstance(chosen, str) and ctx.task):
        return None
    if not stated(value, ctx.task):
        return None
    sent, listed = normal(value), normal(chosen)
    if f" {sent} " in f" {listed} ":  # the same words, or them among more (rm-everest)
        return None
    return Decline(
        "enum_value_correction",
        f"the task writes {shown(value)} as it was sent, and the tool lists no such value: "
        f"{chosen!r} is another one",
    )


_ALL = frozenset({"all", "any", "both", "every", "everything", "*"})
_BY_DEFAULT = re.compile(
    r"\b(?:by default|default(?:s)? to|if (?:not|none|omitted|unset|empty)|when (?:not|none"
    r"|omitted|unset|empty)|omit|leave (?:it )?(?:out|empty|blank))\b[^.]{0,80}?"
    r"\b(?:all|both|any|every)\b"
    r"|\b(?:all|both)\b[^.]{0,80}?\b(?:by default|if (?:not|omitted)|when (?:not|omitted))\b",
    re.IGNORECASE,
)


def _everything(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``value`` asks for every value ("all") of a filter whose description says that
    leaving it out gives them all: the field is to be left out."""
    if not isinstance(value, str) or value.strip().lower() not in _ALL:
        return False
    return bool(_BY_DEFAULT.search(str(schema.get("description", ""))[:2000]))


def _date_hint(schema: Mapping[str, Any]) -> bool:
    return bool(re.search(r"[DMY]{2,4}[/.\-][DMY]{2,4}", str(schema.get("description", ""))))


def kind_of(keyword: str) -> str:
    from .spec import _KIND_OF

    return _KIND_OF.get(keyword, "other")


def rename_or_drop(
    problem: Problem, value: Any, current: dict[str, Any], spec: ToolSpec, missing: list[Problem]
) -> Fix | Decline:
    if not problem.path:  # the tool refuses a parameter without saying which
        return Decline("drop_unknown_key", "the tool refuses a parameter it does not name")
    name = str(problem.path[-1])
    parent = problem.path[:-1]
    siblings = spec.schema_at(parent).get("properties", {})
    present = get(current, parent) if parent else current
    free = [k for k in siblings if not (isinstance(present, Mapping) and k in present)]
    target = _closest_name(name, free)
    if target is not None:
        confidence, how = target[1], target[2]
        return Fix(
            "rename_key",
            Renamed(target[0], value),
            confidence,
            f"{name!r} is the parameter {target[0]!r} {how}",
            "similarity" if how == _MISSPELT else "",
        )
    if name in siblings:  # the tool's error refuses a parameter its schema declares
        return Decline(
            "drop_unknown_key",
            f"the tool refuses {name!r}, which its schema declares: dropping it would change "
            "the request",
        )
    wanted = [str(p.path[-1]) for p in missing if p.path[:-1] == parent]
    if wanted:
        return Decline(
            "drop_unknown_key",
            f"{name!r} is no parameter, and {', '.join(map(repr, wanted))} is missing: "
            "dropping it may lose what was meant",
        )
    # with parameters of its object left unsent, the key may be one of them under another
    # name no spelling rule links (a model proposer may name it): dropping it is a guess
    return Fix("drop_unknown_key", DROP, 0.9, f"{name!r} is not a parameter of this tool",
               "similarity" if free else "")  # fmt: skip


_MISSPELT = "misspelt"


def _closest_name(name: str, free: list[str]) -> tuple[str, float, str] | None:
    squashed = re.sub(r"[\W_]+", "", name).lower()
    same = [k for k in free if re.sub(r"[\W_]+", "", k).lower() == squashed]
    if len(same) == 1:
        return same[0], 0.97, "written in another case or with other separators"
    plural = [
        k for k in free if re.sub(r"[\W_]+", "", k).lower().rstrip("s") == squashed.rstrip("s")
    ]
    if len(plural) == 1:
        return plural[0], 0.93, "in the singular or plural"
    if not free:
        return None
    from rapidfuzz import fuzz, process

    scored = process.extract(normal(name), {k: normal(k) for k in free}, scorer=fuzz.ratio, limit=2)
    if scored and scored[0][1] >= 85 and (len(scored) < 2 or scored[0][1] - scored[1][1] >= 8):
        return scored[0][2], 0.85, _MISSPELT
    return None


def as_missing(problem: Problem) -> Problem:
    return Problem(
        "missing",
        problem.path,
        problem.message,
        problem.keyword,
        problem.expected,
        None,
        problem.schema,
        problem.source,
    )


class Renamed(tuple):  # type: ignore[type-arg]
    """The value of a rename fix: the parameter a key is moved to, and the key's value."""

    __slots__ = ()

    def __new__(cls, target: str, value: Any) -> Renamed:
        return tuple.__new__(cls, (target, value))

    @property
    def target(self) -> str:
        return str(self[0])

    @property
    def value(self) -> Any:
        return self[1]


_INFERRED = frozenset({"infer_missing_param", "llm_infer_missing_param"})


def confidence_ok(confidence: Any) -> bool:
    return (
        isinstance(confidence, (int, float))
        and not isinstance(confidence, bool)
        and 0.0 <= confidence <= 1.0
    )


def sound(answer: Any, names: tuple[str, ...]) -> dict[str, Fix]:
    """An inferer's answer as fixes of the missing names only, each labelled as inferred
    (whatever strategy it claims: the policy's switches for inference apply to it)."""
    if not isinstance(answer, Mapping):
        return {}
    found: dict[str, Fix] = {}
    for name in names:
        fix = answer.get(name)
        if isinstance(fix, Fix) and confidence_ok(fix.confidence):
            strategy = fix.strategy if fix.strategy in _INFERRED else "infer_missing_param"
            found[name] = Fix(strategy, fix.value, fix.confidence, safe_str(fix.reason, 300))
    return found


def satisfied(problem: Problem, current: Mapping[str, Any]) -> bool:
    """Whether a problem the tool's error named is gone, judged by what the error said."""
    if problem.kind == "missing":
        return has(current, problem.path)
    if problem.kind == "unknown":
        return not has(current, problem.path)
    if problem.kind == "exclusive":
        return sum(has(current, (str(n),)) for n in problem.expected or ()) <= 1
    if not has(current, problem.path):
        return False
    if not problem.schema:
        return True
    return bool(checker_for(problem.schema).is_valid(get(current, problem.path)))
