"""Adapter overhead: what the framework adapters add to a tool call when no fault fires.

For each installed framework, an offline agent run (its own scripted model, several tool calls
per run) is timed with the framework's own tools and with the tools under chaos (the adapter's
one line), interleaved batch by batch in this process; and the framework's own single tool call
(``tool.invoke`` and the like) against the wrapped tool's. A whole-agent seam (LangChain's
middleware) is compared with a pass-through of the same seam: the framework's own price of
having one is not the adapter's. Printed: the median ratio of each arm
(wrapped / unwrapped). Goal (issue 15): <= 1.05 per tool call, on each framework's agent run.

Run: .venv/bin/python bench/bench_adapter_overhead.py
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
from collections.abc import Callable
from time import perf_counter

from pytest_agentchaos import Chaos

GOAL = 1.05
BATCHES = 15
ROUNDS = 6  # tool calls per agent run

Arm = Callable[[], object]


def ratio(plain: Arm, wrapped: Arm, repeat: int) -> tuple[float, float, float]:
    """(median ratio wrapped / plain, plain ms, wrapped ms per call): batches interleaved."""
    for arm in (plain, wrapped):
        for _ in range(max(2, repeat // 5)):
            arm()
    ratios, plains, wraps = [], [], []
    for _ in range(BATCHES):
        times = []
        for arm in (plain, wrapped):
            start = perf_counter()
            for _ in range(repeat):
                arm()
            times.append((perf_counter() - start) / repeat)
        plains.append(times[0])
        wraps.append(times[1])
        ratios.append(times[1] / times[0])
    return (
        statistics.median(ratios),
        statistics.median(plains) * 1e3,
        statistics.median(wraps) * 1e3,
    )


def langchain_arms() -> dict[str, tuple[Arm, Arm, int]]:
    from langchain.agents import create_agent
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool

    from pytest_agentchaos.adapters.langchain import chaos_middleware

    @tool
    def search(query: str, limit: int = 3) -> str:
        """Search the catalogue."""
        return f"results for {query} x{limit}"

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: object, **kwargs: object) -> Scripted:
            return self

    def script() -> list[AIMessage]:
        calls = [
            AIMessage(
                content="",
                tool_calls=[{"name": "search", "args": {"query": f"q{i}"}, "id": f"c{i}"}],
            )  # fmt: skip
            for i in range(ROUNDS)
        ]
        return [*calls, AIMessage(content="done")]

    class PassThrough(AgentMiddleware):  # type: ignore[type-arg]
        """The least a middleware with both hooks costs: LangChain's own price of the seam."""

        def wrap_model_call(self, request: object, handler: Callable[[object], object]) -> object:
            return handler(request)

        def wrap_tool_call(self, request: object, handler: Callable[[object], object]) -> object:
            return handler(request)

    chaos = Chaos.create()
    wrapped = chaos.wrap(search)
    middleware = [chaos_middleware(chaos)]
    question = {"messages": [HumanMessage("find")]}

    def run(tools: list[object], extra: list[object]) -> Arm:
        def go() -> object:
            agent = create_agent(Scripted(messages=iter(script())), tools, middleware=extra)
            return agent.invoke(question)

        return go

    args = {"query": "lamps"}
    return {
        "langchain tool.invoke": (lambda: search.invoke(args), lambda: wrapped.invoke(args), 200),
        "langchain create_agent, wrapped tools": (run([search], []), run([wrapped], []), 3),
        "langchain create_agent, middleware": (
            run([search], [PassThrough()]),
            run([search], middleware),
            3,
        ),
    }


def pydantic_ai_arms() -> dict[str, tuple[Arm, Arm, int]]:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.wrapper import WrapperModel

    from pytest_agentchaos.adapters.pydantic_ai import chaos_agent

    def search(query: str, limit: int = 3) -> str:
        """Search the catalogue."""
        return f"results for {query} x{limit}"

    def script(messages: list[object], info: AgentInfo) -> ModelResponse:
        done = sum(
            1 for m in messages for p in getattr(m, "parts", ()) if p.part_kind == "tool-return"
        )
        if done >= ROUNDS:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("search", {"query": f"q{done}"})])

    model = FunctionModel(script)
    chaos = Chaos.create()
    plain = Agent(model, tools=[Tool(search)])
    wrapped = Agent(model, tools=[chaos.wrap(Tool(search))])
    passthrough = Agent(WrapperModel(model), tools=[Tool(search)])
    whole = Agent(model, tools=[Tool(search)])

    def under_chaos() -> object:
        with chaos_agent(chaos, whole):
            return whole.run_sync("find")

    return {
        "pydantic-ai agent, wrapped tools": (
            lambda: plain.run_sync("find"),
            lambda: wrapped.run_sync("find"),
            3,
        ),
        "pydantic-ai agent, chaos_agent": (lambda: passthrough.run_sync("find"), under_chaos, 3),
    }


