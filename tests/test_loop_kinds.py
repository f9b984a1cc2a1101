"""must_escape on each kind of loop the harness detects, run the way a user runs it.

Each agent is run twice: once it breaks out of its loop ("escapes": the test passes) and once
it never does ("stuck": the test fails, and the failure names the loop). The kinds that are no
loop pass with ``must_escape(require_loop=False)`` and leave no loop in ``chaos.trace``.
"""

from __future__ import annotations

import textwrap

import pytest

PRELUDE = '''\
import uuid

import pytest

from pytest_agentchaos.trace import Detection

both = pytest.mark.parametrize("escape", [True, False], ids=["escapes", "stuck"])


def loops(chaos):
    """The loop episodes the harness's observer has recorded so far."""
    return [
        d for d in chaos.trace.of_type(Detection)
        if d.detector == "loop_observer" and d.kind == "loop"
    ]


def attempt(tool, *args):
    """Call a tool the way an agent does: an error is something to read, not a crash."""
    try:
        return tool(*args)
    except Exception as exc:
        return exc

'''


def run(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makepyfile(test_agent=PRELUDE + textwrap.dedent(body))
    return pytester.runpytest("-v", "--chaos-seed=7")


def lines(*patterns: str) -> list[str]:
    """fnmatch patterns where ``[`` is literal (loop kinds and parametrize ids use it)."""
    return [p.replace("[", "[[]") for p in patterns]


def assert_escapes_but_stuck_fails(result: pytest.RunResult, loop: str) -> None:
    """The escaping agent passes; the stuck one fails, naming ``loop`` as never broken."""
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        lines(
            "*::test_agent[escapes] PASSED*",
            "*::test_agent[stuck] FAILED*",
            "must_escape failed: the agent did not escape its loop",
            f"  - loop #1 {loop}; never broken",
            "  interventions tried: none recorded*",
            "  the run ended completed at step *",
        )
    )
    result.stdout.no_fnmatch_line("*loop #2*")
    result.stdout.no_fnmatch_line("E  *")  # the verdict failed it, not the agent's own code


def test_volatile_fields_do_not_hide_a_repeated_call(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            n = iter(range(100))

            def status(job):
                i = next(n)
                return {
                    "state": "pending",
                    "request_id": str(uuid.uuid4()),
                    "timestamp": f"2024-05-01T10:00:{i:02d}Z",
                    "note": f"still pending, took 0.{123 + 7 * i}s",
                    "uuid": str(uuid.uuid4()),
                }

            status = chaos.wrap(status, name="status")
            for _ in range(3 if escape else 6):
                status("job-1")
            if escape:
                chaos.wrap(lambda job: "cancelled", name="cancel")("job-1")
        """,
    )
    assert_escapes_but_stuck_fails(
        result,
        "[repeat]: status(job='job-1') -> ok repeated 3x (period 1); "
        "began at step 1, detected at step 3",
    )


def test_polling_that_returns_new_data_is_no_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            rows = []

            def poll(job):
                rows.append(f"row {len(rows)}")
                return {"rows": list(rows), "request_id": str(uuid.uuid4())}

            poll = chaos.wrap(poll, name="poll")
            for _ in range(8):
                poll("job-1")
            assert loops(chaos) == []
        """,
    )
    result.assert_outcomes(passed=1)


def test_the_same_error_about_another_id_each_time_is_a_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            n = iter(range(100))

            def charge(order):
                raise TimeoutError(
                    f"gateway timeout for request {4000 + next(n)} (trace {uuid.uuid4()})"
                )

            charge = chaos.wrap(charge, name="charge")
            for _ in range(3 if escape else 6):
                attempt(charge, "A-1")
            if escape:
                chaos.wrap(lambda order: "queued", name="queue_for_later")("A-1")
        """,
    )
    assert_escapes_but_stuck_fails(
        result,
        "[repeat]: charge(order='A-1') -> error:TimeoutError repeated 3x (period 1); "
        "began at step 1, detected at step 3",
    )


def test_the_same_error_for_varying_arguments_is_a_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            def query(column):
                if column != "created_on":
                    raise ValueError(f"column '{column}' does not exist")
                return [1, 2]

            query = chaos.wrap(query, name="query")
            guesses = ["created", "created_at", "createdAt", "creation_date", "date"]
            for column in guesses[: 3 if escape else 5]:
                attempt(query, column)
            if escape:  # reads the schema instead of guessing, then asks right
                chaos.wrap(lambda: ["id", "created_on"], name="describe_table")()
                query("created_on")
        """,
    )
    assert_escapes_but_stuck_fails(
        result,
        "[repeat]: query(column='createdAt') -> error:ValueError failed the same way 3x "
        "with varying arguments; began at step 1, detected at step 3",
    )


