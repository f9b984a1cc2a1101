"""Texts of a hostile shape (long runs of one character class) are read in linear time, and
read exactly as before: each pattern rewritten to start a match only where a run starts is
checked against the pattern it replaced on many short texts (hypothesis), where the old one
was still fast. The cost itself is measured by ``bench/bench_hostile_text.py`` (a ratio against
prose of the same length), not here."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape import provenance, retry_after
from pytest_agentchaos.halt import HaltMonitor, drift, values
from pytest_agentchaos.halt.text import MAX_TEXT
from pytest_agentchaos.repair import ParamRepairer, ToolSpec, coerce, effective, mechanical, reading

_HAN = values._HAN
#: The patterns as they were, before each was made to start only where a run starts.
OLD: dict[str, tuple[re.Pattern[str], re.Pattern[str], str]] = {
    "halt mask": (
        re.compile(values._MASK.pattern.replace(r"(?=[A-Za-z0-9_.\-/:#]{0,64}\d)", ""), re.I),
        values._MASK,
        "sub",
    ),
    "provenance token": (re.compile(r"[\w./:-]*\d[\w./:-]*"), provenance._TOKEN, "sub"),
    "yuan": (
        re.compile(values._YUAN.pattern.replace(rf"(?<![\d{_HAN}])", "")),
        values._YUAN,
        "sub",
    ),
    "list marker": (
        re.compile(values._LIST_MARKER.pattern.replace(r"\s{0,40}", r"\s*"), re.M),
        values._LIST_MARKER,
        "spans-after-space",
    ),
    "label": (
        re.compile(drift._LABEL.pattern.replace(r"^[^\S\n]*", r"^\s*"), re.M),
        drift._LABEL,
        "groups",
    ),
    "pydantic head": (
        re.compile(r"(\d+) validation errors? for (\S+)"),
        reading._PYDANTIC_HEAD,
        "groups",
    ),
    "retry after (zh)": (
        re.compile(r"(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>毫秒|秒钟?|分钟)\s*(?:之?后)\s*(?:再|重)"),
        retry_after._MESSAGE_RETRY[2],
        "groups",
    ),
    "gloss =": (
        re.compile(r"(?P<v>-?\d+(?:\.\d+)?)\s*=\s*(?P<w>[A-Za-z][\w ]{0,30}?)(?=\s*(?:,|;|\.|$))"),
        effective._GLOSS_EQ,
        "groups",
    ),
    "gloss ()": (
        re.compile(r"(?P<v>[^\s(),]+)\s*\((?P<w>[A-Za-z][\w ]{0,30})\)"),
        effective._GLOSS_PAREN,
        "groups",
    ),
    "currency": (
        re.compile(r"^(?:[$€£¥₹]|usd|eur|gbp|jpy|cad|aud)\s*|\s*(?:[$€£¥₹]|usd|eur|gbp|jpy)$"),
        coerce._CURRENCY,
        "sub",
    ),
}

#: Short texts made of the characters the patterns care about.
TEXTS = st.text(
    alphabet=st.sampled_from(list("ax1.2-_/:#%()=, \n三元角分秒后再validtonerrsfousd$€:;'\"")),
    max_size=40,
)


def _outcome(pattern: re.Pattern[str], text: str, how: str) -> Any:
    if how == "sub":
        return pattern.sub("#", text)
    if how == "groups":
        return [m.groups() for m in pattern.finditer(text)]
    # a list marker swallows the spaces before it; the text between markers is what counts
    return re.sub(r"\s+", " ", pattern.sub(" ", text)).strip()


@pytest.mark.parametrize("name", sorted(OLD))
@settings(max_examples=400, deadline=None)
@given(text=TEXTS)
def test_each_rewritten_pattern_reads_short_texts_as_the_old_one(name: str, text: str) -> None:
    old, new, how = OLD[name]
    assert old.pattern != new.pattern  # the old pattern really is the old one
    assert _outcome(new, text, how) == _outcome(old, text, how)


@settings(max_examples=300, deadline=None)
@given(text=TEXTS)
def test_addresses_and_sums_are_read_as_before(text: str) -> None:
    old_mail = re.compile(
        r"^\s*(?:mailto:)?\s*(?:[^<>]*<\s*([^<>\s]+@[^<>\s]+)\s*>|([^\s<>]+@[^\s<>]+))\s*$"
    )
    for value in (text, f" mailto: {text}@x.org ", f"Ann <{text}@x.org>", f" {text} "):
        old = old_mail.match(value)
        new = mechanical._MAILTO.fullmatch(value.strip())
        assert (old and old.groups()) == (new and new.groups())
    old_money = re.compile(
        r"^\s*(?P<pre>[$€£¥]|usd|eur|gbp|jpy)?\s*(?P<num>[\d.,]+)\s*(?P<post>[$€£¥]|usd|eur|gbp|jpy)?\s*$",
        re.I,
    )
    for value in (text, f" ${text} ", f"{text} usd"):
        old = old_money.match(value)
        new = coerce._MONEY.fullmatch(value.strip())
        assert (old and old.groupdict()) == (new and new.groupdict())


# -- what a user notices: hostile outputs are read, not choked on ------------------------------

HOSTILE = ["x" * 50_000, "1" * 50_000, " " * 50_000, "三" * 50_000, "a." * 25_000, "1," * 25_000]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: repr(t[:2]))
def test_a_hostile_output_is_read_as_its_head(text: str) -> None:
    """The halt monitor reads the first MAX_TEXT characters: a longer output decides as its
    head does (and 400 digits in a row are a value, not a float overflow)."""
    whole, head = HaltMonitor(embedder="lexical"), HaltMonitor(embedder="lexical")
    for monitor, out in ((whole, text), (head, text[:MAX_TEXT])):
        monitor.observe("looking for flights", tool="search", ok=True)
        decision = monitor.observe(out, tool="search", ok=False, error=out[:2000])
        monitor.observe(out, tool="search", ok=False, error=out[:2000])
    assert (whole.observe(text).halt, whole.steps) == (
        head.observe(text[:MAX_TEXT]).halt,
        head.steps,
    )
    assert decision.step == 1


def test_numbers_that_are_no_float_are_still_values() -> None:
    assert values.number("9" * 500) == "9" * 64
    assert values.number("nan") is None and values.number("Infinity") is None
    assert values.number("1.5") == "1.5" and values.number("三百") == "300"


SEARCH = ToolSpec.from_schema(
    "search",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer"},
            "email": {"type": "string", "format": "email"},
        },
        "required": ["query"],
    },
)


@pytest.mark.parametrize(
    ("field", "text"),
    [("limit", " " * 20_000), ("limit", "1" * 20_000), ("email", " " * 5_000 + "a@b.c")],
    ids=["spaces-as-int", "digits-as-int", "spaced-email"],
)
def test_the_repairer_declines_a_hostile_value_and_says_why(field: str, text: str) -> None:
    result = ParamRepairer(SEARCH).repair({"query": "flights", field: text})
    fix: Callable[[], Any] = lambda: result.args[field]  # noqa: E731
    if field == "email":
        assert result.ok and fix() == "a@b.c"  # spaces around an address are only wrapping
    else:
        assert not result.ok
        assert re.search(r"no number|too long to be a number", result.reason), result.reason
