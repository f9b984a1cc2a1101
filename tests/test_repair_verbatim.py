"""Wrong repairs are worse than misses (issue 30): a value the task writes verbatim is changed
only where the schema, the description's rules or the tool's error refuse that value.

Two properties: one over the development corpus (fixtures/repair/dev: every repaired call,
every value of it the task writes verbatim in a field whose schema says nothing beyond its
type), one over generated tools, calls and errors in every issue format of
``tests/error_formats.py``: an error about one field never changes another.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import error_formats  # noqa: E402
import repair_corpus  # noqa: E402

from pytest_agentchaos.repair import ParamRepairer, ToolSpec  # noqa: E402
from pytest_agentchaos.repair.effective import effective_problems  # noqa: E402

#: Keywords by which a sub-schema says more than its type: a value there may be refused by them.
_SAYS_MORE = ("description", "format", "pattern", "enum", "title", "const", "minimum", "maximum")


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, (*path, i))]
    return [(path, value)]


def _verbatim(task: str, value: Any) -> bool:
    if isinstance(value, bool) or value is None or len(str(value)) < 2:
        return False
    return re.search(rf"(?<![\w.]){re.escape(str(value))}(?!\w)", task) is not None


def _survives(value: Any, repaired: dict[str, Any]) -> bool:
    """The value is still in the call: as it was, under any key, or split into parts that all
    are (``acme/widgets`` -> owner ``acme``, repo ``widgets``)."""
    leaves = [v for _, v in _leaves(repaired)]
    if value in leaves:
        return True
    parts = [p for p in re.split(r"[/\s,;]+", str(value)) if p]
    return len(parts) > 1 and all(p in map(str, leaves) for p in parts)


def test_no_dev_repair_changes_a_value_the_task_writes_unless_something_refuses_it() -> None:
    checked, changed = 0, []
    for case in repair_corpus.load(split="dev"):
        if not case.task or not isinstance(case.args, dict):
            continue
        spec = ToolSpec.from_schema(case.tool, case.schema)
        result = ParamRepairer(spec).repair(case.args, case.error, case.task, case.now)
        if not result.ok or result.args is None:
            continue
        refused = {p.path for p in spec.problems(case.args)}
        refused |= {p.path for p in effective_problems(spec, case.args)}
        error = case.error or ""
        for path, value in _leaves(case.args):
            if not _verbatim(case.task, value):
                continue
            if any(key in spec.schema_at(path) for key in _SAYS_MORE):
                continue
            checked += 1
            if _survives(value, result.args):
                continue
            pointed = str(value) in error or any(isinstance(k, str) and k in error for k in path)
            if not pointed and not any(path[: len(r)] == r for r in refused):
                changed.append(f"{case.id}: {path} {value!r} -> {result.args}")
    assert checked >= 80
    assert not changed, "\n".join(changed)


_NAMES = ["city", "account_id", "label", "owner", "count", "region", "title_text", "page"]
_WORDS = st.from_regex(r"[a-z]{3,8}(-[0-9]{1,3})?", fullmatch=True)
_MESSAGES = [
    ("Input should be a valid integer", "int_parsing"),
    ("Field required", "missing"),
    ("value is not a valid enumeration member", "enum"),
    ("String should have at most 3 characters", "string_too_long"),
    ("Unknown value", "value_error"),
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(st.sampled_from(_NAMES), min_size=2, max_size=4, unique=True),
    data=st.data(),
)
def test_an_error_about_one_field_never_changes_another(names: list[str], data: Any) -> None:
    ints = {n for n in names if n in ("count", "page")}
    schema = {
        "type": "object",
        "properties": {n: {"type": "integer" if n in ints else "string"} for n in names},
        "required": names,
    }
    args = {n: data.draw(st.integers(10, 999)) if n in ints else data.draw(_WORDS) for n in names}
    task = "please use " + ", ".join(f"{n.replace('_', ' ')} {v}" for n, v in args.items())
    pointed = data.draw(st.sampled_from(names))
    message, kind = data.draw(st.sampled_from(_MESSAGES))
    fmt = data.draw(st.sampled_from(sorted(error_formats.ISSUE_FORMATS)))
    error = error_formats.ISSUE_FORMATS[fmt]([((pointed,), message, kind)], "tool")
    sent = dict(args)
    if data.draw(st.booleans()):  # the pointed value broken the way the task's spelling fixes
        sent[pointed] = str(args[pointed]) if pointed in ints else f"{args[pointed].upper()}."
    result = ParamRepairer(ToolSpec.from_schema("tool", schema)).repair(sent, error, task)
    if result.ok and result.args is not None:
        for name in names:
            if name != pointed:
                assert result.args.get(name) == args[name], (fmt, error, result.args)


def test_a_default_never_stands_in_for_a_value_sent_under_an_unknown_name() -> None:
    """Two required keys with described defaults are missing while two undeclared keys beside
    them hold values their schemas take (no elimination settles which is which): the defaults
    would replace what the user asked for, so the repair is declined."""
    said = "Use 'Europe/Paris' as local timezone if no {} timezone is given."
    spec = ToolSpec.from_schema(
        "convert_time",
        {
            "type": "object",
            "properties": {
                "source_tz": {"type": "string", "description": said.format("source")},
                "target_tz": {"type": "string", "description": said.format("target")},
                "when": {"type": "string"},
            },
            "required": ["source_tz", "target_tz", "when"],
        },
    )
    args = {"zone_a": "America/New_York", "zone_b": "Asia/Tokyo", "when": "18:45"}
    result = ParamRepairer(spec).repair(args, None, "convert 18:45")
    assert not result.ok and "may hold its value" in result.reason, result
    # with nothing sent under another name, the described defaults are used
    alone = ParamRepairer(spec).repair({"when": "18:45"}, None, "convert 18:45")
    want = {"source_tz": "Europe/Paris", "target_tz": "Europe/Paris", "when": "18:45"}
    assert alone.ok and alone.args == want, alone
