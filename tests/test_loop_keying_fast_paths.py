"""The fast paths of keying (issue 29's speed bound) key every call as the general path does,
and keying survives what a hostile agent hands it: a value inside itself, a repr that raises, a
10 MB text, a state text holding the skeleton's own separator, an argument dict changed in place
after it was keyed."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape import provenance
from pytest_agentchaos.escape.keys import Keyer
from pytest_agentchaos.escape.loops import LoopDetector

TOKENS = st.text(st.sampled_from("ab_Z09 -./:#=é中٣\t"), min_size=1, max_size=40)


@settings(max_examples=400, deadline=None)
@given(TOKENS)
def test_a_one_token_text_has_the_candidates_the_token_scan_finds(text: str) -> None:
    """A result leaf that is one token (AC123, 0.58s, a timestamp) skips the scan: it issues
    the same candidate handles, in the same order, as reading it token by token does."""
    if provenance._DIGIT.search(text) is None:
        assert provenance._candidates(text) == ()
    else:
        assert provenance._candidates(text) == provenance._scanned(text)


def test_equally_long_pieces_keep_the_token_order_in_every_process() -> None:
    """Which issued piece of a path is masked as the handle is the same from one run to the next
    (it followed the per-process string hash)."""
    code = (
        "from pytest_agentchaos.escape.provenance import _pieces;"
        "print(_pieces('ab1:cd2/ef3'), _pieces('./x1/y2'))"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": ":".join(sys.path), "PATH": ""},
        ).stdout
        for seed in ("1", "2", "3", "4")
    }
    assert len(outs) == 1
    assert provenance._pieces("ab1:cd2/ef3") == ["ab1/cd2/ef3", "ab1/cd2", "ab1", "cd2", "ef3"]


def test_a_state_text_holding_the_separator_is_keyed_not_crashed() -> None:
    """Two state texts whose split gives an equal skeleton with another count of positions (the
    text holds the separator itself) are other states, and keying them raises nothing."""
    keyer = Keyer()
    first = keyer.state("phase x1\x1fx2 done")
    second = keyer.state("phase x1\x1f\x1f done")
    assert first != second
    assert keyer.state("phase x1\x1fx2 done") == first


def test_an_argument_dict_changed_in_place_after_keying_is_keyed_anew() -> None:
    keyer = Keyer()
    args = {"query": "flights to Lisbon", "page": "first"}
    result = {"flights": ["TP1"]}
    before = keyer.tool("search", args, result=result)
    args["query"] = "flights to Oslo"
    changed = keyer.tool("search", args, result=result)
    args["query"] = "flights to Lisbon"
    again = keyer.tool("search", args, result=result)
    assert changed != before
    assert again == before


def _cycle() -> dict[str, object]:
    inner: dict[str, object] = {"job": "j-1"}
    inner["self"] = inner
    return inner


class _NoRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")

    __str__ = __repr__


def test_a_value_inside_itself_is_keyed_and_repeats_are_still_a_loop() -> None:
    """A cyclic argument, result, output or state used to raise RecursionError out of keying
    (the observer of a run, the Supervisor of a production agent): now it is keyed by its
    content, so the same cyclic call three times in a row is a loop."""
    keyer, detector = Keyer(), LoopDetector()
    found = []
    for step in range(3):
        key = keyer.tool("poll", _cycle(), result=_cycle())
        found = detector.observe(key, step, float(step))
    assert [loop.kind for loop in found] == ["repeat"]
    assert keyer.tool("poll", {"a": [1]}, result=_cycle()) != keyer.tool(
        "poll", {"a": [2]}, result=_cycle()
    )
    assert keyer.model("m", output=_cycle()).digest
    assert keyer.state(_cycle()) == keyer.state(_cycle())


def test_a_repr_that_raises_and_a_10_mb_text_are_keyed() -> None:
    keyer = Keyer()
    hostile = keyer.tool("t", {"x": _NoRepr()}, result={"y": _NoRepr()})
    assert hostile.digest
    big = "a" * 5_000_000
    left = keyer.tool("write", {"text": big + "1" + big}, result="ok")
    right = keyer.tool("write", {"text": big + "2" + big}, result="ok")
    assert left != right  # an argument is content: its middle counts
    same = keyer.tool("write", {"text": big + "1" + big}, result="ok")
    assert same == left
