"""``EscapePolicy``: every threshold of the escape stack, from a profile's ``[escape]`` table.

Profiles deep-merge ``[escape]`` across ``extends``, so a profile may override one threshold of
its parent's and keep the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config import Validator, check_fields, check_table, choice, fail, number, one_or_many
from ..saferepr import short
from .backoff import BackoffPolicy
from .breaker import BreakerPolicy
from .classifier_policy import ClassifierPolicy
from .interventions import LADDER
from .loops import LoopPolicy


@dataclass(frozen=True)
class EscapePolicy:
    """Loop detection, error classification, backoff and breaker settings, plus how long a
    call may wait for an open breaker's probe before it gives up on the tool."""

    loops: LoopPolicy = field(default_factory=LoopPolicy)
    classifier: ClassifierPolicy = field(default_factory=ClassifierPolicy)
    backoff: BackoffPolicy = field(default_factory=BackoffPolicy)
    breaker: BreakerPolicy = field(default_factory=BreakerPolicy)
    max_breaker_wait: float = 60.0
    #: the rungs tried, in order, while a loop persists (see ``interventions.LADDER``)
    interventions: tuple[str, ...] = ("retry", "explore", "rollback", "escalate", "stop")

    def __post_init__(self) -> None:
        check_fields(self, _SETTINGS, "EscapePolicy")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "[escape]") -> EscapePolicy:
        """Validate an ``[escape]`` table: the tables ``loops``, ``classifier``, ``backoff`` and
        ``breaker`` (each validated by its policy) and the keys ``max_breaker_wait`` and
        ``interventions``. Errors name ``where``, the key and what is allowed."""
        table = check_table(raw, _FIELDS, where, "escape")
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key in _TABLES:  # a nested table is named as in the profile: [escape.loops]
                values[key] = _TABLES[key](value, _nested(where, key))
            else:
                values[key] = _SETTINGS[key](value, f"{where}: {key}")
        return cls(**values)


def _nested(where: str, name: str) -> str:
    """``"x.toml: [escape]"`` -> ``"x.toml: [escape.loops]"``."""
    return f"{where[:-1]}.{name}]" if where.endswith("]") else f"{where}.{name}"


_RUNGS = one_or_many(choice(LADDER))


def _ladder(value: Any, where: str) -> tuple[str, ...]:
    """A non-empty list of rungs of :data:`~.interventions.LADDER`, in the order tried."""
    if not isinstance(value, (list, tuple)):
        raise fail(where, f"expected a list of {', '.join(LADDER)}, got {short(value)}")
    rungs: tuple[str, ...] = _RUNGS(value, where)
    return rungs


#: The settings of an :class:`EscapePolicy` besides its tables, checked on every policy.
_SETTINGS: dict[str, Validator] = {
    # inf: wait for an open breaker's probe however far off it is
    "max_breaker_wait": number(minimum=0, unit="seconds", finite=False),
    "interventions": _ladder,
}

#: The nested tables of an ``[escape]`` table and their parsers.
_TABLES: dict[str, Validator] = {
    "loops": LoopPolicy.from_dict,
    "classifier": ClassifierPolicy.from_dict,
    "backoff": BackoffPolicy.from_dict,
    "breaker": BreakerPolicy.from_dict,
}

#: Every key of an ``[escape]`` table, in the order errors list them.
_FIELDS: dict[str, Validator] = {**_TABLES, **_SETTINGS}
