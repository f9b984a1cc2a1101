"""Properties of keying (issue 29): masking is idempotent and never merges calls whose
non-volatile content differs; learned volatility never masks a position that stayed equal;
provenance masking is symmetric. And keying survives hostile input with bounded work."""

from __future__ import annotations

import json
import time
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape.history import digest
from pytest_agentchaos.escape.keys import Keyer
from pytest_agentchaos.escape.loops import LoopDetector
from pytest_agentchaos.escape.normalize import mask, mask_args
from pytest_agentchaos.escape.provenance import HANDLE, Provenance
from pytest_agentchaos.escape.texts import text_shingles
from pytest_agentchaos.escape.turns import NUDGE, Turns, words
from pytest_agentchaos.escape.volatility import Volatility

WORD = st.text("abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8)
NAMES = st.sampled_from(
    [
        "q",
        "path",
        "request_id",
        "took_ms",
        "status",
        "label",
        "token",
        "created_at",
        "job",
        "id",
        "ms",
    ]
)
SCALAR = st.one_of(
    WORD,
    st.integers(-5, 10**12),
    st.booleans(),
    st.none(),
    st.uuids().map(str),
    st.datetimes().map(lambda d: d.isoformat()),
    st.builds(lambda w, n: f"{w}={n}", WORD, st.integers(0, 999)),
    st.builds(lambda w, n: f"{w} took {n} ms", WORD, st.integers(0, 999)),
)
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(NAMES, inner, max_size=4),
        st.dictionaries(NAMES, inner, max_size=3).map(json.dumps),  # JSON as text
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(VALUE)
def test_masking_is_idempotent(value: Any) -> None:
    once = mask(value)
    assert mask(once) == once
    args = mask_args(value)
    assert mask_args(args) == args


@settings(max_examples=200, deadline=None)
@given(st.lists(WORD, min_size=1, max_size=4), WORD, st.data())
def test_calls_whose_words_differ_never_share_a_key(
    words: list[str], other: str, data: st.DataObject
) -> None:
    """Two calls of a tool whose results differ in a word (content, not a volatile token) never
    key alike, whatever came before them: neither masking nor learning merges them."""
    keyer = Keyer()
    history = data.draw(st.lists(st.integers(0, 50), max_size=6))
    for n in history:  # whatever the tool answered before, volatile-looking or not
        keyer.tool("t", {"q": "x"}, result=f"{' '.join(words)} job={n}")
    i = data.draw(st.integers(0, len(words) - 1))
    changed = [*words[:i], other, *words[i + 1 :]]
    if changed == words:
        return
    first = keyer.tool("t", {"q": "x"}, result=" ".join(words) + " job=7")
    second = keyer.tool("t", {"q": "x"}, result=" ".join(changed) + " job=8")
    assert first != second


def _rendered(values: list[int]) -> str:
    return " ".join(f"f{i}={v}" for i, v in enumerate(values))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=3, max_size=3), min_size=2, max_size=8))
def test_learned_volatility_never_masks_a_position_that_stayed_equal(
    calls: list[list[int]],
) -> None:
    """When two consecutive calls key alike, every position where they differ changed at the
    comparison before as well: a position that stayed equal there is never masked now."""
    learner = Volatility()
    keys = [learner.key("t", "{}", _rendered(values)) for values in calls]
    for i in range(1, len(calls)):
        before, now = calls[i - 1], calls[i]
        differs = {p for p in range(3) if before[p] != now[p]}
        if keys[i] == keys[i - 1] and differs:
            assert i >= 2, "the first comparison is evidence, never enough by itself"
            earlier = calls[i - 2]
            stayed = {p for p in range(3) if earlier[p] == before[p]}
            assert not (differs & stayed)


HANDLES = st.lists(
    st.text("abcdefghjkmnpqrstuvwxyz23456789", min_size=6, max_size=10).filter(
        lambda h: any(c.isdigit() for c in h)
    ),
    min_size=4,
    max_size=4,
    unique=True,
)


def _run(handles: list[str]) -> list[Any]:
    """A run that submits a job, gets a fresh handle and passes it back, each lap."""
    keyer = Keyer()
    keys = []
    for handle in handles:
        keys.append(keyer.tool("submit", {"spec": "build"}, result={"job": handle}))
        keys.append(keyer.tool("status", {"job": handle}, result=f"job {handle}: failed"))
    return keys


