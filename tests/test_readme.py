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
