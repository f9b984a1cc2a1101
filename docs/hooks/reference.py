"""MkDocs hook: the reference tables, generated from the code's own tables when the site builds.

A reference page holds ``<!-- generated: NAME -->`` lines; :func:`on_page_markdown` replaces
each with the table :data:`GENERATORS` makes from the code: the plugin's option table and the
ini keys it declares, the markers' signatures and the arguments the marker parser accepts, the
profile keys the profile loader and each stack's table parser accept, the fault kinds' registry,
and the command-line tools' parsers. What a key accepts is what its validator says when given a
wrong value (the error a user would read); only the one-line meanings come from
``descriptions.py``, and a key without one (or a description of a key that is gone) fails the
build: :func:`problems`.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import descriptions as D  # noqa: E402

PLACEHOLDER = re.compile(r"^<!-- generated: ([\w-]+) -->$", re.M)


class _Probe:
    """A value no validator accepts: what it says about it is what the key accepts."""

    def __repr__(self) -> str:
        return "<probe>"


_PROBES: tuple[Any, ...] = (_Probe(), -(10**30), 10**30, -1e300, 1e300)


def _accepts(check: Callable[[Any], str | None]) -> str:
    """What a key accepts, read from the errors ``check(value)`` gives for wrong values:
    the kind of value (``an integer >= 1``) and its bounds."""
    kind = ""
    bounds: list[str] = []
    for probe in _PROBES:
        message = check(probe)
        if message is None:
            continue
        tail = message.rsplit(": ", 1)[-1] if ": " in message else message
        m = re.search(r"expected (.*?)(?:, got .*)?$", message)
        one_of = re.search(r" is not one of (.*)$", message)
        bound = re.search(r"must be ([<>]=? \S+(?: seconds)?), got", message)
        if probe is _PROBES[0]:
            if one_of:
                kind = f"one of {one_of[1]}"
            elif m:
                kind = m[1]
            else:
                kind = re.sub(r",? got .*$", "", tail)
        elif bound and bound[1] not in bounds:
            bounds.append(bound[1])
    kind = re.sub(r"^'?\w+'? must be ", "", kind).replace("|", "\\|")
    for b in bounds:
        if "seconds" in kind:
            b = b.removesuffix(" seconds")
        if not re.search(re.escape(b) + r"\b", kind):
            kind += f", {b}"
    return kind


def _md(value: Any) -> str:
    """A default as a reader writes it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, float) and value.is_integer():
        return f"`{int(value)}`"
    if isinstance(value, (tuple, list)):
        if len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
            low, high = value
            return _md(low) if low == high else f"`[{_md(low)[1:-1]}, {_md(high)[1:-1]}]`"
        if len(value) > 3 and any(len(str(v)) > 40 for v in value):
            return f"a built-in set of {len(value)}"
        if len(value) == 1:
            return _md(value[0])
        return ", ".join(_md(v) for v in value) if value else "none"
    if isinstance(value, Mapping):
        return "`{}`" if not value else f"`{dict(value)}`"
    text = str(value)
    return f"`{text}`" if len(text) <= 60 else f"`{text[:57]}...`"


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("\n", " ") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


# -- options and ini keys --------------------------------------------------------------------


class _Recorder:
    """Stands in for pytest's parser and plugin manager: records what the plugin declares."""

    def __init__(self) -> None:
        self.options: list[tuple[tuple[str, ...], dict[str, Any]]] = []
        self.ini: list[tuple[str, str, str | None, Any]] = []

    def getgroup(self, name: str, description: str = "") -> _Recorder:
        return self

    def addoption(self, *names: str, **attrs: Any) -> None:
        self.options.append((names, attrs))

    def addini(self, name: str, help: str, type: str | None = None, default: Any = None) -> None:
        self.ini.append((name, help, type, default))

    def register(self, plugin: object, name: str) -> None:
        pass


def declared() -> _Recorder:
    """The options and ini keys the plugin declares, as pytest would receive them."""
    from pytest_agentchaos.plugin.options import add_options

    recorder = _Recorder()
    add_options(recorder, recorder)  # type: ignore[arg-type]
    return recorder


def options_table() -> str:
    rows = []
    for names, attrs in declared().options:
        (long,) = names
        name = long.removeprefix("--agentchaos-")
        value = "" if attrs.get("action") == "store_true" else f" {attrs.get('metavar', 'VALUE')}"
        rows.append(
            (f"`--chaos-{name}{value}`<br>`--agentchaos-{name}`", attrs["help"].replace("|", "\\|"))
        )
    return _table(("option", "what it does"), rows)


def ini_table() -> str:
    rows = []
    for name, help_, kind, default in declared().ini:
        shown = "none" if default in ("", [], None) else f"`{default}`"
        rows.append((f"`{name}`", kind or "string", shown, help_.replace("|", "\\|")))
    return _table(("ini key", "type", "default", "what it sets"), rows)


# -- markers ---------------------------------------------------------------------------------


