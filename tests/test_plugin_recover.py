"""must_recover_state as a user runs it: markers, crash and corrupt_snapshot faults from a
marker or a profile, and the messages a failing run prints."""

from __future__ import annotations

import pytest

AGENT = '''
import pytest

from pytest_agentchaos.phoenix import MemorySnapshotStore, PhoenixPolicy, PhoenixRunner, StepReport


class Shop:
    """Collects 8 items; charges the card at step 3 through ``effect``."""

    def __init__(self, gateway):
        self.items, self.gateway = [], gateway
        self.effect = lambda key, fn, *args, **kwargs: fn(*args, **kwargs)  # no ledger

    def step(self, n):
        if n == 3:
            self.effect("order-9", self.gateway, order="9", idempotency_key="order-9")
        self.items.append(n)
        return StepReport(output=n, progress=len(self.items), done=len(self.items) >= 8)

    def to_state(self):
        return {"items": list(self.items)}

    def from_state(self, state):
        self.items = list(state["items"])


def shop_run(chaos, ledger=True, **policy):
    charges = []
    gateway = chaos.wrap(lambda order, idempotency_key: charges.append(order) or "ok",
                         name="charge")
    shop = Shop(gateway)
    store = MemorySnapshotStore(recorder=chaos.session, clock=chaos.clock)
    # no policy given: the profile's [phoenix] table
    kwargs = {"policy": PhoenixPolicy(**{"interval": 2, **policy})} if policy else {}
    runner = PhoenixRunner.for_run(chaos, shop, store, **kwargs)
    if ledger:
        shop.effect = runner.effect
    return runner, shop, charges
'''


def esc(text: str) -> str:
    """``text`` as an fnmatch pattern that matches it literally (brackets are classes)."""
    return text.replace("[", "[[]")


def _run(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_agent=AGENT + body)
    return pytester.runpytest("-p", "no:randomly", "-v", *args)


