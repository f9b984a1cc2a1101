"""ErrorClassifier: real error texts (fixtures/errors/corpus.json) get the class the escape
stack acts on; status > exception > message; Retry-After in every form servers send it; a
tool whose transient failures keep repeating is escalated, exactly as a brute-force rule says."""

from __future__ import annotations

import builtins
import email.message
import io
import json
import re
import urllib.error
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.escape import classifier_policy, error_tables, retry_after
from pytest_agentchaos.escape.classifier_policy import ClassifierPolicy
from pytest_agentchaos.escape.classify import MAX_MESSAGE, ErrorClass, ErrorClassifier
from pytest_agentchaos.escape.error_tables import CATEGORIES, KINDS
from pytest_agentchaos.escape.retry_after import (
    retry_after_from_headers,
    retry_after_from_message,
)
from pytest_agentchaos.faults.effects import Failure
from pytest_agentchaos.inject.errors import (
    InjectedConnectionError,
    InjectedHTTPError,
    InjectedTimeout,
    failure_exception,
)
from pytest_agentchaos.trace import ModelResult, ToolResult

CORPUS_PATH = Path(__file__).parent.parent / "fixtures" / "errors" / "corpus.json"
CORPUS: list[dict[str, Any]] = json.loads(CORPUS_PATH.read_text(encoding="utf-8"))["entries"]
IDS = [entry["id"] for entry in CORPUS]


def _expected(entry: dict[str, Any]) -> tuple[str, str]:
    return entry["expected"]["kind"], entry["expected"]["category"]


# -- the corpus -------------------------------------------------------------------------------


def test_corpus_is_well_formed_and_covers_every_category_in_both_languages():
    assert len(CORPUS) >= 60
    assert len(set(IDS)) == len(IDS)
    for entry in CORPUS:
        assert set(entry) <= {"id", "message", "exception", "status", "expected", "source", "note"}
        assert entry["expected"]["kind"] in KINDS
        assert entry["expected"]["category"] in CATEGORIES
        assert entry["source"]
    assert {e["expected"]["category"] for e in CORPUS} == set(CATEGORIES)
    chinese = [e for e in CORPUS if re.search(r"[\u4e00-\u9fff]", e["message"])]
    assert {e["expected"]["category"] for e in chinese} >= set(CATEGORIES) - {"unknown"}


@pytest.mark.parametrize("entry", CORPUS, ids=IDS)
def test_corpus_entry_classifies_as_expected(entry):
    result = ErrorClassifier().classify(
        entry["message"], exception=entry.get("exception"), status=entry.get("status")
    )
    assert (result.kind, result.category) == _expected(entry), result.reason
    assert result.retry_after == entry["expected"].get("retry_after")
    assert result.reason


@pytest.mark.parametrize("entry", [e for e in CORPUS if e["message"]], ids=lambda e: e["id"])
def test_corpus_message_alone_gives_the_same_class(entry):
    """What a trace or a log line keeps is often only the text: it must be enough."""
    result = ErrorClassifier().classify(entry["message"])
    assert (result.kind, result.category) == _expected(entry), result.reason


def _real_exception(entry: dict[str, Any]) -> BaseException | None:
    """The exception itself, for entries whose class is at hand (builtins, httpx, ours)."""
    name, message = entry.get("exception"), entry["message"]
    ours = {"InjectedTimeout": InjectedTimeout, "InjectedConnectionError": InjectedConnectionError}
    if name == "InjectedHTTPError":
        return InjectedHTTPError(message, status=entry["status"])
    if name in ours:
        return ours[name](message)
    if name == "ValidationError":
        return jsonschema.ValidationError(message)
    for module in (builtins, httpx):
        cls = getattr(module, name or "", None)
        if (
            isinstance(cls, type)
            and issubclass(cls, Exception)
            and cls is not httpx.HTTPStatusError
        ):
            return cls(message)
    return None


REAL = [(e, exc) for e in CORPUS if (exc := _real_exception(e)) is not None]


@pytest.mark.parametrize(("entry", "exc"), REAL, ids=[e["id"] for e, _ in REAL])
def test_corpus_as_real_exception_instances(entry, exc):
    result = ErrorClassifier().classify(exc)
    assert (result.kind, result.category) == _expected(entry), result.reason


HTTPX_STATUS = [e for e in CORPUS if e["id"].startswith("httpx-raise_for_status-")]


