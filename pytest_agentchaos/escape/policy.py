"""``EscapePolicy``: every threshold of the escape stack, from a profile's ``[escape]`` table.

Profiles deep-merge ``[escape]`` across ``extends``, so a profile may override one threshold of
its parent's and keep the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import config_error
from .backoff import BackoffPolicy
from .breaker import BreakerPolicy
from .classify import ClassifierPolicy
from .interventions import LADDER
from .loops import LoopPolicy

_TABLES = ("loops", "classifier", "backoff", "breaker")
_KEYS = ("max_breaker_wait", "interventions")


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

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "[escape]") -> EscapePolicy:
        """Validate an ``[escape]`` table; errors name the key and what is allowed."""
        if not isinstance(raw, Mapping):
            raise config_error(where, f"expected a table, got {raw!r}")
        unknown = sorted(set(raw) - set(_TABLES) - set(_KEYS))
        if unknown:
            allowed = ", ".join((*(f"[{t}]" for t in _TABLES), *_KEYS))
            raise config_error(where, f"unknown key {unknown[0]!r}; allowed: {allowed}")
        tables: dict[str, Any] = {}
        for name, policy in (
            ("loops", LoopPolicy),
            ("classifier", ClassifierPolicy),
            ("backoff", BackoffPolicy),
            ("breaker", BreakerPolicy),
        ):
            sub = raw.get(name, {})
            if not isinstance(sub, Mapping):
                raise config_error(f"{where}.{name}", f"expected a table, got {sub!r}")
            tables[name] = policy.from_dict(sub, f"{where}.{name}")
        wait = raw.get("max_breaker_wait", 60.0)
        if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not wait >= 0:
            raise config_error(f"{where}: max_breaker_wait", f"expected seconds >= 0, got {wait!r}")
        ladder = raw.get("interventions", cls.interventions)
        if (
            not isinstance(ladder, (list, tuple))
            or not ladder
            or any(step not in LADDER for step in ladder)
        ):
            raise config_error(
                f"{where}: interventions",
                f"expected a non-empty list of {', '.join(LADDER)}, got {ladder!r}",
            )
        return cls(max_breaker_wait=float(wait), interventions=tuple(ladder), **tables)