@settings(max_examples=100, deadline=None)
@given(HANDLES, HANDLES)
def test_provenance_masking_is_symmetric(first: list[str], second: list[str]) -> None:
    """The handle is masked alike where it is passed and where that call's result shows it,
    so two runs that differ only in their handles key alike, call by call."""
    assert [k.digest for k in _run(first)][1::2] == [k.digest for k in _run(second)][1::2]
    provenance = Provenance()
    provenance.args("submit", {"spec": "build"})
    provenance.result({"job": first[0]})
    masked_args = provenance.args("status", {"job": first[0]})
    masked_result = provenance.result(f"job {first[0]}: failed")
    assert masked_args == {"job": HANDLE}
    assert masked_result == f"job {HANDLE}: failed"


def test_a_value_the_agent_chose_first_is_never_a_handle() -> None:
    provenance = Provenance()
    provenance.args("search", {"q": "order 4417"})
    provenance.result({"orders": ["4417"]})
    assert provenance.args("get_order", {"id": "4417"}) == {"id": "4417"}


def test_items_of_one_listing_are_not_handles() -> None:
    provenance = Provenance()
    provenance.args("ls", {})
    provenance.result({"items": ["item_3", "item_4", "item_5"]})
    shown = [provenance.args("get", {"id": f"item_{i}"}) for i in (3, 4, 5)]
    assert shown[1:] == [{"id": "item_4"}, {"id": "item_5"}]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abcdefgh0123456789"), min_size=6, max_size=24).map("".join))
def test_masking_never_empties_a_short_text(chunk: str) -> None:
    words, _ = text_shingles(chunk)
    assert words or not any(c.isalnum() for c in chunk)


def test_short_texts_keep_their_numbers_unless_a_counter_word_precedes_them() -> None:
    assert text_shingles("step 1: check the logs") != text_shingles("step 2: check the logs")
    assert text_shingles("方案一：重启服务") != text_shingles("方案二：重启服务")
    assert text_shingles("Retrying (1/5) now") == text_shingles("Retrying (2/5) now")
    assert text_shingles("第3次尝试") == text_shingles("第4次尝试")


# -- chat turns and counters ----------------------------------------------------------------------

#: Words with none of the letters that begin a counter word ("try", "loop", "pass", "iter"...).
PLAIN = st.text("abdefghjkmnosuvwxyz", min_size=2, max_size=8)
TEXTS = st.lists(st.lists(PLAIN, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=5)
REPLY = "I am still working on it and will send you the result soon"


def _conversation(history: list[str]) -> Turns:
    turns = Turns()
    for text in history:
        turns.answered(text, digest(text), REPLY)
    return turns


@settings(max_examples=200, deadline=None)
@given(TEXTS, st.lists(PLAIN, max_size=2), st.sampled_from(["7", "PayPal", "app.py", "user_42"]))
def test_a_turn_bringing_a_number_or_a_name_is_never_a_nudge(
    history: list[str], said: list[str], thing: str
) -> None:
    turns = _conversation(history)
    turn = " ".join([*said, thing])
    assert turns.answered(turn, digest(turn), REPLY) == digest(turn)


@settings(max_examples=200, deadline=None)
@given(TEXTS, st.lists(PLAIN, min_size=1, max_size=8, unique=True))
def test_a_turn_adding_more_words_than_the_limit_is_never_a_nudge(
    history: list[str], said: list[str]
) -> None:
    """Only a turn that adds at most ``limit`` words to the conversation can be a nudge, and
    then only when its reply says more than it added."""
    turn = " ".join(said)
    assume(turn != history[-1])  # the same turn again is read as it was the first time
    turns = _conversation(history)
    new = words(turn) - words(" ".join(history)) - words(REPLY)
    answered = turns.answered(turn, digest(turn), REPLY)
    if len(new) > turns.limit:
        assert answered == digest(turn)
    else:
        assert answered in (digest(turn), NUDGE)
        assert (answered == NUDGE) == (len(new) < len(words(REPLY)))


@settings(max_examples=200, deadline=None)
@given(st.lists(PLAIN, min_size=1, max_size=4), PLAIN, st.data())
def test_replies_whose_words_differ_never_share_a_key_whatever_the_turns(
    said: list[str], other: str, data: st.DataObject
) -> None:
    """Replies to nudges are keyed by what they say: two that differ in a word never key
    alike, however the nudges are worded."""
    keyer = Keyer()
    keyer.model("m", input="Write the report on the Q3 numbers", output="Working on it.")
    i = data.draw(st.integers(0, len(said) - 1))
    changed = [*said[:i], other, *said[i + 1 :]]
    assume(set(changed) != set(said))
    first = keyer.model("m", input="continue", output=" ".join(said))
    nudge = data.draw(st.sampled_from(["next", "continue"]))
    second = keyer.model("m", input=nudge, output=" ".join(changed))
    assert first != second


@settings(max_examples=200, deadline=None)
@given(
    st.lists(PLAIN, min_size=1, max_size=3).map(" ".join), st.integers(0, 99), st.integers(0, 99)
)
def test_a_short_texts_number_is_a_counter_only_when_it_counts_up_by_one(
    text: str, before: int, now: int
) -> None:
    assume(before != now)
    keyer = Keyer()
    first = keyer.model("m", output=f"{text} {before}")
    assert (keyer.model("m", output=f"{text} {now}") == first) == (now == before + 1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 2)), min_size=2, max_size=14))
