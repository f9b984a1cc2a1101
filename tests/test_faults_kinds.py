"""Fault kinds: what each decides for a call and the effect that decision has."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.faults import KINDS, CallInfo, FaultKind, garble, parse_fault, register
from pytest_agentchaos.faults.effects import Effect, Failure

CALL = CallInfo("tool", "search_flights", 1, 0.0, {"origin": "Oslo", "passengers": 2})
HTML_PAGE_MARK = "<html>"


def kind(**raw) -> FaultKind:
    return parse_fault(raw, "faults[0]").kind


def draws(k: FaultKind, n: int = 300, call: CallInfo = CALL) -> list[dict]:
    return [k.decide(random.Random(seed), call) for seed in range(n)]


# -- timeout ----------------------------------------------------------------------------


def test_timeout_default_is_30_virtual_seconds_then_a_timeout_failure():
    k = kind(kind="timeout")
    detail = k.decide(random.Random(0), CALL)
    assert detail == {"seconds": 30.0}
    effect = k.effect(detail, CALL)
    assert effect.delay == 30.0
    assert effect.failure is not None and effect.failure.kind == "timeout"
    assert "search_flights" in effect.failure.message and "30s" in effect.failure.message
    assert effect.args is None and not effect.replay and effect.transform is None


def test_timeout_seconds_range_draws_within_range():
    seconds = [d["seconds"] for d in draws(kind(kind="timeout", seconds=[1, 5]))]
    assert all(1 <= s <= 5 for s in seconds)
    assert len(set(seconds)) > 50
    assert all(round(s, 3) == s for s in seconds)
    assert kind(kind="timeout", seconds=[2.5, 2.5]).decide(random.Random(1), CALL) == {
        "seconds": 2.5
    }


# -- http_error -------------------------------------------------------------------------


def test_http_error_draws_only_from_the_status_list():
    statuses = [d["status"] for d in draws(kind(kind="http_error", status=[500, 502, 503]))]
    assert set(statuses) == {500, 502, 503}


def test_http_error_default_is_500_with_a_json_body():
    k = kind(kind="http_error")
    detail = k.decide(random.Random(0), CALL)
    assert detail == {"status": 500, "body": None}
    failure = k.effect(detail, CALL).failure
    assert failure.kind == "http" and failure.status == 500
    assert failure.body is None  # none given: each seam writes its own error body
    assert failure.any_body() == {"error": "Internal Server Error", "status": 500}
    assert failure.message == "search_flights: HTTP 500 Internal Server Error"


def test_http_error_custom_body_is_passed_through():
    k = kind(kind="http_error", status=503, body="upstream down")
    detail = k.decide(random.Random(0), CALL)
    failure = k.effect(detail, CALL).failure
    assert (failure.status, failure.body) == (503, "upstream down")
    assert "Service Unavailable" in failure.message


def test_http_error_unassigned_status_still_works():
    k = kind(kind="http_error", status=599)
    failure = k.effect(k.decide(random.Random(0), CALL), CALL).failure
    assert failure.status == 599 and failure.any_body() == {"error": "Error", "status": 599}


@pytest.mark.parametrize("status", [399, 600, 200, [500, 302]])
def test_http_status_outside_4xx_5xx_is_rejected(status):
    with pytest.raises(ChaosConfigError, match=r"faults\[0\]: status.*400-599"):
        kind(kind="http_error", status=status)


def test_http_status_below_100_message_says_400_to_599():
    with pytest.raises(ChaosConfigError, match="400-599"):
        kind(kind="http_error", status=99)


@pytest.mark.parametrize("status", ["500", 500.0, True, []])
def test_http_status_must_be_integers(status):
    with pytest.raises(ChaosConfigError, match=r"faults\[0\]: status"):
        kind(kind="http_error", status=status)


# -- rate_limit -------------------------------------------------------------------------


def test_rate_limit_is_429_with_retry_after_header_and_value():
    k = kind(kind="rate_limit")
    detail = k.decide(random.Random(0), CALL)
    assert detail == {"status": 429, "retry_after": 30.0}
    failure = k.effect(detail, CALL).failure
    assert failure.kind == "http" and failure.status == 429
    assert failure.headers == {"Retry-After": "30"}
    assert failure.retry_after == 30.0
    assert failure.any_body() == {"error": "Too Many Requests", "retry_after": 30.0}
    assert "429" in failure.message and "30s" in failure.message


def test_rate_limit_retry_after_range():
    values = [d["retry_after"] for d in draws(kind(kind="rate_limit", retry_after=[5, 30]))]
    assert all(5 <= v <= 30 for v in values)
    assert len(set(values)) > 50


@pytest.mark.parametrize("retry_after", [17.342, 1234.564, 1234567.5])
def test_retry_after_header_is_integer_seconds_not_less_than_retry_after(retry_after):
    failure = (
        kind(kind="rate_limit").effect({"status": 429, "retry_after": retry_after}, CALL).failure
    )
    header = failure.headers["Retry-After"]
    assert re.fullmatch(r"\d+", header), header
    assert int(header) >= retry_after


# -- connection_error, latency ----------------------------------------------------------


def test_connection_error_fails_without_delay():
    k = kind(kind="connection_error")
    detail = k.decide(random.Random(0), CALL)
    effect = k.effect(detail, CALL)
    assert effect.delay == 0
    assert effect.failure.kind == "connection"
    assert "search_flights" in effect.failure.message


def test_latency_delays_but_does_not_fail():
    k = kind(kind="latency")
    detail = k.decide(random.Random(0), CALL)
    assert detail == {"seconds": 2.0}
    assert k.effect(detail, CALL) == Effect(delay=2.0)


def test_latency_range():
    seconds = [d["seconds"] for d in draws(kind(kind="latency", seconds=[0.5, 3.0]))]
    assert all(0.5 <= s <= 3.0 for s in seconds) and len(set(seconds)) > 50


# -- garbled_output ---------------------------------------------------------------------


def test_garbled_output_draws_both_modes_by_default_and_one_when_given():
    assert {d["mode"] for d in draws(kind(kind="garbled_output"))} == {"truncate", "non_json"}
    assert {d["mode"] for d in draws(kind(kind="garbled_output", mode="truncate"))} == {"truncate"}


def _transform(mode: str):
    k = kind(kind="garbled_output", mode=mode)
    effect = k.effect({"mode": mode}, CALL)
    assert effect.failure is None and effect.delay == 0
    return effect.transform


def test_truncate_cuts_strings_and_bytes_in_half():
    cut = _transform("truncate")
    assert cut("hello world!") == "hello "
    assert cut(b'{"ok": true}') == b'{"ok":'
    assert cut("x") == "{" and cut("") == "{" and cut(b"x") == b"{"


def test_truncate_turns_structured_output_into_broken_json():
    cut = _transform("truncate")
    value = {"flights": [{"id": "SK123", "price": 99.5}], "count": 1}
    out = cut(value)
    assert isinstance(out, str)
    assert json.dumps(value).startswith(out) and 0 < len(out) < len(json.dumps(value))
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)


def test_non_json_returns_an_html_error_page_of_the_same_kind():
    page = _transform("non_json")
    for value in ("ok", {"a": 1}, [1, 2], 42):
        out = page(value)
        assert isinstance(out, str) and HTML_PAGE_MARK in out
        with pytest.raises(json.JSONDecodeError):
            json.loads(out)
    assert isinstance(page(b"{}"), bytes) and HTML_PAGE_MARK.encode() in page(b"{}")


def test_garble_function_matches_the_effect():
    assert garble("truncate", "abcdef") == "abc"
    assert garble("non_json", b"x").startswith(b"<html>")


# -- repeated_output, malformed_params --------------------------------------------------


def test_repeated_output_only_with_a_previous_output_and_replays():
    k = kind(kind="repeated_output")
    assert k.decide(random.Random(0), CALL) is None
    with_previous = CallInfo("tool", "search", 2, 0.0, {}, None, True)
    detail = k.decide(random.Random(0), with_previous)
    assert detail == {}
    effect = k.effect(detail, with_previous)
    assert effect.replay is True and effect.failure is None


def test_malformed_params_effect_replaces_args_without_touching_the_call():
    k = kind(kind="malformed_params", mutations="missing_required")
    schema = {
        "type": "object",
        "required": ["origin"],
        "properties": {"origin": {"type": "string"}},
    }
    c = CallInfo("tool", "book", 1, 0.0, {"origin": "Oslo", "passengers": 2}, schema)
    detail = k.decide(random.Random(0), c)
    assert detail == {
        "mutation": "missing_required",
        "key": "origin",
        "original": "Oslo",
        "repairable": False,
    }
    assert k.effect(detail, c).args == {"passengers": 2}
    assert c.args == {"origin": "Oslo", "passengers": 2}


def test_kind_channels():
    assert KINDS["malformed_params"].channels == ("tool", "http")
    for name in (
        "timeout",
        "http_error",
        "rate_limit",
        "connection_error",
        "latency",
        "garbled_output",
        "repeated_output",
    ):
        assert set(KINDS[name].channels) == {"tool", "http", "model"}


def test_every_decision_is_json_able_and_its_effect_depends_only_on_the_detail():
    c = CallInfo("tool", "book", 3, 1.0, {"date": "2025-03-14", "n": 2}, None, True)
    for name in sorted(KINDS):
        k = KINDS[name]()
        detail = k.decide(random.Random(7), c)
        if detail is None:
            continue
        again = json.loads(json.dumps(detail))
        assert again == detail
        a, b = k.effect(detail, c), k.effect(again, c)
        assert (a.delay, a.failure, a.args, a.replay) == (b.delay, b.failure, b.args, b.replay), (
            name
        )


# -- config errors ----------------------------------------------------------------------


def test_unknown_kind_lists_allowed_kinds():
    with pytest.raises(ChaosConfigError) as exc:
        parse_fault({"kind": "meteor"}, "faults[2]")
    msg = str(exc.value)
    assert msg.startswith("faults[2]: kind: unknown fault kind 'meteor'; allowed:")
    for name in (
        "timeout",
        "http_error",
        "rate_limit",
        "connection_error",
        "latency",
        "malformed_params",
        "repeated_output",
        "garbled_output",
    ):
        assert name in msg


def test_missing_kind_and_non_table_fault():
    with pytest.raises(ChaosConfigError, match=r"faults\[0\]: missing 'kind'"):
        parse_fault({"seconds": 3}, "faults[0]")
    with pytest.raises(ChaosConfigError, match="must be a table/dict"):
        parse_fault("timeout", "faults[0]")


def test_unknown_key_names_key_and_allowed_keys():
    with pytest.raises(ChaosConfigError) as exc:
        parse_fault({"kind": "timeout", "secs": 5}, "faults[0]")
    msg = str(exc.value)
    assert "'secs'" in msg and "'timeout'" in msg
    assert "seconds" in msg and "probability" in msg and "window" in msg


def test_unknown_key_on_kind_constructor():
    with pytest.raises(
        ChaosConfigError, match="unknown key 'status' for kind 'latency'; allowed: seconds"
    ):
        KINDS["latency"](status=500)
    with pytest.raises(ChaosConfigError, match="allowed: none"):
        KINDS["connection_error"](seconds=1)


@pytest.mark.parametrize(
    ("raw", "fragments"),
    [
        ({"kind": "timeout", "seconds": -1}, ["seconds", ">= 0", "-1"]),
        ({"kind": "latency", "seconds": [-1, 2]}, ["seconds", ">= 0"]),
        ({"kind": "latency", "seconds": [5, 1]}, ["seconds", "low 5", "above high 1"]),
        ({"kind": "latency", "seconds": [1, 2, 3]}, ["seconds", "[low, high]"]),
        (
            {"kind": "rate_limit", "retry_after": "soon"},
            ["retry_after", "expected a finite number"],
        ),
        (
            {"kind": "garbled_output", "mode": "reverse"},
            ["mode", "'reverse'", "truncate, non_json"],
        ),
        (
            {"kind": "malformed_params", "mutations": ["explode"]},
            ["mutations[0]", "'explode'", "wrong_type"],
        ),
    ],
)
def test_bad_parameters_name_the_key_and_what_is_allowed(raw, fragments):
    with pytest.raises(ChaosConfigError) as exc:
        parse_fault(raw, "faults[0]")
    assert str(exc.value).startswith("faults[0]: ")
    for fragment in fragments:
        assert fragment in str(exc.value)


def test_kinds_compare_by_values():
    assert kind(kind="timeout", seconds=5) == kind(kind="timeout", seconds=[5, 5])
    assert kind(kind="timeout", seconds=5) != kind(kind="timeout", seconds=6)
    assert kind(kind="timeout", seconds=5) != kind(kind="latency", seconds=5)
    assert hash(kind(kind="http_error", status=[500, 503])) == hash(
        kind(kind="http_error", status=[500, 503])
    )


def test_register_requires_a_name():
    class Nameless(FaultKind):
        pass

    with pytest.raises(ValueError, match="Nameless has no name"):
        register(Nameless)
    assert "" not in KINDS


def test_failure_defaults():
    f = Failure("timeout", "m")
    assert (f.status, f.body, dict(f.headers), f.retry_after) == (None, None, {}, None)


# -- protocol_error ----------------------------------------------------------------------------


def test_protocol_error_on_a_python_tool_raises_injected_protocol_error() -> None:
    from pytest_agentchaos import Chaos, InjectedProtocolError

    with Chaos.create(faults=[{"kind": "protocol_error", "code": [-32602, -32001]}], seed=4) as c:
        tool = c.wrap(lambda q: q, name="search")
        with pytest.raises(InjectedProtocolError) as caught:
            tool("x")
    assert isinstance(caught.value, RuntimeError)
    assert caught.value.code in (-32602, -32001)
    detail = c.trace.faults()[0].detail
    assert detail["code"] == caught.value.code
    assert detail["message"] == {-32602: "Invalid params", -32001: "Server error"}[detail["code"]]
    assert str(caught.value) == detail["message"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"code": 5}, "faults[0]: code: expected a negative JSON-RPC error code (e.g. -32603)"),
        ({"code": "x"}, "faults[0]: code: expected an integer"),
        ({"channels": "http"}, "faults[0]: kind 'protocol_error' cannot apply to channels"),
    ],
)
def test_protocol_error_refuses_a_bad_table_in_one_line(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ChaosConfigError) as caught:
        parse_fault({"kind": "protocol_error", **raw}, "faults[0]")
    assert str(caught.value).startswith(message), str(caught.value)
