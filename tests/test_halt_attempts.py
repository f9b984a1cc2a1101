"""Failures as attempts (issue 29, halt): a failure whose stated count reaches a new low is a
step toward success, a failure right after a change never tried before is that change's
outcome, and a failure that says the same count again after an edit tried before is the same
failure. Each kind in English and Chinese, with the spiral that must still halt."""

from __future__ import annotations

from halt_scaffold import halt_at, say
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.halt.streaks import Lows
from pytest_agentchaos.halt.values import read

# -- a stated failure count at a new low ----------------------------------------------------------


def test_a_count_falling_with_none_rising_is_a_new_low() -> None:
    lows = Lows()
    assert not lows.lower("pytest", False, read("Failures: 17, Errors: 0").counted)
    assert lows.lower("pytest", False, read("Failures: 9, Errors: 0").counted)
    assert not lows.lower("pytest", False, read("Failures: 12, Errors: 0").counted)  # back up
    assert not lows.lower("pytest", False, read("Failures: 9, Errors: 0").counted)  # not below 9
    assert lows.lower("pytest", False, read("Failures: 4, Errors: 0").counted)


def test_a_count_that_falls_while_another_rises_is_no_new_low() -> None:
    lows = Lows()
    lows.lower("pytest", False, read("340 passed, 2 failed").counted)
    # fewer passed, more failed: a regression, not a step toward success
    assert not lows.lower("pytest", False, read("338 passed, 4 failed").counted)


def test_a_success_of_the_tool_starts_its_counts_over() -> None:
    lows = Lows()
    lows.lower("pytest", False, read("1 problem(s) left").counted)
    lows.lower("pytest", True, frozenset())
    assert not lows.lower("pytest", False, read("3 problem(s) left").counted)
    assert lows.lower("pytest", False, read("2 problem(s) left").counted)
    assert not lows.lower("other", False, read("1 problem(s) left").counted)  # per tool


@given(st.lists(st.integers(0, 500), min_size=1, max_size=12))
@settings(max_examples=150, deadline=None)
def test_a_new_low_is_exactly_a_count_below_every_earlier_one(counts: list[int]) -> None:
    lows = Lows()
    for i, n in enumerate(counts):
        said = lows.lower("mvn", False, read(f"Tests run: 342, Failures: {n}").counted)
        assert said == (i > 0 and n < min(counts[:i]))


def migration(module_fixes: list[str], counts: list[int], zh: bool = False) -> list[dict]:
    """Modules converted one by one (a counter of modules done), one of them failing its
    tests after each fix with the stated number of problems, each fix the same edit call."""
    steps: list[dict] = []
    modules = ["auth", "billing", "cart", "catalog", "search", "media", "notify", "export"]
    for done, module in enumerate(modules):
        args = {"path": f"tests/{module}"}
        if zh:
            steps.append(say(f"迁移 {module} 模块：改写测试类为函数。", "codemod", True, args=args))
        else:
            steps.append(say(f"Rewriting tests/{module} as plain functions.", "codemod", True,
                             args=args))  # fmt: skip
        steps[-1]["progress"] = done
        if module == "search":
            for n, fix in zip(counts, module_fixes, strict=True):
                if zh:
                    out = f"pytest tests/{module} 失败，还剩 {n} 个问题：{fix}"
                    edit = f"修改 tests/{module}：{fix}"
                else:
                    out = f"pytest tests/{module}: {n} problem(s) left. {fix}"
                    edit = f"Edit in tests/{module}: {fix}"
                steps.append(say(out, "pytest", False, progress=done, args=args))
                steps.append(say(edit, "edit_file", True, progress=done, args=args))
        green = (
            f"pytest tests/{module} 全部通过，已完成 {done + 1}/8"
            if zh
            else (f"pytest tests/{module}: all green, {done + 1}/8 modules done.")
        )
        steps.append(say(green, "pytest", True, progress=done + 1, args=args))
    return steps