def test_a_reborn_agent_passes_must_recover_state(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
@pytest.mark.chaos(faults=[{"kind": "crash", "nth": [4]},
                           {"kind": "corrupt_snapshot", "mode": "bitflip"}])
@pytest.mark.must_recover_state(max_rebirths=1)
def test_agent(chaos):
    runner, shop, charges = shop_run(chaos, interval=2)
    assert runner.run().done and shop.items == list(range(1, 9)) and charges == ["9"]
""",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "PASSED  test_agent.py::test_agent  *faults=crash:1,corrupt_snapshot:1 *"
            "verdict=must_recover_state=ok"
        ]
    )


def test_a_double_charge_fails_with_its_explanation(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
@pytest.mark.chaos(faults=[{"kind": "crash", "nth": [4]}])
@pytest.mark.must_recover_state
def test_agent(chaos):
    runner, shop, charges = shop_run(chaos, ledger=False, interval=2)
    assert runner.run().done and charges == ["9", "9"]
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "must_recover_state failed: the agent did not recover its state",
            "  - duplicate effect: charge with idempotency key 'order-9' succeeded 2 times "
            "(before any rebirth; after rebirth 1 (crash at step 4))",
            "  troubles and rebirths:",
            "    1. crash at step 4 (InjectedCrash: injected crash (step 4 of Shop)): resumed at "
            "step 2 from snap-000000000002-step-000002.json",
            "  runner Shop: the agent reached its goal at step 8 (10 steps run, 1 rebirth(s))",
            "  faults fired: crash:1; the run ended completed at t=1.000s",
            "*- agentchaos -*",
            "replay: pytest test_agent.py::test_agent --chaos-seed=*",
            "FAILED  test_agent.py::test_agent  *faults=crash:1 *verdict=must_recover_state=FAIL",
        ]
    )


def test_nothing_to_recover_from_fails_only_with_require_problem(
    pytester: pytest.Pytester,
) -> None:
    result = _run(
        pytester,
        """
@pytest.mark.must_recover_state(require_problem=True)
def test_strict(chaos):
    runner, shop, _ = shop_run(chaos)
    assert runner.run().done


@pytest.mark.must_recover_state
def test_allowed(chaos):
    runner, shop, _ = shop_run(chaos)
    assert runner.run().done
""",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "must_recover_state failed: nothing to recover from: no crash, loop or stagnation "
            "arose in this run (faults fired: none; the run ended completed at t=0.000s). Run "
            "the agent with PhoenixRunner.for_run and inject crash or corrupt_snapshot faults, "
            "or pass require_problem=False.",
        ]
    )


def test_runner_faults_from_a_profile(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".toml",
        **{
            "chaos_profiles/reborn": """
[[faults]]
kind = "crash"
tools = ["Shop"]
nth = [5]

[[faults]]
kind = "corrupt_snapshot"
mode = ["truncate", "version"]

[phoenix]
interval = 3
backoff = 5
"""
        },
    )
    result = _run(
        pytester,
        """
@pytest.mark.chaos("reborn")
@pytest.mark.must_recover_state
def test_agent(chaos):
    runner, shop, charges = shop_run(chaos)
    assert runner.policy.interval == 3
    assert runner.run().done and charges == ["9"]
    assert chaos.clock.now() >= 5  # the profile's backoff, on the virtual clock
""",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["PASSED  *crash:1*corrupt_snapshot:1*must_recover_state=ok"])


def test_a_profile_with_crash_on_the_http_channel_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(
        ".toml", **{"chaos_profiles/wrong": '[[faults]]\nkind = "crash"\nchannels = "http"\n'}
    )
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest("--chaos-profile=wrong")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: pytest-agentchaos: --chaos-profile: *wrong.toml: "
            + esc(
                "faults[0]: kind 'crash' cannot apply to channels ['http']; it applies to step "
                "(a PhoenixRunner's steps)"
            )
        ]
    )


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        (
            "must_recover_state(max_rebirths=-1)",
            "@pytest.mark.must_recover_state: max_rebirths: must be >= 0, got -1",
        ),
        (
            "must_recover_state(max_rebirths='3')",
            "@pytest.mark.must_recover_state: max_rebirths: expected an integer >= 0, got '3'",
        ),
        (
            "must_recover_state(max_rebirths=2.5)",
            "@pytest.mark.must_recover_state: max_rebirths: expected an integer >= 0, got 2.5",
        ),
        (
            "must_recover_state(no_duplicate_effects='yes')",
            "@pytest.mark.must_recover_state: no_duplicate_effects: expected a boolean, got 'yes'",
        ),
        (
            "must_recover_state(require_problem=1)",
            "@pytest.mark.must_recover_state: require_problem: expected a boolean, got 1",
        ),
        (
            "must_recover_state(rebirths=3)",
            "@pytest.mark.must_recover_state: unknown argument 'rebirths'; allowed: max_rebirths, "
            "no_duplicate_effects, require_problem",
        ),
        (
            "must_recover_state(3)",
            "@pytest.mark.must_recover_state: takes keyword arguments only (max_rebirths, "
            "no_duplicate_effects, require_problem)",
        ),
        (
            'chaos(faults=[{"kind": "crash", "channels": ["tool"]}])',
            "@pytest.mark.chaos: faults[0]: kind 'crash' cannot apply to channels ['tool']; "
            "it applies to step (a PhoenixRunner's steps)",
        ),
        (
            'chaos(faults=[{"kind": "corrupt_snapshot", "mode": "shred"}])',
            "@pytest.mark.chaos: faults[0]: mode: 'shred' is not one of truncate, bitflip, version",
        ),
    ],
)
def test_bad_arguments_are_collection_errors(
    pytester: pytest.Pytester, marker: str, message: str
) -> None:
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.{marker}
        def test_one(chaos):
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["pytest-agentchaos: bad chaos marker", f"*::test_one: {esc(message)}"]
    )


def test_the_marker_is_registered_with_its_description(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers", "--strict-markers")
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.must_recover_state(max_rebirths=3, no_duplicate_effects=True, "
            "require_problem=False): after every crash, loop or stagnation *"
        ]
    )


def test_crashing_every_step_fails_even_when_the_test_swallows_the_halt(
    pytester: pytest.Pytester,
) -> None:
    result = _run(
        pytester,
        """
class Swallower(Shop):
    def step(self, n):
        try:
            return super().step(n)
        except BaseException:
            return StepReport(output="swallowed")


@pytest.mark.chaos(faults=[{"kind": "crash"}])
@pytest.mark.must_recover_state
def test_agent(chaos):
    runner, _, _ = shop_run(chaos, max_rebirths=2)
    runner.agent = Swallower(runner.agent.gateway)
    try:
        runner.run()
    except BaseException as exc:
        assert type(exc).__name__ == "RebirthsExhausted"
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "must_recover_state failed: the agent did not recover its state",
            "  - crash at step 1 (InjectedCrash: injected crash (step 1 of Shop)): not reborn: "
            "the runner's max_rebirths=2 was used up and it escalated",
            "  - the rebirth runner never finished its run: stopped by hard halt 'max_rebirths': "
            "the agent kept failing after 2 rebirths (last: crash at step 1: InjectedCrash: "
            "injected crash (step 1 of Shop))",
            "  troubles and rebirths:",
            "    1. crash at step 1 (InjectedCrash: injected crash (step 1 of Shop)): resumed at "
            "step 0 from snap-000000000001-step-000000.json",
            "    2. crash at step 1 (InjectedCrash: injected crash (step 1 of Shop)): reset to the "
            "start state; skipped snap-000000000001-step-000000.json (marked bad), which no later "
            "snapshot held: nothing lost",
            "*",
            "  faults fired: crash:3; the run ended halted at t=3.000s",
            "  (the agent caught RebirthsExhausted and carried on; it derives from BaseException*",
        ]
    )


def test_corrupting_the_only_snapshot_the_start_one_passes_as_a_reset_losing_nothing(
    pytester: pytest.Pytester,
) -> None:
    result = _run(
        pytester,
        """
@pytest.mark.chaos(faults=[{"kind": "crash", "nth": [3]},
                           {"kind": "corrupt_snapshot", "mode": "version"}])
@pytest.mark.must_recover_state
def test_agent(chaos):
    runner, shop, _ = shop_run(chaos, interval=100)
    assert runner.run().done
""",
    )
    # the soft reset gives the agent the start state the start snapshot held
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*profile=none: 1 chaos test (1 passed)*corrupt_snapshot:1*"])