@pytest.mark.parametrize("entry", HTTPX_STATUS, ids=lambda e: e["id"])
def test_corpus_httpx_texts_are_what_httpx_raises(entry):
    """The corpus holds httpx's real messages; the real exception classifies by its status."""
    status = int(entry["id"].rsplit("-", 1)[1])
    transport = httpx.MockTransport(lambda request: httpx.Response(status))
    with httpx.Client(transport=transport) as client:
        response = client.get("https://api.example.com/v1/search?q=paris")
    with pytest.raises(httpx.HTTPStatusError) as info:
        response.raise_for_status()
    assert str(info.value) == entry["message"]
    result = ErrorClassifier().classify(info.value)
    assert (result.kind, result.category) == _expected(entry)
    assert result.reason == f"status {status} (from HTTPStatusError)"


# -- precedence: explicit status > exception (its status, then its type) > message -------------


def test_explicit_status_beats_exception_type():
    result = ErrorClassifier().classify(httpx.ReadTimeout("timed out"), status=429)
    assert (result.kind, result.category, result.reason) == (
        "transient",
        "rate_limit",
        "status 429",
    )


def test_status_an_exception_carries_beats_its_type():
    class RateLimitError(Exception):  # an SDK error: its type says one thing, its status more
        status_code = 404

    result = ErrorClassifier().classify(RateLimitError("Error code: 404"))
    assert (result.category, result.reason) == ("not_found", "status 404 (from RateLimitError)")


def test_exception_type_beats_message():
    result = ErrorClassifier().classify(TimeoutError("401 Unauthorized: rate limit"))
    assert (result.category, result.reason) == ("timeout", "exception TimeoutError")


def test_type_found_along_the_mro_names_the_base():
    class FlakySearchTimeout(httpx.ReadTimeout):
        pass

    result = ErrorClassifier().classify(FlakySearchTimeout("slow"))
    assert result.reason == "exception FlakySearchTimeout (a ReadTimeout)"
    assert result.category == "timeout"


def test_status_named_in_message_beats_message_keywords():
    result = ErrorClassifier().classify("HTTP 503: connection refused by upstream")
    assert (result.category, result.reason) == ("server_error", "message names status 503")


def test_message_keywords_say_which_rule_and_text_matched():
    result = ErrorClassifier().classify("API rate limit exceeded for 203.0.113.7")
    assert result.category == "rate_limit"
    assert result.reason == "message matches /rate[ _-]?limit/: 'rate limit'"


@pytest.mark.parametrize("status", [200, 204, 302, 0, 42, 1000])
def test_statuses_that_are_not_errors_leave_the_decision_to_the_rest(status):
    result = ErrorClassifier().classify(ValueError("bad date"), status=status)
    assert (result.category, result.reason) == ("validation", "exception ValueError")


@pytest.mark.parametrize(
    ("status", "kind", "category"),
    [
        (408, "transient", "timeout"),
        (504, "transient", "timeout"),
        (429, "transient", "rate_limit"),
        (401, "persistent", "auth"),
        (403, "persistent", "auth"),
        (400, "persistent", "validation"),
        (422, "persistent", "validation"),
        (404, "persistent", "not_found"),
        (410, "persistent", "not_found"),
        (500, "transient", "server_error"),
        (502, "transient", "server_error"),
        (503, "transient", "server_error"),
        (501, "persistent", "server_error"),
        (529, "transient", "server_error"),  # Anthropic "overloaded": the 5xx default
        (418, "persistent", "unknown"),  # the 4xx default
    ],
)
def test_status_table(status, kind, category):
    result = ErrorClassifier().classify(status)
    assert (result.kind, result.category, result.reason) == (kind, category, f"status {status}")


def test_raised_from_cause_is_followed():
    try:
        try:
            raise httpx.ConnectError("[Errno 111] Connection refused")
        except httpx.ConnectError as exc:
            raise RuntimeError("search tool failed") from exc
    except RuntimeError as exc:
        result = ErrorClassifier().classify(exc)
    assert result.category == "connection"
    assert result.reason == "exception ConnectError (cause of RuntimeError)"


def test_suppressed_context_is_not_followed():
    try:
        try:
            raise TimeoutError("timed out")
        except TimeoutError:
            raise RuntimeError("search tool failed") from None
    except RuntimeError as exc:
        result = ErrorClassifier().classify(exc)
    assert (result.kind, result.category) == ("unknown", "unknown")


