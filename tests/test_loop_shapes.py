"""must_escape on the shapes of loops users log (issue 29), run the way a user runs it.

Each agent is run twice: once it breaks out of its loop (the test passes) and once it never
does (the test fails, naming the loop). The shapes that are no loop pass with
``must_escape(require_loop=False)`` and leave no loop in ``chaos.trace``.
"""

from __future__ import annotations

import pytest
from loop_scaffold import escapes_but_stuck_fails, run


def no_loop(result: pytest.RunResult) -> None:
    result.assert_outcomes(passed=1)


def looped(result: pytest.RunResult, expected: bool) -> None:
    """The agent never stops repeating: must_escape fails it when a loop is seen."""
    if expected:
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["must_escape failed: the agent did not escape its loop"])
    else:
        result.assert_outcomes(passed=1)


# -- results as JSON text, and name=value pairs in prose ---------------------------------------


def test_json_text_results_lose_their_per_call_fields(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            n = itertools.count()

            def sh(cmd):  # a shell wrapper: stdout is JSON as text
                i = next(n)
                return json.dumps({"status": "pending", "request_id": str(uuid.uuid4()),
                                   "took_ms": 30 + 7 * i, "event_id": f"ev-{i}"})

            sh = chaos.wrap(sh, name="sh")
            for _ in range(3 if escape else 6):
                sh("jobctl status build")
            if escape:
                chaos.wrap(lambda cmd: "cancelled", name="sh2")("jobctl cancel build")
        """,
    )
    escapes_but_stuck_fails(result, "[repeat]: sh(cmd='jobctl status build') -> ok repeated*")


def test_name_value_pairs_in_prose_lose_their_per_call_values(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            n = itertools.count()
            ids = ["3f9a1c", "808154", "c0ffee", "a41b07", "552910", "e9d2aa"]

            def fetch(url):
                i = next(n)
                return f"HTTP 200, 0 items, request_id={ids[i]}, elapsed: {12 + i}"

            fetch = chaos.wrap(fetch, name="fetch")
            for _ in range(3 if escape else 6):
                fetch("https://api.example.com/items?since=today")
            if escape:
                chaos.wrap(lambda q: "3 items", name="search")("items")
        """,
    )
    escapes_but_stuck_fails(result, "[repeat]: fetch(url=*) -> ok repeated*")


def test_invalid_json_that_looks_like_json_is_masked_as_prose(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            n = itertools.count()
            read = chaos.wrap(
                lambda path: '{"ok": false, "trace_id": "%s", "error": "locked"' % uuid.uuid4(),
                name="read",
            )
            for _ in range(3 if escape else 6):
                read("/srv/app.lock")
            if escape:
                chaos.wrap(lambda path: "removed", name="unlock")("/srv/app.lock")
        """,
    )
    escapes_but_stuck_fails(result, "[repeat]: read(path='/srv/app.lock') -> ok repeated*")


# -- learned volatility and value provenance ----------------------------------------------------


def test_a_fresh_sequential_handle_each_lap_is_a_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            jobs = itertools.count(7)
            submit = chaos.wrap(lambda script: f"Submitted batch job={next(jobs)}", name="sbatch")
            state = chaos.wrap(lambda job: f"job={job} State=OUT_OF_MEMORY", name="sacct")
            for _ in range(2 if escape else 6):
                job = submit("train.sh --bs 64").rsplit("=", 1)[1]
                state(int(job))
            if escape:
                submit("train.sh --bs 16")
        """,
    )
    escapes_but_stuck_fails(result, "[repeat]: *sbatch(script='train.sh --bs 64')* (period 2)*")


def test_an_id_echoed_from_a_result_is_a_handle(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            # hex ids as a service issues them; one in 280 is all digits, as the second is
            ids = iter(["fd494efb3258", "750838365711", "bc170e90af6f", "8fca2df5fdec",
                        "4ead64d96b96", "e3b0c44298fc"])
            create = chaos.wrap(lambda name: {"run": next(ids)}, name="create_run")
            logs = chaos.wrap(
                lambda run: f"run {run}: ImportError: no module named torch", name="logs"
            )
            for _ in range(2 if escape else 6):
                run_id = create("nightly")["run"]
                logs(run_id)
            if escape:
                chaos.wrap(lambda pkg: "installed", name="pip_install")("torch")
        """,
    )
    escapes_but_stuck_fails(result, "[repeat]: *create_run(name='nightly')* (period 2)*")


def test_working_through_the_items_of_one_listing_is_no_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            listing = chaos.wrap(lambda: {"items": [f"item_{i}" for i in range(3, 9)]}, name="ls")
            get = chaos.wrap(lambda item: {"in_stock": True}, name="get_item")
            for item in listing()["items"]:
                get(item)
            assert loops(chaos) == []
        """,
    )
    no_loop(result)


def test_a_progress_counter_in_a_poll_is_news(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            progress = iter([0, 8, 21, 37, 52, 66, 81, 94])
            poll = chaos.wrap(
                lambda job: {"status": "running", "progress": next(progress)}, name="poll"
            )
            for _ in range(8):
                poll("job_a81kf02")
            assert loops(chaos) == []
        """,
    )
    no_loop(result)


# -- arguments: credentials, label counters, stamped timestamps --------------------------------


def test_fresh_credentials_counters_and_stamps_in_arguments_are_not_news(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            n = itertools.count(1)
            post = chaos.wrap(lambda **kwargs: {"ok": False, "reason": "quota"}, name="post")
            for _ in range(3 if escape else 6):
                i = next(n)
                post(
                    body="hello",
                    headers={"Authorization": f"Bearer tok{uuid.uuid4().hex}"},
                    label=f"attempt {i}",
                    sent_at=f"2026-11-27T10:00:{10 + i:02d}.{i:03d}Z",
                )
            if escape:
                chaos.wrap(lambda: {"quota": 0}, name="quota")()
        """,
    )
    escapes_but_stuck_fails(result, "[repeat]: post(body='hello', headers=*) -> ok repeated*")


