"""What the trace keeps of a value: any value becomes bounded, plain JSON data, never failing.

An agent's tool may return anything (a 10 MB string, an object whose ``repr`` raises, a list
nested 2,000 deep, a dict that contains itself): the trace must still record it, write it and
read it back, the agent must still get the real value, and loop detection must still see
repeats among values cut to the size limit.
"""

from __future__ import annotations

import copy
import enum
import io
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape.observer import LoopObserver
from pytest_agentchaos.saferepr import MAX_REPR, safe_repr, safe_str
from pytest_agentchaos.trace import Detection, ToolCall, ToolResult, Trace
from pytest_agentchaos.trace import writer as writer_module
from pytest_agentchaos.trace.values import (
    DEFAULT_MAX_VALUE,
    MAX_DEPTH,
    TRUNCATED,
    capture,
    deep_digest,
)

MB = 1_000_000

#: The JSON text of the largest size marker with an empty head. ``capture`` keeps
#: ``limit - 200`` characters of head, leaving 200 for the marker's own keys, so its result is
#: at most ``limit`` characters of JSON; below ~290 the marker itself is the floor.
MARKER_FLOOR = len(json.dumps({TRUNCATED: "size", "size": 10**18, "digest": "0" * 16, "head": ""}))


def json_len(value: Any) -> int:
    """Characters of the JSON text the trace writes for ``value`` (it writes UTF-8 text)."""
    return len(json.dumps(value, ensure_ascii=False, allow_nan=False))


def bound(limit: int) -> int:
    return max(limit, MARKER_FLOOR)


def nested_list(depth: int, leaf: Any = None) -> list[Any]:
    """``[[[...[leaf]...]]]`` with ``depth`` lists (built without recursion)."""
    outer: list[Any] = []
    current = outer
    for _ in range(depth - 1):
        inner: list[Any] = []
        current.append(inner)
        current = inner
    if leaf is not None:
        current.append(leaf)
    return outer


def list_depth(value: Any) -> int:
    """How many lists deep the first-element chain of ``value`` goes."""
    depth = 0
    while isinstance(value, list):
        depth += 1
        value = value[0] if value else None
    return depth


def find_depth_marker(value: Any) -> dict[str, Any]:
    while isinstance(value, list):
        value = value[0]
    assert isinstance(value, dict) and value.get(TRUNCATED) == "depth", value
    return value


# -- hostile and unusual objects -----------------------------------------------------------


