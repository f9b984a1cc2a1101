"""The shortcuts that make keying cheap change nothing a user sees: the regex guard, the memory
of masked strings, the canonical encoder made once, and keys hashed once."""

from __future__ import annotations

import copy
import json
import math
import pickle
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape import normalize, provenance, volatility
from pytest_agentchaos.escape.history import ActionKey, digest
from pytest_agentchaos.escape.normalize import mask, mask_args, mask_text

#: The token alternatives without the guard in front: what every position was tried with before.
UNGUARDED = re.compile(normalize._TOKENS, re.VERBOSE | re.IGNORECASE)

PIECES = st.sampled_from(
    [
        "took", "elapsed:", "attempt", "retry #", "In [", "in", "after", "pid=", "iteration",
        "3s", "1.83 s", "412ms", "1m30s", "12 minutes", "10:04:05", "2024-03-14T09:30:00Z",
        "2024-03-14 09:30", "UTC", "1710408600", "1710408600123", "0a1b2c3d4e5f",
        "3f2a1c9e-8b7d-4c6e-9f0a-1b2c3d4e5f60", "api-7d9f8c6b5-2xkqp", "req_0A1b2C3d4E5f",
        "deadbeef1", "12345678", "/tmp/tmpk_xq/out.json", "C:\\Users\\a\\AppData\\Local\\Temp\\x1",
        "tmp_a8f3k2", "AC123", "v2", "x86_64", "route", "error", "found", "[", "]", ",", ":",
        "=", "'", '"', "(", ")", "-", "_", ".", "/", "7", "42",
    ]
)  # fmt: skip
SEPARATORS = st.sampled_from(["", " ", "  ", "\n", "\t", ", ", ": ", "/", "-", "_", "."])


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.tuples(PIECES, SEPARATORS), max_size=12))
    return "".join(p + s for p, s in parts)


@settings(max_examples=500)
@given(st.one_of(texts(), st.text(max_size=60)))
def test_the_guard_finds_exactly_what_every_position_finds(text: str) -> None:
    guarded = [(m.start(), m.end(), m.lastgroup) for m in normalize._VOLATILE.finditer(text)]
    unguarded = [(m.start(), m.end(), m.lastgroup) for m in UNGUARDED.finditer(text)]
    assert guarded == unguarded


def test_a_temp_path_without_a_digit_is_masked() -> None:
    # mkdtemp's names have no digit about one time in twelve: they are still temp paths
    assert mask_text("wrote /tmp/tmpk_xqzvbe/out.json") == "wrote <tmp>/out.json"
    assert mask_args({"path": "/tmp/tmpk_xqzvbe/out.json"}) == {"path": "<tmp>/out.json"}
    assert mask_text("no temp here, nor digits") == "no temp here, nor digits"


def test_remembered_strings_mask_the_same_and_the_memory_stays_bounded() -> None:
    first = mask_text("flight AC123 took 3s")
    assert mask_text("flight AC123 took 3s") == first == "flight AC123 took <duration>"
    for i in range(normalize._MEMO_SIZE + 10):
        mask_text(f"call {i} took {i}ms")
    assert len(normalize._MASKED) <= normalize._MEMO_SIZE
    assert mask_text("flight AC123 took 3s") == first
    long = "x1 " * 200  # past the length that is remembered
    assert mask_text(long) == long
    assert long not in normalize._MASKED


def test_masking_a_result_and_the_arguments_differ_for_the_same_string() -> None:
    # one memory per side: the arguments keep a date, a result masks it
    text = "2024-03-14T09:30:00Z"
    assert mask({"when": text}) == {"when": "<time>"}
    assert mask_args({"when": text}) == {"when": text}
    assert mask({"when": text}) == {"when": "<time>"}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300)
@given(JSON)
def test_the_digest_is_the_blake2b_of_the_canonical_json_dumps(value: object) -> None:
    import hashlib

    text = json.dumps(
        value, sort_keys=True, default=repr, ensure_ascii=False, separators=(",", ":")
    )
    expected = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    assert digest(value) == expected


def test_the_digest_never_raises() -> None:
    cycle: dict[str, object] = {}
    cycle["self"] = cycle
    assert len(digest(cycle)) == 16
    assert digest({1: "a", "b": 2}) == digest({1: "a", "b": 2})  # keys JSON cannot sort
    assert digest([math.nan, math.inf, {1, 2}]) == digest([math.nan, math.inf, {1, 2}])


def test_keys_are_equal_on_their_identity_and_immutable() -> None:
    a = ActionKey(None, "search", "ok", "d1", {"q": 1}, "tool", "coarse")
    b = ActionKey(None, "search", "ok", "d1", {"q": 2}, "tool", None)
    assert a == b and hash(a) == hash(b)
    assert (a != b) is False  # noqa: SIM202 (the inequality operator itself is under test)
    assert a != ActionKey(None, "search", "ok", "d2")
    assert a != ActionKey(None, "search", "ok", "d1", channel="http")
    assert a != ("search", "ok")
    assert {a: 1}[b] == 1
    with pytest.raises(AttributeError):
        a.tool = "other"  # type: ignore[misc]
    assert repr(a).startswith("ActionKey(node=None, tool='search'")


def test_a_key_copied_or_sent_to_another_process_is_the_same_key() -> None:
    key = ActionKey("n", "search", "ok", "d1", {"q": 1}, "tool", "c")
    assert copy.deepcopy(key) == key and copy.copy(key) == key
    clone = pickle.loads(pickle.dumps(key))
    assert clone == key and clone.shown_args == {"q": 1} and clone.coarse == "c"
    # a string's hash differs from one process to the next: a key unpickled there must be
    # found in that process's tables, so its hash is worked out anew
    script = (
        "import pickle, sys\n"
        "from pytest_agentchaos.escape.history import ActionKey\n"
        "key = pickle.loads(sys.stdin.buffer.read())\n"
        "fresh = ActionKey('n', 'search', 'ok', 'd1')\n"
        "print({fresh: 'found'}.get(key, 'missing'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        input=pickle.dumps(key),
        capture_output=True,
        check=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
    )
    assert out.stdout.decode().strip() == "found"


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from('ab_Z09 -./:#"{}[],é中٣'), max_size=40))
def test_the_ascii_patterns_read_an_ascii_text_as_the_unicode_ones_do(text: str) -> None:
    """Keying reads an ASCII text with ASCII-only twins of its patterns (a third of the cost):
    on ASCII text they find the same positions and tokens; other text keeps the Unicode ones."""
    if text.isascii():
        assert volatility._ASCII_DIGITS.split(text) == volatility._DIGITS.split(text)
        assert provenance._ASCII_TOKEN.findall(text) == provenance._TOKEN.findall(text)
    else:
        assert provenance._token_pattern(text) is provenance._TOKEN
