"""The README's examples are true: its first Python block passes as a user's test file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("profile", ["none", "flaky", "spiral"])
def test_thirty_second_example_passes_under_any_session_profile(
    pytester: pytest.Pytester, profile: str
) -> None:
    pytester.makepyfile(test_x=_python_blocks()[0])
    result = pytester.runpytest("-v", f"--chaos-profile={profile}", "--chaos-seed=1")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "PASSED  test_x.py::test_agent_retries_timeouts  profile=none *faults=timeout:2 *"
            "vtime=63.0s verdict=must_halt=ok"
        ]
    )


def test_profile_example_in_readme_loads(pytester: pytest.Pytester) -> None:
    blocks = re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    (profile,) = [b for b in blocks if "extends" in b]
    pytester.mkdir("chaos_profiles")
    (pytester.path / "chaos_profiles" / "checkout.toml").write_text(profile)
    result = pytester.runpytest("--chaos-list-profiles")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["  checkout * Payment API degraded", "*http_error*"])


def test_loop_policy_example_in_readme_is_accepted(pytester: pytest.Pytester) -> None:
    blocks = re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    (loops,) = [b for b in blocks if "[escape.loops]" in b]
    pytester.mkdir("chaos_profiles")
    (pytester.path / "chaos_profiles" / "tuned.toml").write_text(loops)
    pytester.mkpydir("myagent")  # the key function the example names
    (pytester.path / "myagent" / "loops.py").write_text(
        "def search_key(call):\n    return [call.args, call.ok]\n"
    )
    pytester.syspathinsert()
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chaos("tuned")
        @pytest.mark.must_escape
        def test_stuck(chaos):
            search = chaos.wrap(lambda q: "nothing", name="search")
            for _ in range(12):
                search("same")
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*loop #1 [[]repeat[]]: search(q='same') -> ok repeated*"])


AGENT = """
import json

import openai

TOOLS = [{"type": "function", "function": {
    "name": "search", "description": "Search the web.",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
}}]


def search(q):
    return f"Louvre: open 9 am to 6 pm ({q})"


def answer(question):
    client = openai.OpenAI()  # the key from OPENAI_API_KEY, as in production
    messages = [{"role": "user", "content": question}]
    while True:
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = search(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
"""


def test_your_real_agent_example_passes_against_the_real_openai_sdk(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("openai")
    (block,) = [b for b in _python_blocks() if "chaos.provider(" in b]
    pytester.mkpydir("my_team")
    (pytester.path / "my_team" / "agent.py").write_text(AGENT)
    pytester.makepyfile(test_real=block)
    result = pytester.runpytest("-v", "-p", "no:randomly")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["PASSED  test_real.py::* faults=rate_limit:2 *vtime=60.0s*"])