def openai_agents_arms() -> dict[str, tuple[Arm, Arm, int]]:
    from agents import Agent, Model, ModelResponse, Runner, function_tool, set_tracing_disabled
    from agents.testing import assistant_message, function_call
    from agents.usage import Usage

    from pytest_agentchaos.adapters.openai_agents import chaos_agent

    set_tracing_disabled(True)

    @function_tool
    def search(query: str, limit: int = 3) -> str:
        """Search the catalogue."""
        return f"results for {query} x{limit}"

    class Script(Model):
        """Asks for ``search`` ROUNDS times (counting the tool outputs it read), then answers."""

        async def get_response(
            self, system_instructions: object, input: object, *a: object, **k: object
        ) -> ModelResponse:
            items = input if isinstance(input, list) else []
            done = sum(
                1 for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"
            )
            out = [assistant_message("done")] if done >= ROUNDS else [
                function_call("search", {"query": f"q{done}"}, call_id=f"c{done}")
            ]  # fmt: skip
            return ModelResponse(output=out, usage=Usage(), response_id=None)

        def stream_response(self, *a: object, **k: object) -> object:  # pragma: no cover
            raise NotImplementedError

    class PassThrough(Model):
        """The least a model wrapper costs: the seam's own price, not the adapter's."""

        def __init__(self, inner: Model) -> None:
            self.inner = inner

        async def get_response(self, *a: object, **k: object) -> ModelResponse:
            return await self.inner.get_response(*a, **k)  # type: ignore[arg-type]

        def stream_response(self, *a: object, **k: object) -> object:  # pragma: no cover
            raise NotImplementedError

    chaos = Chaos.create()
    model = Script()
    plain = Agent(name="a", model=model, tools=[search])
    wrapped = Agent(name="a", model=model, tools=[chaos.wrap(search)])
    passthrough = Agent(name="a", model=PassThrough(model), tools=[search])
    whole = chaos_agent(chaos, plain)
    return {
        "openai-agents agent, wrapped tools": (
            lambda: Runner.run_sync(plain, "find"),
            lambda: Runner.run_sync(wrapped, "find"),
            3,
        ),
        "openai-agents agent, chaos_agent": (
            lambda: Runner.run_sync(passthrough, "find"),
            lambda: Runner.run_sync(whole, "find"),
            3,
        ),
    }


FRAMEWORKS: dict[str, tuple[str, Callable[[], dict[str, tuple[Arm, Arm, int]]]]] = {
    "langchain": ("langchain", langchain_arms),
    "pydantic-ai": ("pydantic_ai", pydantic_ai_arms),
    "openai-agents": ("agents", openai_agents_arms),
}


def main() -> int:
    ok = True
    measured = 0
    for name, (module, arms) in FRAMEWORKS.items():
        if importlib.util.find_spec(module) is None:
            print(f"{name}: not installed, skipped")
            continue
        for label, (plain, wrapped, repeat) in arms().items():
            r, p, w = ratio(plain, wrapped, repeat)
            measured += 1
            agent_run = "agent" in label
            verdict = "" if not agent_run else (" PASS" if r <= GOAL else " FAIL")
            ok = ok and (r <= GOAL or not agent_run)
            print(f"{label:<44} plain {p:8.3f} ms  wrapped {w:8.3f} ms  ratio {r:.3f}{verdict}")
    print(f"RESULT bench_adapter_overhead: goal agent-run ratio <= {GOAL} "
          f"{'PASS' if ok and measured else 'FAIL'}")  # fmt: skip
    return 0 if ok and measured else 1


if __name__ == "__main__":
    sys.exit(main())
