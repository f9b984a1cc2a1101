"""The same loop in the forms users log it (issue 29): a state as data, as JSON text or as
``name=value`` prose; a count of rounds in a state; a failure reported in a result as data or
as text. Each representation keys as the data does, and never merges what differs.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from loop_scaffold import escapes_but_stuck_fails, run

from pytest_agentchaos.escape import LoopDetector
from pytest_agentchaos.escape.history import ActionKey
from pytest_agentchaos.escape.keys import Keyer, failure_text
from pytest_agentchaos.escape.normalize import mask_args, mask_text


def pattern(keys: list[str]) -> list[int]:
    """Which earlier key each key equals (its first index): the keys' equality pattern."""
    first: dict[str, int] = {}
    return [first.setdefault(k, i) for i, k in enumerate(keys)]


def prose(state: dict[str, object]) -> str:
    return ", ".join(f"{k}={state[k]}" for k in sorted(state))


# -- a state as JSON text or prose keys as the data does --------------------------------------

STATES = st.lists(
    st.fixed_dictionaries(
        {
            "phase": st.sampled_from(["search", "reflect", "answer"]),
            "result": st.sampled_from(["no match", "3 rows", "error: boom"]),
            "ts": st.integers(0, 59).map(lambda s: f"2026-11-27T10:00:{s:02d}Z"),
        }
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(STATES, st.sampled_from([None, "agent"]))
def test_a_state_as_json_text_keys_as_the_data_does(
    states: list[dict[str, object]], node: str | None
) -> None:
    as_data, as_text = Keyer(), Keyer()
    data = [as_data.state(s, node) for s in states]
    text = [as_text.state(json.dumps(s), node) for s in states]
    assert pattern(text) == pattern(data)


@settings(max_examples=200, deadline=None)
@given(STATES)
def test_a_state_as_prose_never_merges_states_whose_words_differ(
    states: list[dict[str, object]],
) -> None:
    keyer = Keyer()
    keys = [keyer.state(prose(s)) for s in states]
    for i, a in enumerate(states):
        for j, b in enumerate(states[:i]):
            if (a["phase"], a["result"]) != (b["phase"], b["result"]):
                assert keys[i] != keys[j], (a, b)
            else:  # the timestamp is masked: the same state
                assert keys[i] == keys[j], (a, b)


def test_a_bare_token_state_is_its_own_digest() -> None:
    """A name or a digest the agent computed is kept as it is: never masked to a type."""
    keyer = Keyer()
    assert keyer.state("waiting_for_lock") == "waiting_for_lock"
    assert keyer.state("9f86d081884c7d65") != keyer.state("4e07408562bedb8b")


def test_a_transient_error_in_a_state_text_is_no_news() -> None:
    keyer = Keyer()
    keys = {
        keyer.state(f"url=https://feed.example.org/rss, items=None, last_error={error}")
        for error in ("HTTP 503", "ReadTimeout", "HTTP 429", "ConnectionResetError")
    }
    assert len(keys) == 1
    permanent = keyer.state("url=https://feed.example.org/rss, items=None, last_error=HTTP 404")
    assert permanent not in keys


# -- a count of rounds in a state -------------------------------------------------------------


def keys_of(field: str, count: int, form: str, rise: int = 1) -> list[str]:
    keyer = Keyer()
    states = [
        {"plan": "search docs", "result": "no match", field: 1 + rise * i} for i in range(count)
    ]
    shown = {"dict": lambda s: s, "json": json.dumps, "prose": prose}[form]
    return [keyer.state(shown(s), "agent") for s in states]


@pytest.mark.parametrize("form", ["dict", "json", "prose"])
@pytest.mark.parametrize("field", ["step", "loop_count", "numTurns", "round", "回合数"])
def test_a_round_counter_rising_alone_counts_reports_not_work(field: str, form: str) -> None:
    keys = keys_of(field, 6, form)
    # learned from two rises in a row at the latest: the third report on keys as the second
    # (a name that says it counts rounds is its own evidence from its first rise on, where
    # the report counters of ticks.py leave it the report's number: loops29h)
    assert len(set(keys[1:])) == 1


@pytest.mark.parametrize("form", ["dict", "json", "prose"])
@pytest.mark.parametrize("field", ["processed", "current_step", "step_index", "rows_loaded"])
def test_a_work_count_or_a_position_rising_is_progress(field: str, form: str) -> None:
    keys = keys_of(field, 6, form)
    assert len(set(keys)) == 6


@pytest.mark.parametrize("rise", [3, -1])
def test_a_round_counter_that_jumps_or_falls_is_no_counter(rise: int) -> None:
    keys = keys_of("step", 6, "dict", rise=20 + rise if rise > 0 else rise)
    assert len(set(keys)) == 6


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 999), min_size=2, max_size=10))
def test_a_decimal_is_never_taken_for_a_random_number(thousandths: list[int]) -> None:
    """A measure whose digits go up and down (a loss, a ratio) is news whenever it moves."""
    keyer = Keyer()
    keys = [
        keyer.state({"iteration": i, "loss": f"0.{t:03d}"}, "train")
        for i, t in enumerate(thousandths)
    ]
    for i in range(1, len(keys)):
        assert (keys[i] == keys[i - 1]) == (thousandths[i] == thousandths[i - 1])