def test_a_state_counter_is_a_count_of_rounds_only_after_a_lap_repeats(
    reports: list[tuple[str, int]],
) -> None:
    """A state's number field rising is work done; it is masked (two reports of a node key
    alike though their counts differ) only when some state came back exactly since the
    node's report before, or when it rose by one at every report (a stamp on each report,
    from the first or twice in a row: it counts the reports, not the work)."""
    keyer = Keyer()
    counts = dict.fromkeys("abc", 0)
    states, keys = [], []
    for node, rise in reports:
        counts[node] += rise  # counts only rise: no number here goes up and down
        states.append({"at": node, "n": counts[node]})
        keys.append(keyer.state(states[-1], node))
    last: dict[str, int] = {}
    for i, (node, _) in enumerate(reports):
        j = last.get(node)
        if j is not None and states[j] != states[i] and keys[j] == keys[i]:
            rose = [k > 0 and states[k]["n"] == states[k - 1]["n"] + 1 for k in range(i + 1)]
            stamp = all(rose[1:]) or (i >= 2 and rose[i] and rose[i - 1])
            # came back: a state seen again exactly, or keyed as seen (its stamp masked)
            back = any(states[k] in states[:k] for k in range(j + 1, i + 1))
            assert stamp or back or any(keys[k] in keys[:k] for k in range(j + 1, i))
        last[node] = i


# -- hostile input: bounded work, never an exception ----------------------------------------------


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")

    def __str__(self) -> str:
        raise RuntimeError("no str either")


def test_a_result_whose_repr_raises_is_keyed() -> None:
    keyer = Keyer()
    detector = LoopDetector()
    for i in range(4):
        result = {"v": Unprintable(), "n": [Unprintable()]}
        key = keyer.tool("t", {"x": Unprintable()}, result=result)
        detector.observe(key, i, 0.0)
    assert keyer.model("m", output=Unprintable(), input=Unprintable()).digest


def test_a_100_mb_string_costs_bounded_work() -> None:
    huge = "x" * 50_000_000 + " request_id=abc " + "y" * 50_000_000
    keyer = Keyer()
    start = time.perf_counter()
    keyer.tool("t", {"q": huge}, result=huge)
    keyer.tool("t", {"q": "a"}, ok=False, error_type="Error", message=huge)
    keyer.model("m", output=huge, input=huge)
    keyer.state({"log": huge})
    small = time.perf_counter()
    keyer.tool("t", {"q": "a" * 1_000_000}, result="b" * 1_000_000)
    small = time.perf_counter() - small
    # 100 times the size costs far less than 100 times the time: masking reads a bounded part
    assert time.perf_counter() - start < 60 * max(small, 0.05)


def test_deeply_nested_json_text_is_keyed() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    keyer = Keyer()
    first = keyer.tool("t", {}, result=deep)
    assert first == keyer.tool("t", {}, result=deep)
    assert first != keyer.tool("t", {}, result="[" * 99_999 + "]" * 99_999)


