"""Inferers: where a missing required value can come from when the schema has no default.

An inferer answers one :class:`InferenceRequest` (the task's text, the tool's spec, the
arguments, the missing fields, the error) with suggestions: ``{field: Fix}``. A field it
cannot tell is left out, and the repairer declines: inventing a value the task does not state
changes what was asked.

- :class:`RuleInferer` (the default) reads the task text alone: a number next to the field's
  name ("for 3 passengers", "passengers: 2"), an enum value the task names, the one date the
  task names, a value quoted after the field's name ("city 'Lisbon'"), the one time zone the
  task names (by a city or a spoken name) that no other field holds, the value a description
  names for "the main calendar" when the task says "my calendar".
- :class:`LLMInferer` asks any ``llm(prompt) -> str`` callable (the seed's
  LLM_INFER_MISSING_PARAM); its JSON answer is repaired when slightly malformed (code fences,
  single quotes, trailing commas, Python literals) and then validated like everything else.
"""

from __future__ import annotations

import ast
import datetime as _dt
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .compound import name_in_task
from .dates import DATE_PHRASE, read_date
from .fixes import Fix, schema_types
from .json_text import ascii_delimiters
from .shaped import email_in_task, entity_in_task, example_shaped
from .spans import end_from_length, end_from_range
from .spec import ToolSpec, nullable_branch
from .task_numbers import measured_otherwise, name_words, number_near
from .zones import holds_zone, zones_named_in

__all__ = [
    "cued_value",
    "strings_in",
    "InferenceRequest",
    "Inferer",
    "LLMInferer",
    "RuleInferer",
    "loads_lenient",
]


@dataclass(frozen=True)
class InferenceRequest:
    """What an inferer is asked: values for ``missing`` (top-level field names) of ``spec``'s
    call with ``args``, given the ``task`` text, the tool's ``error`` text and the clock."""

    spec: ToolSpec
    args: Mapping[str, Any]
    missing: tuple[str, ...]
    task: str | None = None
    error: str | None = None
    now: _dt.datetime | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Inferer(Protocol):
    """Anything with ``infer(request) -> {field: Fix}``."""

    def infer(self, request: InferenceRequest) -> Mapping[str, Fix]: ...


class RuleInferer:
    """Values read from the task text by rules; nothing is guessed."""

    def infer(self, request: InferenceRequest) -> Mapping[str, Fix]:
        found: dict[str, Fix] = {}
        if not request.task:
            return found
        task = request.task[:8000]
        for name in request.missing:
            named = name_in_task(name, request.args, request.spec.parameters, task)
            if named is not None:
                found[name] = _fix(named, 0.9, f"the task writes the full name with {named!r}")
                continue
            schema = request.spec.schema_at((name,))
            fix = self._one(name, schema, task, request.now, request.args)
            if fix is not None and not _also_listed(fix.value, name, request.spec.resolved):
                found[name] = fix
        return found

    def _one(
        self,
        name: str,
        schema: Mapping[str, Any],
        task: str,
        now: _dt.datetime | None,
        args: Mapping[str, Any],
    ) -> Fix | None:
        schema = nullable_branch(schema) or schema  # X | None: a value is meant as X
        items = schema.get("items")
        if schema.get("type") == "array" and isinstance(items, Mapping) and "enum" in items:
            one = self._one(name, items, task, now, args)  # "search for the album ..."
            return None if one is None else _fix([one.value], one.confidence, one.reason)
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            named = [
                v for v in enum if isinstance(v, str) and f" {_plain(v)} " in f" {_plain(task)} "
            ]
            named = [
                v
                for v in named
                if not any(o != v and f" {_plain(v)} " in f" {_plain(o)} " for o in named)
            ]
            if len(named) == 1:
                return _fix(named[0], 0.9, f"the task names {named[0]!r}")
            return None
        types = schema_types(schema)
        words = name_words(name)
        ended = end_from_length(name, task, args) or end_from_range(name, task, args)
        if ended is not None:
            return _fix(ended[0], 0.85, ended[1])
        if types and set(types) & {"integer", "number"}:
            held = {v.casefold() for v in strings_in(args)}
            near = number_near(words, task, "integer" in types, name, held)
            if near is not None and measured_otherwise(near.value, task, schema, name):
                return None
            return near
        if schema.get("format") in ("date", "date-time") or "date" in words:
            if schema.get("format") == "date-time":
                return None
            fix = _only_date(task, now)
            if fix is not None and any(
                str(held).startswith(str(fix.value)) for held in strings_in(args)
            ):
                return None  # the task's one date is another field's already (a date-time's)
            return fix
        if (not types or "string" in types) and holds_zone(name, schema):
            return _only_zone(task, args)
        if not types or "string" in types:
            cued = cued_value(name, schema, task, strings_in(args))
            return (
                _quoted_after(words, task)
                or _described_default(schema, task)
                or (_fix(cued[0], 0.85, f"the task says {cued[1]!r}") if cued else None)
                or _task_shaped(name, schema, task, strings_in(args))
                or _pattern_shaped(schema, task, strings_in(args))
                or email_in_task(name, schema, task, strings_in(args))
                or entity_in_task(name, schema, task, args)
                or example_shaped(schema, task, strings_in(args))
            )
        return None


