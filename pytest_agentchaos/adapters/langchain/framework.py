"""The langchain-core names the LangChain adapter is built on, imported in one place, so that a
missing langchain-core is one ``ImportError`` naming the extra to install."""

from __future__ import annotations

__all__ = [
    "AIMessage",
    "AIMessageChunk",
    "BaseChatModel",
    "BaseMessage",
    "BaseTool",
    "ChatGenerationChunk",
    "ChatResult",
    "StructuredTool",
    "ToolMessage",
    "generate_from_stream",
    "_HINT",
    "_get_runnable_config_param",
]


_HINT = "pip install 'pytest-agentchaos[langchain]'"

try:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.language_models.chat_models import generate_from_stream
    from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
    from langchain_core.outputs import ChatGenerationChunk, ChatResult
    from langchain_core.tools import BaseTool, StructuredTool
    from langchain_core.tools.base import _get_runnable_config_param
except ImportError as exc:  # pragma: no cover - tested by hiding the package
    raise ImportError(f"the LangChain adapter needs langchain-core: {_HINT} ({exc})") from None
