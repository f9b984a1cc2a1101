"""An error streak whose calls vary only in a command's flags (issue 29, loops): the flag's
name is the command's word, not a value the error echoes, so an error that says "lock" keeps
its word when the agent adds ``-lock-timeout=60s``. Values the call passed are still taken
out of the error (the same error about another file is the same error)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape.keys import Keyer
from pytest_agentchaos.escape.loops import LoopDetector
from pytest_agentchaos.escape.texts import error_signature

LOCKED = "Error: Error acquiring the state lock\nLock Info:\n  ID: {id}\n  Who: runner@ci-{n}"
FLAGS = ["", " -lock-timeout=60s", " -refresh=false", " -parallelism=2", " --lock=true"]


def test_a_flags_name_takes_no_word_out_of_the_error() -> None:
    base = error_signature(LOCKED.format(id="a1", n=3), {"cmd": "terraform apply"})
    for flag in FLAGS:
        args = {"cmd": f"terraform apply -auto-approve{flag}"}
        assert error_signature(LOCKED.format(id="a1", n=7), args) == base
    # a value the call passed is still the call's, not the error's
    assert "plan" not in error_signature("no such file: plan", {"cmd": "cat -n plan"})


def test_the_same_lock_error_under_new_flags_is_a_streak() -> None:
    keyer, detector = Keyer(), LoopDetector()
    found = []
    for i, flag in enumerate(FLAGS):
        key = keyer.tool(
            "shell",
            {"cmd": f"terraform apply -auto-approve{flag}"},
            ok=False,
            error_type="CalledProcessError",
            message=LOCKED.format(id=f"{i}f{i}", n=100 + 7 * i),
        )
        found += detector.observe(key, i, float(i))
    assert any(loop.rule == "same_error" for loop in found)


FLAG = st.from_regex(r"--?[a-z][a-z-]{0,10}(=[a-z0-9]{1,4})?", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(FLAG, max_size=4))
def test_no_flag_changes_an_errors_signature(flags: list[str]) -> None:
    message = "Error: the state lock is held; refresh later or raise the timeout"
    plain = error_signature(message, {"cmd": "tool run"})
    assert error_signature(message, {"cmd": " ".join(["tool run", *flags])}) == plain