def test_a_state_loop_logged_as_text_is_found() -> None:
    keyer, detector = Keyer(), LoopDetector()
    found = []
    for lap in range(6):
        for node, text in (
            ("search", "query=refund policy, hits=0"),
            ("reflect", "thought=search again"),
        ):
            state = keyer.state(f"[10:00:{lap:02d}] {text}, iteration={lap}", node)
            found += detector.observe(
                ActionKey(node=node, digest=state), lap, 0.0, state=state, node=node
            )
    assert any(loop.new for loop in found)


# -- must_escape, run the way a user runs it ---------------------------------------------------

STATE_LOOP = """
    @both
    @pytest.mark.must_escape
    def test_agent(chaos, escape):
        laps = 2 if escape else 6
        for lap in range(1, laps + 1):
            ts = f"2026-11-27T10:00:{lap:02d}Z"
            search = {"query": "refund policy", "hits": 0, "step": 2 * lap - 1, "ts": ts}
            chaos.step("search", state=SHOW(search))
            chaos.step("reflect", state=SHOW({"thought": "search again", "step": 2 * lap}))
        if escape:
            chaos.step("ask_user", state={"question": "Where is the refund policy kept?"})
    """


@pytest.mark.parametrize(
    "form",
    ["json.dumps", "lambda s: ', '.join(f'{k}={v}' for k, v in s.items())"],
    ids=["json", "prose"],
)
def test_a_state_loop_logged_as_text_with_a_step_counter_must_escape(
    pytester: pytest.Pytester, form: str
) -> None:
    result = run(pytester, f"SHOW = {form}\n" + textwrap.dedent(STATE_LOOP))
    escapes_but_stuck_fails(result, "[*]: *")