def test_different_errors_from_the_same_call_are_no_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            errors = iter([
                "connection refused", "permission denied", "disk quota exceeded",
                "invalid token", "service unavailable", "checksum mismatch",
            ])

            def upload(path):
                raise OSError(next(errors))

            upload = chaos.wrap(upload, name="upload")
            for _ in range(6):
                attempt(upload, "report.pdf")
            assert loops(chaos) == []
        """,
    )
    result.assert_outcomes(passed=1)


def test_model_chatter_between_identical_calls_does_not_hide_the_loop(
    pytester: pytest.Pytester,
) -> None:
    # the model's text goes through the model channel (chaos.model): a new thought before
    # every identical call must not make the calls look like progress
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            thoughts = iter([
                "Let me look up the weather in Paris.",
                "The API may be flaky, so I will try once more.",
                "Perhaps it needs a moment; checking again.",
                "Nothing useful came back, another attempt should help.",
                "I am confident the service recovers soon.",
                "One more lookup and we are done.",
            ])
            think = chaos.model(lambda prompt: next(thoughts), name="llm")
            search = chaos.wrap(lambda q: "no results", name="search")
            for _ in range(3 if escape else 5):
                think("what next?")
                search("weather paris")
            if escape:
                think("what next?")
                chaos.wrap(lambda question: "Paris, France", name="ask_user")("which Paris?")
        """,
    )
    assert_escapes_but_stuck_fails(
        result,
        "[repeat]: search(q='weather paris') -> ok repeated 3x (period 1); "
        "began at step 2, detected at step 6",
    )


def test_two_identical_calls_are_no_loop_but_three_are(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_two(chaos):
            search = chaos.wrap(lambda q: "no results", name="search")
            search("x")
            search("x")
            search("y")
            assert loops(chaos) == []


        @pytest.mark.must_escape
        def test_three(chaos):
            search = chaos.wrap(lambda q: "no results", name="search")
            search("x")
            search("x")
            assert loops(chaos) == []
            search("x")
            [loop] = loops(chaos)
            assert (loop.step, loop.detail["repeats"]) == (3, 3)
            search("y")
        """,
    )
    result.assert_outcomes(passed=2)


CYCLE = """
        PHASES = ["plan", "act", "check"]
        LAPS = ["012", "102", "120", "201", "210", "021"]  # a shuffled order on every lap


        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            for lap in LAPS[: 3 if escape else 6]:
                for i in lap:
                    phase = PHASES[int(i)]
                    chaos.step(phase, state={"phase": phase, "todo": ["write report"]})
            if escape:
                chaos.step("write", state={"phase": "write", "todo": []})
        """


def test_cycling_through_the_same_states_is_a_loop(pytester: pytest.Pytester) -> None:
    result = run(pytester, CYCLE)
    # the state loop's subject is the digest of the state: which state it was is not shown
    assert_escapes_but_stuck_fails(
        result,
        "[state]: @plan (state *) recurred 3x with nothing new in between; "
        "began at step 1, detected at step 9",
    )


def test_states_that_progress_are_no_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            for processed in range(12):
                chaos.step("work", state={"processed": processed, "todo": "batch"})
            assert loops(chaos) == []
        """,
    )
    result.assert_outcomes(passed=1)


def test_a_hub_leading_to_new_work_is_no_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            for i in range(10):
                chaos.step("router", state={"phase": "route"})
                chaos.step(f"worker_{i}", state={"task": i})
            assert loops(chaos) == []
        """,
    )
    result.assert_outcomes(passed=1)


def test_a_hub_cycling_the_same_nodes_is_a_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            for _ in range(3 if escape else 5):
                chaos.step("router")
                chaos.step("search", state={"query": "x", "hits": 0})
                chaos.step("router")
                chaos.step("summarize", state={"draft": ""})
            if escape:
                chaos.step("router")
                chaos.step("ask_user", state={"question": "which x?"})
        """,
    )
    assert_escapes_but_stuck_fails(
        result, "[node]: node router visited 5x; began at step 1, detected at step 9"
    )