FIXES_EN = [
    "setUpClass shares a connection; making it a fixture.",
    "two tests depend on method order; making them independent.",
    "one test leaks a temp dir; using tmp_path.",
]
FIXES_ZH = [
    "setUpClass 共享连接，改成 fixture。",
    "两个用例依赖执行顺序，拆开。",
    "临时目录泄漏，改用 tmp_path。",
]


def test_a_module_whose_problems_shrink_while_the_counter_waits_is_no_spiral() -> None:
    assert halt_at(migration(FIXES_EN, [3, 2, 1])) is None
    assert halt_at(migration(FIXES_ZH, [3, 2, 1], zh=True)) is None


def test_a_module_whose_problem_count_never_falls_still_halts() -> None:
    # the same edit again and again, the same count each time: a spiral
    fixes = ["retrying the fixture.", "retrying the fixture.", "retrying the fixture.",
             "retrying the fixture."]  # fmt: skip
    steps = migration(fixes, [3, 3, 3, 3])
    assert halt_at(steps) is not None
    zh = migration(["再试一次 fixture。"] * 4, [3, 3, 3, 3], zh=True)
    assert halt_at(zh) is not None


def test_a_problem_count_going_back_and_forth_halts() -> None:
    fixes = ["reverting the fixture.", "using the fixture.", "reverting the fixture.",
             "using the fixture.", "reverting the fixture."]  # fmt: skip
    assert halt_at(migration(fixes, [3, 2, 3, 2, 3])) is not None


def rerun(counts: list[int], zh: bool = False) -> list[dict]:
    """A test command re-run after each fix, failing with no error text, then (when the last
    count is 0) passing."""
    cmd = {"cmd": "mvn -q test -pl orders"}
    steps = []
    for i, n in enumerate(counts):
        head = "重跑：" if zh and i else ("Re-run: " if i else "")
        steps.append(say(f"{head}Tests run: 120, Failures: {n}, Errors: 0", "shell", n == 0,
                         args=cmd))  # fmt: skip
        if n:
            fix = f"修了第 {i + 1} 处" if zh else f"Fixed cause {i + 1}"
            steps.append(say(fix, "edit_file", True, args={"path": f"src/F{i}.java"}))
    return steps


def test_a_rerun_whose_failures_shrink_without_error_text_is_no_streak() -> None:
    for counts in ([17, 9, 4, 1, 0], [3, 2, 1, 0], [12, 4, 2, 1, 0]):
        assert halt_at(rerun(counts)) is None
        assert halt_at(rerun(counts, zh=True)) is None


def test_a_rerun_failing_with_the_same_count_each_time_halts() -> None:
    steps = []
    for _ in range(5):
        steps.append(say("Tests run: 120, Failures: 4, Errors: 0", "shell", False,
                         args={"cmd": "mvn -q test"}))  # fmt: skip
        steps.append(say("Tweaked the same assertion.", "edit_file", True,
                         args={"path": "src/F.java"}))  # fmt: skip
    assert halt_at(steps) is not None


# -- an edit tried before, then the same failure without text --------------------------------------


def pins(choices: list[str], zh: bool = False) -> list[dict]:
    steps = []
    for pin in choices:
        said = f"把 pydantic 固定为 {pin}。" if zh else f"Pinning pydantic {pin}."
        steps.append(say(said, "edit_file", True, args={"path": "requirements.txt", "pin": pin}))
        steps.append(say("安装。" if zh else "Installing.", "shell", False,
                         args={"cmd": "pip install -r requirements.txt"}))  # fmt: skip
    return steps


def test_alternating_pins_halt_on_a_return_not_on_the_first_failures() -> None:
    for zh in (False, True):
        steps = pins(["<2", ">=2", "<2", ">=2", "<2", ">=2"], zh)
        at = halt_at(steps)
        # the third failure (step 5) follows the first return to an edit tried before: the
        # same failure for the third time, but the alternation has one return only
        assert at is not None and at >= 5


def test_each_new_pin_failing_without_text_is_a_new_attempt() -> None:
    # every pin is an edit never tried before: what fails after it is its outcome
    steps = pins(["==1.10.13", "==2.5.3", "==2.6.4"])
    assert halt_at(steps) is None
