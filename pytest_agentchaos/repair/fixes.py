"""What a repair strategy answers: a fix with its confidence, or a decline with its reason."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DROP",
    "WEAK_EVIDENCE",
    "Context",
    "Decline",
    "Fix",
    "matches_pattern",
    "schema_types",
    "shown",
]


class _Drop:
    """The value of a fix that removes its key."""

    def __repr__(self) -> str:
        return "DROP"


#: The evidence a rule may choose a value from that is a guess among plausible values: with
#: a model proposer, the problem is the model's to answer first (see :attr:`Fix.evidence`).
WEAK_EVIDENCE = frozenset({"similarity", "containment", "cue"})

#: A :class:`Fix` whose value is ``DROP`` removes the key.
DROP: Any = _Drop()


@dataclass(frozen=True)
class Fix:
    """A strategy's repair of one value: the new value (``DROP`` to remove the key), how sure
    it is (0 to 1) and why, in words a reader of the report understands."""

    strategy: str
    value: Any
    confidence: float
    reason: str
    #: Where the value came from, when a rule chose it from weak evidence: ``similarity``
    #: (a near spelling), ``containment`` (the value holds an allowed one), ``cue`` (a word
    #: such as "off" read as a polarity). ``""``: from the schema, the error's or the task's
    #: own span, or standard data. A weak fix is offered to a model proposer first.
    evidence: str = ""


@dataclass(frozen=True)
class Decline:
    """A strategy saw what is wrong and will not fix it: the fix would change what was asked
    (or it cannot tell which fix is meant).

    ``beside`` names the other fields the decision involves (a sign that may be what a mode
    beside should say): no proposal for this field alone, a model's included, can settle it."""

    strategy: str
    reason: str
    beside: tuple[str, ...] = ()


@dataclass(frozen=True)
class Context:
    """What a strategy may read besides the value: the field's name, the whole arguments,
    the task's text, the run's clock (``now``), the policy's tables and the field's
    description."""

    name: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    task: str | None = None
    now: _dt.datetime | None = None
    synonyms: Mapping[str, Any] = field(default_factory=dict)
    fuzzy_score: float = 85.0
    #: The field's description (from its schema), cut to 2,000 characters.
    description: str = ""
    #: The fields beside this one that offer a choice of values (an enum): a mode or a
    #: direction there may be what a sign or a word of this value means.
    choices_beside: tuple[str, ...] = ()


def schema_types(schema: Mapping[str, Any]) -> list[str]:
    """The JSON types a schema allows (``[]`` when it does not say): its ``type``, or what its
    ``enum``/``const`` values are."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return []


def shown(value: Any, limit: int = 60) -> str:
    """``repr(value)`` for a reason, cut to ``limit`` characters (a 10 MB value must not make
    a 10 MB message) and never raising."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def matches_pattern(text: Any, pattern: Any) -> bool:
    """Whether ``text`` is a text that a schema's ``pattern`` finds (``re.search``, as JSON
    Schema reads it); False for a pattern Python cannot compile."""
    try:
        return isinstance(text, str) and re.search(str(pattern), text) is not None
    except re.error:
        return False
