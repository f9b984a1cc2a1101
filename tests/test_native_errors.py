"""Native errors: a seam's own exception, marked injected (inject.errors, inject.provider_errors).

The provider SDKs are the real packages (openai, anthropic); their exceptions are built by the
SDKs' own status mapping from real response objects of the HTTP client they send through.
"""

from __future__ import annotations

import pickle
import sys
import traceback

import pytest

from pytest_agentchaos import Chaos
from pytest_agentchaos.faults.effects import Failure
from pytest_agentchaos.inject.errors import (
    InjectedFault,
    InjectedHTTPError,
    InjectedTimeout,
    Templates,
    failure_exception,
    injected_class,
    is_injected,
    mark_injected,
)
from pytest_agentchaos.inject.intercept import Interceptor
from pytest_agentchaos.inject.provider_errors import (
    anthropic_errors,
    openai_errors,
    provider_errors,
)
from pytest_agentchaos.trace.events import FaultInjected, ModelCall, ModelResult, ToolCall

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

FAULT = FaultInjected(3, 1.5, kind="rate_limit", channel="model", target="triage", index=2, fault=0)
RATE_LIMIT = Failure(
    "http", "triage: HTTP 429", status=429, headers={"Retry-After": "3"}, retry_after=2.5
)


class Upstream(Exception):
    def __init__(self, message: str, *, code: int) -> None:
        super().__init__(message)
        self.code = code


# -- marking ---------------------------------------------------------------------------------


def test_an_injected_native_exception_is_caught_as_the_native_class_and_reads_as_it():
    exc = mark_injected(Upstream("upstream down", code=503), FAULT)
    with pytest.raises(Upstream) as caught:
        raise exc
    assert isinstance(caught.value, InjectedFault) and is_injected(caught.value)
    assert type(exc).__name__ == "Upstream" and type(exc).__module__ == __name__
    assert exc.code == 503 and exc.fault is FAULT and str(exc) == "upstream down"
    assert not is_injected(Upstream("real", code=1))
    text = "".join(traceback.format_exception(exc))
    assert f"{__name__}.Upstream: upstream down" in text
    assert "fault 'rate_limit' (faults[0] of the plan) on call 2 of 'triage', step 3" in text


def test_one_injected_class_per_native_class_and_marking_is_idempotent():
    assert injected_class(Upstream) is injected_class(Upstream)
    assert injected_class(InjectedTimeout) is InjectedTimeout
    exc = mark_injected(Upstream("x", code=1))
    assert mark_injected(exc) is exc and type(exc) is injected_class(Upstream)


def test_an_injected_native_exception_pickles_as_itself():
    exc = mark_injected(Upstream("upstream down", code=503), FAULT)
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is type(exc) and back.code == 503 and back.fault == FAULT
    assert str(back) == "upstream down"


def test_a_class_that_cannot_take_the_mixin_keeps_its_class_and_says_it_is_injected():
    exc = mark_injected(KeyboardInterrupt(), FAULT)  # BaseException: a mixin of Exception
    assert type(exc) is KeyboardInterrupt and is_injected(exc) and exc.fault is FAULT


def test_templates_copy_one_build_per_failure_into_fresh_exceptions():
    built: list[Failure] = []

    def build(failure: Failure) -> BaseException:
        built.append(failure)
        exc = Upstream(failure.message, code=failure.status or 0)
        exc.__cause__ = ConnectionResetError("reset")
        return exc

    templates = Templates(build)
    first, second = templates(RATE_LIMIT), templates(RATE_LIMIT)
    assert len(built) == 1 and first is not second
    assert type(first) is injected_class(Upstream)  # a copy is of the injected class already
    assert first.code == 429 and first.args == ("triage: HTTP 429",)
    assert first.__cause__ is not second.__cause__
    assert isinstance(first.__cause__, ConnectionResetError)
    mark_injected(first, FAULT)
    assert not hasattr(second, "__notes__")  # notes are each copy's own
    with pytest.raises(Upstream):
        raise second
    assert first.__traceback__ is None  # raising a copy gave the other no traceback
    body = Failure("http", "x", status=500, body={"detail": ["a"]})
    assert templates(body) is not None and len(built) == 2


def test_what_one_handler_changes_in_its_errors_body_never_reaches_the_next_error():
    response = object()  # shared: its readers (retry loops) never change it

    def build(failure: Failure) -> BaseException:
        exc = Upstream(failure.message, code=failure.status or 0)
        exc.body = {"error": {"message": "slow down"}}  # type: ignore[attr-defined]
        exc.headers = ["retry-after: 30"]  # type: ignore[attr-defined]
        exc.response = response  # type: ignore[attr-defined]
        return exc

    templates = Templates(build)
    first = templates(RATE_LIMIT)
    first.body["handled"] = True  # type: ignore[attr-defined]
    first.headers.append("x-seen: 1")  # type: ignore[attr-defined]
    second = templates(RATE_LIMIT)
    assert second.body == {"error": {"message": "slow down"}}  # type: ignore[attr-defined]
    assert second.headers == ["retry-after: 30"]  # type: ignore[attr-defined]
    assert second.response is first.response is response  # type: ignore[attr-defined]


