"""Wire formats of LLM provider HTTP APIs, for a scripted provider endpoint.

The real ``openai`` and ``anthropic`` SDKs (and the frameworks built on them) talk to an
endpoint that answers with these formats as they would to the real API: a script's
:class:`Turn` is rendered as OpenAI chat completions (:class:`OpenAIChat`), OpenAI responses
(:class:`OpenAIResponses`) or Anthropic messages (:class:`AnthropicMessages`), JSON or SSE, and
errors as each provider sends them. Pure formats: no HTTP here.
"""

from __future__ import annotations

from .anthropic_messages import AnthropicMessages
from .openai_chat import OpenAIChat
from .openai_responses import OpenAIResponses
from .registry import DEFAULT_HOSTS, FORMATS, format_for_path, formats_for
from .turns import FINISH_REASONS, ToolCallSpec, Turn, arguments_text, parse_turn, text_of
from .wire import ParsedRequest, RequestInvalid, WireFormat, path_matches

__all__ = [
    "DEFAULT_HOSTS",
    "FINISH_REASONS",
    "FORMATS",
    "AnthropicMessages",
    "OpenAIChat",
    "OpenAIResponses",
    "ParsedRequest",
    "RequestInvalid",
    "ToolCallSpec",
    "Turn",
    "WireFormat",
    "arguments_text",
    "format_for_path",
    "formats_for",
    "parse_turn",
    "path_matches",
    "text_of",
]
