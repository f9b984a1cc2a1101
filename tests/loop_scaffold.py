"""What the pytester tests of ``must_escape`` on loop shapes share: the agent file's prelude,
running it the way a user runs it, and the two outcomes they check."""

from __future__ import annotations

import textwrap

import pytest

__all__ = ["PRELUDE", "escapes_but_stuck_fails", "run"]

PRELUDE = """\
import itertools
import json
import uuid

import pytest

from pytest_agentchaos.trace import Detection

both = pytest.mark.parametrize("escape", [True, False], ids=["escapes", "stuck"])


def loops(chaos):
    return [
        d for d in chaos.trace.of_type(Detection)
        if d.detector == "loop_observer" and d.kind == "loop"
    ]


def attempt(tool, *args, **kwargs):
    try:
        return tool(*args, **kwargs)
    except Exception as exc:
        return exc

"""


def run(pytester: pytest.Pytester, body: str, profile: str | None = None) -> pytest.RunResult:
    if profile is not None:
        pytester.mkdir("chaos_profiles")
        (pytester.path / "chaos_profiles" / "x.toml").write_text(textwrap.dedent(profile))
    pytester.makepyfile(test_agent=PRELUDE + textwrap.dedent(body))
    return pytester.runpytest("-v", "--chaos-seed=7")


def escapes_but_stuck_fails(result: pytest.RunResult, loop: str) -> None:
    """The escaping agent passes; the stuck one fails, naming the loop (an fnmatch pattern
    where ``[`` is literal)."""
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*::test_agent[[]escapes[]] PASSED*",
            "*::test_agent[[]stuck[]] FAILED*",
            "must_escape failed: the agent did not escape its loop",
            "  - loop #1 " + loop.replace("[", "[[]") + "; never broken",
        ]
    )
    result.stdout.no_fnmatch_line("E  *")
