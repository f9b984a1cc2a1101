"""A value handed to the trace as its JSON text (``captured_json``): read once, recorded as it
is when it fits, and always recorded exactly as ``capture`` records the value the text stands
for, hostile texts included (constants JSON has not, ints too long to read, 10 MB strings,
nesting deeper than the decoder goes, bytes that are not UTF-8)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.trace.values import (
    DEFAULT_MAX_VALUE,
    TRUNCATED,
    capture,
    captured_json,
)

LIMITS = [100, 300, 1000, 4096, DEFAULT_MAX_VALUE]

_text = st.text(st.characters(codec="utf-8"), max_size=20) | st.text(
    st.sampled_from('"\\\n\t\x00\x1f\x7f\u2028é中😀'), max_size=20
)
_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
)
json_data = st.recursive(
    _leaves,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_text, inner, max_size=5),
    max_leaves=30,
)
#: how the JSON text of a value may be written: compact as pydantic writes it, spaced as the
#: standard library does, escaped to ASCII or not
writers = st.sampled_from(
    [
        lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False),
        lambda v: json.dumps(v, ensure_ascii=False),
        lambda v: json.dumps(v, separators=(",", ":")),
        lambda v: json.dumps(v, indent=2),
    ]
)


def json_len(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, allow_nan=False))


def recorded(text: str | bytes, limit: int) -> Any:
    captured = captured_json(text)
    assert captured is not None
    return capture(captured, limit)


# -- the same record as the value itself ---------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(value=json_data, write=writers, limit=st.sampled_from(LIMITS))
@example(value=[1e15] * 40, write=lambda v: "[" + ",".join(["1e15"] * 40) + "]", limit=300)
@example(value="\x01" * 400, write=lambda v: json.dumps(v), limit=1000)
def test_a_json_text_records_as_the_value_it_stands_for(value, write, limit):
    text = write(value)
    assert recorded(text, limit) == capture(value, limit)
    assert recorded(text.encode(), limit) == capture(value, limit)


@settings(max_examples=300, deadline=None)
@given(value=json_data, write=writers)
@example(value=9e15, write=lambda v: "9e15")  # the most a text grows: 4.5x
@example(value=[1e15] * 40, write=lambda v: "[" + ",".join(["1e15"] * 40) + "]")
@example(value=["\x01" * 50, {"a": 9e15}], write=lambda v: json.dumps(v, separators=(",", ":")))
def test_the_size_it_claims_bounds_the_json_text_capture_measures(value, write):
    text = write(value)
    captured = captured_json(text)
    assert captured is not None
    assert json_len(captured.value) <= captured.size


def test_what_fits_is_recorded_as_read_and_what_does_not_is_cut_as_any_value():
    text = json.dumps({"content": [{"type": "text", "text": "hello"}], "isError": False})
    captured = captured_json(text)
    assert captured is not None
    assert capture(captured) is captured.value  # read once, not encoded again
    big = json.dumps({"text": "x" * 50_000, "more": ["y" * 50_000]})
    cut = recorded(big, DEFAULT_MAX_VALUE)
    assert cut == capture(json.loads(big), DEFAULT_MAX_VALUE)
    assert json_len(cut) <= DEFAULT_MAX_VALUE
    assert set(cut) == {"text", "more"}  # a dict keeps its keys, its values cut


def test_a_10_mb_string_becomes_the_same_size_marker():
    value = 'ab"\\' * 2_500_000
    cut = recorded(json.dumps(value), DEFAULT_MAX_VALUE)
    assert cut == capture(value, DEFAULT_MAX_VALUE)
    assert cut[TRUNCATED] == "size" and json_len(cut) <= DEFAULT_MAX_VALUE


def test_equal_values_written_differently_record_equal():
    a = captured_json('{"a": [1, 2.5, "x"], "b": null}')
    b = captured_json('{"a":[1,2.5,"x"],"b":null}')
    assert a is not None and b is not None
    assert capture(a) == capture(b) == {"a": [1, 2.5, "x"], "b": None}


def test_a_captured_value_is_recorded_the_same_at_every_limit():
    value = {"k": "v" * 500, "n": list(range(100))}
    for limit in LIMITS:
        assert recorded(json.dumps(value), limit) == capture(value, limit)


# -- hostile texts: none is read; the caller records the value it came from -------------------


@pytest.mark.parametrize(
    "text",
    [
        "NaN",
        '{"x": Infinity}',
        "[-Infinity]",
        "[1e400]",  # reads as an infinity
        "[-1e400]",
        "[" + "9" * 4301 + "]",  # an int too long for Python to read
        "[" * 100_000 + "]" * 100_000,  # deeper than the decoder recurses
        '{"a": 1} {"b": 2}',  # text after the value
        "{'a': 1}",
        "",
        '"unterminated',
        b"\xff\xfe",  # not UTF-8
    ],
    ids=lambda t: repr(t[:20]),
)
def test_text_that_is_not_strict_json_data_is_not_read(text):
    assert captured_json(text) is None


def test_surrounding_whitespace_and_escaped_lone_surrogates_read_as_python_reads_them():
    assert recorded(' \n{"a": "\\ud800"} \n', 1000) == capture({"a": "\ud800"}, 1000)


def test_a_decoder_that_raises_anything_means_no_reading():
    def broken(text: Any) -> Any:
        raise RuntimeError("broken reader")

    assert captured_json("[1]", broken) is None
    assert captured_json("[1]", json.loads) is not None


def test_a_captured_value_elsewhere_than_at_the_top_is_only_its_repr():
    captured = captured_json("[1]")
    assert captured is not None
    assert capture([captured]) == [repr(captured)]  # recorded, never trusted inside a value
    assert "Captured" in repr(captured)


def test_floats_read_exactly():
    values = [0.1, 1e16, 5e-324, -0.0, 1.7976931348623157e308, 2.2250738585072014e-308]
    got = recorded(json.dumps(values), 1000)
    assert got == values
    assert math.copysign(1.0, got[3]) == -1.0
