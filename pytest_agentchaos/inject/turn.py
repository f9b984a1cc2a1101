"""A model turn as the trace shows it, and the new words a fault gives a replayed turn.
Shared by every model seam (the framework adapters, the scripted provider endpoints)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..saferepr import safe_repr
from .call import CallState

__all__ = ["describe_turn", "transformed"]

#: The most characters of one tool call's arguments shown in a model turn.
_ARGS = 2000


def describe_turn(text: str, calls: Iterable[tuple[str, Any]] = ()) -> str:
    """A model turn as the trace shows it and the halt monitor reads it: its text, then one
    line per tool call it asked for (``-> search({"q": "x"})``), so a model that asks for the
    same call again repeats itself even when it says nothing."""
    lines = [text] if text else []
    for name, args in calls:
        try:
            shown = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
        except Exception:
            shown = safe_repr(args, _ARGS)
        lines.append(f"-> {name}({shown[:_ARGS]})")
    return "\n".join(lines)


def transformed(state: CallState, text: str) -> str | None:
    """The text a fault's transform makes of ``text`` (a paraphrase), or ``None`` when the
    call's effect has no transform or it leaves the text as it was."""
    effect = state.effect
    if effect is None or effect.transform is None or not text:
        return None
    new = effect.transform(text)
    return new if isinstance(new, str) and new != text else None
