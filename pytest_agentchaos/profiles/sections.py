"""The parsers of a profile's stack tables (``[escape]``, ``[repair]``, ``[halt]``, ``[phoenix]``).

Each part of the stack that reads a profile table registers a parser for it here, so a bad table
is a one-line error when the profile loads (naming the file and the key), not when a test first
uses it. A parser takes the merged table and where it came from, validates it completely and
returns the part's policy object; :meth:`Profile.policy` hands that object to the part.

The built-in parsers are registered by dotted path and imported only when a profile has the
table: loading a profile without an ``[escape]`` table does not import the escape stack.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from ..saferepr import short

__all__ = ["SectionParser", "parse_section", "register_section", "sections"]

#: ``parser(table, where) -> policy``; raises ``ChaosConfigError`` for a bad table.
SectionParser = Callable[[Mapping[str, Any], str], Any]


_PARSERS: dict[str, SectionParser | str] = {
    "escape": "pytest_agentchaos.escape.policy:EscapePolicy.from_dict",
    "repair": "pytest_agentchaos.repair.repairer:RepairPolicy.from_dict",
    "halt": "pytest_agentchaos.halt.policy:HaltPolicy.from_dict",
    "phoenix": "pytest_agentchaos.phoenix.policy:PhoenixPolicy.from_dict",
}


def register_section(name: str, parser: SectionParser | str) -> None:
    """Make ``[name]`` a profile table parsed by ``parser`` (a callable, or a lazily imported
    ``"module:attribute.path"``). Re-registering a name replaces its parser."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"a section name must be an identifier, got {short(name)}")
    _PARSERS[name] = parser


def sections() -> tuple[str, ...]:
    """The table names a profile may have besides its own keys."""
    return tuple(_PARSERS)


def _load(ref: str) -> SectionParser:
    module, _, path = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for attr in path.split("."):
        obj = getattr(obj, attr)
    return obj  # type: ignore[no-any-return]


def parse_section(name: str, table: Mapping[str, Any], where: str) -> Any:
    """The policy object of table ``[name]`` (every key checked)."""
    parser = _PARSERS[name]
    if isinstance(parser, str):
        parser = _PARSERS[name] = _load(parser)
    return parser(table, where)
