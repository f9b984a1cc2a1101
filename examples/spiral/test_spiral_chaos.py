"""The semantic spiral (seed 004): a chat agent watched by the halt monitor, under chaos.

The agent (chat_agent.py) asks its responder after every model and tool call; the monitor
reads the run's own trace. An agent that spirals must be stopped by the monitor (and by the
heuristic that describes its spiral: ``must_halt(by=...)``) well before the harness's budget;
an agent that is nudged out of its spiral, or one whose work only looks repetitive, must not.

The scripted spirals pin ``profile="none"``: their spiral is their own, not a fault's. The
``spiral`` profile makes a model that does make progress repeat and paraphrase itself; the
healthy agents run under ``flaky`` (the main job's profile), retrying what it breaks.
"""

from __future__ import annotations

from typing import Any

import healthy
import pytest
import scripted
from chat_agent import ChatAgent, ChatResult

from pytest_agentchaos import Chaos
from pytest_agentchaos.halt import HaltMonitor, Responder
from pytest_agentchaos.trace import Detection, FaultInjected, Halt, Intervention


def chat(chaos: Chaos, task: str, model: Any, tools: Any = None, **monitor: Any) -> ChatResult:
    """Run the chat agent with its model and tools under chaos, watched by a halt monitor
    (the sentence model unless ``embedder=`` says otherwise) and a responder that nudges
    first, then terminates."""
    responder = Responder(HaltMonitor.for_run(chaos, task=task, **monitor))
    agent = ChatAgent(
        task,
        chaos.model(model),
        tools=chaos.wrap_tools(tools or {}),
        responder=responder,
        sleep=chaos.clock.sleep,
        max_turns=200,
    )
    return agent.run()


def monitor_halts(chaos: Chaos) -> list[Halt]:
    return [h for h in chaos.trace.of_type(Halt) if h.detail.get("by") == "halt_monitor"]


# -- scripted spirals: each one halted by the heuristic that describes it ----------------------


@pytest.mark.chaos(profile="none")
@pytest.mark.must_halt(by="repetition", max_model_calls=30, not_before=3)
def test_an_exact_repetition_is_halted(chaos: Chaos) -> None:
    """The model says the very same thing every turn: three strikes of repetition."""
    result = chat(chaos, scripted.BUILD_TASK, scripted.exact_spiral(), embedder="lexical")
    assert result.status == "halted"


@pytest.mark.chaos(profile="none")
@pytest.mark.must_halt(by="repetition", max_model_calls=30, not_before=3)
def test_a_paraphrased_spiral_is_halted_by_semantic_repetition(chaos: Chaos) -> None:
    """The model says the same thing in other words every turn; the sentence model sees that
    the replies mean the same."""
    result = chat(chaos, scripted.BUILD_TASK, scripted.paraphrase_spiral())
    assert result.status == "halted"
    strikes = [d for d in chaos.trace.of_type(Detection) if d.kind == "repetition"]
    assert strikes and all("(semantic, " in d.detail["reason"] for d in strikes)


def test_the_paraphrases_share_too_few_words_for_a_lexical_check() -> None:
    """Without the sentence model no reply repeats another: only their meaning does. The
    monitor still stops them, later, because they bring no new information (novelty)."""
    monitor = HaltMonitor(task=scripted.BUILD_TASK, embedder="lexical")
    model = scripted.paraphrase_spiral()
    decisions = [monitor.observe(model("")) for _ in range(6)]
    assert not any("repetition" in d.fired for d in decisions)
    assert any(d.halt and "novelty" in d.fired for d in decisions)


@pytest.mark.chaos(profile="none")
@pytest.mark.must_halt(by=("apology", "tool_failure"), max_model_calls=30, not_before=3)
def test_sorry_fixed_it_then_the_same_failure_is_halted(chaos: Chaos) -> None:
    """The model says it is sorry and has fixed it, and the tests fail exactly as before,
    again and again."""
    tools = {"run_tests": scripted.run_tests}
    result = chat(chaos, scripted.TESTS_TASK, scripted.apology_spiral(), tools, embedder="lexical")
    assert result.status == "halted"
    assert "apology" in monitor_halts(chaos)[0].detail["fired"]