def test_urllib_http_error_classifies_by_its_code_and_headers():
    headers = email.message.Message()
    headers["Retry-After"] = "30"
    exc = urllib.error.HTTPError(
        "https://api.example.com", 429, "Too Many Requests", headers, io.BytesIO()
    )
    result = ErrorClassifier().classify(exc)
    assert (result.category, result.retry_after) == ("rate_limit", 30.0)


@pytest.mark.parametrize(
    ("name", "category"),
    [
        ("httpx.ReadTimeout", "timeout"),
        ("ConnectionResetError", "connection"),  # a builtin: found through its MRO
        ("asyncio.TimeoutError", "timeout"),
        ("InjectedTimeout", "timeout"),
        ("FileNotFoundError", "not_found"),
    ],
)
def test_exception_known_only_by_name(name, category):
    result = ErrorClassifier().classify(exception=name)
    assert result.category == category


def test_unknown_name_falls_back_to_the_message():
    result = ErrorClassifier().classify("upstream said: quota exceeded", exception="ToolError")
    assert result.category == "rate_limit"


def test_nothing_to_go_on_is_unknown():
    result = ErrorClassifier().classify()
    assert (result.kind, result.category) == ("unknown", "unknown")
    assert "no status, exception or message rule matched" in result.reason


def test_long_messages_are_read_at_both_ends():
    """A long body costs no more than MAX_MESSAGE characters, and a traceback's last line
    (where Python names the error) is still read."""
    filler = "x" * MAX_MESSAGE
    assert ErrorClassifier().classify(f"{filler} rate limit {filler}").category == "unknown"
    assert ErrorClassifier().classify(f"rate limit {filler}").category == "rate_limit"
    traceback = "Traceback (most recent call last):\n" + "  File ...\n" * 500
    result = ErrorClassifier().classify(
        traceback + "ConnectionRefusedError: [Errno 111] Connection refused"
    )
    assert result.category == "connection"


@pytest.mark.parametrize("bad", [True, 3.5, object()])
def test_other_inputs_are_refused(bad):
    with pytest.raises(TypeError, match="cannot classify"):
        ErrorClassifier().classify(bad)


def test_error_class_is_plain_data():
    result = ErrorClassifier().classify(429, headers={"Retry-After": "2"})
    assert result.transient and not result.persistent
    assert json.loads(json.dumps(result.to_dict())) == {
        "kind": "transient",
        "category": "rate_limit",
        "reason": "status 429",
        "retry_after": 2.0,
        "escalated": False,
    }
    with pytest.raises(AttributeError):
        result.kind = "persistent"  # type: ignore[misc]


# -- Retry-After ------------------------------------------------------------------------------

DATE = datetime(2015, 10, 21, 7, 28, 0, tzinfo=timezone.utc)


def _http_date(when: datetime) -> str:
    return format_datetime(when, usegmt=True)


def test_retry_after_seconds_header():
    result = ErrorClassifier().classify(429, headers={"Retry-After": "120"})
    assert result.retry_after == 120.0


def test_retry_after_http_date_measured_from_the_date_header():
    headers = {
        "retry-after": _http_date(DATE),
        "Date": _http_date(DATE - timedelta(seconds=30)),
    }
    assert ErrorClassifier().classify(503, headers=headers).retry_after == 30.0


def test_retry_after_http_date_measured_from_wall_time_without_a_date_header():
    classifier = ErrorClassifier(wall=lambda: (DATE - timedelta(seconds=45)).timestamp())
    assert classifier.classify(503, headers={"Retry-After": _http_date(DATE)}).retry_after == 45.0


def test_retry_after_date_in_the_past_means_now():
    assert retry_after_from_headers({"Retry-After": _http_date(DATE)}, lambda: 2e9) == 0.0


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "1500", "Retry-After": "2"}, 1.5),
        ({"RETRY-AFTER": " 7 "}, 7.0),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "-5"}, 0.0),
        ({"Retry-After": "nan"}, None),
        ({"Date": _http_date(DATE)}, None),
        ({}, None),
    ],
)
def test_retry_after_header_forms(headers, seconds):
    assert retry_after_from_headers(headers) == seconds


def test_retry_after_from_an_httpx_response():
    request = httpx.Request("GET", "https://api.example.com/v1/search")
    response = httpx.Response(429, headers={"Retry-After": "12"}, request=request)
    exc = httpx.HTTPStatusError("Too Many Requests", request=request, response=response)
    result = ErrorClassifier().classify(exc)
    assert (result.category, result.retry_after) == ("rate_limit", 12.0)


