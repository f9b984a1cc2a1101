"""The tool calls a model's reply makes: as a message (OpenAI ``tool_calls`` or
``function_call``, Anthropic ``tool_use`` parts), or as text in the ReAct format, and a call's
arguments given as JSON text.

A ReAct agent's model writes its call as text: ``Thought: ...`` then ``Action: <tool>`` and
``Action Input: <input>`` (LangChain's agents), or ``Action: <tool>[<input>]`` (the ReAct
paper's). The framework parses them and runs the tool; a chat-only run shows only the text.
What such a reply does is its call; its thought is the sentence said with it, as a message's
content beside its ``tool_calls`` is. A reply that gives a ``Final Answer`` calls nothing.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from .normalize import parse_json_text

__all__ = ["json_args", "message_calls", "observation", "react_calls"]

#: How much of a reply is read for its calls.
_TEXT_LIMIT = 4000
#: ``Action: tool`` on its own line, its input on the ``Action Input:`` line(s) after it, up
#: to the next ``Observation:`` / ``Thought:`` / ``Action:`` line (a reply may make two calls);
#: or ``Action: tool[input]``.
_CALL = re.compile(
    r"^[ \t]*Action[ \t]*\d*[ \t]*:[ \t]*(?P<name>[\w.:/-]{1,128})[ \t]*\n"
    r"[ \t]*Action[ \t]*Input[ \t]*\d*[ \t]*:[ \t]*(?P<input>.*?)[ \t]*"
    r"(?=\n[ \t]*(?:Observation|Thought|Action)[ \t]*\d*[ \t]*:|\Z)"
    r"|^[ \t]*Action[ \t]*\d*[ \t]*:[ \t]*(?P<short>[\w.-]{1,128})\[(?P<arg>[^\n]*)\][ \t]*$",
    re.MULTILINE | re.DOTALL,
)
#: A ReAct turn that hands the model its call's result: ``Observation: ...``, perhaps behind
#: a runner's bracketed count (``[turn 4] Observation: ...``).
_OBSERVED = re.compile(
    r"[ \t\n]*(?:[\[(][^\])\n]{0,40}[\])][ \t]*)?Observation[ \t]*\d*[ \t]*:", re.IGNORECASE
)
#: The roles and part types of a message that carries a tool's result.
_RESULT_ROLES = frozenset({"tool", "function", "ipython"})
_RESULT_PARTS = frozenset({"tool_result", "function_call_output", "function_response"})
_FINAL = re.compile(r"^[ \t]*Final[ \t]*Answer[ \t]*:", re.MULTILINE | re.IGNORECASE)


def react_calls(text: str) -> tuple[str, list[tuple[str, str]]] | None:
    """What a ReAct reply says besides its calls (its thought), and its calls (tool, input
    text), in order; None for a text that makes no call or gives a final answer."""
    # full-width punctuation (``Action：``, ``{"q"： 1}``, as a model writing Chinese may)
    # read as its ASCII form
    head = unicodedata.normalize("NFKC", text[:_TEXT_LIMIT])
    if "Action" not in head or _FINAL.search(head) is not None:
        return None
    calls: list[tuple[str, str]] = []
    for match in _CALL.finditer(head):
        if match.group("name") is not None:
            calls.append((match.group("name"), match.group("input").strip()))
        else:
            calls.append((match.group("short"), match.group("arg").strip()))
    if not calls:
        return None
    return _CALL.sub(" ", head).strip(), calls


def observation(turn: Any) -> bool:
    """Whether a model's newest input turn (the last message of a list, or a text) is a
    tool's result handed back to it rather than a person's message: a message in the tool's
    role (``tool``, ``function``), one whose parts are a tool's results (Anthropic's
    ``tool_result``), a ReAct ``Observation:``, or data (JSON text). A person's message asks
    something, and a reply that calls the same tool again may ignore it; a result is what the
    call before it found."""
    if type(turn) is list:
        if not turn:
            return False
        turn = turn[-1]
    if type(turn) is dict:
        if turn.get("role") in _RESULT_ROLES or turn.get("type") in _RESULT_PARTS:
            return True
        content = turn.get("content")
        if type(content) is list:
            return any(type(p) is dict and p.get("type") in _RESULT_PARTS for p in content)
        turn = content
    if not isinstance(turn, str):
        return turn is not None  # data handed back as it is
    head = unicodedata.normalize("NFKC", turn[:200]).lstrip()
    if head[:1] in ("{", "[") and parse_json_text(turn) is not None:
        return True  # data (none past the parser's size limit)
    return _OBSERVED.match(head) is not None


def json_args(args: Any) -> Any:
    """A call's arguments given as JSON text (as a model's tool call carries them), alone or
    as the one value of a wrapper (``{"arguments": "{...}"}``): the object they hold."""
    text = args
    if type(args) is dict and len(args) == 1:
        (text,) = args.values()
    if type(text) is str and text[:1] == "{":
        parsed = parse_json_text(text)
        if type(parsed) is dict:
            return parsed
    return args


def message_calls(output: Any) -> tuple[str, list[tuple[str, Any]]] | None:
    """What a model's message that calls tools says, and its calls (name, arguments): an
    OpenAI message's ``tool_calls`` (or a completion's first choice's), its legacy
    ``function_call``, an Anthropic message's ``tool_use`` content parts. None for any other
    output, or a call that names no tool."""
    if type(output) is dict and type(output.get("choices")) is list and output["choices"]:
        first = output["choices"][0]
        output = first.get("message") if type(first) is dict else None
    if type(output) is not dict:
        return None
    content, calls = output.get("content"), []
    raw = output.get("tool_calls")
    if raw is None and type(output.get("function_call")) is dict:
        raw = [{"function": output["function_call"]}]
    if type(raw) is list:
        for call in raw:
            function = call.get("function", call) if type(call) is dict else None
            if type(function) is not dict or not isinstance(function.get("name"), str):
                return None
            calls.append((function["name"], function.get("arguments")))
    parts = content if type(content) is list else []
    if parts and all(type(p) is dict for p in parts):
        texts = [str(p.get("text", "")) for p in parts if p.get("type") == "text"]
        for part in parts:
            if part.get("type") == "tool_use":
                if not isinstance(part.get("name"), str):
                    return None
                calls.append((part["name"], part.get("input")))
        content = "\n".join(texts)
    if not calls:
        return None
    return (content if isinstance(content, str) else ""), calls
