"""One proposer interface for every kind of problem: ``(problem, call, context) -> candidates``.

The repairer asks its rule proposers first (the strategies for each problem kind, the rule
inferer for missing values) and an optional model proposer last, for any problem the rules
decline: a missing value at any depth, a refused value, a misnamed key. A candidate is a
value for the problem's path (:data:`~.fixes.DROP` to remove the key, a
:class:`~.choose.Renamed` to move a key the tool does not have to a parameter it has) or a
:class:`~.fixes.Fix`;
whatever proposes it, it must fit the schema at that path and pass the intent audit before it
is used, so a model cannot make the repairer return what the schema or the task rules out.

A model proposer is any callable: :class:`ModelProposer` wraps a user's ``llm(prompt) -> str``
client (the prompt asks for JSON, read leniently); :func:`scripted_model` answers from a
fixed call, for tests and for measuring what a correct model adds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from ..saferepr import safe_str
from .choose import Renamed
from .fixes import DROP, Context, Fix
from .infer import loads_lenient
from .paths import get, has
from .spec import Problem

__all__ = ["ModelProposer", "Proposer", "Renamed", "candidates_of", "scripted_model"]


@runtime_checkable
class Proposer(Protocol):
    """``proposer(problem, call, context)`` -> candidate values (or fixes) for the problem's
    path, best first; an empty iterable when it has none."""

    def __call__(
        self, problem: Problem, call: Mapping[str, Any], context: Context
    ) -> Iterable[Any]: ...


def candidates_of(
    proposer: Callable[..., Any], problem: Problem, call: Mapping[str, Any], context: Context
) -> list[Fix]:
    """A proposer's answer as fixes (at most 5), labelled ``model_proposal`` unless a fix
    names its own strategy; an answer that is no iterable, or a proposer that raises, gives
    none (the raise is re-raised to the caller to record)."""
    answer = proposer(problem, call, context)
    if (
        answer is None
        or isinstance(answer, (str, bytes, Mapping, Renamed))
        or not isinstance(answer, Iterable)
    ):
        answer = [] if answer is None else [answer]
    fixes: list[Fix] = []
    for item in list(answer)[:5]:
        if isinstance(item, Fix):
            fixes.append(item)
        else:
            fixes.append(Fix("model_proposal", item, 0.85, "the model proposes it"))
    return fixes


def scripted_model(answer: Mapping[str, Any]) -> Callable[..., list[Any]]:
    """A model proposer that answers every problem with the value ``answer`` holds at the
    problem's path (``DROP`` where it holds none): a correct model, for tests and benches."""

    def propose(problem: Problem, call: Mapping[str, Any], context: Context) -> list[Any]:
        if has(answer, problem.path):
            return [get(answer, problem.path)]
        if problem.kind == "unknown" and problem.path and has(call, problem.path):
            # a key the tool does not have: the answer's key beside it, absent from the call,
            # that holds the same value is where it belongs
            value = get(call, problem.path)
            parent = problem.path[:-1]
            held = get(answer, parent) if has(answer, parent) else None
            sent = get(call, parent) if has(call, parent) else None
            if isinstance(held, Mapping) and isinstance(sent, Mapping):
                moved = [
                    k for k, v in held.items()
                    if k not in sent and isinstance(k, str) and v == value
                ]  # fmt: skip
                if len(moved) == 1:
                    return [Renamed(moved[0], value)]
        return [DROP]

    return propose


class ModelProposer:
    """A proposer that asks a language model: ``llm(prompt) -> str`` (any client). The prompt
    gives the tool, the problem, the call and the task; the answer is JSON
    ``{"value": ...}`` (or ``{"drop": true}``, or ``{"decline": "why"}``), read leniently."""

    def __init__(self, llm: Callable[[str], str], tool: str = "", description: str = "") -> None:
        if not callable(llm):
            raise TypeError(f"ModelProposer needs a callable llm(prompt) -> str, got {llm!r}")
        self.llm = llm
        self.tool = tool
        self.description = description

    def __call__(self, problem: Problem, call: Mapping[str, Any], context: Context) -> list[Any]:
        prompt = self.prompt(problem, call, context)
        reply = self.llm(prompt)
        if not isinstance(reply, str):
            return []
        parsed = loads_lenient(reply)
        if not isinstance(parsed, Mapping) or "decline" in parsed:
            return []
        if parsed.get("drop") is True:
            return [DROP]
        target = parsed.get("rename")
        if isinstance(target, str) and problem.path and has(call, problem.path):
            return [Renamed(target, get(call, problem.path))]
        return [parsed["value"]] if "value" in parsed else []

    def prompt(self, problem: Problem, call: Mapping[str, Any], context: Context) -> str:
        """The text the model is asked (plain, so a test can assert what it is told)."""
        schema = json.dumps(dict(problem.schema), default=str)[:2000]
        shown = safe_str(json.dumps(dict(call), default=str), 4000)
        return (
            f"A call to the tool {self.tool!r} ({self.description[:500]}) has a problem at "
            f"{problem.field!r}: {problem.kind}: {problem.message[:500]}\n"
            f"The value there must fit this JSON Schema: {schema}\n"
            f"The call: {shown}\nThe user's request: {safe_str(context.task or '', 4000)}\n"
            'Answer with JSON only: {"value": <the value the user meant>}, or {"drop": true} '
            'to remove the key, or {"rename": "<parameter>"} to send the key\'s value under '
            'a parameter the tool has, or {"decline": "<why>"} when the request does not say.'
        )