@pytest.mark.chaos(profile="none")
@pytest.mark.must_halt(by="drift", max_model_calls=30, not_before=5)
def test_drifting_off_the_task_is_halted(chaos: Chaos) -> None:
    """Asked to fix a failing test, the model ends up on time zones, sundials and pyramids;
    it brings new facts every turn, but none about the task."""
    result = chat(chaos, scripted.DATES_TASK, scripted.drifting(), embedder="lexical")
    assert result.status == "halted"
    assert "test_parse_date" not in result.replies[-1]


@pytest.mark.chaos(profile="none")
@pytest.mark.must_halt(by=("repetition", "novelty"), max_model_calls=30, not_before=3)
def test_a_chinese_spiral_is_halted(chaos: Chaos) -> None:
    """查询物流: the agent says it cannot find the parcel, in the same words or in others.
    Chinese is compared by character pairs, not by the English sentence model."""
    result = chat(chaos, scripted.PARCEL_TASK, scripted.chinese_spiral(), embedder="lexical")
    assert result.status == "halted"
    nudges = [e for e in chaos.trace.of_type(Intervention) if e.action == "nudge"]
    assert nudges and "重复" in nudges[0].detail["message"]  # the nudge speaks the task's language


# -- the spiral profile: a model that makes progress, made to spiral by the faults -------------


# not searched: asserts the spiral the profile's dense repeats make
@pytest.mark.chaos(profile="spiral", explore=False)
@pytest.mark.must_halt(by=("repetition", "novelty"), max_model_calls=150)
def test_the_spiral_profile_makes_a_progressing_model_spiral_and_it_is_halted(
    chaos: Chaos,
) -> None:
    """The model checks one warehouse per answer and needs 60 real answers; the profile
    answers most calls in its place with its previous answer, repeated or paraphrased. Three
    such answers close together are a spiral, and one forms long before the 60th warehouse."""
    model = scripted.WarehouseSearch(warehouses=60)
    result = chat(chaos, "Find the warehouse that holds order 8812", model)
    assert result.status == "halted"
    assert model.calls < 60  # the monitor stopped it, not the task's end
    fired = {e.kind for e in chaos.trace.of_type(FaultInjected)}
    assert fired & {"paraphrased_output", "repeated_output"}


# -- a nudge that works ---------------------------------------------------------------------------


@pytest.mark.chaos(profile="none")
@pytest.mark.must_halt(max_model_calls=20)
def test_a_nudge_gets_the_agent_out_of_its_spiral(chaos: Chaos) -> None:
    """The model repeats itself until its prompt carries the responder's nudge, then changes
    its approach and finishes: the run completes, nobody halts it."""
    model = scripted.NudgeAware()
    result = chat(chaos, scripted.SHIPMENT_TASK, model, embedder="lexical")
    assert result.done and "8812" in result.answer
    actions = [e.action for e in chaos.trace.of_type(Intervention)]
    assert actions == ["nudge"]
    assert model.nudged_at is not None and result.nudges
    assert not monitor_halts(chaos)


# -- healthy templated work under flaky: never halted ----------------------------------------------


@pytest.mark.chaos(profile="flaky")
@pytest.mark.must_halt(max_steps=200)
def test_a_paginated_import_is_not_halted(chaos: Chaos) -> None:
    """Page after page of "Imported page 3 of 12: 50 rows": the sentence model finds the
    pages alike, but each brings new numbers. Flaky calls are retried; no page is lost."""
    catalogue = healthy.Catalogue()
    tools = {"import_page": catalogue.import_page}
    result = chat(chaos, healthy.IMPORT_TASK, healthy.Importer(), tools)
    assert not monitor_halts(chaos), monitor_halts(chaos)[0].reason
    assert result.done
    assert catalogue.imported == list(range(1, healthy.PAGES + 1))


@pytest.mark.chaos(profile="flaky")
@pytest.mark.must_halt(max_steps=200)
def test_polling_a_long_job_is_not_halted(chaos: Chaos) -> None:
    """A job polled until it is done: the same call again and again ("still running, 40%
    done"), with a rising percentage in between."""
    tools = {"job_status": healthy.ExportJob().job_status}
    result = chat(chaos, healthy.POLL_TASK, healthy.Poller(), tools, embedder="lexical")
    assert not monitor_halts(chaos), monitor_halts(chaos)[0].reason
    assert result.done and "1,200 rows" in result.answer