_URL = re.compile(r"\bhttps?://[^\s\"'<>)\]]+[^\s\"'<>)\].,;:!?]")
_QUOTED = re.compile(r"\"([^\"\n]{2,200})\"|“([^”\n]{2,200})”|(?<![\w])'([^'\n]{2,200})'(?![\w])")
_NAMED = re.compile(r"\b(?:named|called|titled)\s+(?P<v>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,3})")
_SAYS = re.compile(r"\b(?:that|which)\s+(?:says|reads)\s*:?\s*(?P<v>[^\n]{2,300}?)\s*[.!]?$")
#: The words of a field that holds free text (what the value is, not how it is written).
_TEXT_FIELD = frozenset(
    {"content", "body", "text", "message", "title", "name", "summary", "subject", "note",
     "description", "comment"}
)  # fmt: skip


def _also_listed(value: Any, name: str, schema: Mapping[str, Any]) -> bool:
    """Whether another parameter of the tool lists ``value`` among its allowed values too
    (its enum, or its items'): the task naming the value then names either field, and
    which is not for the rules to pick."""
    if not isinstance(value, str):
        return False
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return False
    for other, sub in props.items():
        if other == name or not isinstance(sub, Mapping):
            continue
        sub = nullable_branch(sub) or sub
        items = sub.get("items")
        listed = sub.get("enum") or (items.get("enum") if isinstance(items, Mapping) else None)
        if isinstance(listed, list) and value in listed:
            return True
    return False


def _task_shaped(name: str, schema: Mapping[str, Any], task: str, taken: set[str]) -> Fix | None:
    """The one span of the task shaped like what the field holds: the only URL for a URL,
    the only quoted text, "named X" or "that says: X" for a free-text field. None where there
    is none, or several."""
    if schema.get("enum") or schema.get("pattern"):
        return None
    tokens = set(name_words(name))
    head = task[:4000]
    fmt = schema.get("format")
    if fmt in ("uri", "url", "iri") or tokens & {"url", "uri", "link", "href"}:
        urls = {u for u in _URL.findall(head) if u not in taken}
        if len(urls) == 1:
            url = urls.pop()
            return _fix(url, 0.9, f"the only address the task gives: {url!r}")
        return None
    if fmt or not tokens & _TEXT_FIELD:
        return None
    quoted = {next(g for g in m.groups() if g) for m in _QUOTED.finditer(head)} - taken
    if len(quoted) == 1:
        text = quoted.pop()
        return _fix(text, 0.85, f"the only text the task quotes: {text!r}")
    if quoted:
        return None
    named = {m["v"] for m in _NAMED.finditer(head)} - taken
    if len(named) == 1 and tokens & {"name", "title"}:
        text = named.pop()
        return _fix(text, 0.85, f"the task names it {text!r}")
    says = _SAYS.search(head.strip())
    if says is not None and tokens & {"content", "body", "text", "message"}:
        text = says["v"].strip()
        return _fix(text, 0.85, f"the task says what it says: {text!r}")
    return None


#: A token of the task: letters and digits joined by the marks ids use.
_TOKEN = re.compile(r"[^\W_](?:[\w.@/+:-]*[^\W_])?")


def _pattern_shaped(schema: Mapping[str, Any], task: str, taken: set[str]) -> Fix | None:
    """The one token of the task the field's own pattern accepts and no other field holds
    ("尾号 8832" for ``^[0-9]{4}$``); None where none or several do."""
    pattern = schema.get("pattern")
    if not isinstance(pattern, str) or len(pattern) > 500:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error:
        return None
    tokens = {t for t in _TOKEN.findall(task[:4000]) if t not in taken and compiled.search(t)}
    if len(tokens) != 1:
        return None
    token = tokens.pop()
    return _fix(token, 0.85, f"the one span of the task the field's pattern takes: {token!r}")


def _fix(value: Any, confidence: float, reason: str) -> Fix:
    return Fix("infer_missing_param", value, confidence, reason)


def _plain(text: str) -> str:
    """The words of ``text``, lowercased, one space apart (punctuation dropped)."""
    return " ".join(re.findall(r"[^\W_]+", text.casefold()))