def test_retry_after_attribute_wins_over_headers_and_message():
    exc = InjectedHTTPError(
        "retry after 99s", status=429, headers={"Retry-After": "60"}, retry_after=30.0
    )
    assert ErrorClassifier().classify(exc).retry_after == 30.0


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("search: HTTP 429 Too Many Requests (retry after 30s)", 30.0),
        ("Retry-After: 7", 7.0),
        ("Please try again in 6ms.", 0.006),
        ("Please try again in 18.642s. Visit https://platform.openai.com", 18.642),
        ("Please try again in 1m26.4s.", 86.4),
        ("Retrying in 2 seconds (attempt 2/10)", 2.0),
        ("please retry after 2 minutes", 120.0),
        ("请在30秒后重试", 30.0),
        ("请 2 分钟后再试", 120.0),
        ("try again in a moment", None),
        ("HTTP 503 Service Unavailable", None),
    ],
)
def test_retry_after_from_message(text, seconds):
    expected = None if seconds is None else pytest.approx(seconds)
    assert retry_after_from_message(text) == expected
    assert ErrorClassifier().classify(text).retry_after == expected


# -- our injected faults ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failure", "kind", "category", "retry_after"),
    [
        (Failure("timeout", "search timed out after 30s"), "transient", "timeout", None),
        (Failure("connection", "search: connection refused"), "transient", "connection", None),
        (
            Failure(
                "http",
                "search: HTTP 429 Too Many Requests (retry after 30s)",
                status=429,
                headers={"Retry-After": "30"},
                retry_after=29.5,
            ),
            "transient",
            "rate_limit",
            29.5,
        ),
        (
            Failure("http", "search: HTTP 503 Service Unavailable", status=503),
            "transient",
            "server_error",
            None,
        ),
        (Failure("http", "search: HTTP 401 Unauthorized", status=401), "persistent", "auth", None),
        (
            Failure("http", "search: HTTP 422 Unprocessable Entity", status=422),
            "persistent",
            "validation",
            None,
        ),
    ],
    ids=["timeout", "connection", "rate_limit", "503", "401", "422"],
)
def test_injected_exceptions(failure, kind, category, retry_after):
    result = ErrorClassifier().classify(failure_exception(failure))
    assert (result.kind, result.category, result.retry_after) == (kind, category, retry_after)


def test_injected_timeout_is_recognised_by_type_not_wording():
    result = ErrorClassifier().classify(InjectedTimeout("the tool was slow"))
    assert (result.category, result.reason) == ("timeout", "exception InjectedTimeout")


# -- trace events -----------------------------------------------------------------------------


def test_classify_event_reads_traced_results_and_success_resets():
    policy = ClassifierPolicy(escalate_after=2, window=2)
    classifier = ErrorClassifier(policy)
    fail = ToolResult(step=1, t=0.0, tool="search", ok=False, error_type="ReadTimeout", message="")
    first = classifier.classify_event(fail)
    assert first is not None and (first.category, first.escalated) == ("timeout", False)
    assert classifier.classify_event(ToolResult(step=2, t=0.0, tool="search", ok=True)) is None
    assert classifier.transient_failures("search") == 0
    http = ToolResult(
        step=3, t=0.0, tool="search", ok=False, error_type="HTTPStatusError", status=429
    )
    result = classifier.classify_event(http)
    assert result is not None and (result.category, result.reason) == ("rate_limit", "status 429")
    again = classifier.classify_event(http)
    assert again is not None and again.escalated
    refusal = ModelResult(step=4, t=0.0, model="gpt", ok=False, message="I'm sorry, but I can't.")
    model = classifier.classify_event(refusal)
    assert model is not None and model.category == "llm_refusal"


# -- escalation -------------------------------------------------------------------------------


def test_repeated_transient_failures_of_a_tool_escalate_until_it_succeeds():
    classifier = ErrorClassifier(ClassifierPolicy(escalate_after=3, window=5))
    results = [classifier.classify(TimeoutError(), tool="search") for _ in range(4)]
    assert [r.kind for r in results] == ["transient", "transient", "persistent", "persistent"]
    assert [r.escalated for r in results] == [False, False, True, True]
    assert results[2].category == "timeout"
    assert results[2].reason == (
        "exception TimeoutError; escalated to persistent: 3 transient failures of tool 'search' "
        "in its last 3 outcomes since its last success (escalate_after=3, window=5)"
    )
    assert classifier.classify(TimeoutError(), tool="other").kind == "transient"
    assert classifier.classify(TimeoutError()).kind == "transient"  # no tool, no history
    classifier.record_success("search")
    assert classifier.classify(TimeoutError(), tool="search").kind == "transient"