def test_a_builder_that_fails_falls_back_to_the_built_in_error_and_says_why():
    def broken(failure: Failure) -> BaseException:
        raise RuntimeError("no such SDK attribute")

    exc = failure_exception(Failure("timeout", "search timed out after 30s"), FAULT, broken)
    assert isinstance(exc, InjectedTimeout) and isinstance(exc, TimeoutError)
    assert any("could not be built: RuntimeError: no such SDK attribute" in n
               for n in exc.__notes__)  # fmt: skip
    # a builder with no native form (None) gives the built-in error, no complaint
    exc = failure_exception(Failure("http", "x", status=503), FAULT, lambda f: None)
    assert isinstance(exc, InjectedHTTPError) and len(exc.__notes__) == 1


# -- the provider SDKs' own errors -----------------------------------------------------------

OPENAI_CLASSES = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    409: "ConflictError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
    500: "InternalServerError",
    503: "InternalServerError",
    418: "APIStatusError",
}


@pytest.mark.parametrize("status", sorted(OPENAI_CLASSES))
def test_openai_status_errors_are_the_sdk_classes_its_client_raises(status):
    errors = openai_errors()
    exc = failure_exception(Failure("http", "m: HTTP", status=status), FAULT, errors)
    assert type(exc).__name__ == OPENAI_CLASSES[status]
    assert isinstance(exc, getattr(openai, OPENAI_CLASSES[status])) and is_injected(exc)
    assert exc.status_code == status and exc.response.status_code == status
    assert str(exc).startswith(f"Error code: {status} - ")
    assert isinstance(exc.body, dict) and exc.body["message"] in str(exc)  # the inner error
    assert exc.request.url == "https://api.openai.com/v1/chat/completions"
    assert exc.request_id and exc.request_id.startswith("req_")


def test_an_openai_rate_limit_carries_retry_after_as_the_api_sends_it():
    exc = failure_exception(RATE_LIMIT, FAULT, openai_errors())
    assert isinstance(exc, openai.RateLimitError)
    headers = exc.response.headers
    assert headers["retry-after"] == "3" and headers["retry-after-ms"] == "2500"
    assert exc.code == "rate_limit_exceeded" and exc.type == "requests"
    # the SDK's own reading of the delay: retry-after-ms first
    from openai._base_client import BaseClient

    assert BaseClient._parse_retry_after_header(object(), headers) == 2.5


def test_openai_timeouts_and_dropped_connections_are_caused_by_the_http_clients_errors():
    errors = openai_errors(base_url="http://localhost:8080/v1/", path="/responses")
    timeout = failure_exception(Failure("timeout", "m timed out after 30s"), FAULT, errors)
    assert type(timeout) is injected_class(openai.APITimeoutError)
    assert str(timeout) == "Request timed out."
    assert timeout.request.url == "http://localhost:8080/v1/responses"
    http = sys.modules[type(timeout.__cause__).__module__.split(".")[0]]
    assert isinstance(timeout.__cause__, http.ReadTimeout)
    dropped = failure_exception(Failure("connection", "m: connection refused"), FAULT, errors)
    assert isinstance(dropped, openai.APIConnectionError)
    assert not isinstance(dropped, openai.APITimeoutError)
    assert str(dropped) == "Connection error." and isinstance(dropped.__cause__, http.ConnectError)


def test_a_body_the_fault_gives_is_sent_as_it_is():
    failure = Failure(
        "http", "m", status=400, body={"error": {"message": "bad tools", "code": "x"}}
    )
    exc = failure_exception(failure, FAULT, openai_errors())
    assert str(exc) == "Error code: 400 - bad tools" and exc.code == "x"
    text = failure_exception(Failure("http", "m", status=502, body="<html>502</html>"), FAULT,
                             openai_errors())  # fmt: skip
    assert isinstance(text, openai.InternalServerError) and text.body == "<html>502</html>"


@pytest.mark.parametrize(
    ("status", "name"),
    [(429, "RateLimitError"), (529, "OverloadedError"), (500, "InternalServerError"),
     (400, "BadRequestError"), (401, "AuthenticationError")],
)  # fmt: skip
def test_anthropic_status_errors_are_the_sdk_classes_its_client_raises(status, name):
    exc = failure_exception(Failure("http", "m", status=status), FAULT, anthropic_errors())
    assert isinstance(exc, getattr(anthropic, name)) and type(exc).__name__ == name
    assert exc.body["type"] == "error" and exc.response.headers["request-id"]


