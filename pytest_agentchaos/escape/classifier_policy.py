"""``ClassifierPolicy``: the classifier's tables and escalation settings, from a profile.

An ``[escape.classifier]`` table extends the default tables of :mod:`.error_tables`: ``status``
(``{"409" = "server_error"}``, ``"4xx"``/``"5xx"`` for the rest of a class), ``exceptions``
(class name -> category) and ``patterns`` (category -> regexes, tried before the built-in ones),
and sets ``escalate``, ``escalate_after`` and ``window``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, cast

from ..config import Validator, boolean, check_fields, count, fail, parse_table
from ..saferepr import short
from .error_tables import (
    CATEGORIES,
    CATEGORY_KINDS,
    DEFAULT_EXCEPTIONS,
    DEFAULT_STATUS,
    DEFAULT_STATUS_CLASSES,
    KINDS,
    Category,
    Kind,
    MessageRule,
    Verdict,
)

_DEFAULT_AFTER = 5
_DEFAULT_WINDOW = 10


@dataclass(frozen=True, slots=True)
class ClassifierPolicy:
    """The classifier's tables and escalation settings; plain data from a profile.

    ``patterns`` are extra message rules, tried before the built-in ones. Escalation: a
    transient failure of a tool becomes persistent when, among that tool's last ``window``
    outcomes since its last success (this failure included), at least ``escalate_after`` were
    transient failures.
    """

    status: Mapping[int, Verdict] = field(default_factory=lambda: DEFAULT_STATUS)
    status_classes: Mapping[int, Verdict] = field(default_factory=lambda: DEFAULT_STATUS_CLASSES)
    exceptions: Mapping[str, Verdict] = field(default_factory=lambda: DEFAULT_EXCEPTIONS)
    patterns: tuple[MessageRule, ...] = ()
    escalate: bool = True
    escalate_after: int = _DEFAULT_AFTER
    window: int = _DEFAULT_WINDOW

    def __post_init__(self) -> None:
        check_fields(self, _ESCALATION, "ClassifierPolicy")
        _check_window(self.escalate_after, self.window, "ClassifierPolicy")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "classifier") -> ClassifierPolicy:
        """Validate an ``[escape.classifier]`` table; entries extend the default tables.

        Keys: ``status`` (``{"409" = "server_error"}``, ``"4xx"``/``"5xx"`` for the rest of a
        class), ``exceptions`` (class name -> category), ``patterns`` (category -> regexes),
        ``escalate``, ``escalate_after``, ``window``. A table entry is a category name or
        ``{category = ..., kind = ...}`` (either may be left out). Errors name ``where``, the
        key and what is allowed.
        """
        values = parse_table(raw, _FIELDS, where, "classifier")
        status, classes = values.get("status", (DEFAULT_STATUS, DEFAULT_STATUS_CLASSES))
        after = values.get("escalate_after", _DEFAULT_AFTER)
        window = values.get("window", max(_DEFAULT_WINDOW, after))
        _check_window(after, window, where)
        return cls(
            status=MappingProxyType(dict(status)),
            status_classes=MappingProxyType(dict(classes)),
            exceptions=MappingProxyType(dict(values.get("exceptions", DEFAULT_EXCEPTIONS))),
            patterns=values.get("patterns", ()),
            escalate=values.get("escalate", True),
            escalate_after=after,
            window=window,
        )

    def status_verdict(self, status: int) -> Verdict | None:
        """What an HTTP status means; ``None`` for statuses that are not errors."""
        verdict = self.status.get(status)
        if verdict is None:
            verdict = self.status_classes.get(status // 100)
        return verdict


def _check_window(after: int, window: int, where: str) -> None:
    """The cross-field rule: a window too short to hold ``escalate_after`` failures would
    never escalate."""
    if window < after:
        raise fail(f"{where}: window", f"must be >= escalate_after ({after}), got {short(window)}")


# -- the tables -------------------------------------------------------------------------------


def _mapping(value: Any, where: str) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise fail(where, f"expected a table/dict, got {short(value)}")
    return value


def _status_table(value: Any, where: str) -> tuple[Mapping[int, Verdict], Mapping[int, Verdict]]:
    """``status``: HTTP status (or ``4xx``/``5xx``) -> verdict, over the default tables."""
    status = dict(DEFAULT_STATUS)
    classes = dict(DEFAULT_STATUS_CLASSES)
    for key, entry in _mapping(value, where).items():
        at = f"{where}.{key}"
        text = str(key).strip().lower()
        if text in ("4xx", "5xx"):
            digit = int(text[0])
            classes[digit] = _verdict(entry, classes[digit], at)
            continue
        code = _status_key(key)
        if code is None:
            raise fail(at, "expected an HTTP status 100-599, '4xx' or '5xx' as the key")
        status[code] = _verdict(entry, status.get(code), at)
    return status, classes


def _exceptions_table(value: Any, where: str) -> Mapping[str, Verdict]:
    """``exceptions``: exception class name -> verdict, over the default table."""
    exceptions = dict(DEFAULT_EXCEPTIONS)
    for key, entry in _mapping(value, where).items():
        at = f"{where}.{key}"
        if not isinstance(key, str) or not key.isidentifier():
            raise fail(at, "expected an exception class name (e.g. 'ReadTimeout') as the key")
        exceptions[key] = _verdict(entry, exceptions.get(key), at)
    return exceptions


def _patterns_table(value: Any, where: str) -> tuple[MessageRule, ...]:
    """``patterns``: category -> a regex or a list of them (or of ``{pattern, kind}``)."""
    rules: list[MessageRule] = []
    for key, entry in _mapping(value, where).items():
        at = f"{where}.{key}"
        category = _category(key, at)
        items = [entry] if isinstance(entry, (str, Mapping)) else entry
        if not isinstance(items, list):
            raise fail(at, f"expected a list of regular expressions, got {short(entry)}")
        rules.extend(_rule(category, item, f"{at}[{i}]") for i, item in enumerate(items))
    return tuple(rules)


#: The escalation settings, checked on every policy (also one built in code).
_ESCALATION: dict[str, Validator] = {
    "escalate": boolean,
    "escalate_after": count(),
    "window": count(),
}

#: Every key of an ``[escape.classifier]`` table, in the order errors list them.
_FIELDS: dict[str, Validator] = {
    "status": _status_table,
    "exceptions": _exceptions_table,
    "patterns": _patterns_table,
    **_ESCALATION,
}


def _status_key(key: Any) -> int | None:
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        code = key
    elif isinstance(key, str) and key.strip().isdigit():
        code = int(key)
    else:
        return None
    return code if 100 <= code <= 599 else None


def _category(value: Any, at: str) -> Category:
    if value not in CATEGORIES:
        raise fail(at, f"unknown category {short(value)}; allowed: {', '.join(CATEGORIES)}")
    return cast(Category, value)


def _kind(value: Any, at: str) -> Kind:
    if value not in KINDS:
        raise fail(at, f"unknown kind {short(value)}; allowed: {', '.join(KINDS)}")
    return cast(Kind, value)


def _verdict(value: Any, default: Verdict | None, at: str) -> Verdict:
    """A category name, or ``{category, kind}`` with either left to ``default``/the category."""
    if isinstance(value, str):
        category = _category(value, at)
        return CATEGORY_KINDS[category], category
    if not isinstance(value, Mapping) or not value:
        raise fail(
            at, f"expected a category name or {{category = ..., kind = ...}}, got {short(value)}"
        )
    extra = sorted(str(k) for k in value if k not in ("category", "kind"))
    if extra:
        raise fail(at, f"unknown key {short(extra[0])}; allowed: category, kind")
    if "category" in value:
        category = _category(value["category"], f"{at}.category")
    else:
        category = default[1] if default is not None else "unknown"
    kind = _kind(value["kind"], f"{at}.kind") if "kind" in value else CATEGORY_KINDS[category]
    return kind, category


def _rule(category: Category, item: Any, at: str) -> MessageRule:
    kind: Kind | None = None
    regex = item
    if isinstance(item, Mapping):
        extra = sorted(str(k) for k in item if k not in ("pattern", "kind"))
        if extra or "pattern" not in item:
            raise fail(at, "expected a regex or {pattern = ..., kind = ...}")
        regex = item["pattern"]
        kind = _kind(item["kind"], f"{at}.kind") if "kind" in item else None
    if not isinstance(regex, str) or not regex:
        raise fail(at, f"expected a non-empty regular expression, got {short(regex)}")
    try:
        return MessageRule.of(category, regex, kind)
    except re.error as exc:
        raise fail(at, f"invalid regular expression {short(regex)}: {exc}") from None
