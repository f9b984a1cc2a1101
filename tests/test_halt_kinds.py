"""The halt monitor by kind of evidence, not by phrase (issue 29, third round): a count toward
a total inside a tool's status is the work's progress; code handed back with its own variables
renamed is the same code; the same failure without error text is the same class of error in
other words. Each with a spiral that halts, a healthy look-alike that does not, property tests
and must_halt."""

from __future__ import annotations

import pytest
from halt_scaffold import halt_at, say
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.halt import HaltMonitor
from pytest_agentchaos.halt.artefacts import artefacts, renamed
from pytest_agentchaos.halt.streaks import error_classes
from pytest_agentchaos.halt.values import loop_place, read

# -- a count toward a total ------------------------------------------------------------------------


def test_a_count_toward_a_total_inside_a_status_is_progress_not_a_loop_counter() -> None:
    def places(text: str) -> list[bool]:
        return [loop_place(place) for place, _ in read(text).numbers]

    assert places("Status: building (step 3 of 5).") == [False, False]
    assert places("Deploy status: migrating, step 4/9") == [False, False]
    # the agent's own tag opening its message still counts its tries
    assert places("Step 3/20: reading the log again") == [True, False]
    assert places("[iter 4] dumping the schema") == [True]
    # tries toward a budget are tries wherever they are said
    assert places("The tool says this was attempt 3 of 5") == [True, False]


def test_polling_a_deploy_whose_step_counter_rises_does_not_halt() -> None:
    steps = [say("Deploy started, status: queued.", "deploy_status", True)]
    for n in (2, 3, 4):
        steps += [
            say(f"Status: building (step {n} of 5).", "deploy_status", True),
            say("Waiting 30 seconds before polling again.", None),
        ]
    steps.append(say("Status: live at https://staging.example.com", "deploy_status", True))
    assert halt_at(steps, "Wait for the deploy to finish and report the URL.") is None
    # the same poll with the counter standing still: the wait and the poll say it again
    stuck = [say("Deploy started, status: queued.", "deploy_status", True)]
    # (the first poll brings the counter's values: it is no drift, so one poll more)
    for _ in range(6):
        stuck += [
            say("Status: building (step 2 of 5).", "deploy_status", True),
            say("Waiting 30 seconds before polling again.", None),
        ]
    assert halt_at(stuck, "Wait for the deploy to finish and report the URL.") is not None


# -- code handed back with its variables renamed ------------------------------------------------

PARSE = """def parse({s}):
    {n}, {u} = int({s}[:-1]), {s}[-1]
    return {n} * {{'d': 86400, 'h': 3600}}[{u}]"""

NAMES = st.sampled_from(["s", "text", "value", "raw", "n", "num", "unit", "u", "k", "amount"])


@given(NAMES, NAMES, NAMES, NAMES, NAMES, NAMES)
@settings(max_examples=150, deadline=None)
def test_code_with_its_own_variables_renamed_is_the_same_artefact(
    s1: str, n1: str, u1: str, s2: str, n2: str, u2: str
) -> None:
    if len({s1, n1, u1}) < 3 or len({s2, n2, u2}) < 3:
        return
    one = PARSE.format(s=s1, n=n1, u=u1)
    two = PARSE.format(s=s2, n=n2, u=u2)
    assert renamed(one) == renamed(two)
    assert renamed(renamed(one)) == renamed(one)  # idempotent


def test_renaming_keeps_what_the_code_only_uses_and_every_literal() -> None:
    # tables and columns an SQL query reads are not its own names: another table is other code
    assert artefacts("```sql\nSELECT count(*) FROM users;\n```") != artefacts(
        "```sql\nSELECT count(*) FROM orders;\n```"
    )
    # another literal is another fix
    assert renamed("def f(s):\n    return s[:-1]") != renamed("def f(s):\n    return s[:-2]")
    assert renamed("x = 1\nif x == 2: pass") == "v0 = 1\nif v0 == 2: pass"


def code_reply(words: str, s: str, n: str) -> str:
    return f"{words}\n```python\n{PARSE.format(s=s, n=n, u='unit')}\n```"


