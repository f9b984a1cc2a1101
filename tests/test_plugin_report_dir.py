"""``--chaos-report-dir``: a trace per chaos test run and ``index.json``, both matching the JSON
Schemas shipped in the package, under xdist too; bad directories fail in one line (issue 16,
item 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import hypothesis.internal.observability  # noqa: F401 - keeps in-process runs fast
import jsonschema
import pytest

from pytest_agentchaos.report.artifacts import index_data, schema_path
from pytest_agentchaos.trace import Trace
from pytest_agentchaos.trace.events import EVENT_TYPES

SUITE = """
import pytest

@pytest.mark.chaos(faults=[{"kind": "timeout", "tools": ["s"], "nth": 2}])
@pytest.mark.must_halt(max_steps=10)
def test_survives(chaos):
    s = chaos.wrap(lambda: 1, name="s")
    for _ in range(3):
        try:
            s()
        except Exception:
            pass

@pytest.mark.must_halt(max_tool_calls=1)
def test_spends_too_much(chaos):
    s = chaos.wrap(lambda: 1, name="s")
    s()
    s()

def test_plain():
    pass
"""


def schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(schema_path(name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(loaded)
    return loaded


def run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, Path]:
    pytester.makepyfile(test_agent=SUITE)
    result = pytester.runpytest("--chaos-seed=4", "-p", "no:randomly", *args)
    return result, pytester.path / "out"


def check_dir(out: Path) -> dict[str, Any]:
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))
    jsonschema.validate(index, schema("index"))
    trace_schema = schema("trace")
    for test in index["tests"]:
        data = json.loads((out / test["trace"]).read_text(encoding="utf-8"))
        jsonschema.validate(data, trace_schema)
        assert Trace.from_dict(data).meta["test"] == test["node_id"]
    return index


def test_the_report_dir_holds_an_index_and_a_trace_per_chaos_test(
    pytester: pytest.Pytester,
) -> None:
    result, out = run(pytester, "--chaos-report-dir=out")
    result.assert_outcomes(passed=2, failed=1)
    index = check_dir(out)
    assert [t["node_id"] for t in index["tests"]] == [
        "test_agent.py::test_spends_too_much",
        "test_agent.py::test_survives",
    ]
    failing, passing = index["tests"]
    assert failing["outcome"] == "failed" and failing["halted"] == ["max_tool_calls"]
    assert failing["verdicts"][0]["explanation"].startswith("must_halt failed")
    assert passing["metrics"]["faults"] == {"timeout": 1}
    assert passing["replay"] == "pytest test_agent.py::test_survives --chaos-seed=4"
    assert index["profiles"]["none"]["tests"] == 2 and index["profiles"]["none"]["passed"] == 1
    assert index["session_seed"] == 4


def test_workers_write_their_traces_and_the_controller_one_index(
    pytester: pytest.Pytester,
) -> None:
    result, out = run(pytester, "--chaos-report-dir=out", "-n", "2")
    result.assert_outcomes(passed=2, failed=1)
    index = check_dir(out)
    assert len(index["tests"]) == 2
    assert len(list((out / "traces").iterdir())) == 2


def test_the_ini_key_is_relative_to_the_rootdir(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nchaos_report_dir = reports/chaos\n")
    pytester.makepyfile(test_agent=SUITE)
    elsewhere = pytester.mkdir("elsewhere")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(elsewhere)
        result = pytester.runpytest_subprocess(
            "--chaos-seed=4", "-p", "no:randomly", f"--rootdir={pytester.path}",
            str(pytester.path / "test_agent.py"),
        )  # fmt: skip
    result.assert_outcomes(passed=2, failed=1)
    assert not (elsewhere / "reports").exists()
    assert check_dir(pytester.path / "reports" / "chaos")["tests"]


def test_a_report_dir_that_is_a_file_is_one_line(pytester: pytest.Pytester) -> None:
    (pytester.path / "out").write_text("not a directory")
    result, _ = run(pytester, "--chaos-report-dir=out")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--chaos-report-dir: */out exists and is not a directory"])
    assert "Traceback" not in result.stderr.str()


def test_an_index_that_cannot_be_written_is_one_line_and_the_traces_stay(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "out" / "index.json").mkdir(parents=True)  # in the way of the file
    result, out = run(pytester, "--chaos-report-dir=out")
    result.stdout.fnmatch_lines(["agentchaos: cannot write */out/index.json: *"])
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    assert "Traceback" not in result.stdout.str()
    assert len(list((out / "traces").iterdir())) == 2


def test_the_trace_schema_names_every_event_type_and_field() -> None:
    defs = schema("trace")["$defs"]
    assert set(defs) == set(EVENT_TYPES)
    for name, cls in EVENT_TYPES.items():
        fields = {f for f, a in cls.__annotations__.items() if not a.startswith("ClassVar")}
        assert set(defs[name]["properties"]) == fields | {"type", "step", "t"}, name


def test_an_index_of_no_runs_is_valid() -> None:
    jsonschema.validate(index_data([], session_seed=1, profile_option=None), schema("index"))
