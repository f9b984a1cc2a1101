"""`chaos.provider`: the real openai / anthropic SDK clients talk to a scripted endpoint on the
run's router; every wire attempt is a model call in the trace, and the plan's model faults
arrive as the provider sends them, so the SDK's own retry loop handles them (on virtual time).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anthropic
import openai
import pytest

from pytest_agentchaos.errors import NetworkBlocked, ProviderScriptError
from pytest_agentchaos.trace import FaultInjected, ModelCall, ModelResult

USER = [{"role": "user", "content": "Where is the Louvre?"}]


def ask(client: openai.OpenAI, **kw: Any) -> Any:
    return client.chat.completions.create(model="gpt-4o-mini", messages=USER, **kw)


# -- answers ----------------------------------------------------------------------------------


def test_the_real_openai_client_gets_the_scripted_turns_in_order(make_chaos):
    chaos = make_chaos()
    endpoint = chaos.provider(
        "openai",
        script=[
            {"tool_calls": [{"name": "lookup", "arguments": {"place": "Louvre"}}]},
            {"content": "In Paris.", "usage": {"input_tokens": 12, "output_tokens": 3}},
        ],
    )
    client = openai.OpenAI(api_key="sk-test")
    first = ask(client, tools=[_tool("lookup")])
    call = first.choices[0].message.tool_calls[0]
    assert (call.function.name, call.function.arguments) == ("lookup", '{"place":"Louvre"}')
    second = ask(client)
    assert second.choices[0].message.content == "In Paris."
    assert (second.usage.prompt_tokens, second.usage.completion_tokens) == (12, 3)
    assert [r.model for r in endpoint.requests] == ["gpt-4o-mini"] * 2
    assert [r.tools[0]["name"] for r in endpoint.requests[:1]] == ["lookup"]
    calls, results = chaos.trace.of_type(ModelCall), chaos.trace.of_type(ModelResult)
    assert [c.model for c in calls] == ["gpt-4o-mini"] * 2
    assert results[0].output == '-> lookup({"place": "Louvre"})'
    assert results[1].output == "In Paris." and results[1].tokens == 15
    assert chaos.session.tokens == 15 + results[0].tokens


def test_streams_and_async_clients(make_chaos):
    chaos = make_chaos()
    chaos.provider("openai", script=[{"content": "one two three"}, {"content": "four"}])
    client = openai.OpenAI(api_key="sk-test")
    pieces = [c.choices[0].delta.content or "" for c in ask(client, stream=True) if c.choices]
    assert "".join(pieces) == "one two three" and len(pieces) > 1

    async def go() -> str:
        aclient = openai.AsyncOpenAI(api_key="sk-test")
        r = await aclient.chat.completions.create(model="gpt-4o-mini", messages=USER)
        return r.choices[0].message.content

    assert asyncio.run(go()) == "four"


def test_respond_answers_from_the_request(make_chaos):
    chaos = make_chaos()
    chaos.provider("anthropic", respond=lambda r: {"content": f"{len(r.messages)} message(s)"})
    client = anthropic.Anthropic(api_key="sk-ant-test")
    message = client.messages.create(model="claude-x", max_tokens=100, messages=USER)
    assert message.content[0].text == "1 message(s)"


def test_a_base_url_serves_an_openai_compatible_endpoint(make_chaos):
    chaos = make_chaos()
    chaos.provider("openai", script=["hi"], base_url="http://llm.internal:8000/v1", name="local")
    client = openai.OpenAI(api_key="x", base_url="http://llm.internal:8000/v1")
    assert ask(client).choices[0].message.content == "hi"
    assert chaos.trace.of_type(ModelCall)[0].model == "local"
    with pytest.raises(NetworkBlocked):  # the public host is not served by it
        ask(openai.OpenAI(api_key="x", max_retries=0))


# -- faults on the wire -----------------------------------------------------------------------


def test_a_rate_limit_is_retried_by_the_sdk_on_virtual_time(make_chaos):
    chaos = make_chaos(
        {"kind": "rate_limit", "retry_after": 30, "first": 2, "channels": ["model"]},
        virtual_sleep=True,
    )
    endpoint = chaos.provider("openai", script=[{"content": "done"}])
    started = time.perf_counter()
    answer = ask(openai.OpenAI(api_key="sk-test"))  # the SDK's default max_retries (2)
    assert time.perf_counter() - started < 5  # no real 60 s of waiting
    assert answer.choices[0].message.content == "done"
    assert len(endpoint.requests) == 3 and endpoint.calls == 1
    calls = chaos.trace.of_type(ModelCall)
    assert [round(c.t) for c in calls] == [0, 30, 60]
    results = chaos.trace.of_type(ModelResult)
    assert [r.ok for r in results] == [False, False, True]


def test_without_retries_the_agent_gets_the_sdks_own_error(make_chaos):
    chaos = make_chaos({"kind": "rate_limit", "retry_after": 30, "channels": ["model"]})
    chaos.provider("openai", script=["never"])
    with pytest.raises(openai.RateLimitError) as caught:
        ask(openai.OpenAI(api_key="sk-test", max_retries=0))
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "30"


def test_an_anthropic_overload_is_the_sdks_own_error(make_chaos):
    chaos = make_chaos({"kind": "http_error", "status": 529, "channels": ["model"]})
    chaos.provider("anthropic", script=["never"])
    client = anthropic.Anthropic(api_key="k", max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as caught:
        client.messages.create(model="claude-x", max_tokens=10, messages=USER)
    assert caught.value.status_code == 529


@pytest.mark.parametrize(
    ("fault", "error"),
    [({"kind": "timeout", "seconds": 10}, openai.APITimeoutError),
     ({"kind": "connection_error"}, openai.APIConnectionError)],
)  # fmt: skip
def test_transport_faults_are_the_sdks_timeout_and_connection_errors(make_chaos, fault, error):
    chaos = make_chaos({**fault, "channels": ["model"]})
    chaos.provider("openai", script=["never"])
    with pytest.raises(error):
        ask(openai.OpenAI(api_key="sk-test", max_retries=0))
    assert not chaos.trace.of_type(ModelResult)[0].ok


def test_a_repeated_output_fault_replays_the_previous_turn_without_using_the_script(make_chaos):
    chaos = make_chaos({"kind": "repeated_output", "nth": 2, "channels": ["model"]})
    endpoint = chaos.provider("openai", script=[{"content": "first"}, {"content": "second"}])
    client = openai.OpenAI(api_key="sk-test")
    assert [ask(client).choices[0].message.content for _ in range(3)] == [
        "first", "first", "second",
    ]  # fmt: skip
    assert endpoint.calls == 2
    assert [f.kind for f in chaos.trace.of_type(FaultInjected)] == ["repeated_output"]


# -- what the test got wrong is one clear failure ------------------------------------------


def test_a_script_that_runs_out_stops_the_run_naming_it(make_chaos):
    chaos = make_chaos()
    chaos.provider("openai", script=["only one"])
    client = openai.OpenAI(api_key="sk-test")
    ask(client)
    with pytest.raises(ProviderScriptError, match=r"the script has 1 turn\(s\) .* turn 2"):
        ask(client)


def test_an_invalid_request_stops_the_run_as_the_provider_would_refuse_it(make_chaos):
    chaos = make_chaos()
    chaos.provider("openai", script=["x"])
    client = openai.OpenAI(api_key="sk-test")
    with pytest.raises(ProviderScriptError, match="not valid for the openai.chat API"):
        client.chat.completions.create(model="gpt-4o-mini", messages=[])


def test_a_swallowed_script_error_still_fails(make_chaos):
    chaos = make_chaos()
    chaos.provider("openai", respond=lambda r: 1 / 0)
    try:
        ask(openai.OpenAI(api_key="sk-test"))
    except Exception:  # the agent's broad except cannot catch it
        pytest.fail("a script error must not be an Exception")
    except ProviderScriptError as exc:
        assert "respond() failed on call 1: ZeroDivisionError" in str(exc)
    assert chaos.session.halted is not None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"provider": "mistral", "script": ["x"]}, "mistral"),
        ({"provider": 5, "script": ["x"]}, "provider name"),
        ({"provider": "openai"}, "exactly one"),
        ({"provider": "openai", "script": ["x"], "respond": lambda r: "x"}, "exactly one"),
        ({"provider": "openai", "script": "hello"}, "list of turns"),
        ({"provider": "openai", "script": [{"contents": "typo"}]}, r"script\[0\]"),
        ({"provider": "openai", "respond": "not callable"}, "function"),
        ({"provider": "openai", "script": ["x"], "base_url": "ftp://x"}, "http"),
        ({"provider": "openai", "script": ["x"], "name": ""}, "name"),
    ],
)
def test_bad_arguments_are_one_clear_error(make_chaos, kwargs, message):
    chaos = make_chaos()
    with pytest.raises((TypeError, ValueError), match=message):
        chaos.provider(**kwargs)


def _tool(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": "Look a place up.",
            "parameters": {"type": "object", "properties": {"place": {"type": "string"}}},
        },
    }


# -- faults only a wire can deliver -------------------------------------------------------------


def stream_text(client: openai.OpenAI) -> tuple[str, str | None]:
    text, finish = "", None
    for chunk in ask(client, stream=True):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    return text, finish


ANSWER = "The Louvre is in Paris, on the right bank of the Seine."


def test_a_reset_stream_raises_the_sdks_own_error_mid_answer(make_chaos):
    chaos = make_chaos({"kind": "stream_cut", "mode": "reset"})
    chaos.provider("openai", script=[ANSWER])
    got: list[str] = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in ask(openai.OpenAI(api_key="sk-test"), stream=True):
            got += [c.delta.content or "" for c in chunk.choices]
    assert 0 < len("".join(got)) < len(ANSWER)  # it had started answering
    result = chaos.trace.of_type(ModelResult)[0]
    assert (result.ok, result.error_type) == (False, "RemoteProtocolError")


def test_a_stream_that_ends_early_is_short_and_unfinished(make_chaos):
    chaos = make_chaos({"kind": "stream_cut", "mode": "end"})
    chaos.provider("openai", script=[ANSWER])
    text, finish = stream_text(openai.OpenAI(api_key="sk-test"))
    assert ANSWER.startswith(text) and 0 < len(text) < len(ANSWER)
    assert finish is None


def test_no_finish_reason_delivers_the_whole_answer_without_its_finish(make_chaos):
    chaos = make_chaos({"kind": "no_finish_reason"})
    chaos.provider("openai", script=[ANSWER])
    assert stream_text(openai.OpenAI(api_key="sk-test")) == (ANSWER, None)


def test_stream_faults_leave_unstreamed_calls_alone(make_chaos):
    chaos = make_chaos({"kind": "stream_cut"}, {"kind": "no_finish_reason"})
    chaos.provider("openai", script=[ANSWER])
    assert ask(openai.OpenAI(api_key="sk-test")).choices[0].message.content == ANSWER
    assert not chaos.trace.faults()


def test_a_slow_first_token_costs_virtual_time_only(make_chaos):
    chaos = make_chaos({"kind": "slow_first_token", "seconds": 45})
    chaos.provider("openai", script=[ANSWER])
    started = time.perf_counter()
    assert stream_text(openai.OpenAI(api_key="sk-test")) == (ANSWER, "stop")
    assert time.perf_counter() - started < 5
    assert chaos.clock.now() == pytest.approx(45)


@pytest.mark.parametrize("mode", ["truncated", "not_json"])
def test_bad_tool_arguments_reach_the_agent_as_sent(make_chaos, mode):
    import json

    chaos = make_chaos({"kind": "bad_tool_arguments", "mode": mode})
    chaos.provider(
        "openai", script=[{"tool_calls": [{"name": "lookup", "arguments": {"place": "Louvre"}}]}]
    )
    message = ask(openai.OpenAI(api_key="sk-test"), tools=[_tool("lookup")]).choices[0].message
    arguments = message.tool_calls[0].function.arguments
    with pytest.raises(ValueError):
        json.loads(arguments)
    assert arguments == ('{"place":' if mode == "truncated" else "{'place': 'Louvre'}")


def test_bad_tool_arguments_without_a_tool_call_is_noted_not_faked(make_chaos):
    chaos = make_chaos({"kind": "bad_tool_arguments"})
    chaos.provider("openai", script=["no tool needed"])
    answer = ask(openai.OpenAI(api_key="sk-test"), tools=[_tool("lookup")])
    assert answer.choices[0].message.content == "no tool needed"
    assert any("called no tool" in n for n in chaos.trace.meta["notes"])


def test_an_empty_completion_says_nothing(make_chaos):
    chaos = make_chaos({"kind": "empty_completion"})
    endpoint = chaos.provider("anthropic", script=["a real answer"])
    client = anthropic.Anthropic(api_key="k")
    message = client.messages.create(model="claude-x", max_tokens=10, messages=USER)
    assert message.content == [] and endpoint.calls == 1


def test_wire_kinds_never_fire_on_other_model_seams(make_chaos):
    chaos = make_chaos(
        *(
            {"kind": k}
            for k in (
                "stream_cut",
                "no_finish_reason",
                "slow_first_token",
                "bad_tool_arguments",
                "empty_completion",
            )
        )
    )
    model = chaos.model(lambda prompt: f"echo {prompt}")
    assert [model("a"), model("b")] == ["echo a", "echo b"]
    assert not chaos.trace.faults()


def test_a_name_function_files_each_agents_calls_under_its_own_target(make_chaos):
    """Agents sharing one client are told apart by the user's function of the request: a
    stateful fault then replays only the same agent's answer."""
    chaos = make_chaos({"kind": "repeated_output", "nth": 2, "channels": ["model"]})

    def agent_of(request):
        return "planner" if "plan" in request.messages[0]["content"] else "writer"

    chaos.provider(
        "openai", respond=lambda r: f"{agent_of(r)} says {len(r.messages)}", name=agent_of
    )
    client = openai.OpenAI(api_key="sk-test")

    def say(system: str) -> str:
        messages = [{"role": "system", "content": system}, *USER]
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
        return reply.choices[0].message.content

    assert [say("You plan."), say("You write."), say("You write."), say("You plan.")] == [
        "planner says 2", "writer says 2", "writer says 2", "planner says 2",
    ]  # fmt: skip
    calls = chaos.trace.of_type(ModelCall)
    assert [(c.model, c.agent) for c in calls] == [
        ("planner", "planner"), ("writer", "writer"), ("writer", "writer"),
        ("planner", "planner"),
    ]  # fmt: skip
    assert [f.target for f in chaos.trace.faults()] == ["writer", "planner"]