def test_an_anthropic_rate_limit_has_retry_after_in_whole_seconds_only():
    exc = failure_exception(RATE_LIMIT, FAULT, anthropic_errors())
    assert isinstance(exc, anthropic.RateLimitError)
    assert exc.response.headers["retry-after"] == "3"
    assert "retry-after-ms" not in exc.response.headers
    assert isinstance(failure_exception(Failure("timeout", "t"), FAULT, anthropic_errors()),
                      anthropic.APITimeoutError)  # fmt: skip


def test_a_crash_has_no_provider_form():
    exc = failure_exception(Failure("crash", "boom"), FAULT, openai_errors())
    assert isinstance(exc, RuntimeError) and is_injected(exc)


def test_an_unknown_provider_is_refused_and_a_missing_sdk_gives_none(monkeypatch):
    with pytest.raises(ValueError, match="the providers are openai, anthropic"):
        provider_errors("gemini")
    monkeypatch.setitem(sys.modules, "anthropic", None)  # an import of it fails
    assert provider_errors("anthropic") is None


# -- through the injection core --------------------------------------------------------------


def test_an_interceptor_raises_the_seams_error_and_the_trace_names_it():
    with Chaos.create(faults=[{"kind": "rate_limit", "retry_after": 2.5}]) as chaos:
        core = Interceptor(
            chaos.session, "triage", channel="model", errors=openai_errors(), agent="Triage"
        )
        with pytest.raises(openai.RateLimitError) as caught:
            core.call({"messages": 1}, lambda m: "never")
        assert caught.value.fault == chaos.trace.faults()[0]
        call, fault, result = list(chaos.trace)[1:4]
        assert isinstance(call, ModelCall) and call.agent == "Triage"
        assert fault.kind == "rate_limit" and isinstance(result, ModelResult)
        assert (result.ok, result.error_type) == (False, "RateLimitError")
        assert (
            result.message == "Error code: 429 - Rate limit reached for requests. Please try "
            "again later."
        )


def test_a_tool_call_records_its_agent():
    with Chaos.create() as chaos:
        core = Interceptor(chaos.session, "search", agent="Researcher")
        assert core.call({"q": "x"}, lambda m: "found") == "found"
        call = next(e for e in chaos.trace if isinstance(e, ToolCall))
        assert (call.tool, call.agent) == ("search", "Researcher")
        assert chaos.trace.to_dict()["events"][1]["agent"] == "Researcher"


def test_each_owner_gets_its_own_target_deterministically():
    with Chaos.create() as chaos:
        session = chaos.session
        a, b, c = object(), object(), object()
        assert session.agent_target("model", a) == "model"
        assert session.agent_target("model", b) == "model#2"
        assert session.agent_target("model", a) == "model"
        assert session.agent_target("model", c) == "model#3"
        assert session.agent_target("model", c, channel="tool") == "model"
        assert session.agent_target("model", a, channel="tool") == "model#2"
        assert chaos.trace.meta["agents"] == {
            "model": "model",
            "model#2": "model",
            "model#3": "model",
        }
        assert chaos.trace.meta["targets"] == {"tool": {"model#2": "model"}}


def test_a_note_is_said_once():
    with Chaos.create() as chaos:
        chaos.session.note("the openai package is not installed")
        chaos.session.note("the openai package is not installed")
        assert chaos.trace.meta["notes"] == ["the openai package is not installed"]


def test_an_injected_error_built_by_a_factory_pickles_as_the_factory_rebuilds_it():
    """pydantic-ai's categorised HTTP errors are classes made by ``for_category`` that pickle
    through it: an injected one does too, and comes back injected."""
    exceptions = pytest.importorskip("pydantic_ai.exceptions")
    real = exceptions.ModelHTTPError.for_category(
        exceptions.ModelRateLimitError, status_code=429, model_name="m", body={"e": 1},
        headers={"retry-after": "7"},
    )  # fmt: skip
    exc = mark_injected(real, FAULT)
    back = pickle.loads(pickle.dumps(exc))
    assert isinstance(back, exceptions.ModelRateLimitError) and is_injected(back)
    assert back.status_code == 429 and back.retry_after == 7 and back.fault == FAULT
    assert back.__notes__ == exc.__notes__
    openai_exc = failure_exception(RATE_LIMIT, FAULT, openai_errors())
    again = pickle.loads(pickle.dumps(openai_exc))
    assert type(again) is type(openai_exc) and again.status_code == 429


def test_what_a_handler_does_to_its_errors_body_never_reaches_the_next_error():
    errors = openai_errors()
    first = failure_exception(RATE_LIMIT, FAULT, errors)
    first.body["message"] = "seen by the first handler"
    second = failure_exception(RATE_LIMIT, FAULT, errors)
    assert second.body["message"] == "Rate limit reached for requests. Please try again later."