def _mark_error(name: str, kwargs: dict[str, Any]) -> str | None:
    from pytest_agentchaos.errors import ChaosConfigError
    from pytest_agentchaos.harness.spec import parse_marks

    try:
        parse_marks([SimpleNamespace(name=name, args=(), kwargs=kwargs)])
    except ChaosConfigError as exc:
        return str(exc)
    return None


def _allowed(message: str | None) -> list[str]:
    found = re.search(r"allowed: (.*)$", message or "")
    return found[1].split(", ") if found else []


def marker_args(name: str) -> list[str]:
    """The arguments the marker parser accepts for marker ``name``."""
    return _allowed(_mark_error(name, {"__probe__": 1}))


def _signature_defaults(signature: str) -> dict[str, str]:
    inner = signature[signature.index("(") + 1 :]
    depth, current, parts = 0, "", []
    for ch in inner:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return {p.split("=")[0].strip(): p.split("=", 1)[1].strip() for p in parts if "=" in p}


def markers() -> str:
    from pytest_agentchaos.harness.spec import MARKERS

    out = []
    for name, description in MARKERS.items():
        signature, _, meaning = description.partition("): ")
        defaults = _signature_defaults(signature + ")")
        rows = []
        for arg in marker_args(name):
            default = defaults.get(arg, "")
            default = "none" if default in ("None", "...", "") else f"`{default}`"
            accepts = _accepts(lambda v, n=name, a=arg: _mark_error(n, {a: v}))
            rows.append((f"`{arg}`", default, accepts, D.MARKER_ARGS.get(f"{name}.{arg}", "")))
        out += [
            f"### `{name}`",
            "",
            f"`@pytest.mark.{signature})`",
            "",
            meaning[0].upper() + meaning[1:] + ".",
            "",
            _table(("argument", "default", "accepts", "meaning"), rows),
            "",
        ]
    return "\n".join(out)


# -- profiles --------------------------------------------------------------------------------


def profile_keys() -> list[str]:
    """The keys a profile may have: the loader's own and the registered stack tables."""
    from pytest_agentchaos.profiles import sections
    from pytest_agentchaos.profiles.profile import OWN_KEYS

    return [*OWN_KEYS, *sections()]


def profile_table() -> str:
    rows = [(f"`{k}`", D.PROFILE_KEYS.get(k, "")) for k in profile_keys()]
    return _table(("key", "meaning"), rows)


def budgets_table() -> str:
    from pytest_agentchaos.errors import ChaosConfigError
    from pytest_agentchaos.profiles.budgets import BUDGET_KEYS, parse_budgets

    def error(key: str, value: Any) -> str | None:
        try:
            parse_budgets({key: value}, "[budgets]")
        except ChaosConfigError as exc:
            return str(exc)
        return None

    rows = [
        (f"`{k}`", _accepts(lambda v, k=k: error(k, v)), D.BUDGET_KEYS.get(k, ""))
        for k in BUDGET_KEYS
    ]
    return _table(("key", "accepts", "limits"), rows)


def _fault_error(fault: dict[str, Any]) -> str | None:
    from pytest_agentchaos.errors import ChaosConfigError
    from pytest_agentchaos.faults.plan import parse_faults

    try:
        parse_faults([fault], "faults")
    except ChaosConfigError as exc:
        return str(exc)
    return None


def selectors_table() -> str:
    from pytest_agentchaos.faults.selectors import SELECTOR_KEYS

    rows = []
    for key in SELECTOR_KEYS:
        accepts = _accepts(lambda v, k=key: _fault_error({"kind": "timeout", k: v}))
        rows.append((f"`{key}`", accepts, D.SELECTOR_KEYS.get(key, "")))
    return _table(("selector", "accepts", "meaning"), rows)


def fault_kinds() -> str:
    from pytest_agentchaos.faults.kinds import KINDS

    rows = []
    for name, kind in KINDS.items():
        keys = []
        for param in kind.params:
            base: dict[str, Any] = {"kind": name, "tools": ["t"]}
            accepts = _accepts(lambda v, p=param, b=base: _fault_error({**b, p: v}))
            default = _md(kind.defaults.get(param))
            keys.append(f"`{param}`: {accepts} (default {default})")
        summary = kind.summary.replace("|", "\\|")
        rows.append((f"`{name}`", ", ".join(kind.channels), "<br>".join(keys) or "none", summary))
    return _table(("kind", "channels", "keys", "what happens"), rows)


def _section_error(section: str, table: dict[str, Any]) -> str | None:
    from pytest_agentchaos.errors import ChaosConfigError
    from pytest_agentchaos.profiles import parse_section

    try:
        parse_section(section, table, f"[{section}]")
    except ChaosConfigError as exc:
        return str(exc)
    return None