def test_a_failing_name_function_stops_the_run_naming_it(make_chaos):
    chaos = make_chaos()
    chaos.provider("openai", script=["x"], name=lambda r: None)
    with pytest.raises(ProviderScriptError, match="name\\(\\) must return"):
        ask(openai.OpenAI(api_key="sk-test"))


# -- what the script says is what the agent receives ------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=200
)
ARGS = st.dictionaries(
    st.text(min_size=1, max_size=10),
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    max_size=4,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=TEXT, args=ARGS, stream=st.booleans())
def test_the_script_reaches_the_openai_client_exactly(make_chaos, text, args, stream):
    import json

    with make_chaos() as chaos:
        chaos.provider(
            "openai",
            script=[{"content": text, "tool_calls": [{"name": "lookup", "arguments": args}]}],
        )
        client = openai.OpenAI(api_key="sk-test", max_retries=0)
        if stream:
            with client.chat.completions.stream(
                model="gpt-4o-mini", messages=USER, tools=[_tool("lookup")]
            ) as events:
                message = events.get_final_completion().choices[0].message
        else:
            message = ask(client, tools=[_tool("lookup")]).choices[0].message
        assert (message.content or "") == text
        assert json.loads(message.tool_calls[0].function.arguments) == args


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=TEXT.filter(lambda t: t.strip() != ""), stream=st.booleans())
def test_the_script_reaches_the_anthropic_client_exactly(make_chaos, text, stream):
    with make_chaos() as chaos:
        chaos.provider("anthropic", script=[text])
        client = anthropic.Anthropic(api_key="k", max_retries=0)
        if stream:
            with client.messages.stream(model="claude-x", max_tokens=50, messages=USER) as s:
                message = s.get_final_message()
        else:
            message = client.messages.create(model="claude-x", max_tokens=50, messages=USER)
        assert message.content[0].text == text
