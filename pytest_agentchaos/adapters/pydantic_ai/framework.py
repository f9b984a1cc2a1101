"""The pydantic-ai names the adapter is built on, imported in one place, so that a missing
pydantic-ai is one ``ImportError`` naming the extra to install."""

from __future__ import annotations

__all__ = [
    "AbstractToolset",
    "Agent",
    "CompletedStreamedResponse",
    "FallbackModel",
    "FunctionSchema",
    "FunctionToolset",
    "Model",
    "ModelAPIError",
    "ModelHTTPError",
    "ModelMessage",
    "ModelRequestParameters",
    "ModelResponse",
    "ModelRetry",
    "ModelSettings",
    "RunContext",
    "StreamedResponse",
    "TextPart",
    "Tool",
    "ToolCallPart",
    "ToolsetTool",
    "WrapperModel",
    "WrapperToolset",
    "from_json",
    "infer_model",
]


try:
    from pydantic_ai import Agent, ModelRetry, RunContext, Tool
    from pydantic_ai._function_schema import FunctionSchema
    from pydantic_ai.exceptions import ModelAPIError, ModelHTTPError
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models import (
        CompletedStreamedResponse,
        Model,
        ModelRequestParameters,
        StreamedResponse,
        infer_model,
    )
    from pydantic_ai.models.fallback import FallbackModel
    from pydantic_ai.models.wrapper import WrapperModel
    from pydantic_ai.settings import ModelSettings
    from pydantic_ai.toolsets import AbstractToolset, FunctionToolset, WrapperToolset
    from pydantic_ai.toolsets.abstract import ToolsetTool
    from pydantic_core import from_json
except ImportError as exc:  # pragma: no cover - the adapters' registry checks first
    raise ImportError(
        "the pydantic-ai adapter needs pydantic-ai-slim: "
        "pip install 'pytest-agentchaos[pydantic-ai]'"
    ) from exc
