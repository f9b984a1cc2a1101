"""The provider wire formats by API and by provider."""

from __future__ import annotations

from .anthropic_messages import AnthropicMessages
from .openai_chat import OpenAIChat
from .openai_responses import OpenAIResponses
from .wire import WireFormat

__all__ = ["DEFAULT_HOSTS", "FORMATS", "format_for_path", "formats_for"]

#: Each API's format, by ``api`` name.
FORMATS: dict[str, WireFormat] = {
    fmt.api: fmt for fmt in (OpenAIChat(), OpenAIResponses(), AnthropicMessages())
}

#: The host each provider's SDK talks to by default.
DEFAULT_HOSTS = {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}


def formats_for(provider: str) -> list[WireFormat]:
    """The formats of ``provider``: ``"openai"`` -> chat completions and responses,
    ``"anthropic"`` -> messages; an unknown provider is a ``ValueError`` naming the known."""
    found = [fmt for fmt in FORMATS.values() if fmt.provider == provider]
    if not found:
        known = sorted({fmt.provider for fmt in FORMATS.values()})
        raise ValueError(f"unknown provider {provider!r}; the providers are {', '.join(known)}")
    return found


def format_for_path(provider: str, method: str, path: str) -> WireFormat | None:
    """The format of ``provider`` that serves ``method`` ``path`` (see :mod:`.wire` for the
    path rule), or ``None`` (another endpoint of the provider)."""
    for fmt in formats_for(provider):
        if fmt.matches(method, path):
            return fmt
    return None