def test_a_chat_apology_loop_handing_back_renamed_code_halts_and_real_fixes_do_not() -> None:
    task = "Write a Python function that parses '3d4h' style durations into seconds."
    loop = [
        say(code_reply("Here you go:", "s", "n")),
        say(code_reply("Apologies, that fails on '3d4h'. Fixed version:", "s", "n")),
        say(code_reply("Sorry, ValueError again. This one handles it:", "text", "n")),
        say(code_reply("My mistake. Corrected:", "value", "count")),
        say(code_reply("Apologies once more. Final version:", "s", "num")),
    ]
    assert halt_at(loop, task) is not None
    fixes = [
        say("```python\ndef parse(s):\n    return int(s[:-1]) * 86400\n```"),
        say("Sorry, hours too:\n```python\ndef parse(s):\n    d, h = s.split('d')\n"
            "    return int(d) * 86400 + int(h.rstrip('h')) * 3600\n```"),
        say("Apologies, a missing part:\n```python\nimport re\ndef parse(s):\n"
            "    m = re.fullmatch(r'(?:(\\d+)d)?(?:(\\d+)h)?', s)\n"
            "    return int(m[1] or 0) * 86400 + int(m[2] or 0) * 3600\n```"),
        say("My mistake, minutes as well:\n```python\nimport re\ndef parse(s):\n"
            "    m = re.fullmatch(r'(?:(\\d+)d)?(?:(\\d+)h)?(?:(\\d+)m)?', s)\n"
            "    return sum(int(g or 0) * k for g, k in zip(m.groups(), (86400, 3600, 60)))\n```"),
    ]  # fmt: skip
    assert halt_at(fixes, task) is None


# -- the same failure without error text --------------------------------------------------------


def test_an_exception_is_one_class_however_it_is_qualified() -> None:
    assert "exception:OperationalError" in error_classes(
        "psycopg2.OperationalError: could not connect to server"
    )
    assert "missing:connection refused" in error_classes("x failed: Connection refused")


def test_the_same_refused_connection_in_other_words_is_a_streak() -> None:
    task = "Run the migration script against the dev DB."
    refused = [
        "psycopg2.OperationalError: could not connect to server: Connection refused. Is the "
        "server running on host localhost (127.0.0.1) and accepting TCP/IP connections on port "
        "5432?",
        "psycopg2.OperationalError: could not connect to server: Connection refused (port 5432)",
        "OperationalError: connection to server at localhost port 5432 failed: Connection refused",
        "could not connect to server: Connection refused",
    ]
    steps = [say("python migrate.py --env dev", "bash", False)]
    for text in refused:
        steps += [say(text, "bash", False), say("Retrying once more.")]
    assert halt_at(steps, task) is not None
    # failures that change class (refused, then a missing table, then a syntax error): work
    moving = [
        say("python migrate.py --env dev", "bash", False),
        say("OperationalError: could not connect to server: Connection refused", "bash", False),
        say("Started the database container.", "docker", True),
        say('ProgrammingError: relation "users" does not exist', "bash", False),
        say("Created the schema first.", "bash", True),
        say("SyntaxError: invalid syntax in migrations/0003.py line 12", "bash", False),
        say("Fixed the typo in 0003.", "edit_file", True),
        say("All 3 migrations applied.", "bash", True),
    ]
    assert halt_at(moving, task) is None


# -- must_halt ------------------------------------------------------------------------------------


AGENT = """
from pytest_agentchaos.halt import HaltMonitor

def run(chaos, replies):
    model = chaos.model(lambda prompt: next(replies))
    monitor = HaltMonitor.for_run(chaos, task="Parse '3d4h' durations", embedder="lexical")
    for _ in range(50):
        model("again?")
        if monitor.decision.halt:
            return monitor
    return monitor
"""

RENAMED = (
    "iter(f'Sorry, fixed:\\n```python\\ndef parse({v}):\\n    return int({v}[:-1]) * 86400\\n```'"
    " for v in ['s', 'text', 'value', 'raw', 'x', 'y', 'z'] * 8)"
)
CHANGED = (
    "iter(f'Sorry, fixed:\\n```python\\ndef parse(s):\\n    return int(s[:-1]) * {k}\\n```'"
    " for k in range(86400, 86450))"
)