def test_a_hub_in_two_alternating_states_is_judged_by_its_laps(pytester: pytest.Pytester) -> None:
    # two laps and the start of a third visit the hub five times: not yet three laps
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos, escape):
            for _ in range(2 if escape else 4):
                chaos.step("agent", state={"known": [], "next": "长沙"})
                chaos.step("search", state={"city": "长沙", "stations": ["长沙南"]})
                chaos.step("agent", state={"known": [], "next": "娄底"})
                chaos.step("search", state={"city": "娄底", "stations": ["娄底南"]})
            chaos.step("agent", state={"known": [], "next": "长沙"})
            chaos.step("answer", state={"stations": ["长沙南", "娄底南"]})
            assert (loops(chaos) != []) == (not escape)
        """,
    )
    result.assert_outcomes(passed=2)


def test_a_ring_with_a_failing_call_is_one_episode(pytester: pytest.Pytester) -> None:
    # A -> B -> C with the same failing call at B is a repeat, a node loop and a recurring
    # call at once: the user sees one loop, broken when the agent leaves for D and E
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            def fetch(url):
                raise ConnectionError("connection reset by peer")

            fetch = chaos.wrap(fetch, name="fetch")
            for _ in range(5):
                chaos.step("A")
                chaos.step("B")
                attempt(fetch, "https://api.example.com/items")
                chaos.step("C")
            if escape:
                chaos.step("D")
                chaos.step("E")
            assert len(loops(chaos)) == 1
        """,
    )
    assert_escapes_but_stuck_fails(
        result,
        "[repeat]: @A -> @B -> fetch(url='https://api.example.com/items') -> "
        "error:ConnectionError -> @C repeated 3x (period 4); began at step 1, detected at step 12",
    )


def profile(pytester: pytest.Pytester, text: str) -> None:
    pytester.mkdir("chaos_profiles")
    (pytester.path / "chaos_profiles" / "x.toml").write_text(textwrap.dedent(text))


def test_profile_ignore_fields_makes_a_changing_field_irrelevant(
    pytester: pytest.Pytester,
) -> None:
    profile(pytester, '[escape.loops]\nignore_fields = ["page_token"]\n')
    result = run(
        pytester,
        """
        def agent(chaos):
            n = iter(range(100))
            # a token that changes every other call: not volatile by itself (a field that
            # changes on every call while the rest stays equal would be)
            inbox = chaos.wrap(
                lambda folder: {"files": [], "page_token": f"p{next(n) // 2}"}, name="list_files"
            )
            for _ in range(5):
                inbox("inbox")


        @pytest.mark.must_escape(require_loop=False)
        def test_default(chaos):
            agent(chaos)  # a new page token every other call: new results, no loop
            assert loops(chaos) == []


        @pytest.mark.chaos("x")
        @pytest.mark.must_escape
        def test_ignoring_the_token(chaos):
            agent(chaos)
        """,
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        lines(
            "*::test_default PASSED*",
            "*::test_ignoring_the_token FAILED*",
            "  - loop #1 [repeat]: list_files(folder='inbox') -> ok repeated 3x (period 1); "
            "began at step 1, detected at step 3; never broken",
        )
    )


def test_profile_key_function_keys_calls_by_their_arguments(pytester: pytest.Pytester) -> None:
    profile(pytester, '[escape.loops]\nkeys = {"search" = "mymod:key"}\n')
    pytester.makepyfile(
        mymod='''
        def key(call):
            """The same query is the same action, whatever order the hits came back in."""
            assert call.tool == "search" and call.ok and call.channel == "tool"
            return {"args": call.args}
        '''
    )
    result = run(
        pytester,
        """
        def agent(chaos):
            hits = ["a", "b", "c"]

            def search(q):
                hits.append(hits.pop(0))  # the same hits in another order each time
                return list(hits)

            search = chaos.wrap(search, name="search")
            for _ in range(5):
                search("cheap flights")


        @pytest.mark.must_escape(require_loop=False)
        def test_default(chaos):
            agent(chaos)  # by default a new result is progress
            assert loops(chaos) == []


        @pytest.mark.chaos("x")
        @pytest.mark.must_escape
        def test_keyed_by_arguments(chaos):
            agent(chaos)
        """,
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        lines(
            "*::test_default PASSED*",
            "*::test_keyed_by_arguments FAILED*",
            "  - loop #1 [repeat]: search(q='cheap flights') -> ok repeated 3x (period 1); "
            "began at step 1, detected at step 3; never broken",
        )
    )