# -- transient failures, same-error streaks -----------------------------------------------------


def test_a_cycle_whose_step_fails_with_another_transient_error_each_lap_is_a_loop(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            errors = itertools.cycle([
                TimeoutError("read timed out"),
                ConnectionResetError("connection reset by peer"),
                ConnectionRefusedError("connection refused"),
            ])

            def fetch(url):
                raise next(errors)

            fetch = chaos.wrap(fetch, name="fetch")
            plan = chaos.wrap(lambda goal: "fetch the feed", name="plan")
            for _ in range(2 if escape else 6):
                plan("news digest")
                attempt(fetch, "https://news.example.org/rss")
            if escape:
                chaos.wrap(lambda url: "cached feed", name="cache")("rss")
        """,
    )
    escapes_but_stuck_fails(result, "[repeat]: *plan(goal='news digest')* (period 2)*")


def test_a_helper_call_that_works_does_not_end_a_same_error_streak(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            def query(column):
                raise ValueError(f"column '{column}' does not exist")

            query = chaos.wrap(query, name="query")
            note = chaos.wrap(lambda text: {"saved": text}, name="note")
            guesses = ["created", "created_at", "createdAt", "creation", "date", "ts"]
            for i, column in enumerate(guesses[: 2 if escape else 6]):
                attempt(query, column)
                note(f"tried {column}")  # a helper that works, with new content each time
            if escape:
                chaos.wrap(lambda: ["id", "created_on"], name="describe")()
        """,
    )
    escapes_but_stuck_fails(result, "[repeat]: query(column=*) -> error:ValueError failed*")


def test_a_success_of_the_failing_tool_ends_the_streak(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            def query(column):
                if column.endswith("_on"):
                    return [1]
                raise ValueError(f"column '{column}' does not exist")

            query = chaos.wrap(query, name="query")
            for column in ["a", "b", "created_on", "c", "d", "updated_on"]:
                attempt(query, column)
            assert loops(chaos) == []
        """,
    )
    no_loop(result)


# -- short model texts ---------------------------------------------------------------------------


def test_the_same_short_reply_to_the_same_nudge_is_a_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            llm = chaos.model(lambda prompt: "好的，我来帮你整理这份会议纪要。", name="qwen")
            llm("帮我整理会议纪要")
            for _ in range(3 if escape else 5):
                llm("开始吧")
            if escape:
                chaos.model(lambda prompt: "纪要：一、……", name="qwen-max")("开始吧")
        """,
    )
    escapes_but_stuck_fails(result, "[repeat]: qwen*repeated*")


def test_short_labels_for_different_inputs_and_enumerations_are_no_loop(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            label = chaos.model(lambda review: "positive", name="classifier")
            for review in ["great", "love it", "works well", "five stars"]:
                label(review)
            steps = iter(["方案一：重启服务", "方案二：检查端口", "方案三：看日志", "方案四：回滚"])
            plan = chaos.model(lambda prompt: next(steps), name="planner")
            for _ in range(4):
                plan("下一步？")
            assert loops(chaos) == []
        """,
    )
    no_loop(result)


# -- the two conventions, as [escape.loops] knobs -------------------------------------------------

MOVING_LINE = """
    @pytest.mark.chaos("x")
    @pytest.mark.must_escape(require_loop=False)
    def test_agent(chaos):
        lines = itertools.count(10)

        def build(target):
            raise SyntaxError(f"invalid syntax at line {next(lines)}")

        build = chaos.wrap(build, name="build")
        for _ in range(5):
            attempt(build, "app")
    """


@pytest.mark.parametrize(
    ("table", "expected"),
    [("", True), ('error_numbers = "compare"', False)],
    ids=["default", "compare"],
)
def test_error_numbers_knob(pytester: pytest.Pytester, table: str, expected: bool) -> None:
    looped(run(pytester, MOVING_LINE, profile=f"[escape.loops]\n{table}\n"), expected)


REWORDED = """
    @pytest.mark.chaos("x")
    @pytest.mark.must_escape(require_loop=False)
    def test_agent(chaos):
        errors = iter(["permission denied", "disk quota exceeded", "checksum mismatch",
                       "file is locked", "path too long"])

        def upload(path):
            raise OSError(next(errors))

        upload = chaos.wrap(upload, name="upload")
        for _ in range(5):
            attempt(upload, "report.pdf")
    """


@pytest.mark.parametrize(
    ("table", "expected"),
    [("", False), ('error_wording = "ignore"', True)],
    ids=["default", "ignore"],
)
def test_error_wording_knob(pytester: pytest.Pytester, table: str, expected: bool) -> None:
    looped(run(pytester, REWORDED, profile=f"[escape.loops]\n{table}\n"), expected)


def test_a_bad_knob_value_is_one_clear_line(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.chaos("x")
        @pytest.mark.must_escape
        def test_agent(chaos):
            pass
        """,
        profile='[escape.loops]\nerror_wording = "sometimes"\n',
    )
    result.stdout.fnmatch_lines(
        ["*x.toml: [[]escape.loops[]]: error_wording: 'sometimes' is not one of compare, ignore*"]
    )