def strings_in(value: Any) -> set[str]:
    """Every string in ``value``, at any depth."""
    found: set[str] = set()
    todo = [value]
    while todo and len(found) < 1000:
        item = todo.pop()
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, Mapping):
            todo.extend(item.values())
        elif isinstance(item, (list, tuple)):
            todo.extend(item)
    return found


#: Words that tie a value to its role in both a description and a task ("the branch you want
#: the changes pulled into" and "into main"); common ones ("to", "for") tie too loosely.
_CUES = ("into", "onto", "from", "via")
_SKIP = r"(?:(?:the|my|our|your|a|an)\s+)?"
_VALUE = (
    r"(?:['\"`“‘](?P<quoted>[^'\"`”’\n]{1,100})['\"`”’]|(?P<token>[^\W_][\w./:+@-]*[^\W_]|[^\W_]))"
)


def cued_value(
    name: str, schema: Mapping[str, Any], task: str, taken: set[str]
) -> tuple[str, str] | None:
    """``(value, phrase)``: the one value the task ties to the field by a word its description
    uses for the field's role ("pulled into" and "into main"), which no other field holds."""
    described = set(re.findall(r"[a-z]+", str(schema.get("description", ""))[:1000].lower()))
    cues = [c for c in _CUES if c in described]
    if len(cues) != 1:
        return None  # none, or a description speaking of several roles
    pattern = re.compile(rf"\b{cues[0]}\s+{_SKIP}{_VALUE}", re.IGNORECASE)
    found: dict[str, str] = {}
    task = task[:4000]
    for match in pattern.finditer(task):
        value = match["quoted"] or match["token"]
        if value.lower() in _NOT_VALUES or value in taken:
            continue
        # "into main", "into the main branch" (a word of the description); not "from my
        # work account": there the value is a word of a longer name the field does not hold
        after = re.match(r"\s*([A-Za-z]+)", task[match.end() :])
        if after and after[1].lower() == "or":
            return None  # "from a or b": a choice the task leaves open
        if after and after[1].lower() not in _JOINS and after[1].lower() not in described:
            continue
        found[value] = match.group(0)
    if len(found) != 1:
        return None
    return next(iter(found.items()))


#: Words that may follow a value and end its phrase ("from French into German").
_JOINS = frozenset(
    [
        "and",
        "or",
        "to",
        "into",
        "onto",
        "from",
        "via",
        "with",
        "on",
        "at",
        "for",
        "by",
        "in",
        "titled",
        "named",
        "called",
        "as",
        "then",
        "but",
        "please",
        "now",
        "today",
        "tomorrow",
    ]
)
#: Words that follow a cue without being a value ("from here", "into it").
_NOT_VALUES = frozenset(
    [
        "it",
        "them",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "which",
        "what",
        "where",
        "whom",
        "one",
    ]
)


#: A description naming the value for the main one of something ("use 'primary' for the main
#: calendar").
_USE_FOR_MAIN = re.compile(
    r"\buse\s+['\"`]([^'\"`]{1,60})['\"`]\s+for\s+(?:the\s+|your\s+)?"
    r"(?:main|default|primary|own)\s+([a-z]+)",
    re.IGNORECASE,
)


def _described_default(schema: Mapping[str, Any], task: str) -> Fix | None:
    """The value a field's description names for the main one of something, when the task
    speaks of that thing plainly ("to my calendar"; not "my work calendar")."""
    match = _USE_FOR_MAIN.search(str(schema.get("description", ""))[:2000])
    if match is None:
        return None
    if not re.search(rf"\b(?:my|the|our)\s+{re.escape(match[2])}\b", task, re.IGNORECASE):
        return None
    return _fix(match[1], 0.85, f"the description names {match[1]!r} for the main {match[2]}")


def _only_zone(task: str, args: Mapping[str, Any]) -> Fix | None:
    """The one zone the task names that no other field holds already ("14:00 London time in
    Tokyo" with the source London: Tokyo)."""
    taken = strings_in(args)
    zones = [z for z in zones_named_in(task) if z not in taken]
    if len(zones) != 1:
        return None
    return _fix(zones[0], 0.85, f"the one time zone the task names that no field holds: {zones[0]}")


def _only_date(task: str, now: _dt.datetime | None) -> Fix | None:
    days = set()
    for match in DATE_PHRASE.finditer(task):
        try:
            day, _, _ = read_date(match.group(0).rstrip(",."), now)
        except ValueError:
            return None  # a date the task leaves ambiguous: nothing is inferred
        days.add(day)
    if not days:  # a day without its year: at its next occurrence, when that is nearer
        from .dates import yearless_days

        days = yearless_days(task, now) or set()
    if len(days) != 1:
        return None
    day = days.pop()
    return _fix(day.isoformat(), 0.85, f"the one date the task names is {day.isoformat()}")