def test_invalid_json_that_looks_like_json_is_masked_as_prose() -> None:
    broken = '{"status": "pending", "request_id": "%s", "took_ms": %d, '
    keyer = Keyer()
    keys = {keyer.tool("t", {}, result=broken % (f"r{i}x9", 10 + i)) for i in range(3)}
    assert len(keys) == 1
    assert (
        mask(broken % ("abc", 5)) == '{"status": "pending", "request_id": "<volatile>", '
        '"took_ms": <volatile>, '
    )


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 9), st.integers(0, 9), st.integers(10, 20), st.sampled_from([0, 0, 2, 5]))
def test_a_turns_counter_inside_a_name_is_a_counter_only_when_it_counts_up_by_one(
    before: int, now: int, total: int, more: int
) -> None:
    """ "[auto-reply 2/10]" after "[auto-reply 1/10]" is the same turn; any other change of
    the name holding the counter (its total too, a step other than one) is another turn."""
    other_total = total + more
    turns = Turns()
    first = f"[auto-reply {before}/{total}]"
    second = f"[auto-reply {now}/{other_total}]"
    assume(first != second)
    a = turns.answered(first, digest(first), REPLY)
    b = turns.answered(second, digest(second), REPLY)
    assert (a == b) == (now == before + 1 and total == other_total)


@settings(max_examples=200, deadline=None)
@given(st.lists(PLAIN, min_size=9, max_size=12, unique=True), PLAIN, PLAIN)
def test_list_items_differing_in_a_paths_last_segment_never_share_a_key(
    prefix: list[str], last: str, other: str
) -> None:
    """Streamed list items sharing a long path and differing in its last word (an
    enumeration) are other texts, however much they share."""
    assume(last != other and last not in prefix and other not in prefix)
    keyer = Keyer()
    path = "/".join(prefix)
    first = keyer.model("m", output=f"- {path}/{last}\n")
    assert keyer.model("m", output=f"- {path}/{other}\n") != first


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["messages", "num_messages", "history_len", "processed", "rows", "消息数"]),
    st.integers(1, 4),
    st.lists(st.booleans(), min_size=3, max_size=6),
    st.booleans(),
)
def test_a_message_count_is_a_count_of_rounds_only_when_a_call_came_back(
    field: str, stride: int, same_rows: list[bool], same_rest: bool
) -> None:
    """A state's message count rising by the same step each lap is masked (the lap's two
    reports key alike) only when the lap's call came back exactly, only for a field naming
    the conversation's size (a work count, ``processed``, ``rows``, only when it rose by
    one), and never when the rest of the state differs."""
    keyer = Keyer()
    keys, came_back = [], []
    seen: set[str] = set()
    for lap, same in enumerate(same_rows):
        state = {field: 2 + stride * lap, "next": "tools" if same_rest else "abcdef"[lap] * 4}
        keys.append(keyer.state(state, "agent"))
        rows = '["EU", "US"]' if same else f'["{"abcdef"[lap] * 3}"]'
        came_back.append(rows in seen)
        seen.add(rows)
        keyer.tool("run_query", {"sql": "SELECT 1"}, result=rows)
    for lap in range(1, len(keys)):
        if keys[lap] == keys[lap - 1]:
            assert same_rest and came_back[lap - 1]
            assert stride == 1 or field in ("messages", "num_messages", "history_len", "消息数")


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["noop", "probe", "bucket"]),
    st.lists(
        st.tuples(st.sampled_from(["noop", "probe"]), st.integers(0, 3), st.booleans()),
        min_size=3,
        max_size=8,
    ),
)
def test_a_label_counter_merges_only_calls_that_restate_it_and_get_the_same_outcome(
    stem: str, calls: list[tuple[str, int, bool]]
) -> None:
    """Two calls differing in a label (``name: noop3``) share a key only when the label's
    number rose by one, the label's name is said in another argument's value, the command
    is the same and so is the outcome: never two calls whose other content differs."""
    keyer = Keyer()
    n = 0
    seen: list[tuple[Any, Any, Any]] = []
    for word, rise, same in calls:
        n += rise
        args = {"cmd": f"echo {word}", "name": f"{stem}{n}"}
        result = json.dumps({"stdout": f"{word}\n" if same else f"{word} {n}\n", "ms": n})
        key = keyer.tool("fabric_exec", args, result=result)
        for other_args, other_result, other_key in seen:
            if other_key == key and other_args != args:
                assert other_args["cmd"] == args["cmd"] == f"echo {stem}"
                assert json.loads(other_result)["stdout"] == json.loads(result)["stdout"]
        seen.append((args, result, key))
