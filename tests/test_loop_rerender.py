"""Labels do not change when the representation changes (issue 29): every dev run of the loop
corpus re-rendered in another faithful form (``bench/loop_rerender.py``: results as JSON text,
MCP content, a shell wrapper's output, with per-call fields; failures reported as data; states
as JSON text, prose or checkpoints; replies re-worded) gets the verdict it got as written.
And the kinds behind the flips this check found: a failure reported as data is compared as a
raised one is (its error object's words, numbers in it masked and counts kept, a transient one
no news), inside an MCP envelope too.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from loop_scaffold import escapes_but_stuck_fails, run

from pytest_agentchaos.escape.keys import Keyer, failure_text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import loop_rerender  # noqa: E402
from bench_loop_corpus import harness  # noqa: E402
from loop_corpus import load  # noqa: E402

DEV = load(split="dev")


#: The flips left, each with why (a rendering, the case): nothing else may flip.
KNOWN = (
    {
        (rendering, case)
        for rendering in ("state_version", "state_json+version")
        for case in (
            # the same states reported lap after lap while a save's version rises, in runs of
            # three laps exactly: a version counts rounds from its first rise (loops29h closed
            # the other runs of this kind), but ticks.py takes it for a report counter only
            # after it rose at two reports, so the run's first state keeps its number and the
            # lap's first node is keyed anew at its second visit
            "d6-state-multiagent-handoff-triangle",
            "d6-state-zh-presale-aftersale-pingpong",
        )
    }
    | {
        # flips toward the label: the rendering finds a loop the run as written hides. Each is a
        # miss of the run as written, listed with the misses in fixtures/loops/README.md
        ("state_version", "d5-zh-state-research-search-loop"),
        ("state_json+version", "d5-zh-state-research-search-loop"),
        ("reply_counter", "d5-chat-autocontinue-all-done"),
        ("reply_log_prefix", "d5-chat-autocontinue-all-done"),
        ("reply_apology", "d5-chat-autocontinue-all-done"),
    }
    | {
        # a bare reply (no number, name, code or quoted value in what stays) behind an opening
        # the run never showed it without: "Sorry about that! Thinking..." then "You're right, my
        # bad. Thinking...". Which sentence is the framing is not decidable from the structure
        # ("The method covers sampling. Let me know if you want more." keeps its closing line
        # after each new section), so the two are compared only through a whole earlier reply
        # or what they hand over (escape/framing.py); declined, not guessed
        ("reply_apology", case)
        for case in (
            "d3-chat-two-agents-ping-pong",
            "d3-zh-chat-round-counter-same-ask",
            "d3-chat-repeat-ask-then-unstuck",
            "d4-chat-gratitude-loop",
            "d4-chat-stream-ny-alternation",
            "d5-chat-degenerate-output",
            "openhands-monologue-broken-by-command",
            "openhands-sdk-monologue-counter",
            "gemini-alternating-short-phrases",
            "d-chat-thinking-iteration-n",
            "d6-chat-youre-welcome-runaway",
        )
    }
    | {
        # batch 6, open: a traceback handed back as a shell wrapper's stdout with exit code
        # 0 (the rendering claims success), or inside a data/meta envelope, is read as data,
        # its line and byte positions then news; an MCP listing in a shell wrapper whose
        # event count rises each lap is found a lap late
        ("shell_stdout", "d6-prose-zh-gbk-csv-decode-error"),
        ("result_meta", "d6-prose-zh-gbk-csv-decode-error"),
        ("shell_stdout", "d6-json-k8s-failedmount-cycle-then-ec2"),
    }
    | {
        # batch 9, open (found when it joined the dev half, before any round read it): a
        # Chinese chat handing back the same URL from its first reply, with other punctuation;
        # a shuffled state cycle with a revision counter, as batch 6's two above
        ("reply_punct", "d9-zh-chat-baidumap-url-firstreply"),
        ("state_version", "d9-zh-state-baidu-poi-order-shuffled"),
        ("state_json+version", "d9-zh-state-baidu-poi-order-shuffled"),
    }
    | {
        # batch 10, open (found when it joined the dev half, before any round read it): the
        # same refused publish handed back as a shell wrapper's stdout with exit code 0, read
        # as data as batch 6's traceback above
        ("shell_stdout", "d10c-tool-npm-publish-same-version-flags"),
    }
)
#: Renderings whose flips are an open kind, not checked here (none left).
OPEN: set[str] = set()


@pytest.mark.parametrize("name", sorted(set(loop_rerender.ALL) - OPEN))
def test_no_dev_verdict_flips_when_the_run_is_rendered_another_way(name: str) -> None:
    changed, moved = loop_rerender.flips(DEV, loop_rerender.ALL[name], harness)
    if name != "state_dict":  # the dev half logs no state as JSON text to turn back
        assert changed >= 50  # the rendering reaches the runs it is about
    assert {(name, case_id) for case_id, _ in moved} <= KNOWN, moved


def test_a_rendering_keeps_the_labels_and_changes_what_it_says() -> None:
    case = next(c for c in DEV if any(isinstance(a.get("result"), dict) for a in c.actions))
    other = loop_rerender.rerender(case, loop_rerender.RENDERINGS["json_compact"])
    assert other is not None
    assert (other.loop, other.loops, len(other.actions)) == (
        case.loop,
        case.loops,
        len(case.actions),
    )
    assert other.actions != case.actions


# -- a failure reported as data keys as the raised failure does ------------------------------

ERRORS = [
    ("SyntaxError", "invalid syntax (line {n})"),
    ("SyntaxError", "unterminated string literal (detected at line {n})"),
    ("ModuleNotFoundError", "No module named 'yaml'"),
    ("ImportError", "cannot import name 'CLoader' from 'yaml'"),
    ("ReadTimeout", "Read timed out. (read timeout={n})"),
    ("HTTPError", "503 Service Unavailable"),
    ("ConnectionResetError", "[Errno 104] Connection reset by peer"),
    ("ValueError", "column {n}: unexpected token"),
]


def as_error_object(error: str, message: str) -> Any:
    return json.dumps({"error": {"type": error, "message": message}})


def as_mcp_error(error: str, message: str) -> Any:
    return {"content": [{"type": "text", "text": f"{error}: {message}"}], "isError": True}


def as_mcp_shell(error: str, message: str) -> Any:
    text = json.dumps({"exit_code": 1, "stdout": "", "stderr": f"{error}: {message}"})
    return {"content": [{"type": "text", "text": text}], "isError": False}


def pattern(keys: list[Any]) -> list[int]:
    first: dict[Any, int] = {}
    return [first.setdefault(k, i) for i, k in enumerate(keys)]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, len(ERRORS) - 1), st.integers(1, 3), st.integers(1, 400)),
        min_size=2,
        max_size=8,
    ),
    st.sampled_from([as_error_object, as_mcp_error, as_mcp_shell]),
)
def test_a_failure_reported_as_data_is_the_same_failure_as_raised(
    calls: list[tuple[int, int, int]], render: Any
) -> None:
    raised, reported = Keyer(), Keyer()
    raised_keys, reported_keys, raised_coarse, reported_coarse = [], [], [], []
    for error_index, cell, number in calls:
        error, template = ERRORS[error_index]
        message = template.format(n=number)
        args = {"code": f"cell {cell}"}
        a = raised.tool("run", args, ok=False, error_type=error, message=message)
        b = reported.tool("run", args, result=render(error, message))
        raised_keys.append(a)
        reported_keys.append(b)
        raised_coarse.append(a.coarse)
        reported_coarse.append(b.coarse)
        assert failure_text(render(error, message)) is not None
    # the same calls are equal, and the same failures while the arguments vary
    assert pattern(reported_keys) == pattern(raised_keys)
    assert pattern(reported_coarse) == pattern(raised_coarse)


def test_a_test_run_reported_as_data_keeps_its_counts_and_masks_its_positions() -> None:
    keyer = Keyer()

    def coarse(stdout: str) -> str | None:
        result = {"exit_code": 1, "stdout": stdout, "stderr": ""}
        return keyer.tool("sh", {"cmd": "pytest -q"}, result=result).coarse

    # what the agent reads is the count: 7 then 5 failing tests is progress
    assert coarse("7 failed, 205 passed in 23.52s") != coarse("5 failed, 207 passed in 21.0s")
    assert coarse("5 failed, 207 passed in 23.52s") == coarse("5 failed, 207 passed in 21.0s")
    # a line or a column is where the same error is, not another error
    assert coarse("app.py:12:5: E999 SyntaxError at line 12") == coarse(
        "app.py:40:1: E999 SyntaxError at line 40"
    )
    assert coarse("第 3 行：字段 'user_id' 不能为空") == coarse("第 7 行：字段 'user_id' 不能为空")


@pytest.mark.parametrize(
    ("result", "said"),
    [
        ({"error": {"type": "ValueError", "message": "bad id"}}, "ValueError: bad id"),
        ({"isError": True, "content": [{"type": "text", "text": "boom"}]}, "boom"),
        ({"ok": False, "errors": [{"msg": "a"}, {"msg": "b"}]}, None),
        ({"success": False, "error": {"code": 7}}, '{"code": 7}'),
        (
            {"isError": False, "content": [{"type": "text", "text": '{"exit_code": 2}'}]},
            '{"exit_code": 2}',
        ),
        ({"data": {"exit_code": 1, "stderr": "fatal: no remote"}, "meta": {}}, "fatal: no remote"),
        ({"isError": False, "content": [{"type": "text", "text": "3 rows"}]}, None),
        ({"data": {"rows": 3}, "meta": {"took": 4}}, None),
    ],
)
def test_the_error_a_result_reports_is_read_as_its_words(result: Any, said: str | None) -> None:
    found = failure_text(result)
    if said is None and "errors" in result:
        assert found is not None and '"msg"' in found  # a list it cannot name: kept whole
    else:
        assert found == said


def test_transient_errors_reported_as_data_are_no_news() -> None:
    keyer = Keyer()
    args = {"key": "dist.tar.gz"}
    keys = {
        keyer.tool("put", args, result=as_mcp_error(error, message))
        for error, message in [
            ("HTTPError", "502 Bad Gateway"),
            ("TimeoutError", "请求超时（60s）"),
            ("ConnectionError", "连接被对端重置"),
            ("ReadTimeout", ""),
        ]
    }
    assert len(keys) == 1
    # a test's output that mentions a timeout is that test's failure, not a transient one
    failing = keyer.tool(
        "sh",
        {"cmd": "npm test"},
        result={
            "exit_code": 1,
            "stdout": "FAIL http.test.ts\n thrown: Exceeded timeout of 5000 ms",
        },
    )
    assert failing.coarse is not None and "transient" not in failing.coarse


MCP_STREAK = """
    @both
    @pytest.mark.must_escape
    def test_agent(chaos, escape):
        def build(target):
            if target == "fixed":
                return {"content": [{"type": "text", "text": "built"}], "isError": False}
            text = json.dumps({"error": {"type": "SyntaxError",
                                         "message": f"invalid syntax (line {len(target)})"}})
            return {"content": [{"type": "text", "text": text}], "isError": True}

        build = chaos.wrap(build, name="build")
        targets = ["a", "bb"] if escape else ["a", "bb", "ccc", "dddd"]
        for target in targets:
            build(target)
        if escape:
            build("fixed")
    """

MOVING = """
    @pytest.mark.must_escape
    def test_agent(chaos):
        def build(target):
            errors = {"a": ("ModuleNotFoundError", "No module named 'yaml'"),
                      "b": ("ImportError", "cannot import name 'CLoader'"),
                      "c": ("SyntaxError", "invalid syntax (settings.py, line 88)")}
            if target in errors:
                kind, message = errors[target]
                body = {"error": {"type": kind, "message": message}}
                return {"content": [{"type": "text", "text": json.dumps(body)}], "isError": True}
            return {"content": [{"type": "text", "text": "built"}], "isError": False}

        build = chaos.wrap(build, name="build")
        for target in "abcd":
            build(target)
        assert not loops(chaos)
    """


def test_the_same_error_as_mcp_content_must_escape(pytester: pytest.Pytester) -> None:
    result = run(pytester, MCP_STREAK)
    escapes_but_stuck_fails(result, "[repeat]: build(target=*) -> ok failed the same way*")


def test_an_error_that_moves_as_mcp_content_is_no_loop(pytester: pytest.Pytester) -> None:
    result = run(pytester, MOVING)
    result.assert_outcomes(passed=1)


# -- a number that counts the reports, arguments as JSON text, a reply as a message ----------


def states(run: list[tuple[str, Any]]) -> list[tuple[str, int]]:
    from pytest_agentchaos.escape import detect_loops
    from pytest_agentchaos.trace.events import RunEnded, Step

    events: list[Any] = [Step(i + 1, 0.0, label=n, state=s) for i, (n, s) in enumerate(run)]
    events.append(RunEnded(len(run), 0.0))
    return [(d.kind, d.step) for d in detect_loops(events)]


@pytest.mark.parametrize("name", ["_version", "checkpoint", "v", "版本号"])
def test_a_stamp_rising_on_every_report_does_not_hide_a_cycle_of_states(name: str) -> None:
    lap = [
        ("plan", {"plan": ["add limiter", "write test"], "done": []}),
        ("execute", {"diff_lines": 0, "error": "apply_patch is not bound"}),
        ("review", {"verdict": "needs_work"}),
    ]
    run = [("intake", {"ticket": "T-1"}), *lap * 3, ("escalate", {"to": "human"})]
    assert states(run) == [("loop", 10), ("loop_broken", 11)]
    # a checkpointer's save counter on every report changes nothing
    stamped = [(node, {**state, name: i}) for i, (node, state) in enumerate(run)]
    assert states(stamped) == [("loop", 10), ("loop_broken", 11)]


@pytest.mark.parametrize(
    "count",
    [
        lambda i: (i + 1) // 2,  # the work done rises at the reports that do it
        lambda i: i // 2,
        lambda i: 3 * i,  # by more than one: a quantity
    ],
    ids=["at-store", "at-fetch", "by-three"],
)
def test_a_count_of_work_is_still_progress(count: Any) -> None:
    run = [
        ("fetch" if i % 2 == 0 else "store", {"phase": i % 2, "processed": count(i)})
        for i in range(12)
    ]
    assert states(run) == []


def test_a_count_rising_on_one_node_alone_is_still_progress() -> None:
    assert states([("work", {"phase": "work", "processed": i}) for i in range(10)]) == []


def prose(state: dict[str, Any]) -> str:
    """A state logged as ``name=value`` text."""
    return ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in state.items())


@pytest.mark.parametrize("name", ["messages", "version"])
def test_a_stamp_in_a_state_logged_as_text_does_not_hide_a_cycle_of_states(name: str) -> None:
    # the same as a state given as data: its whole-number pairs are its number fields
    lap = [
        ("summarize", {"summary": "churn rose to 2.4% in Q3; ends Dec 15."}),
        ("check_length", {"words": 17, "limit": 12, "ok": False}),
    ]
    run = [*lap * 4, ("finish", {"summary": "done"})]
    stamped = [(n, {**state, name: 6 + i}) for i, (n, state) in enumerate(run)]
    assert states(stamped) == [("loop", 7), ("loop_broken", 9)]
    assert states([(n, prose(state)) for n, state in stamped]) == states(stamped)


def test_a_count_of_work_in_a_state_logged_as_text_is_still_progress() -> None:
    run: list[Any] = [
        ("fetch" if i % 2 == 0 else "store", prose({"phase": i % 2, "processed": (i + 1) // 2}))
        for i in range(12)
    ]
    assert states(run) == []
    from pytest_agentchaos.escape.ticks import ReportCounters

    counters = ReportCounters()
    seen = [counters.mask_text(prose({"node": n, "v": v})) for n, v in [("a", 1), ("b", 2)]]
    assert seen == ["node=a, v=1", "node=b, v=<tick>"]
    assert counters.mask_text("v=2.5, at 12:30") == "v=2.5, at 12:30"  # no whole number


def test_a_stamp_that_stops_rising_is_read_again() -> None:
    from pytest_agentchaos.escape.ticks import ReportCounters

    counters = ReportCounters()
    seen = [counters.mask({"node": n, "version": v}) for n, v in [("a", 1), ("b", 2), ("a", 3)]]
    assert [s["version"] for s in seen] == [1, "<tick>", "<tick>"]
    assert counters.mask({"node": "b", "version": 9})["version"] == 9
    assert counters.mask("text state") == "text state"


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["q", "page", "limit", "lang"]), st.integers(0, 5)))
def test_arguments_as_json_text_key_as_the_data_does(args: dict[str, int]) -> None:
    as_data, as_text, wrapped = Keyer(), Keyer(), Keyer()
    a = as_data.tool("search", args, result={"hits": 0})
    b = as_text.tool("search", json.dumps(dict(reversed(args.items()))), result={"hits": 0})
    c = wrapped.tool("search", {"arguments": json.dumps(args)}, result={"hits": 0})
    assert a == b == c
    assert b.shown_args == json.dumps(dict(reversed(args.items())))  # shown as it was given


@pytest.mark.parametrize(
    "render",
    [
        lambda t: {"role": "assistant", "content": t},
        lambda t: json.dumps({"id": "msg_01", "role": "assistant", "content": t}),
        lambda t: {"choices": [{"message": {"role": "assistant", "content": t}}]},
        lambda t: {"content": [{"type": "text", "text": t}]},
    ],
    ids=["message", "json-text", "completion", "parts"],
)
def test_a_reply_as_a_message_keys_as_its_text(render: Any) -> None:
    texts = ["Done.", "Done.", "Here is the summary you asked for.", "Done."]
    plain, message = Keyer(), Keyer()
    assert pattern([plain.model("m", output=t) for t in texts]) == pattern(
        [message.model("m", output=render(t)) for t in texts]
    )


def test_a_message_that_calls_a_tool_is_keyed_by_its_call() -> None:
    keyer = Keyer()
    call = {"name": "search", "arguments": '{"q": "a"}'}
    first = keyer.model("m", output={"content": "", "tool_calls": [call]})
    other = keyer.model("m", output={"content": "", "tool_calls": [{**call, "name": "fetch"}]})
    assert first != other


def tool_message(content: str, name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    call = {"name": name, "arguments": json.dumps(args)}
    calls = [{"id": f"call_{n:024x}", "type": "function", "function": call}]
    return {"role": "assistant", "content": content, "tool_calls": calls}


@pytest.mark.parametrize(
    "render",
    [
        lambda m: m,
        json.dumps,
        lambda m: {"choices": [{"index": 0, "message": m}], "usage": {"total_tokens": 7}},
        lambda m: {"role": "assistant", "content": [
            {"type": "text", "text": m["content"]},
            {"type": "tool_use", "id": m["tool_calls"][0]["id"],
             "name": m["tool_calls"][0]["function"]["name"],
             "input": json.loads(m["tool_calls"][0]["function"]["arguments"])}]},
    ],
    ids=["message", "json-text", "completion", "anthropic"],
)  # fmt: skip
def test_a_message_that_calls_tools_is_what_it_calls(render: Any) -> None:
    # the arguments the agent chose are what it asks for (another date, another offset);
    # the sentence said with the call is framing, and the call ids no content
    keyer = Keyer()
    days = [render(tool_message("Searching flights.", "search_flights", {"date": d}, i))
            for i, d in enumerate(["2026-12-18", "2026-12-19", "2026-12-20"])]  # fmt: skip
    keys = [keyer.model("m", output=m, input="What about that day?") for m in days]
    assert len({k.digest for k in keys}) == 3
    again = Keyer()
    said = ["Let me look that up.", "Retrying.", "Trying once more."]
    same = [
        render(tool_message(t, "run_sql", {"query": "SELECT 1"}, i)) for i, t in enumerate(said)
    ]
    assert len({again.model("m", output=m, input="retry").digest for m in same}) == 1


def _trace(i: int) -> str:
    return hashlib.sha256(str(i).encode()).hexdigest()[:12]


@pytest.mark.parametrize("render", [lambda d: d, json.dumps], ids=["data", "json-text"])
def test_a_structured_reply_is_its_values(render: Any) -> None:
    # a reply that is data, not a message: another train at another time is another reply,
    # though its words are the same and its numbers alike in shape
    def train(name: str, times: tuple[str, str], trace: str) -> Any:
        return render({"train": name, "from": "Shanghai", "to": "Beijing", "depart": times[0],
                       "arrive": times[1], "seat": "second", "trace_id": trace})  # fmt: skip

    keyer = Keyer()
    trains = [("G102", ("06:26", "11:29")), ("G104", ("06:37", "12:24")),
              ("G6", ("07:00", "11:35")), ("G108", ("07:15", "13:11"))]  # fmt: skip
    keys = [keyer.model("m", output=train(n, t, _trace(i)), input=f"{n} sold out, another one")
            for i, (n, t) in enumerate(trains)]  # fmt: skip
    assert len({k.digest for k in keys}) == len(trains)
    again = Keyer()
    same = [again.model("m", output=train(*trains[0], _trace(i)), input="G102 sold out")
            for i in range(3)]  # fmt: skip
    assert len({k.digest for k in same}) == 1


# -- a turn is its words: case, punctuation, spacing and a runner's counter are not ---------


@pytest.mark.parametrize(
    "turns",
    [
        ["continue", "Continue.", "  continue ", "continue!"],
        ["[turn 1] continue", "[turn 2] continue", "[turn 3] continue", "[turn 4] continue"],
        ["expand it (try 1)", "shorten it (try 1)", "expand it (try 2)", "shorten it (try 2)"],
        ["第1次：请继续", "第2次：请继续", "第3次：请继续", "第4次：请继续"],
    ],
    ids=["punctuation", "counter", "two-turns", "zh-counter"],
)
def test_a_turn_written_another_way_is_the_same_turn(turns: list[str]) -> None:
    keyer = Keyer()
    keys = [keyer.model("m", ok=False, error_type="APITimeoutError", input=t) for t in turns]
    assert len(set(keys)) == (2 if "shorten" in turns[1] else 1)


def test_turns_that_say_something_else_stay_apart() -> None:
    keyer = Keyer()
    turns = ["summarise chapter one", "summarise chapter four", "translate it", "Translate it."]
    keys = [keyer.model("m", ok=False, error_type="APITimeoutError", input=t) for t in turns]
    assert pattern(keys) == [0, 1, 2, 2]


def test_a_nudge_with_a_turn_counter_is_still_a_nudge() -> None:
    keyer = Keyer()
    question = "Do you want HTTPS, and where are the certificates?"
    keyer.model("m", input="write an nginx proxy config for port 8080", output="Sure.")
    keys = [
        keyer.model("m", input=f"[turn {i}] {nudge}", output=question)
        for i, nudge in enumerate(["whatever", "either", "you decide"], 2)
    ]
    assert len(set(keys)) == 1


def test_an_enumeration_of_names_joined_with_numbers_is_no_repeat() -> None:
    keyer = Keyer()
    regions = ["us-east-1", "us-east-2", "us-west-1", "us-west-2", "eu-west-1"]
    keys = [keyer.model("m", output=f"Region {r}: quota OK (vCPU 96/256).") for r in regions]
    assert len(set(keys)) == len(regions)
    # the same name said again is the same text, and a counter still counts
    again = Keyer()
    said = [again.model("m", output="Region us-east-1: quota OK.") for _ in range(2)]
    assert said[0] == said[1]
    ticks = [again.model("m", output=f"Still thinking... {i}") for i in (1, 2, 3)]
    assert len(set(ticks)) == 1


def test_a_named_whole_number_in_prose_is_kept_as_in_data() -> None:
    from pytest_agentchaos.escape.normalize import mask_value_text

    text = "rows_done=1000000, rows_total=5000000, sent_at=1732700000, ref 12345678"
    assert (
        mask_value_text(text)
        == "rows_done=1000000, rows_total=5000000, sent_at=<volatile>, ref <id>"
    )
    keyer = Keyer()
    states = [keyer.state(f"phase=import, rows_done={n}000000") for n in (1, 2, 3)]
    assert len(set(states)) == 3  # progress, as the same state given as data


def test_replies_that_differ_in_their_inline_code_say_different_things() -> None:
    keyer = Keyer()
    node = '2026-03-01T10:00:00Z INFO assistant: Set `"moduleResolution": "node"` in tsconfig.'
    keys = [keyer.model("m", output=node.replace("node", v)) for v in ("node", "bundler")]
    assert keys[0] != keys[1]


def test_a_run_on_reply_handed_back_to_new_requests_ignores_them() -> None:
    keyer = Keyer()
    keyer.model("m", input="create the Header component", output="Created Header.tsx.")
    junk = "✦ " + "ny" * 120
    keys = [
        keyer.model("m", input=turn, output=junk)
        for turn in (
            "now write the Footer component with links",
            "check the file you created for errors please",
            "create Footer.tsx under src/components",
            "explain what is going on here",
        )
    ]
    # the first answers its turn; said again, it ignored the turns that followed
    assert len(set(keys[1:])) == 1


@pytest.mark.parametrize(
    "error", ["EndpointConnectionError", "ConnectionClosedError", "ConnectionResetError"]
)
def test_a_connection_error_known_by_name_alone_is_transient(error: str) -> None:
    assert Keyer().transient(error, None, None)


def test_digits_after_a_dot_in_a_name_are_no_decimal() -> None:
    keyer = Keyer()
    keys = [
        keyer.tool("send", {"draft": "d-118"}, result=f"Queued message <{n}@mail.acme.io>.")
        for n in ("ec78a265f93a.2834", "b99d2b193d15.7795", "0cc93fd781ab.2699", "9411fa3f.3741")
    ]
    assert len(set(keys[1:])) == 1  # a random part of an id, changing by itself
    decimals = Keyer()
    keys = [decimals.tool("gauge", {}, result=f"load {v}") for v in ("0.2834", "0.7795", "0.2699")]
    assert len(set(keys)) == 3  # a measure moving is news


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("共 48 个用例，1 个失败，耗时 3.34 秒", "共 48 个用例，1 个失败，耗时 <duration>"),
        ("用时：120毫秒", "用时：<duration>"),
        ("耗时很长", "耗时很长"),  # no number: nothing measured
    ],
)
def test_a_duration_in_chinese_is_masked_as_in_english(text: str, masked: str) -> None:
    from pytest_agentchaos.escape.normalize import mask_text

    assert mask_text(text) == masked


def test_a_field_named_by_a_time_unit_holds_a_duration() -> None:
    from pytest_agentchaos.escape.normalize import mask

    assert mask({"cost_ms": 69, "renderUs": 4, "items": 3}) == {
        "cost_ms": "<volatile>",
        "renderUs": "<volatile>",
        "items": 3,
    }
