"""Model calls wrapped with `Chaos.model`: ModelCall/ModelResult events, token accounting
(from `usage` in its common shapes, or a custom counter), the max_tokens budget and faults
on the model channel."""

from __future__ import annotations

import inspect
from types import SimpleNamespace

import pytest

from pytest_agentchaos.errors import BudgetExhausted
from pytest_agentchaos.inject import InjectedConnectionError, InjectedTimeout, default_tokens
from pytest_agentchaos.profiles import Budgets
from pytest_agentchaos.trace import FaultInjected, ModelCall, ModelResult


class FakeLLM:
    """Answers with a counter; reports `tokens` tokens per call in OpenAI dict style."""

    def __init__(self, tokens: int = 10):
        self.calls: list[str] = []
        self.tokens = tokens

    def complete(self, prompt: str, temperature: float = 0.0) -> dict:
        """Complete a prompt."""
        self.calls.append(prompt)
        return {
            "text": f"answer {len(self.calls)}",
            "usage": {"total_tokens": self.tokens},
        }


# -- recording -----------------------------------------------------------------------------


class TestRecording:
    def test_model_call_and_result(self, make_chaos):
        llm = FakeLLM(tokens=42)
        chaos = make_chaos()
        model = chaos.model(llm.complete, name="gpt")
        out = model("hello", temperature=0.5)
        assert out == {"text": "answer 1", "usage": {"total_tokens": 42}}
        call, result = list(chaos.trace)[1:]
        assert isinstance(call, ModelCall) and isinstance(result, ModelResult)
        assert (call.model, call.index, call.step, call.input) == (
            "gpt",
            1,
            1,
            {"prompt": "hello", "temperature": 0.5},
        )
        assert (result.model, result.ok, result.output, result.tokens) == ("gpt", True, out, 42)
        assert chaos.trace.model_calls() == [call]
        assert chaos.trace.model_results() == [result]
        # model calls are not tool calls
        assert chaos.trace.tool_calls() == []
        assert chaos.session.counters()["model_calls"] == 1
        assert chaos.session.counters()["tool_calls"] == 0

    def test_default_name_and_identity(self, make_chaos):
        llm = FakeLLM()
        chaos = make_chaos()
        model = chaos.model(llm.complete)
        assert model.__name__ == "complete"
        assert model.__doc__ == "Complete a prompt."
        assert inspect.signature(model) == inspect.signature(llm.complete)
        model("x")
        assert chaos.trace.model_calls()[0].model == "model"

    def test_index_counts_per_model(self, make_chaos):
        chaos = make_chaos()
        a = chaos.model(FakeLLM().complete, name="planner")
        b = chaos.model(FakeLLM().complete, name="writer")
        a("1"), b("2"), a("3")
        assert [(c.model, c.index) for c in chaos.trace.model_calls()] == [
            ("planner", 1),
            ("writer", 1),
            ("planner", 2),
        ]

    def test_model_exception_recorded_and_reraised(self, make_chaos):
        err = RuntimeError("context length exceeded")

        def model(prompt):
            raise err

        chaos = make_chaos()
        with pytest.raises(RuntimeError) as info:
            chaos.model(model)("x" * 10)
        assert info.value is err
        (result,) = chaos.trace.model_results()
        assert (result.ok, result.error_type, result.message) == (
            False,
            "RuntimeError",
            "context length exceeded",
        )
        assert chaos.trace.errors() == [result]

    def test_non_callable_rejected(self, make_chaos):
        with pytest.raises(TypeError):
            make_chaos().model("gpt-4o")


# -- tokens -----------------------------------------------------------------------------------


class TestTokens:
    @pytest.mark.parametrize(
        ("output", "tokens"),
        [
            ({"usage": {"total_tokens": 17}}, 17),
            ({"usage": {"prompt_tokens": 10, "completion_tokens": 5}}, 15),
            ({"usage": {"input_tokens": 3, "output_tokens": 4}}, 7),
            (SimpleNamespace(usage=SimpleNamespace(total_tokens=30)), 30),
            (SimpleNamespace(usage=SimpleNamespace(input_tokens=8, output_tokens=2)), 10),
            (
                SimpleNamespace(
                    usage=SimpleNamespace(total_tokens=None, prompt_tokens=6, completion_tokens=1)
                ),
                7,
            ),
            ({"text": "no usage"}, None),
            ("plain string", None),
            ({"usage": {}}, None),
        ],
    )
    def test_default_counter_shapes(self, make_chaos, output, tokens):
        assert default_tokens(output) == tokens
        chaos = make_chaos()
        chaos.model(lambda prompt: output, name="m")("hi")
        assert chaos.trace.model_results()[0].tokens == tokens
        assert chaos.session.tokens == (tokens or 0)

    def test_tokens_accumulate(self, make_chaos):
        chaos = make_chaos()
        model = chaos.model(FakeLLM(tokens=25).complete)
        for _ in range(4):
            model("x")
        assert chaos.session.tokens == 100
        assert chaos.session.counters()["tokens"] == 100

    def test_custom_counter(self, make_chaos):
        chaos = make_chaos()
        seen = []

        def count(output):
            seen.append(output)
            return len(output.split())

        model = chaos.model(lambda prompt: f"echo {prompt} done", tokens=count)
        assert model("a b") == "echo a b done"
        assert seen == ["echo a b done"]
        assert chaos.trace.model_results()[0].tokens == 4
        assert chaos.session.tokens == 4


# -- max_tokens budget ------------------------------------------------------------------------