def test_retry_after_survives_escalation():
    classifier = ErrorClassifier(ClassifierPolicy(escalate_after=1, window=1))
    result = classifier.classify(429, tool="api", headers={"Retry-After": "9"})
    assert (result.kind, result.escalated, result.retry_after) == ("persistent", True, 9.0)


def test_escalation_can_be_switched_off_and_reset():
    off = ErrorClassifier(ClassifierPolicy(escalate=False, escalate_after=1, window=1))
    assert not off.classify(TimeoutError(), tool="search").escalated
    on = ErrorClassifier(ClassifierPolicy(escalate_after=2, window=2))
    on.classify(TimeoutError(), tool="a")
    on.classify(TimeoutError(), tool="b")
    on.reset("a")
    assert (on.transient_failures("a"), on.transient_failures("b")) == (0, 1)
    on.reset()
    assert on.transient_failures("b") == 0


ERRORS = {
    "transient": TimeoutError("timed out"),
    "persistent": PermissionError("denied"),
    "unknown": RuntimeError("???"),
}


def _brute_force(history: list[tuple[str, str]], tool: str, after: int, window: int) -> bool:
    """The rule, stated directly: among the tool's last ``window`` outcomes since its last
    success, at least ``after`` transient failures, the newest (a transient one) included."""
    mine = [outcome for t, outcome in history if t == tool]
    since = mine[len(mine) - mine[::-1].index("ok") :] if "ok" in mine else mine
    recent = since[-window:]
    return recent[-1] == "transient" and recent.count("transient") >= after


# Failures outnumber successes, so streaks long enough to slide out of the window are common.
OUTCOMES = st.sampled_from(["transient", "transient", "transient", "persistent", "unknown", "ok"])


@settings(max_examples=300, deadline=None)
@given(
    after=st.integers(1, 5),
    extra=st.integers(0, 4),
    steps=st.lists(st.tuples(st.sampled_from(["search", "book"]), OUTCOMES), max_size=60),
)
@example(  # a transient failure slides out of the window: 1 of the last 2, not 2
    after=2,
    extra=0,
    steps=[("search", o) for o in ("transient", "unknown", "unknown", "transient")],
)
def test_escalation_matches_the_brute_force_rule(after, extra, steps):
    window = after + extra
    classifier = ErrorClassifier(ClassifierPolicy(escalate_after=after, window=window))
    history: list[tuple[str, str]] = []
    for tool, outcome in steps:
        history.append((tool, outcome))
        if outcome == "ok":
            classifier.record_success(tool)
            continue
        result = classifier.classify(ERRORS[outcome], tool=tool)
        expected = _brute_force(history, tool, after, window)
        assert result.escalated == expected, history
        assert result.kind == ("persistent" if expected else outcome)
        assert classifier.transient_failures(tool) <= window


# -- the policy from plain dicts --------------------------------------------------------------


def test_policy_from_dict_extends_the_defaults():
    policy = ClassifierPolicy.from_dict(
        {
            "status": {"409": "server_error", 418: {"kind": "transient"}, "5xx": "timeout"},
            "exceptions": {"ToolBusy": {"category": "server_error", "kind": "transient"}},
            "patterns": {
                "not_found": ["no flights? match"],
                "rate_limit": [{"pattern": "insufficient_quota", "kind": "persistent"}],
            },
            "escalate_after": 3,
        },
        "profile flaky.toml [escape.classifier]",
    )
    classifier = ErrorClassifier(policy)

    def kind_category(error: Any) -> tuple[str, str]:
        result = classifier.classify(error)
        return result.kind, result.category

    assert kind_category(409) == ("transient", "server_error")
    assert kind_category(418) == ("transient", "unknown")
    assert classifier.classify(503).category == "server_error"  # listed: still the table's
    assert classifier.classify(507).category == "timeout"  # the new 5xx default
    assert classifier.classify(404).category == "not_found"  # defaults kept

    class ToolBusy(Exception):
        pass

    assert kind_category(ToolBusy()) == ("transient", "server_error")
    assert kind_category("No flights match your dates") == ("persistent", "not_found")
    quota = next(e for e in CORPUS if e["id"] == "openai-insufficient-quota")["message"]
    # user rules come before the status a message names ("Error code: 429")
    assert kind_category(quota) == ("persistent", "rate_limit")
    assert (policy.escalate_after, policy.window) == (3, 10)


