"""How far repair goes: the policy of a ``ParamRepairer``, and the ``[repair]`` profile table."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .error_patterns import ErrorPattern

__all__ = ["STRATEGIES", "RepairPolicy"]

#: Every strategy's name, as a policy's ``strategies`` table turns them on and off.
STRATEGIES = (
    "default_value_assignment",
    "infer_missing_param",
    "llm_infer_missing_param",
    "rename_key",
    "drop_unknown_key",
    "schema_type_conversion",
    "wrap_in_list",
    "wrap_in_object",
    "split_compound",
    "unwrap_list",
    "enum_value_correction",
    "date_format_correction",
    "format_correction",
    "pattern_correction",
    "clamp_value",
    "length_correction",
    "timezone_correction",
    "date_year_correction",
    "drop_exclusive_key",
    "rejected_value_correction",
    "unit_conversion",
    "json_repair",
    "model_proposal",
    "unwrap_object",
    "range_order_correction",
    "person_name_correction",
)
#: What a declined repair may name as its strategy besides those (not switches).
DECLINERS = ("retry", "alternative_route", "report_unrecoverable", "intent_audit")


@dataclass(frozen=True)
class RepairPolicy:
    """How far repair goes.

    ``threshold``: the least confidence a fix needs to be used (below it, the repairer
    declines with the fix's reason). ``max_attempts``: tool calls :meth:`ParamRepairer.call`
    makes after the first. ``strategies``: ``{name: False}`` turns a strategy off.
    ``synonyms``: enum synonyms, ``{word: value}`` or ``{field: {word: value}}``.
    ``fuzzy_score``: the least rapidfuzz ratio (0-100) for a misspelt enum value.
    ``error_patterns``: rows read before the default table (:data:`~.diagnose.ERROR_PATTERNS`).
    """

    threshold: float = 0.8
    max_attempts: int = 3
    strategies: Mapping[str, bool] = field(default_factory=dict)
    synonyms: Mapping[str, Any] = field(default_factory=dict)
    fuzzy_score: float = 85.0
    error_patterns: Sequence[ErrorPattern] = ()

    def __post_init__(self) -> None:
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"RepairPolicy.threshold must be within 0..1, got {self.threshold!r}")
        if not isinstance(self.max_attempts, int) or self.max_attempts < 0:
            raise ValueError(f"RepairPolicy.max_attempts must be >= 0, got {self.max_attempts!r}")
        unknown = sorted(set(self.strategies) - set(STRATEGIES))
        if unknown:
            raise ValueError(
                f"RepairPolicy.strategies: unknown strategy {unknown[0]!r} "
                f"(known: {', '.join(STRATEGIES)})"
            )
        if not isinstance(self.synonyms, Mapping):
            raise ValueError(
                f"RepairPolicy.synonyms must be a table of word -> value, got {self.synonyms!r}"
            )
        if isinstance(self.max_attempts, bool):
            raise ValueError("RepairPolicy.max_attempts must be a number, not true/false")
        if not isinstance(self.error_patterns, (list, tuple)) or not all(
            isinstance(p, ErrorPattern) for p in self.error_patterns
        ):
            raise ValueError("RepairPolicy.error_patterns must be a list of ErrorPattern")
        if not 0 <= self.fuzzy_score <= 100:
            raise ValueError(
                f"RepairPolicy.fuzzy_score must be within 0..100, got {self.fuzzy_score!r}"
            )

    def allows(self, strategy: str) -> bool:
        """Whether ``strategy`` is on."""
        return self.strategies.get(strategy, True)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "[repair]") -> RepairPolicy:
        """Validate a profile's ``[repair]`` table: ``threshold``, ``max_attempts``,
        ``fuzzy_score``, ``strategies`` (``{name = false}``), ``synonyms`` (``{word = value}``
        or ``{field = {word = value}}``) and ``error_patterns`` (a list of ``{name, regex,
        kind, keyword}`` read before the defaults). Errors name ``where`` and the key."""
        from ..config import check_table, fail, integer, number

        table = check_table(raw, _POLICY_KEYS, where, "repair")
        values: dict[str, Any] = {}
        if "threshold" in table:
            values["threshold"] = number(minimum=0, maximum=1)(
                table["threshold"], f"{where}: threshold"
            )
        if "max_attempts" in table:
            values["max_attempts"] = integer(minimum=0)(
                table["max_attempts"], f"{where}: max_attempts"
            )
        if "fuzzy_score" in table:
            values["fuzzy_score"] = number(minimum=0, maximum=100)(
                table["fuzzy_score"], f"{where}: fuzzy_score"
            )
        if "strategies" in table:
            at = f"{where[:-1]}.strategies]" if where.endswith("]") else f"{where}.strategies"
            switches = check_table(table["strategies"], STRATEGIES, at, "strategies")
            for name, on in switches.items():
                if not isinstance(on, bool):
                    raise fail(f"{at}: {name}", f"expected true or false, got {on!r}")
            values["strategies"] = dict(switches)
        if "synonyms" in table:
            synonyms = table["synonyms"]
            if not isinstance(synonyms, Mapping):
                raise fail(f"{where}: synonyms", "expected a table of word = value")
            values["synonyms"] = dict(synonyms)
        if "error_patterns" in table:
            values["error_patterns"] = _patterns(
                table["error_patterns"], f"{where}: error_patterns"
            )
        return cls(**values)


_POLICY_KEYS = (
    "threshold",
    "max_attempts",
    "fuzzy_score",
    "strategies",
    "synonyms",
    "error_patterns",
)


def _patterns(raw: Any, where: str) -> tuple[ErrorPattern, ...]:
    from ..config import fail
    from .spec import PROBLEM_KINDS

    if not isinstance(raw, (list, tuple)):
        raise fail(where, "expected a list of tables {name, regex, kind, keyword}")
    rows = []
    for i, row in enumerate(raw):
        at = f"{where}[{i}]"
        if not isinstance(row, Mapping):
            raise fail(at, f"expected a table {{name, regex, kind}}, got {row!r}")
        unknown = sorted(set(row) - {"name", "regex", "kind", "keyword"})
        if unknown or not {"regex", "kind"} <= set(row):
            raise fail(at, "a row has regex and kind (name and keyword optional)")
        if row["kind"] not in PROBLEM_KINDS:
            raise fail(
                f"{at}: kind", f"expected one of {', '.join(PROBLEM_KINDS)}, got {row['kind']!r}"
            )
        try:
            compiled = re.compile(str(row["regex"]))
        except re.error as exc:
            raise fail(f"{at}: regex", f"does not compile: {exc}") from None
        if "field" not in compiled.groupindex and "fields" not in compiled.groupindex:
            raise fail(f"{at}: regex", "needs a (?P<field>...) group naming the parameter")
        rows.append(
            ErrorPattern(
                str(row.get("name", f"profile_{i}")),
                str(row["regex"]),
                str(row["kind"]),
                str(row.get("keyword", "")),
            )  # fmt: skip
        )
    return tuple(rows)
