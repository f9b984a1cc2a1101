"""What a chat model raises for an injected failure: its provider SDK's error converted as its
LangChain integration converts it (OpenAI, Anthropic), else LangChain's ``ModelError`` kinds."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

from ...faults.effects import Failure
from ...inject.errors import NativeErrors, Templates
from ...inject.session import ChaosSession
from ..common import native_errors


def _provider_of(model: Any) -> tuple[str, str | None, str | None]:
    """(provider, base URL, path) of a chat model's client: ``"openai"`` for any
    ``BaseChatOpenAI``, ``"anthropic"`` for ``ChatAnthropic``, else ``"generic"``. The
    integrations are looked up only when loaded already (the model's class imported them)."""
    openai_module = sys.modules.get("langchain_openai.chat_models.base")
    base = getattr(openai_module, "BaseChatOpenAI", None)
    if isinstance(base, type) and isinstance(model, base):
        client: Any = getattr(model, "root_client", None)
        try:
            url: Any = client.base_url  # the SDK client's, resolved (Azure's deployment URL)
        except Exception:
            url = getattr(model, "openai_api_base", None)
        path = "/responses" if getattr(model, "use_responses_api", None) is True else None
        return "openai", str(url) if url else None, path
    anthropic_module = sys.modules.get("langchain_anthropic.chat_models")
    base = getattr(anthropic_module, "ChatAnthropic", None)
    if isinstance(base, type) and isinstance(model, base):
        url = getattr(model, "anthropic_api_url", None)
        return "anthropic", str(url) if url else None, None
    return "generic", None, None


#: Where the provider SDKs send when the model names no base URL, and their API paths.
_DEFAULT_BASES = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
_DEFAULT_PATHS = {"openai": "/chat/completions", "anthropic": "/v1/messages"}


def _request_url(model: Any) -> str | None:
    """The URL a chat model's requests are posted to (``None``: not a provider SDK's model)."""
    provider, base, path = _provider_of(model)
    if provider not in _DEFAULT_BASES:
        return None
    return (base or _DEFAULT_BASES[provider]).rstrip("/") + (path or _DEFAULT_PATHS[provider])


#: The integration's own conversion of its SDK's errors: (module, bad-request handler, API
#: error handler), as ``_generate`` / ``_stream`` call them in their ``except`` clauses.
_CONVERSIONS = {
    "openai": (
        "langchain_openai.chat_models.base",
        "_handle_openai_bad_request",
        "_handle_openai_api_error",
    ),
    "anthropic": (
        "langchain_anthropic.chat_models",
        "_handle_anthropic_bad_request",
        "_handle_anthropic_api_error",
    ),
}


def _build_errors(session: ChaosSession, key: tuple[str, str | None, str | None]) -> NativeErrors:
    provider, base_url, path = key
    if provider == "generic":
        return Templates(_generic_error)  # a run's own: its copies are this run's
    seam = f"the LangChain chat model of {provider}"
    # the SDK's own classes: what is injected is the integration's conversion of them
    sdk_errors = native_errors(session, provider, seam, base_url=base_url, path=path, marked=False)
    convert = _conversion(provider)
    if sdk_errors is None or convert is None:
        if sdk_errors is not None:
            session.note(
                f"{seam}: the integration's own error conversion was not found, so injected "
                "model faults raise LangChain's provider-neutral errors (ModelRateLimitError...)"
            )
        return Templates(_generic_error)  # a run's own: its copies are this run's

    def build(failure: Failure) -> BaseException | None:
        raw = sdk_errors(failure)
        return convert(raw) if raw is not None else None

    # a copy's cause chain (the SDK's error, then the HTTP client's) keeps its own classes:
    # only what the agent catches is marked injected
    return Templates(build)


def _conversion(provider: str) -> Callable[[BaseException], BaseException] | None:
    """``provider``'s integration converting one SDK error as it does in ``_generate``, or
    ``None`` when its (private) handlers are not there."""
    module_name, bad_name, api_name = _CONVERSIONS[provider]
    try:
        module = importlib.import_module(module_name)
        sdk = importlib.import_module(provider)
        bad_request, api_error = getattr(module, bad_name), getattr(module, api_name)
        bad_class, api_class = sdk.BadRequestError, sdk.APIError
    except (ImportError, AttributeError):
        return None

    def convert(raw: BaseException) -> BaseException:
        try:
            try:
                raise raw
            except bad_class as error:
                bad_request(error)
            except api_class as error:
                api_error(error)  # re-raises what it does not classify, as it is
        except BaseException as converted:
            converted.__traceback__ = None
            return converted
        return raw  # pragma: no cover - the handlers always raise

    return convert


def _generic_error(failure: Failure) -> BaseException | None:
    """LangChain's provider-neutral ``ModelError`` for a failure (by status for HTTP ones),
    with the HTTP details on it; ``None`` (the built-in kinds) without them."""
    try:
        from langchain_core import exceptions as lc
    except ImportError:  # pragma: no cover - langchain-core always has it
        return None
    by_status: dict[int, str] = {
        400: "ModelInvalidRequestError",
        401: "ModelAuthenticationError",
        403: "ModelPermissionDeniedError",
        404: "ModelNotFoundError",
        408: "ModelTimeoutError",
        413: "ModelInvalidRequestError",
        422: "ModelInvalidRequestError",
        429: "ModelRateLimitError",
    }
    status: int | None = None
    if failure.kind == "timeout":
        name = "ModelTimeoutError"
    elif failure.kind == "connection":
        name = "ModelConnectionError"
    elif failure.kind == "http":
        status = failure.status or 500
        name = by_status.get(status) or ("ModelAPIError" if status >= 500 else "ModelError")
    else:
        return None
    cls = getattr(lc, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        return None  # a langchain-core from before these classes
    exc: Any = cls(failure.message)
    headers = {k.lower(): v for k, v in failure.headers.items()}
    if failure.retry_after is not None:
        headers.setdefault("retry-after", f"{failure.retry_after:g}")
    exc.status_code = status
    exc.headers = headers
    exc.retry_after = failure.retry_after
    exc.body = failure.any_body() if status is not None else None
    built: BaseException = exc
    return built