def test_window_defaults_to_at_least_escalate_after():
    assert ClassifierPolicy.from_dict({"escalate_after": 12}).window == 12


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([1], "w: classifier must be a table/dict, got [1]"),
        (
            {"windw": 3},
            "w: unknown key 'windw'; allowed: status, exceptions, patterns, escalate, "
            "escalate_after, window",
        ),
        ({"status": 5}, "w: status: expected a table/dict, got 5"),
        ({"status": {"700": "timeout"}}, "w: status.700: expected an HTTP status 100-599"),
        ({"status": {"429": "flaky"}}, "w: status.429: unknown category 'flaky'; allowed: timeout"),
        (
            {"status": {"429": {"kind": "sometimes"}}},
            "w: status.429.kind: unknown kind 'sometimes'",
        ),
        ({"status": {"429": {"category": "auth", "why": 1}}}, "w: status.429: unknown key 'why'"),
        ({"status": {"429": 3}}, "w: status.429: expected a category name or"),
        ({"exceptions": {"not a name": "timeout"}}, "w: exceptions.not a name: expected an"),
        ({"patterns": {"flaky": ["x"]}}, "w: patterns.flaky: unknown category 'flaky'"),
        ({"patterns": {"timeout": ["("]}}, "w: patterns.timeout[0]: invalid regular expression"),
        ({"patterns": {"timeout": 3}}, "w: patterns.timeout: expected a list of regular"),
        ({"patterns": {"timeout": [""]}}, "w: patterns.timeout[0]: expected a non-empty"),
        ({"patterns": {"timeout": [{"regex": "x"}]}}, "w: patterns.timeout[0]: expected a regex"),
        ({"escalate": "yes"}, "w: escalate: expected a boolean, got 'yes'"),
        ({"escalate_after": 0}, "w: escalate_after: must be >= 1, got 0"),
        ({"escalate_after": True}, "w: escalate_after: expected an integer >= 1, got True"),
        ({"window": "10"}, "w: window: expected an integer >= 1, got '10'"),
        ({"escalate_after": 5, "window": 4}, "w: window: must be >= escalate_after (5), got 4"),
        ({"window": 4}, "w: window: must be >= escalate_after (5), got 4"),
    ],
)
def test_policy_from_dict_errors_name_where_the_key_and_what_is_allowed(raw, message):
    with pytest.raises(ChaosConfigError) as info:
        ClassifierPolicy.from_dict(raw, "w")
    assert str(info.value).startswith(message)


def test_policy_checks_its_fields_when_built_directly():
    with pytest.raises(
        ChaosConfigError,
        match=r"^ClassifierPolicy: window: must be >= escalate_after \(4\), got 2$",
    ):
        ClassifierPolicy(escalate_after=4, window=2)
    with pytest.raises(ChaosConfigError, match="^ClassifierPolicy: escalate: expected a boolean"):
        ClassifierPolicy(escalate=1)  # type: ignore[arg-type]


def test_default_policy_tables_are_read_only():
    policy = ClassifierPolicy()
    with pytest.raises(TypeError):
        policy.status[429] = ("persistent", "auth")  # type: ignore[index]
    assert isinstance(ErrorClassifier().classify(429), ErrorClass)


def test_names_that_moved_out_of_classify_are_still_importable_from_it():
    """The tables, the policy and Retry-After parsing live in their own modules now; code that
    imported them from ``escape.classify`` (or from ``escape``) keeps working."""
    from pytest_agentchaos import escape
    from pytest_agentchaos.escape import classify

    moved = {
        error_tables: [
            "CATEGORIES",
            "CATEGORY_KINDS",
            "DEFAULT_EXCEPTIONS",
            "DEFAULT_PATTERNS",
            "DEFAULT_STATUS",
            "DEFAULT_STATUS_CLASSES",
            "KINDS",
            "MessageRule",
        ],
        classifier_policy: ["ClassifierPolicy"],
        retry_after: ["Headers", "retry_after_from_headers", "retry_after_from_message"],
    }
    for module, names in moved.items():
        for name in names:
            assert getattr(classify, name) is getattr(module, name), name
            assert name in classify.__all__
    for name in escape.__all__:
        assert getattr(escape, name) is not None
    assert (
        escape.ClassifierPolicy is ClassifierPolicy
        and escape.MessageRule is error_tables.MessageRule
    )