def test_a_work_count_rising_alone_in_a_text_state_is_no_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            for done in range(12):
                state = f"status=uploading, parts_done={done}, ts=10:00:{done:02d}"
                chaos.step("upload", state=state)
            assert loops(chaos) == []
        """,
    )
    result.assert_outcomes(passed=1)


# -- a failure reported in a result, as data or as text ---------------------------------------

SHELL_FAILURE = {"exit_code": 1, "stdout": "", "stderr": "ERROR: No matching distribution"}


@pytest.mark.parametrize(
    "result",
    [
        json.dumps(SHELL_FAILURE),
        json.dumps(SHELL_FAILURE, indent=2),
        "exit_code=1, stdout=, stderr=ERROR: No matching distribution",
        "ERROR: No matching distribution\n[Command finished with exit code 1]",
        '{"success": false, "message": "quota exceeded"}',
        "status: failed (quota exceeded)",
        "ERROR: No matching distribution found for torch==2.1.0",
        'Error from server (NotFound): pods "api-7d9f-2xkqp" not found',
        "fatal: not a git repository (or any of the parent directories): .git",
        "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'id'",
        "bash: pyhton: command not found",
        "错误：找不到文件 data.csv",
    ],
)
def test_a_failure_in_a_text_result_is_a_failure(result: str) -> None:
    assert failure_text(result) is not None
    key = Keyer().tool("run_shell", {"cmd": "pip install torch==2.1.0"}, result=result)
    assert key.coarse is not None and not key.succeeded


@pytest.mark.parametrize(
    "result",
    [
        json.dumps({"exit_code": 0, "stdout": "ok", "stderr": ""}),
        "exit_code=0, stdout=Installed torch-2.1.0",
        "3 passed, 0 failed in 1.2s [exit code 0]",
        '{"success": true, "errors": []}',
        "The report lists the error rates per region.",
        '["error", "warning"]',
        "Error handling in Go: a guide",
        "failed: 0, passed: 12",
        "errors: 0",
    ],
)
def test_a_text_result_reporting_no_failure_is_none(result: str) -> None:
    assert failure_text(result) is None
    assert Keyer().tool("run_shell", {"cmd": "make"}, result=result).succeeded


def test_the_same_failure_as_json_text_keys_as_the_data_does() -> None:
    as_data, as_text = Keyer(), Keyer()
    for version in ("2.1.0", "2.0.1", "1.13.1"):
        args = {"cmd": f"pip install torch=={version}"}
        stderr = f"ERROR: No matching distribution found for torch=={version}"
        data = as_data.tool("sh", args, result={"exit_code": 1, "stderr": stderr})
        text = as_text.tool("sh", args, result=json.dumps({"exit_code": 1, "stderr": stderr}))
        assert data.coarse == text.coarse


SHELL_STREAK = """
    @both
    @pytest.mark.must_escape
    def test_agent(chaos, escape):
        def sh(cmd):
            if "--python" in cmd:
                return SHOW({"exit_code": 0, "stdout": "Installed", "stderr": ""})
            version = cmd.rsplit("==", 1)[1]
            stderr = f"ERROR: No matching distribution found for torch=={version}"
            return SHOW({"exit_code": 1, "stdout": "", "stderr": stderr})

        sh = chaos.wrap(sh, name="sh")
        versions = ["2.1.0", "2.0.1"] if escape else ["2.1.0", "2.0.1", "1.13.1", "2.2.2"]
        for version in versions:
            sh(f"pip install torch=={version}")
        if escape:
            sh("uv pip install --python 3.11 torch")
    """


@pytest.mark.parametrize(
    "form",
    [
        "json.dumps",
        "lambda d: ', '.join(f'{k}={v}' for k, v in d.items())",
        "lambda d: d['stderr'] or d['stdout']",
    ],
    ids=["json", "prose", "stderr"],
)
def test_the_same_failure_reported_as_text_must_escape(
    pytester: pytest.Pytester, form: str
) -> None:
    result = run(pytester, f"SHOW = {form}\n" + textwrap.dedent(SHELL_STREAK))
    escapes_but_stuck_fails(result, "[repeat]: sh(cmd=*) -> ok failed the same way*")


# -- counters in Chinese ordinals, and the identical failing call between other calls ----------


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("第1次尝试", "第<n>次尝试"),
        ("【第12轮】重试", "【第<n>轮】重试"),
        ("第3遍", "第<n>遍"),
        ("第3章：开端", "第3章：开端"),  # a chapter is content, not a count of tries
    ],
)
def test_a_chinese_ordinal_count_of_tries_is_masked_and_masking_it_again_changes_nothing(
    text: str, masked: str
) -> None:
    assert mask_text(text) == masked
    assert mask_args({"label": text}) == {"label": masked}
    assert mask_text(masked) == masked


RECOMPILE = """
    @both
    @pytest.mark.must_escape
    def test_agent(chaos, escape):
        line = itertools.count(41, 2)

        def compile_views(path):
            raise SyntaxError(f"invalid syntax (views.py, line {next(line)}, column 7)")

        edit = chaos.wrap(lambda path, after: "ok", name="edit")
        compile_views = chaos.wrap(compile_views, name="py_compile")
        for after in ([39, 41] if escape else [39, 41, 43, 45]):
            edit("app/views.py", after)
            attempt(compile_views, "app/views.py")
        if escape:
            chaos.wrap(lambda path: "reverted", name="git_checkout")("app/views.py")
    """


def test_the_identical_call_failing_alike_between_other_calls_must_escape(
    pytester: pytest.Pytester,
) -> None:
    """An edit before each recompile, the same syntax error one line further down each time:
    the identical call failing the same way three times, other calls between, is a streak."""
    result = run(pytester, textwrap.dedent(RECOMPILE))
    escapes_but_stuck_fails(result, "[repeat]: py_compile(*) -> error:SyntaxError failed the same*")


# -- a temp directory is volatile, a file in it is content --------------------------------------


@pytest.mark.parametrize(
    ("path", "masked"),
    [
        ("/tmp/tmpa8f3k2/shard-00003.parquet", "<tmp>/shard-00003.parquet"),
        ("/private/var/folders/x9/b7k2/T/tmpq1w2e3/data.csv", "<tmp>/data.csv"),
        ("C:\\Users\\me\\AppData\\Local\\Temp\\tmpab12cd\\out.txt", "<tmp>\\out.txt"),
        ("/tmp/tmpa8f3k2", "<tmp>"),
    ],
)
def test_a_temp_directory_is_masked_and_the_file_in_it_kept(path: str, masked: str) -> None:
    assert mask_args({"path": path}) == {"path": masked}
    assert mask_text(f"wrote {path}") == f"wrote {masked}"
    assert mask_text(masked) == masked


def test_reads_of_other_files_in_one_temp_directory_are_other_calls() -> None:
    keyer = Keyer()
    keys = {
        keyer.tool("read", {"path": f"/tmp/tmpa8f3k2/shard-{i:05d}.parquet"}, result={"rows": 9})
        for i in range(4)
    }
    assert len(keys) == 4
    again = {
        keyer.tool("read", {"path": f"/tmp/tmp{i}x8f3k2/out.json"}, result={"rows": 9})
        for i in range(4)
    }  # a fresh temp directory each time, the same file in it: the same call
    assert len(again) == 1
