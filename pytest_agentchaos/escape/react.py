"""The tool calls a model's text makes in the ReAct format.

A ReAct agent's model writes its call as text: ``Thought: ...`` then ``Action: <tool>`` and
``Action Input: <input>`` (LangChain's agents), or ``Action: <tool>[<input>]`` (the ReAct
paper's). The framework parses them and runs the tool; a chat-only run shows only the text.
What such a reply does is its call; its thought is the sentence said with it, as a message's
content beside its ``tool_calls`` is. A reply that gives a ``Final Answer`` calls nothing.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["react_calls"]

#: How much of a reply is read for its calls.
_TEXT_LIMIT = 4000
#: ``Action: tool`` on its own line, its input on the ``Action Input:`` line(s) after it, up
#: to the next ``Observation:`` / ``Thought:`` line; or ``Action: tool[input]``.
_CALL = re.compile(
    r"^[ \t]*Action[ \t]*\d*[ \t]*:[ \t]*(?P<name>[\w.:/-]{1,128})[ \t]*\n"
    r"[ \t]*Action[ \t]*Input[ \t]*\d*[ \t]*:[ \t]*(?P<input>.*?)[ \t]*"
    r"(?=\n[ \t]*(?:Observation|Thought)[ \t]*\d*[ \t]*:|\Z)"
    r"|^[ \t]*Action[ \t]*\d*[ \t]*:[ \t]*(?P<short>[\w.-]{1,128})\[(?P<arg>[^\n]*)\][ \t]*$",
    re.MULTILINE | re.DOTALL,
)
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