def _quoted_after(words: set[str], task: str) -> Fix | None:
    if not words:
        return None
    noun = "(?:" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + ")"
    pattern = re.compile(
        rf"\b{noun}\s*(?:is|named|called|=|:)?\s*['\"“‘]([^'\"”’\n]{{1,200}})['\"”’]",
        re.IGNORECASE,
    )
    values = {m.group(1).strip() for m in pattern.finditer(task)}
    if len(values) != 1:
        return None
    value = values.pop()
    return _fix(value, 0.85, f"the task quotes {value!r} after the field's name")


_PROMPT = """You repair the arguments of a tool call.
Tool: {name}
Description: {description}
Parameter schema (JSON Schema): {schema}
Task: {task}
Arguments given: {args}
Error from the tool: {error}
Give values for these missing parameters: {missing}.
Only use values the task states. If the task does not state a value, leave it out.
Answer with one JSON object mapping each parameter you can fill to its value, nothing else."""


class LLMInferer:
    """Asks ``llm(prompt) -> str`` for the missing values. ``confidence`` is what its answers
    are worth to the repairer (below the policy's threshold, they are reported, not used)."""

    def __init__(self, llm: Callable[[str], str], *, confidence: float = 0.85) -> None:
        if not callable(llm):
            raise TypeError(f"LLMInferer needs a callable llm(prompt) -> str, got {llm!r}")
        self.llm = llm
        self.confidence = confidence

    def prompt(self, request: InferenceRequest) -> str:
        """The prompt sent for ``request``."""
        return _PROMPT.format(
            name=request.spec.name,
            description=request.spec.description or "(none)",
            schema=json.dumps(request.spec.parameters, ensure_ascii=False)[:6000],
            task=(request.task or "(not given)")[:4000],
            args=json.dumps(request.args, ensure_ascii=False, default=repr)[:4000],
            error=(request.error or "(none)")[:1000],
            missing=", ".join(request.missing),
        )

    def infer(self, request: InferenceRequest) -> Mapping[str, Fix]:
        answer = self.llm(self.prompt(request))
        if not isinstance(answer, str):
            return {}
        parsed = loads_lenient(answer)
        if not isinstance(parsed, Mapping):
            return {}
        return {
            name: Fix(
                "llm_infer_missing_param", parsed[name], self.confidence, "the model's answer"
            )
            for name in request.missing
            if name in parsed and parsed[name] is not None
        }


def loads_lenient(text: str) -> Any:
    """JSON from a model's answer: the object inside code fences or prose, with single
    quotes, trailing commas, full-width delimiters outside its strings and Python's
    ``True``/``False``/``None`` accepted (read as a
    Python literal, never evaluated; nothing inside a string is rewritten). None when there
    is no object to read."""
    text = text.strip()
    if text.startswith('"') and text.endswith('"'):  # the object encoded twice
        try:
            inner = json.loads(text)
        except (ValueError, RecursionError):
            inner = None
        if isinstance(inner, str):
            text = inner.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text[:_LENIENT_LIMIT], re.DOTALL)
    if fenced:
        text = fenced.group(1).strip()
    if "{" not in text and "｛" in text[:_LENIENT_LIMIT]:
        text = ascii_delimiters(text)  # an input method's full-width braces
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start or end - start > _LENIENT_LIMIT:
        return None
    body = text[start : end + 1]
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        pass
    # a CJK input method's full-width commas and colons between the values
    body = ascii_delimiters(body)
    # JSON's literals as Python's, outside strings only, then a Python literal
    python = _STRING_OR_WORD.sub(_pythonic, body)  # bare keys quoted too
    try:
        value = ast.literal_eval(python)
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        return None
    try:  # plain JSON data only (no sets, bytes, tuples as keys)
        return json.loads(json.dumps(value))
    except (TypeError, ValueError, RecursionError):
        return None


_LENIENT_LIMIT = 200_000
_STRING_OR_WORD = re.compile(
    r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|(?<=[{,])\s*[A-Za-z_]\w*\s*(?=:)"
    r"|\b(?:true|false|null)\b"
)
_PY_LITERALS = {"true": "True", "false": "False", "null": "None"}


def _pythonic(match: re.Match[str]) -> str:
    token = match.group(0)
    if token[:1] in "\"'":
        return token  # a string: as it is
    if token in _PY_LITERALS:
        return _PY_LITERALS[token]
    return repr(token.strip())  # a bare key: quoted
