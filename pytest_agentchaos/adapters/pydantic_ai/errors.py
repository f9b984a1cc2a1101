"""The errors pydantic-ai raises for an injected model failure: a provider SDK's own exception
mapped by pydantic-ai's ``map_api_errors``, else pydantic-ai's own categories."""

from __future__ import annotations

import math
import sys
from typing import Any

from ...faults.effects import Failure
from ...inject.errors import NativeErrors, Templates
from ...inject.session import ChaosSession
from ..common import native_errors
from .framework import Model, ModelAPIError, ModelHTTPError, WrapperModel

#: What the SDKs say of a timeout and of a dropped connection (pydantic-ai passes it on).
_TIMED_OUT = "Request timed out."
_CONNECTION = "Connection error."


def _concrete(model: Model) -> Model:
    """The model that answers: ``model``, or the model inside its wrappers."""
    seen: set[int] = set()
    while isinstance(model, WrapperModel) and id(model) not in seen:
        seen.add(id(model))
        model = model.wrapped
    return model


def _sdk_seam(model: Model) -> tuple[str, str] | None:
    """(provider, request path) of a model that sends through the ``openai`` or ``anthropic``
    SDK; ``None`` for any other model."""
    openai_models = sys.modules.get("pydantic_ai.models.openai")
    if openai_models is not None:
        chat = getattr(openai_models, "OpenAIChatModel", None)
        responses = getattr(openai_models, "OpenAIResponsesModel", None)
        for cls, path in ((chat, "/chat/completions"), (responses, "/responses")):
            if isinstance(cls, type) and isinstance(model, cls):
                return "openai", path
    anthropic_models = sys.modules.get("pydantic_ai.models.anthropic")
    cls = getattr(anthropic_models, "AnthropicModel", None)
    if isinstance(cls, type) and isinstance(model, cls):
        return "anthropic", "/v1/messages"
    return None


def _provider_seam(model: Model) -> tuple[str, str, Any] | None:
    """(provider, request path, pydantic-ai's own ``map_api_errors`` for it) of a model that
    sends through the ``openai`` or ``anthropic`` SDK; ``None`` for any other model, or when
    pydantic-ai's mapping moved (a later version): the generic errors are used then."""
    seam = _sdk_seam(model)
    if seam is None:
        return None
    provider, path = seam
    try:
        if provider == "openai":
            from pydantic_ai.models.openai._errors import map_api_errors
        else:
            from pydantic_ai.models.anthropic._errors import map_api_errors
    except Exception:
        return None
    return provider, path, map_api_errors


def _provider_errors(session: ChaosSession, model: Model) -> NativeErrors | None:
    """The errors a provider-backed pydantic-ai model raises: the SDK's own exception (a real
    response of the model's base URL, see :mod:`~pytest_agentchaos.inject.provider_errors`)
    mapped by pydantic-ai's own ``map_api_errors``, as the model maps a real one (category,
    message, body, headers, ``retry_after``, ``__cause__``)."""
    seam = _provider_seam(model)
    if seam is None:
        return None
    provider, path, mapper = seam
    try:
        base_url = model.base_url
        model_name = model.model_name
    except Exception:
        return None
    sdk = native_errors(
        session,
        provider,
        f"pydantic-ai {type(model).__name__}",
        base_url=base_url if isinstance(base_url, str) and base_url else None,
        path=path,
        marked=False,  # the SDK's class: what is injected is pydantic-ai's mapping of it
    )
    if sdk is None:
        return None
    namespace = getattr(getattr(model, "_provider", None), "model_id_namespace", None)
    if not isinstance(namespace, str):
        namespace = provider

    def build(failure: Failure) -> BaseException | None:
        raw = sdk(failure)
        if raw is None:
            return None
        try:
            with mapper(model_name, namespace):
                raise raw
        except Exception as mapped:  # what pydantic-ai raises for it
            mapped.__traceback__ = None
            return mapped
        return None  # pragma: no cover - the block always raises

    return Templates(build)


def _generic_errors(model_name: str) -> NativeErrors:
    """The errors pydantic-ai's models raise, for a model without a provider SDK
    (``FunctionModel``, ``TestModel``, a custom one): an HTTP status is a ``ModelHTTPError``
    of the status's category (``ModelRateLimitError`` with ``retry_after`` for a 429,
    ``ModelUnavailableError`` for a 503 ...), a timeout a ``ModelTimeoutError``, a dropped
    connection a ``ModelConnectionError``."""
    connection_error: Any = None
    http_status_category: Any = None
    try:
        from pydantic_ai import _model_errors

        connection_error = _model_errors.connection_error
        http_status_category = _model_errors.http_status_category
    except Exception:  # moved in a later pydantic-ai: plain ModelHTTPError / ModelAPIError
        pass

    def build(failure: Failure) -> BaseException | None:
        if failure.kind == "http":
            status = failure.status or 500
            headers = {key.lower(): value for key, value in failure.headers.items()}
            if failure.retry_after is not None:
                headers.setdefault("retry-after", str(math.ceil(failure.retry_after)))
            category = http_status_category(status) if http_status_category else None
            return ModelHTTPError.for_category(
                category,
                status_code=status,
                model_name=model_name,
                body=failure.any_body(),
                headers=headers or None,
                retry_after=failure.retry_after,
            )
        if failure.kind in ("timeout", "connection"):
            timeout = failure.kind == "timeout"
            message = _TIMED_OUT if timeout else _CONNECTION
            if connection_error is not None:
                cause = TimeoutError(message) if timeout else ConnectionError(message)
                error: BaseException = connection_error(model_name, message, cause, timeout=timeout)
                return error
            return ModelAPIError(model_name, message)
        return None  # a crash: no pydantic-ai form

    return Templates(build)


def _errors_of(session: ChaosSession, model: Model) -> NativeErrors:
    """The exceptions ``model`` raises in pydantic-ai for injected failures (see
    :class:`ChaosModel`): a provider-backed model's as pydantic-ai maps its SDK's, any other
    model's as pydantic-ai's own categories. Built once per failure, copied per call."""
    concrete = _concrete(model)
    errors = _provider_errors(session, concrete)
    if errors is not None:
        return errors
    try:
        name = model.model_name
    except Exception:
        name = type(model).__name__
    return _generic_errors(name if isinstance(name, str) else type(model).__name__)