class TestMaxTokens:
    def test_raises_after_call_that_crossed(self, make_chaos):
        llm = FakeLLM(tokens=60)
        chaos = make_chaos(budgets=Budgets(max_tokens=100))
        model = chaos.model(llm.complete)
        model("one")  # 60
        with pytest.raises(BudgetExhausted) as info:
            model("two")  # 120 > 100: the call ran, then the run stops
        assert len(llm.calls) == 2
        exc = info.value
        assert (exc.budget, exc.limit, exc.count) == ("max_tokens", 100, 120)
        results = chaos.trace.model_results()
        assert [r.tokens for r in results] == [60, 60]
        (event,) = chaos.trace.budget_exhausted()
        assert (event.budget, event.limit, event.count) == ("max_tokens", 100, 120)
        assert chaos.session.halted is not None
        # sticky: the model is not called again
        with pytest.raises(BudgetExhausted):
            model("three")
        assert len(llm.calls) == 2

    def test_exactly_at_limit_is_allowed(self, make_chaos):
        chaos = make_chaos(budgets=Budgets(max_tokens=100))
        model = chaos.model(FakeLLM(tokens=50).complete)
        model("a")
        model("b")
        assert chaos.session.tokens == 100
        assert chaos.trace.budget_exhausted() == []

    def test_not_swallowed_by_except_exception(self, make_chaos):
        llm = FakeLLM(tokens=40)
        chaos = make_chaos(budgets=Budgets(max_tokens=100))
        model = chaos.model(llm.complete)
        with pytest.raises(BudgetExhausted):
            for _ in range(50):
                try:
                    model("loop")
                except Exception:
                    continue
        assert len(llm.calls) == 3

    def test_custom_counter_drives_budget(self, make_chaos):
        chaos = make_chaos(budgets=Budgets(max_tokens=5))
        model = chaos.model(lambda p: p, tokens=len)
        model("abc")
        with pytest.raises(BudgetExhausted):
            model("abc")


# -- faults on the model channel ----------------------------------------------------------------


class TestModelFaults:
    def test_repeated_output_returns_previous_completion(self, make_chaos):
        llm = FakeLLM(tokens=5)
        chaos = make_chaos({"kind": "repeated_output", "channels": "model", "nth": 2})
        model = chaos.model(llm.complete)
        first = model("q1")
        second = model("q2")
        assert second == first and first["text"] == "answer 1"
        assert llm.calls == ["q1"]
        assert model("q3")["text"] == "answer 2"
        (fault,) = chaos.trace.faults()
        assert (fault.kind, fault.channel, fault.target, fault.index) == (
            "repeated_output",
            "model",
            "model",
            2,
        )
        assert [r.output["text"] for r in chaos.trace.model_results()] == [
            "answer 1",
            "answer 1",
            "answer 2",
        ]

    def test_timeout_raises_before_model_runs(self, make_chaos):
        llm = FakeLLM()
        chaos = make_chaos({"kind": "timeout", "seconds": 60, "channels": "model"})
        with pytest.raises(InjectedTimeout):
            chaos.model(llm.complete)("x")
        assert llm.calls == []
        assert chaos.clock.now() == 60
        call, fault, result = list(chaos.trace)[1:]
        assert isinstance(call, ModelCall) and isinstance(fault, FaultInjected)
        assert (result.ok, result.error_type, result.t) == (False, "InjectedTimeout", 60.0)

    def test_tool_only_fault_leaves_model_alone(self, make_chaos):
        llm = FakeLLM()
        chaos = make_chaos({"kind": "connection_error", "channels": "tool"})
        assert chaos.model(llm.complete)("x")["text"] == "answer 1"
        with pytest.raises(ConnectionError):
            chaos.wrap(lambda: 1, name="t")()

    def test_garbled_model_output(self, make_chaos):
        chaos = make_chaos({"kind": "garbled_output", "mode": "truncate", "channels": "model"})
        text = "The answer is forty-two."
        out = chaos.model(lambda p: text)("q")
        assert out == text[: len(text) // 2]
        assert chaos.trace.model_results()[0].output == out

    async def test_async_model(self, make_chaos):
        calls = []

        async def acomplete(prompt: str):
            calls.append(prompt)
            return {"text": prompt[::-1], "usage": {"input_tokens": 2, "output_tokens": 3}}

        chaos = make_chaos()
        model = chaos.model(acomplete, name="claude")
        assert inspect.iscoroutinefunction(model)
        out = await model("abc")
        assert out["text"] == "cba"
        assert calls == ["abc"]
        (result,) = chaos.trace.model_results()
        assert (result.model, result.output, result.tokens) == ("claude", out, 5)
        assert chaos.session.tokens == 5

    async def test_async_model_faults(self, make_chaos):
        calls = []

        async def acomplete(prompt: str):
            calls.append(prompt)
            return f"re: {prompt}"

        chaos = make_chaos(
            {"kind": "connection_error", "channels": "model", "nth": 1},
            {"kind": "repeated_output", "channels": "model", "nth": 3},
        )
        model = chaos.model(acomplete)
        with pytest.raises(InjectedConnectionError):
            await model("a")
        assert await model("b") == "re: b"
        assert await model("c") == "re: b"
        assert calls == ["b"]

    async def test_async_model_max_tokens(self, make_chaos):
        async def acomplete(prompt: str):
            return {"usage": {"total_tokens": 70}}

        chaos = make_chaos(budgets=Budgets(max_tokens=100))
        model = chaos.model(acomplete)
        await model("a")
        with pytest.raises(BudgetExhausted):
            await model("b")

    async def test_async_callable_object_model(self, make_chaos):
        class Client:
            async def __call__(self, prompt):
                return {"text": prompt, "usage": {"total_tokens": 9}}

        chaos = make_chaos()
        model = chaos.model(Client())
        out = await model("hi")
        assert out["text"] == "hi"
        (result,) = chaos.trace.model_results()
        assert result.output == out
        assert chaos.session.tokens == 9