@pytest.mark.parametrize(("replies", "outcome"), [(RENAMED, "passed"), (CHANGED, "failed")])
def test_must_halt_on_a_chat_loop_of_renamed_code(
    pytester: pytest.Pytester, replies: str, outcome: str
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(agent=AGENT)
    pytester.makepyfile(
        test_a=f"""
        import pytest
        from agent import run

        @pytest.mark.must_halt(max_model_calls=10)
        def test_halts(chaos):
            run(chaos, {replies})
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(**{outcome: 1})
    if outcome == "failed":
        result.stdout.fnmatch_lines(["*must_halt failed: the agent did not halt on its own*"])


# -- polls spaced by waits ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("poll", "wait"),
    [
        ("Backup job status: running.", "Sleeping 60 s."),
        ("备份任务状态：运行中。", "等待 60 秒再查。"),
    ],
)
def test_spaced_polls_with_the_same_status_are_worth_a_few_polls_not_forever(
    poll: str, wait: str
) -> None:
    task = "Wait for the nightly backup and report its size."
    steps = []
    for _ in range(3):
        steps += [say(poll, "job_status", True), say(wait)]
    steps.append(say("Backup job status: finished, 12.4 GB written.", "job_status", True))
    assert halt_at(steps, task) is None
    # the same status polled on and on: every other poll counts, and it halts
    forever = []
    for _ in range(12):
        forever += [say(poll, "job_status", True), say(wait)]
    assert halt_at(forever, task) is not None
    # the same poll with no wait between: hammering, each counts
    hammering = [say(poll, "job_status", True) for _ in range(6)]
    assert halt_at(hammering, task) is not None


def test_a_wait_tool_between_polls_spaces_them_too() -> None:
    steps = []
    for _ in range(3):
        steps += [
            say("Status: pending.", "check_status", True),
            say("", "sleep", True, args={"seconds": 30}),
        ]
    steps.append(say("Status: done, 3 files exported.", "check_status", True))
    assert halt_at(steps, "Export the report and tell me when it is done.") is None


# -- the same query reordered, a state moving between counts, code retouched -----------------------


def test_a_quoted_query_of_words_already_said_is_no_news() -> None:
    monitor = HaltMonitor(task="Which PostgreSQL version first shipped MERGE?", embedder="lexical")
    monitor.observe("Looking up: first postgres version MERGE statement", "web_search", True)
    monitor.observe("search -> 'postgres MERGE statement version first'", "web_search", True)
    assert not monitor.watch.history[-1].new_info
    monitor.observe("query: 'which postgresql release introduced MERGE'", "web_search", True)
    assert monitor.watch.history[-1].new_info  # words not said before: another query


def test_a_state_that_moves_between_two_counts_is_work_unless_the_step_says_again() -> None:
    task = "Patch the ten hosts one by one."
    steps = []
    for n, host in enumerate(["web-01", "web-02", "db-01"], start=1):
        for phase in ("draining from the load balancer", "apt-get upgrade -y", "rebooting"):
            steps.append(say(f"[{host}] {phase}", "ssh", True, progress=n - 1,
                             state={"host": host, "phase": phase}))  # fmt: skip
        steps.append(say(f"[{host}] healthy, back in rotation ({n}/10)", "lb", True, progress=n,
                         state={"host": host, "phase": "in"}))  # fmt: skip
    assert halt_at(steps, task) is None
    polish = [say("[1/6] Documented the flag in README.", "edit_file", True, progress=1,
                  state={"readme": "r1"})]  # fmt: skip
    for n in range(2, 8):
        polish.append(say("[1/6] Polishing the README wording once more.", "edit_file", True,
                          progress=1, state={"readme": f"r{n}"}))  # fmt: skip
    assert halt_at(polish, "Work through TODO.md (6 items).") is not None


def test_a_formula_handed_back_retouched_halts_and_one_that_changes_does_not() -> None:
    task = "A Sheets formula counting rows of A2:A dated this month."
    loop = [
        say('=COUNTIFS(A2:A, ">="&EOMONTH(TODAY(),-1)+1, A2:A, "<="&EOMONTH(TODAY(),0))'),
        say("(user: #VALUE!)\nSorry! Use: =SUMPRODUCT(MONTH(A2:A)=MONTH(TODAY()))"),
        say("(user: still #VALUE!)\nApologies: =SUMPRODUCT(--(MONTH(A2:A)=MONTH(TODAY())))"),
        say("(user: same)\nMy mistake: =SUMPRODUCT((MONTH(A2:A)=MONTH(TODAY()))*1)"),
        say("(user: again)\nSo sorry: =SUMPRODUCT(--(MONTH(A2:A) = MONTH(TODAY())))"),
    ]
    assert halt_at(loop, task) is not None
    fixes = [
        say("=SUMPRODUCT(MONTH(A2:A)=MONTH(TODAY()))"),
        say("Sorry, blanks count as month 12: "
            "=SUMPRODUCT((A2:A<>\"\")*(MONTH(A2:A)=MONTH(TODAY())))"),
        say("Apologies, the year too: =SUMPRODUCT((A2:A<>\"\")*(MONTH(A2:A)=MONTH(TODAY()))"
            "*(YEAR(A2:A)=YEAR(TODAY())))"),
        say("My mistake, text dates: =SUMPRODUCT((A2:A<>\"\")*(TEXT(DATEVALUE(A2:A),\"yyyymm\")"
            "=TEXT(TODAY(),\"yyyymm\")))"),
    ]  # fmt: skip
    assert halt_at(fixes, task) is None