def _nest(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    for key in reversed(path):
        value = {key: value}
    return value  # type: ignore[no-any-return]


def section_keys(section: str, path: tuple[str, ...] = ()) -> list[str]:
    """The keys the parser of ``[section]`` accepts (at ``path`` within it)."""
    return _allowed(_section_error(section, _nest((*path, "__probe__"), 1)))


def walk_sections() -> Iterator[tuple[str, tuple[str, ...], list[str]]]:
    """Every stack table and nested table: ``(section, path, keys)``."""
    from pytest_agentchaos.profiles import sections

    for section in sections():
        keys = section_keys(section)
        yield section, (), keys
        for key in keys:
            nested = section_keys(section, (key,))
            if nested:
                yield section, (key,), nested


def sections_tables() -> str:
    from pytest_agentchaos.profiles import parse_section

    out = []
    for section, path, keys in walk_sections():
        dotted = ".".join((section, *path))
        policy = parse_section(section, {}, f"[{section}]")
        for key in path:
            policy = getattr(policy, key, None)
        rows = []
        intro = D.SECTION_KEYS.get(dotted, D.PROFILE_KEYS.get(dotted, ""))
        anchor = dotted.replace(".", "")
        out += [f"### `[{dotted}]` {{ #{anchor} }}", "", intro, ""]
        if dotted in D.UNIFORM_TABLES:
            first = (*path, keys[0])
            accepts = _accepts(lambda v, s=section, at=first: _section_error(s, _nest(at, v)))
            names = ", ".join(f"`{k}`" for k in keys)
            out += [f"Each key accepts {accepts}: {names}.", ""]
            continue
        for key in keys:
            nested = not path and section_keys(section, (key,))
            if nested:
                rows.append((f"`{key}`", "", "a table", f"[`[{dotted}.{key}]`](#{dotted}{key})"))
                continue
            default = getattr(policy, key, None)
            at = (*path, key)
            accepts = _accepts(lambda v, s=section, at=at: _section_error(s, _nest(at, v)))
            meaning = D.SECTION_KEYS.get(f"{dotted}.{key}", "")
            rows.append((f"`{key}`", _md(default), accepts, meaning))
        out += [_table(("key", "default", "accepts", "meaning"), rows), ""]
    return "\n".join(out)


# -- command-line tools ----------------------------------------------------------------------


def _cli_table(parser: argparse.ArgumentParser) -> str:
    rows = []
    for action in parser._actions:  # argparse keeps no public list of them
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        names = (
            ", ".join(f"`{n}`" for n in action.option_strings)
            or f"`{action.metavar or action.dest}`"
        )
        rows.append((names, (action.help or "").replace("|", "\\|")))
    return _table(("argument", "meaning"), rows)


def cli_diff() -> str:
    from pytest_agentchaos import cli

    parser = cli._parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return _cli_table(sub.choices["diff"])


def cli_mcp() -> str:
    from pytest_agentchaos.adapters.mcp_client import cli

    return _cli_table(cli._parser())


GENERATORS: dict[str, Callable[[], str]] = {
    "options": options_table,
    "ini": ini_table,
    "markers": markers,
    "profile-keys": profile_table,
    "budgets": budgets_table,
    "selectors": selectors_table,
    "fault-kinds": fault_kinds,
    "sections": sections_tables,
    "cli-diff": cli_diff,
    "cli-mcp": cli_mcp,
}


def problems() -> list[str]:
    """Where the descriptions and the code disagree: a key without a meaning, or a meaning of
    a key the code does not have."""
    from pytest_agentchaos.faults.selectors import SELECTOR_KEYS
    from pytest_agentchaos.harness.spec import MARKERS
    from pytest_agentchaos.profiles.budgets import BUDGET_KEYS

    expected: dict[str, set[str]] = {
        "MARKER_ARGS": {f"{m}.{a}" for m in MARKERS for a in marker_args(m)},
        "PROFILE_KEYS": set(profile_keys()),
        "BUDGET_KEYS": set(BUDGET_KEYS),
        "SELECTOR_KEYS": set(SELECTOR_KEYS),
        "SECTION_KEYS": set(),
    }
    for section, path, keys in walk_sections():
        dotted = ".".join((section, *path))
        if path:
            expected["SECTION_KEYS"].add(dotted)
        if dotted in D.UNIFORM_TABLES:
            continue
        expected["SECTION_KEYS"] |= {
            f"{dotted}.{k}" for k in keys if path or not section_keys(section, (k,))
        }
    found = []
    for table, keys in expected.items():
        described = set(getattr(D, table))
        found += [f"{table}: {k}: no description" for k in sorted(keys - described)]
        found += [f"{table}: {k}: described, but the code has no such key" for k in
                  sorted(described - keys)]  # fmt: skip
    return found


def render(markdown: str) -> str:
    """``markdown`` with every placeholder replaced by its generated table."""

    def one(match: re.Match[str]) -> str:
        name = match[1]
        if name not in GENERATORS:
            raise ValueError(f"no generator {name!r}; known: {', '.join(GENERATORS)}")
        return GENERATORS[name]()

    return PLACEHOLDER.sub(one, markdown)


def on_config(config: Any) -> Any:
    """Refuse to build a reference that does not describe what the code has."""
    found = problems()
    if found:
        from mkdocs.exceptions import PluginError

        raise PluginError("the reference and the code disagree:\n  " + "\n  ".join(found))
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return render(markdown)