class Opaque:
    """A non-JSON object with a stable repr."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __repr__(self) -> str:
        return f"<Opaque {self.n}>"


class PrettyForHypothesis:
    """Hypothesis prints failing examples with its pretty printer, which would call the
    hostile ``__repr__``: give it something to print instead."""

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(f"{type(self).__name__}()")


class RaisingRepr(PrettyForHypothesis):
    def __repr__(self) -> str:
        raise RuntimeError("repr exploded")


class NonStringRepr(PrettyForHypothesis):
    def __repr__(self) -> Any:
        return 42


class HugeRepr:
    def __repr__(self) -> str:
        return "r" * (10 * MB)


class InterruptingRepr:
    def __repr__(self) -> str:
        raise KeyboardInterrupt


class RaisingItems(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        raise RuntimeError("items exploded")


class NotPairsItems(Mapping):  # type: ignore[type-arg]
    """A (buggy) mapping whose items() yields something other than pairs."""

    def __getitem__(self, key: Any) -> Any:
        return 1

    def __iter__(self) -> Iterator[Any]:
        return iter(["a"])

    def __len__(self) -> int:
        return 1

    def items(self) -> Any:
        return [1, 2, 3]


class UnboundProxy:
    """Like an unbound lazy proxy (werkzeug's LocalProxy outside a context): every attribute
    lookup, ``__class__`` included, raises."""

    @property  # type: ignore[misc]
    def __class__(self) -> Any:
        raise RuntimeError("working outside of application context")


class Color(enum.Enum):
    RED = 1


class Level(enum.IntEnum):
    HIGH = 3


class Status(str, enum.Enum):  # the pre-3.11 "string enum" idiom, still everywhere
    OK = "ok"


def released_memoryview() -> memoryview:
    view = memoryview(b"gone")
    view.release()
    return view


# -- hypothesis strategies -------------------------------------------------------------------

# Characters JSON has to escape (and that escape again when JSON text is put in a string).
_TRICKY = st.sampled_from(['"', "\\", "\n", "\x00", "\t", "a", "z", " ", "é", "€", "😀", "/"])
_text = st.text(_TRICKY, max_size=12) | st.text(max_size=12)
# Long strings cheaply: a short piece repeated, so sizes cross the limits under test.
_long_text = st.builds(
    lambda piece, n: piece * n, st.text(_TRICKY, min_size=1, max_size=4), st.integers(1, 1500)
)

_hashable_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities included
    | _text
    | st.binary(max_size=12)
    | st.builds(Opaque, st.integers(0, 9))
    | st.sampled_from([Color.RED, Level.HIGH])
)
_hashables = st.recursive(
    _hashable_leaves,
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3),
    max_leaves=4,
)
_leaves = (
    _hashable_leaves
    | _long_text
    | st.builds(RaisingRepr)
    | st.builds(NonStringRepr)
    | st.builds(bytearray, st.binary(max_size=12))
)
anything = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.sets(_hashables, max_size=4)
        | st.frozensets(_hashables, max_size=4)
        | st.dictionaries(_hashables, inner, max_size=4)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=16,
)
limits = st.sampled_from([0, 1, 64, 150, 200, 300, 1000, 4096, DEFAULT_MAX_VALUE]) | st.integers(
    0, 5000
)

_json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
)
json_data = st.recursive(
    _json_leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=16,
)


def mutate_everything(value: Any) -> None:
    """Change every mutable container reachable from ``value`` (as an agent might later)."""
    if isinstance(value, list):
        for item in value:
            mutate_everything(item)
        value.append("MUTATED")
        if len(value) > 1:
            value[0] = "MUTATED"
    elif isinstance(value, dict):
        for item in list(value.values()):
            mutate_everything(item)
        value["MUTATED"] = "MUTATED"
    elif isinstance(value, set):
        value.add("MUTATED")
    elif isinstance(value, bytearray):
        value.extend(b"MUTATED")
    elif isinstance(value, tuple):
        for item in value:
            mutate_everything(item)


# -- 1. properties of capture --------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(value=anything, limit=limits)
def test_capture_never_raises_and_gives_deterministic_json_data(value, limit):
    captured = capture(value, limit)
    json.dumps(captured, ensure_ascii=False, allow_nan=False)  # plain JSON data, no NaN
    json.dumps(captured, allow_nan=False)
    assert capture(value, limit) == captured  # deterministic


@settings(max_examples=100, deadline=None)
@given(value=anything, limit=limits)
# JSON text in a string: each \" and \\ of the head doubles when the marker is written.
@example(value="\\" * 3000, limit=1000)
@example(value='"' * 3000, limit=1000)
@example(value=["\\" * 3000], limit=1000)
def test_capture_json_text_stays_within_the_limit(value, limit):
    assert json_len(capture(value, limit)) <= bound(limit)


@settings(max_examples=100, deadline=None)
@given(value=anything, limit=limits)
def test_capture_of_captured_data_is_a_fixed_point_when_it_fits(value, limit):
    captured = capture(value, limit)
    if json_len(captured) <= limit:
        assert capture(captured, limit) == captured


@settings(max_examples=100, deadline=None)
@given(value=json_data, limit=limits)
def test_json_data_that_fits_is_kept_as_is(value, limit):
    captured = capture(value, limit)
    if json_len(value) <= limit:
        assert captured == value
    elif limit >= MARKER_FLOOR:
        assert captured[TRUNCATED] == "size"
        assert captured["size"] == json_len(value)
    else:  # below the marker's own size a short leaf may stay as it is
        assert captured == value or captured[TRUNCATED] == "size"


@settings(max_examples=100, deadline=None)
@given(value=anything, limit=st.sampled_from([300, DEFAULT_MAX_VALUE]))
def test_mutating_the_original_after_capture_does_not_change_the_capture(value, limit):
    captured = capture(value, limit)
    snapshot = json.loads(json.dumps(captured))
    mutate_everything(value)
    assert captured == snapshot


def test_containers_are_copied_not_shared():
    makers = [
        lambda: {"q": "paris", "page": 1},
        lambda: [{"id": 1}, {"id": 2}],
        lambda: {"nested": [{"id": 1}, {"id": 2}]},
        lambda: ([{"id": 1}],),
        lambda: {("t", 1): [{"id": 1}]},
    ]
    for make in makers:
        value = make()
        captured = capture(value)
        assert captured is not value
        mutate_everything(value)
        assert "MUTATED" not in json.dumps(captured)


# -- 2. hostile values ---------------------------------------------------------------------


def test_object_whose_repr_raises_is_named():
    text = safe_repr(RaisingRepr())
    assert text == "<RaisingRepr object (repr failed: RuntimeError)>"
    assert capture(RaisingRepr()) == text
    assert capture({"out": [RaisingRepr()]}) == {"out": [text]}


def test_object_whose_repr_returns_a_non_string_is_named():
    assert safe_repr(NonStringRepr()) == "<NonStringRepr object (repr failed: TypeError)>"
    assert capture([NonStringRepr()]) == ["<NonStringRepr object (repr failed: TypeError)>"]


def test_a_keyboard_interrupt_from_repr_is_not_swallowed():
    # Only Exceptions are named: Ctrl-C (and the harness's own BaseException halts) must get
    # through, or the user could not stop a run stuck in a pathological repr.
    with pytest.raises(KeyboardInterrupt):
        safe_repr(InterruptingRepr())
    with pytest.raises(KeyboardInterrupt):
        capture({"out": InterruptingRepr()})


def test_safe_repr_and_safe_str_cut_huge_text():
    assert len(safe_repr(HugeRepr())) == MAX_REPR
    assert safe_repr(HugeRepr(), 50) == "r" * 47 + "..."
    assert safe_str("s" * MB, 20) == "s" * 17 + "..."
    assert capture(HugeRepr()) == "r" * (MAX_REPR - 3) + "..."


class RaisingStr:
    def __str__(self) -> str:
        raise ValueError("nope")


class NonStringStr:
    def __str__(self) -> Any:
        return b"bytes"


def test_safe_str_names_a_failing_str():
    assert safe_str(RaisingStr()) == "<RaisingStr (str failed: ValueError)>"
    assert safe_str(NonStringStr()) == "<NonStringStr (str failed: TypeError)>"


@settings(max_examples=60, deadline=None)
@given(value=anything, limit=st.integers(3, 200))
def test_safe_repr_and_safe_str_never_raise_and_respect_the_limit(value, limit):
    for text in (safe_repr(value, limit), safe_str(value, limit)):
        assert isinstance(text, str)
        assert len(text) <= limit


def test_a_10_mb_string_becomes_a_size_marker_within_64_kib():
    big = "x" * (10 * MB)
    captured = capture(big)
    assert json_len(captured) <= DEFAULT_MAX_VALUE
    assert captured[TRUNCATED] == "size"
    assert captured["size"] == len(big) + 2  # characters of its JSON text
    assert captured["head"].startswith('"xxxx')
    assert len(captured["digest"]) == 16
    int(captured["digest"], 16)


def test_a_10_mb_json_document_returned_as_a_string_stays_within_64_kib():
    # Tools very often return JSON serialised to a string: its quotes are escaped once in the
    # JSON text and again when that text becomes the marker's head.
    document = json.dumps(
        [{"id": i, "name": f"item {i}", "tags": ["a", "b"]} for i in range(160_000)]
    )
    assert len(document) > 9 * MB
    captured = capture(document)
    assert captured[TRUNCATED] == "size"
    assert json_len(captured) <= DEFAULT_MAX_VALUE


def test_a_windows_path_heavy_output_stays_within_the_limit():
    listing = "\n".join(f"C:\\Users\\agent\\data\\file{i}.txt" for i in range(50_000))
    assert json_len(capture(listing)) <= DEFAULT_MAX_VALUE
    assert json_len(capture({"files": listing}, 4096)) <= 4096


def test_10_mb_of_bytes_is_a_small_marker_that_tells_contents_apart():
    blob = b"\x89PNG" + b"\x00" * (10 * MB)
    captured = capture(blob)
    assert json_len(captured) <= DEFAULT_MAX_VALUE
    assert captured[TRUNCATED] == "size"
    assert captured == capture(bytes(blob))
    assert capture(blob[:-1] + b"\x01")["digest"] != captured["digest"]


def test_small_bytes_are_decoded_text():
    assert capture(b"caf\xc3\xa9") == "café"
    assert capture({"raw": bytearray(b"ok")}) == {"raw": "ok"}


def test_a_list_nested_2000_deep_is_cut_at_max_depth():
    value = nested_list(2000, "bottom")
    captured = capture(value)
    json.dumps(captured, allow_nan=False)
    assert list_depth(captured) == MAX_DEPTH
    marker = find_depth_marker(captured)
    assert marker["type"] == "list"
    assert marker["digest"] == deep_digest(nested_list(2000 - MAX_DEPTH, "bottom"))
    assert capture(nested_list(2000, "other")) != captured  # what was cut still counts


def test_a_list_nested_100_deep_that_the_encoder_walks_is_kept_whole():
    # Only what the JSON encoder cannot walk is cut at MAX_DEPTH (see the module doc); every
    # reader of the trace is recursion-safe, so plain JSON data keeps its depth.
    value = nested_list(100, "bottom")
    captured = capture(value)
    assert captured == value and captured is not value
    assert list_depth(captured) == 100


def test_depth_markers_tell_structures_apart_below_the_cut():
    # Two different outputs whose difference is below the cut must not record equal.
    a = nested_list(40, Opaque(0))
    b = nested_list(40, Opaque(0))
    tail_a = a
    tail_b = b
    for _ in range(MAX_DEPTH + 2):
        tail_a = tail_a[0]
        tail_b = tail_b[0]
    tail_a.append(1)  # ... [[x], 1] ...
    tail_b[0].append(1)  # ... [[x, 1]] ...
    assert capture(a) != capture(b)


def test_equal_deep_values_record_equal_whatever_their_aliasing():
    shared = [1, 2]
    a = nested_list(40, [shared, shared, Opaque(0)])
    b = nested_list(40, [[1, 2], [1, 2], Opaque(0)])
    assert capture(a) == capture(b)


def test_deep_digest_handles_any_depth_and_cycles():
    deep = nested_list(20_000, 1)  # far deeper than the recursion limit
    assert deep_digest(deep) == deep_digest(nested_list(20_000, 1))
    assert deep_digest(deep) != deep_digest(nested_list(20_000, 2))
    loop: dict[str, Any] = {"n": 1}
    loop["self"] = loop
    assert deep_digest(loop) == deep_digest(loop)
    assert deep_digest(loop) != deep_digest({"n": 2, "self": loop})


def test_deep_digest_tells_nesting_apart():
    assert deep_digest([[1], 2]) != deep_digest([[1, 2]])
    assert deep_digest({"a": [1], "b": []}) != deep_digest({"a": [], "b": [1]})


def test_a_dict_that_contains_itself():
    state: dict[str, Any] = {"step": 1}
    state["self"] = state
    state["history"] = [state]
    captured = capture(state)
    assert captured == {"step": 1, "self": "<cycle: dict>", "history": ["<cycle: dict>"]}
    items: list[Any] = [1]
    items.append(items)
    assert capture(items) == [1, "<cycle: list>"]


def test_a_value_repeated_but_not_cyclic_is_kept_whole():
    row = {"id": 1}
    assert capture([row, row, Opaque(1)]) == [{"id": 1}, {"id": 1}, "<Opaque 1>"]


def test_a_flat_list_of_a_million_ints_is_capped():
    numbers = list(range(MB))
    captured = capture(numbers)
    assert captured[TRUNCATED] == "size"
    assert captured["size"] == json_len(numbers)
    assert json_len(captured) <= DEFAULT_MAX_VALUE
    assert captured["head"].startswith("[0, 1, 2, 3")


def test_dict_with_tuple_and_other_non_string_keys():
    captured = capture({("oslo", "bergen"): 3, 1: "one", None: 0, 2.5: "x"})
    assert captured == {"('oslo', 'bergen')": 3, "1": "one", "null": 0, "2.5": "x"}
    assert capture({True: "t", Opaque(1): {"x"}}) == {"true": "t", "<Opaque 1>": ["x"]}


def test_enums():
    assert capture(Level.HIGH) == 3
    assert capture({"level": Level.HIGH}) == {"level": 3}
    assert capture(Color.RED) == "<Color.RED: 1>"
    assert capture([Color.RED]) == ["<Color.RED: 1>"]


def test_a_str_enum_records_the_same_alone_or_in_a_container():
    alone = capture(Status.OK)
    assert capture([Status.OK]) == [alone]
    assert capture({"status": Status.OK}) == {"status": alone}
    assert capture({Status.OK}) == [alone]
    assert alone == "ok"  # what json.dumps (and so any JSON-speaking agent) makes of it


def test_nan_and_infinities_become_their_repr():
    assert capture(math.nan) == "nan"
    assert capture([math.inf, -math.inf, 1.5]) == ["inf", "-inf", 1.5]
    assert capture({"x": math.nan}) == {"x": "nan"}


def test_sets_become_sorted_lists():
    assert capture({"b", "c", "a"}) == ["a", "b", "c"]
    assert capture(frozenset({3, 1, 2})) == [1, 2, 3]
    assert capture({"tags": {"y", "x"}}) == {"tags": ["x", "y"]}


_HASHSEED_SCRIPT = """
import json
from pytest_agentchaos.trace.values import capture
words = [f"tag-{i}" for i in range(40)]
value = %s
print(json.dumps([list(set(words)), capture(value)]))
"""


def _capture_under_hashseed(seed: int, value_source: str) -> tuple[Any, Any]:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    done = subprocess.run(
        [sys.executable, "-c", _HASHSEED_SCRIPT % value_source],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    raw, captured = json.loads(done.stdout)
    return raw, captured


@pytest.mark.parametrize(
    "value_source",
    [
        pytest.param("{'tags': set(words), 'frozen': frozenset(words)}", id="set-values"),
        pytest.param("{frozenset(words[:5]): 1}", id="frozenset-key"),
        pytest.param("[{(w, frozenset(words[:3])) for w in words[:4]}]", id="nested-sets"),
    ],
)
def test_sets_record_the_same_under_any_pythonhashseed(value_source):
    raw_1, captured_1 = _capture_under_hashseed(1, value_source)
    raw_2, captured_2 = _capture_under_hashseed(2, value_source)
    assert raw_1 != raw_2  # the seeds do change set order, so the check below means something
    assert captured_1 == captured_2


def test_a_mapping_whose_items_raises_is_recorded_not_raised():
    captured = capture({"result": RaisingItems(a=1)})
    json.dumps(captured, allow_nan=False)
    assert "RuntimeError" in json.dumps(captured)
    assert capture(RaisingItems(a=1)) == captured["result"]


def test_a_mock_is_recorded_as_its_repr():
    from unittest import mock

    value = mock.MagicMock(name="client")
    assert capture({"client": value}) == {"client": repr(value)}


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: math.factorial(2000), id="int-over-4300-digits"),
        pytest.param(lambda: [math.factorial(2000)], id="int-over-4300-digits-in-list"),
        pytest.param(lambda: {"n": math.factorial(2000)}, id="int-over-4300-digits-in-dict"),
        pytest.param(lambda: nested_list(40, math.factorial(2000)), id="int-over-4300-deep"),
        pytest.param(UnboundProxy, id="proxy-whose-__class__-raises"),
        pytest.param(lambda: [UnboundProxy()], id="proxy-in-a-list"),
        pytest.param(NotPairsItems, id="mapping-items-not-pairs"),
        pytest.param(released_memoryview, id="released-memoryview"),
        pytest.param(RaisingItems, id="mapping-items-raises"),
        pytest.param(lambda: nested_list(40, RaisingItems(a=1)), id="mapping-items-raises-deep"),
    ],
)
def test_capture_never_raises_on_hostile_values(make):
    captured = capture(make())
    assert json_len(captured) <= DEFAULT_MAX_VALUE


def test_a_small_dict_of_big_ints_is_still_capped():
    # e.g. a maths tool: 16 numbers of 4,300 digits (the most Python will print) are 69 KB
    values = {f"n{i}": 10**4299 + i for i in range(16)}
    assert json_len(values) > DEFAULT_MAX_VALUE
    assert json_len(capture(values)) <= DEFAULT_MAX_VALUE


@pytest.mark.parametrize("limit", [12_288, 16_384, 32_768])
def test_a_small_dict_of_control_characters_is_still_capped(limit):
    # 16 short strings, but every character escapes to six (\u0000) in the JSON text
    values = {f"k{i:02d}" + "\x00" * 250: "\x1b" * 256 for i in range(16)}
    assert json_len(values) > limit
    assert json_len(capture(values, limit)) <= limit


# -- 3. loop detection on truncated values --------------------------------------------------


def test_equal_big_outputs_capture_to_equal_markers():
    first = "page " * (MB // 5)
    second = "".join(["page "] * (MB // 5))  # equal, but another object
    assert first is not second
    assert capture(first) == capture(second)
    assert capture({"body": first}) == capture({"body": second})
    assert capture([first, Opaque(1)]) == capture([second, Opaque(1)])


def test_big_outputs_differing_only_at_the_end_capture_to_different_digests():
    first = "a" * MB + "1"
    second = "a" * MB + "2"
    for wrap_value in (lambda s: s, lambda s: [s, Opaque(1)], lambda s: {"body": s}):
        one, two = capture(wrap_value(first)), capture(wrap_value(second))
        if isinstance(one, dict) and "body" in one:  # a dict keeps its keys; its value is cut
            one, two = one["body"], two["body"]
        assert one[TRUNCATED] == two[TRUNCATED] == "size"
        assert one["head"] == two["head"]
        assert one["digest"] != two["digest"]


def test_equal_big_dicts_capture_equal_whatever_their_key_order():
    rows = {f"key{i}": "v" * 100 for i in range(10_000)}
    reordered = dict(reversed(rows.items()))
    assert rows == reordered
    assert capture(rows) == capture(reordered)


def _run_fetches(make_chaos, outputs: list[str]) -> Trace:
    chaos = make_chaos()
    LoopObserver.watch(chaos.trace)
    pages = iter(outputs)
    fetch = chaos.wrap(lambda url: next(pages), name="fetch")
    for _ in outputs:
        fetch("https://example.com/feed")
    return chaos.trace


def test_the_loop_observer_sees_repeated_big_outputs(make_chaos):
    trace = _run_fetches(make_chaos, ["z" * MB] * 5)
    loops = [d for d in trace.of_type(Detection) if d.kind == "loop"]
    assert loops, "five identical 1 MB results in a row should be a loop"


def test_the_loop_observer_sees_progress_in_big_outputs(make_chaos):
    trace = _run_fetches(make_chaos, ["z" * MB + str(i) for i in range(5)])
    assert not [d for d in trace.of_type(Detection) if d.kind == "loop"]


# -- 4. through the session -----------------------------------------------------------------


def test_a_10_mb_tool_output_is_capped_in_the_trace_but_whole_for_the_agent(make_chaos):
    chaos = make_chaos()
    big = "x" * (10 * MB)
    fetch = chaos.wrap(lambda url: big, name="fetch")
    got = fetch("https://example.com/big")
    assert got is big
    (result,) = chaos.trace.tool_results("fetch")
    assert result.ok
    assert json_len(result.output) <= DEFAULT_MAX_VALUE
    assert result.output[TRUNCATED] == "size"
    assert result.output["size"] == len(big) + 2
    assert len(chaos.trace.to_json()) < 2 * DEFAULT_MAX_VALUE


SEARCH_OUTPUT = {"rows": [{"id": i, "name": f"row {i}"} for i in range(500)]}  # 14 KB


def test_max_value_caps_recorded_arguments_and_outputs(make_chaos):
    chaos = make_chaos(max_value=1000)
    got = chaos.wrap(lambda query: SEARCH_OUTPUT, name="search")("q" * 5000)
    assert got is SEARCH_OUTPUT
    (call,) = chaos.trace.tool_calls("search")
    (result,) = chaos.trace.tool_results("search")
    # the arguments keep their names, the long value is cut
    assert list(call.args) == ["query"] and call.args["query"][TRUNCATED] == "size"
    assert json_len(call.args) <= 1000
    assert list(result.output) == ["rows"] and result.output["rows"][TRUNCATED] == "size"
    assert json_len(result.output) <= 1000


def test_the_default_max_value_keeps_ordinary_values_whole(make_chaos):
    chaos = make_chaos()
    chaos.wrap(lambda query: SEARCH_OUTPUT, name="search")("q" * 5000)
    (call,) = chaos.trace.tool_calls("search")
    (result,) = chaos.trace.tool_results("search")
    assert call.args == {"query": "q" * 5000}
    assert result.output == SEARCH_OUTPUT


def test_the_recorded_output_does_not_follow_later_mutation(make_chaos):
    chaos = make_chaos()
    state = {"todo": ["book flight"]}
    chaos.wrap(lambda: state, name="read_state")()
    state["todo"].append("book hotel")
    state["done"] = True
    (result,) = chaos.trace.tool_results("read_state")
    assert result.output == {"todo": ["book flight"]}


def test_an_output_whose_repr_raises_is_recorded_and_everything_still_prints(make_chaos):
    chaos = make_chaos()
    weird = RaisingRepr()
    tool = chaos.wrap(lambda: {"obj": weird, "nested": [NonStringRepr()]}, name="weird")
    got = tool()
    assert got["obj"] is weird
    (result,) = chaos.trace.tool_results("weird")
    assert result.output == {
        "obj": "<RaisingRepr object (repr failed: RuntimeError)>",
        "nested": ["<NonStringRepr object (repr failed: TypeError)>"],
    }
    text = chaos.trace.to_json()
    assert Trace.from_json(text) == chaos.trace
    for event in chaos.trace:
        assert isinstance(event.describe(), str)
    assert repr(chaos).startswith("<Chaos ")
    assert "events" in repr(chaos.trace)


def test_a_hostile_argument_is_recorded(make_chaos):
    chaos = make_chaos()
    cyclic: dict[str, Any] = {}
    cyclic["me"] = cyclic
    chaos.wrap(lambda a, b: "ok", name="take")(RaisingRepr(), cyclic)
    (call,) = chaos.trace.tool_calls("take")
    assert call.args == {
        "a": "<RaisingRepr object (repr failed: RuntimeError)>",
        "b": {"me": "<cycle: dict>"},
    }
    assert Trace.from_json(chaos.trace.to_json()) == chaos.trace


# -- 5. the writer --------------------------------------------------------------------------


def _hostile_run(make_chaos) -> Trace:
    chaos = make_chaos()
    loop: list[Any] = []
    loop.append(loop)
    outputs = iter(
        [
            "x" * (2 * MB),
            nested_list(2000, "deep"),
            loop,
            {"obj": RaisingRepr(), "tags": {"b", "a"}, ("k", 1): math.nan},
            b"\x00\xff" * MB,
            "line one\nline two\u2028",
        ]
    )
    tool = chaos.wrap(lambda n: next(outputs), name="tool")
    for n in range(6):
        tool(n)
    chaos.session.end()
    return chaos.trace


def test_write_to_a_path_round_trips_and_leaves_no_temp_file(make_chaos, tmp_path):
    trace = _hostile_run(make_chaos)
    target = tmp_path / "trace.json"
    trace.write(target)
    assert [p.name for p in tmp_path.iterdir()] == ["trace.json"]
    text = target.read_text(encoding="utf-8")
    assert text == trace.to_json()
    assert Trace.from_json(text) == trace


def test_write_replaces_an_existing_file(tmp_path):
    target = tmp_path / "trace.json"
    target.write_text("old", encoding="utf-8")
    trace = Trace([ToolResult(1, 0.0, tool="t", output="new")])
    trace.write(str(target))
    assert Trace.from_json(target.read_text(encoding="utf-8")) == trace


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
@pytest.mark.parametrize("existing", [True, False])
def test_a_failure_mid_write_leaves_the_target_untouched(tmp_path, monkeypatch, error, existing):
    target = tmp_path / "trace.json"
    if existing:
        target.write_text("previous run", encoding="utf-8")
    real = writer_module.dump_event
    calls = []

    def failing(data, indent=None):
        calls.append(data)
        if len(calls) == 4:  # meta, then events: fail on the third event
            raise error("disk gone")
        return real(data, indent)

    monkeypatch.setattr(writer_module, "dump_event", failing)
    trace = Trace([ToolResult(i, 0.0, tool="t", output="x" * 10_000) for i in range(10)])
    with pytest.raises(error):
        trace.write(target)
    assert len(calls) == 4
    if existing:
        assert [p.name for p in tmp_path.iterdir()] == ["trace.json"]
        assert target.read_text(encoding="utf-8") == "previous run"
    else:
        assert list(tmp_path.iterdir()) == []


def test_a_value_whose_serialisation_raises_leaves_no_partial_file(tmp_path):
    # A hand-made event holding an object whose repr raises KeyboardInterrupt: capture lets the
    # interrupt through (see above), and the writer must clean up after it.
    target = tmp_path / "trace.json"
    trace = Trace(
        [ToolResult(i, 0.0, tool="t", output="x" * 10_000) for i in range(5)]
        + [ToolResult(5, 0.0, tool="t", output={"bad": InterruptingRepr()})]
    )
    with pytest.raises(KeyboardInterrupt):
        trace.write(target)
    assert list(tmp_path.iterdir()) == []


def test_indent_puts_one_event_per_line(make_chaos, tmp_path):
    trace = _hostile_run(make_chaos)
    target = tmp_path / "trace.json"
    trace.write(target, indent=1)
    text = target.read_text(encoding="utf-8")
    assert text == trace.to_json(indent=1)
    lines = text.rstrip("\n").split("\n")
    assert len(lines) == len(trace) + 2  # header, one line per event, closing
    for line, event in zip(lines[1:-1], trace, strict=True):
        assert json.loads(line.removesuffix(",")) == json.loads(json.dumps(event.to_dict()))
    assert Trace.from_json(text) == trace


def test_a_stray_non_json_value_put_in_an_event_by_hand_is_still_written(tmp_path):
    loop: dict[str, Any] = {}
    loop["self"] = loop
    stray = {
        "obj": Opaque(7),
        "bad": RaisingRepr(),
        "nan": math.nan,
        "tags": {"b", "a"},
        ("k", 1): "tuple key",
        "loop": loop,
        "deep": nested_list(2000),
        "raw": b"caf\xc3\xa9",
    }
    trace = Trace(
        [
            ToolCall(1, 0.0, tool="t", args={"when": Opaque(1)}),
            ToolResult(1, 0.5, tool="t", output=stray),
        ],
        meta={"labels": {"y", "x"}, "obj": Opaque(2)},
    )
    target = tmp_path / "trace.json"
    trace.write(target)
    back = Trace.from_json(target.read_text(encoding="utf-8"))
    out = back[1].output
    assert out["obj"] == "<Opaque 7>"
    assert out["bad"] == "<RaisingRepr object (repr failed: RuntimeError)>"
    assert out["nan"] == "nan"
    assert out["tags"] == ["a", "b"]
    assert out["('k', 1)"] == "tuple key"
    assert out["loop"] == {"self": "<cycle: dict>"}
    assert out["raw"] == "café"
    assert back[0].args == {"when": "<Opaque 1>"}
    assert back.meta == {"labels": ["x", "y"], "obj": "<Opaque 2>"}


def test_a_huge_int_put_in_an_event_is_still_written():
    trace = Trace([ToolResult(1, 0.0, tool="calc", output=math.factorial(2000))])
    Trace.from_json(trace.to_json())


def test_an_output_with_a_surrogate_escaped_file_name_is_written_to_a_file(make_chaos, tmp_path):
    # os.listdir() on Linux gives '\udcXX' for a file name that is not UTF-8.
    name = os.fsdecode(b"caf\xe9.txt")
    chaos = make_chaos()
    chaos.wrap(lambda: [name], name="ls")()
    target = tmp_path / "trace.json"
    chaos.trace.write(target)
    assert Trace.from_json(target.read_text(encoding="utf-8")) == chaos.trace


def test_the_loop_observer_survives_a_surrogate_escaped_file_name(make_chaos):
    name = os.fsdecode(b"caf\xe9.txt")
    chaos = make_chaos()
    LoopObserver.watch(chaos.trace)
    ls = chaos.wrap(lambda: [name], name="ls")
    assert ls() == [name]


class ChunkRecorder(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[int] = []

    def write(self, text: str) -> int:
        self.chunks.append(len(text))
        return super().write(text)


def test_writing_streams_event_by_event():
    trace = Trace(
        [ToolResult(i, float(i), tool="t", index=i, output="o" * 2_000) for i in range(500)],
        meta={"seed": 1},
    )
    sink = ChunkRecorder()
    trace.write(sink)
    whole = sink.getvalue()
    assert len(whole) > MB
    assert max(sink.chunks) < 3_000  # about one event, never the whole trace
    assert sum(sink.chunks) == len(whole)
    assert Trace.from_json(whole) == trace


def test_deepcopy_of_a_captured_value_equals_it():
    # Captured data is plain: copying it or a JSON round trip changes nothing.
    captured = capture({"a": (1, 2), "b": {3}, "c": Opaque(1), "d": math.inf})
    assert copy.deepcopy(captured) == captured == json.loads(json.dumps(captured))
