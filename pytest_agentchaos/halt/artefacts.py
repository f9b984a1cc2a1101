"""The artefacts a reply hands back, in one writing: what a chat-only apology loop hands back
again in new words (issue 29, item 7). Compare the artefact, not the words around it.

An artefact is fenced code, an SQL statement (in any case), a spreadsheet formula, or an inline
code span that reads as code or as a regular expression. Each is normalised so that the same
artefact written another way is equal:

- spacing and case, and the names the code binds itself (:func:`renamed`: its variables, its
  parameters, an SQL alias, renamed in order of use);
- a formula's absolute references (``$A$2`` is ``A2``: the same cells);
- a regular expression by what it matches (:func:`regex_form`): ``\\d`` and ``[0-9]``,
  ``[3-8]``, ``[345678]`` and ``(3|4|5|6|7|8)`` are one character set, and a group that
  captures is its content.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from .text import MAX_TEXT
from .values import fold

__all__ = ["artefacts", "regex_form", "renamed"]

_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|$)", re.DOTALL)
#: An SQL statement: upper-case keywords, or any case where the statement has the shape of
#: one (a SELECT with its FROM and a clause after it), not prose that selects things.
_SQL = re.compile(
    r"\b(?:SELECT|WITH|INSERT\s+INTO|UPDATE|DELETE\s+FROM|CREATE\s+(?:TABLE|INDEX|VIEW))\b"
    r"[^;]{8,}?(?:;|$)",
    re.DOTALL,
)
_SQL_ANY_CASE = re.compile(
    r"(?i)(?:with\s+\w+\s+as\s*\(\s*)?select\b[^;]{2,300}?\bfrom\s+\w[\w.]*"
    r"[^;]{0,300}?\b(?:where|group\s+by|order\s+by|join|limit|having)\b[^;]{0,2000}(?:;|$)"
)
#: Where a statement in any case may start; only the first few are tried (a hostile text of
#: "select ... from" repeated costs a bounded scan, not one per word).
_SQL_START = re.compile(r"(?i)\b(?:with\s+\w+\s+as\s*\(\s*)?select\b")
_SQL_TRIES = 6
#: What a statement has and prose that selects things has not: a list, a call, a comparison.
_SQL_MARK = re.compile(r"[*(),=<>]")
_FORMULA = re.compile(r"(?<![\w=])=\s*[A-Z][A-Z0-9.]*\([^\n]{2,}")
_ANCHOR = re.compile(r"\$(?=[A-Z]{1,3}\$?\d|[A-Z]{1,3}\b|\d)")
#: An inline code span (backticks) of some length.
_INLINE = re.compile(r"`([^`\n]{6,400})`")
#: The most inline spans read from one text (a hostile text of thousands costs no more).
_INLINE_LIMIT = 24
#: Code punctuation an inline span reads as code by (prose in backticks has none of it).
_CODE_MARK = re.compile(r"[()\[\]{}=<>^$|*+\\;]")
#: What makes a span a regular expression: an anchor at an end, a class escape, a counted
#: repeat, a character range.
_REGEX_MARK = re.compile(r"^\^|(?<!\\)\$$|\\[dDwWsSb]|\{\d+(?:,\d*)?\}|\[[^\]]*\w-\w[^\]]*\]")
_SPACES = re.compile(r"\s+")


def artefacts(text: str) -> frozenset[str]:
    """The artefacts ``text`` hands back (fenced code; else SQL statements, formulas and
    inline code spans), each normalised (see the module's docstring)."""
    head = fold(text)
    found = [_plain(m[1]) for m in _FENCE.finditer(head) if m[1].strip()]
    if not found:
        queries = [m[0] for m in _SQL.finditer(head)] or _any_case_sql(head)
        found = [_plain(q) for q in queries if _SQL_MARK.search(q)]
        found += [_plain(_ANCHOR.sub("", m[0])) for m in _FORMULA.finditer(head)]
        for n, match in enumerate(_INLINE.finditer(head)):
            if n >= _INLINE_LIMIT:
                break
            span = match[1].strip()
            if any(span in f for f in found):
                continue  # a query or formula also quoted inline: one artefact
            if _REGEX_MARK.search(span):
                form = regex_form(span)
                if form is not None:
                    found.append(form)
                    continue
            if _CODE_MARK.search(span):
                found.append(_plain(span))
    return frozenset(a for a in found if len(a) >= 6)


def _any_case_sql(head: str) -> list[str]:
    """SQL statements in any case, tried at the first :data:`_SQL_TRIES` starts."""
    found: list[str] = []
    end = 0
    for tries, start in enumerate(_SQL_START.finditer(head)):
        if tries >= _SQL_TRIES:
            break
        if start.start() < end:
            continue
        match = _SQL_ANY_CASE.match(head, start.start())
        if match:
            found.append(match[0])
            end = match.end()
    return found


def _plain(code: str) -> str:
    return _SPACES.sub(" ", renamed(code)).strip(" ;").casefold()


# -- regular expressions -----------------------------------------------------------------------


def _sre() -> Any:
    """The standard library's regular expression parser (``re._parser`` from Python 3.11,
    ``sre_parse`` before)."""
    try:
        return importlib.import_module("re._parser")
    except ImportError:  # Python 3.10
        return importlib.import_module("sre_parse")


_DIGITS = frozenset(range(48, 58))
_WORD = frozenset([*range(48, 58), *range(65, 91), *range(97, 123), 95])
_SPACE = frozenset([9, 10, 11, 12, 13, 32])
_CATEGORY = {"CATEGORY_DIGIT": _DIGITS, "CATEGORY_WORD": _WORD, "CATEGORY_SPACE": _SPACE}
#: Character ranges larger than this are kept as ranges, not expanded.
_RANGE_LIMIT = 512


def regex_form(pattern: str) -> str | None:
    """A regular expression as what it matches, written one way: ``re:`` and its parsed form
    with each character set as the sorted characters it holds and groups dissolved; None when
    ``pattern`` is no valid expression (or too long to read)."""
    if len(pattern) > 400:
        return None
    try:
        tree = _sre().parse(pattern)
    except Exception:  # re.error, recursion on a hostile nesting
        return None
    try:
        return "re:" + _form(list(tree))
    except (RecursionError, ValueError, TypeError):
        return None


def _form(items: list[Any]) -> str:
    return "".join(_item(op, av) for op, av in items)


def _flat(items: list[Any]) -> list[Any]:
    """``items`` with their groups dissolved into them."""
    out: list[Any] = []
    for op, av in items:
        if str(op) == "SUBPATTERN":
            out += _flat(list(av[-1]))
        else:
            out.append((op, av))
    return out


def _item(op: Any, av: Any) -> str:
    name = str(op)
    if name == "LITERAL":
        return _chars(frozenset([av]))
    if name == "IN":
        return _charset(av)
    if name == "SUBPATTERN":  # a group matches what its content matches
        return _form(list(av[-1]))
    if name == "BRANCH":
        forms = sorted(_form(list(alt)) for alt in av[1])
        return "(" + "|".join(forms) + ")"
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, high, body = av
        top = "*" if str(high) == "MAXREPEAT" else str(high)
        atoms = _flat(list(body))
        inner = _form(atoms)
        if len(atoms) != 1:
            inner = f"({inner})"
        return f"{inner}{{{low},{top}}}"
    if name == "AT":
        return f"@{av}"
    if name == "ANY":
        return "."
    return f"<{name}:{av}>"


def _charset(items: list[Any]) -> str:
    chars: set[int] = set()
    other: list[str] = []
    negate = False
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            chars.add(av)
        elif name == "RANGE" and av[1] - av[0] <= _RANGE_LIMIT:
            chars.update(range(av[0], av[1] + 1))
        elif name == "CATEGORY" and str(av) in _CATEGORY:
            chars |= _CATEGORY[str(av)]
        else:
            other.append(f"{name}:{av}")
    return ("^" if negate else "") + _chars(frozenset(chars)) + "".join(sorted(other))


def _chars(chars: frozenset[int]) -> str:
    if len(chars) == 1:
        return re.escape(chr(next(iter(chars))))
    return "[" + "".join(re.escape(chr(c)) for c in sorted(chars)) + "]"


# -- names code binds itself -------------------------------------------------------------------

#: Where code binds a name of its own: after ``def``/``class``/``function``/``lambda``/
#: ``let``/``const``/``var``/``for``/``as`` (an SQL alias too), a function's parameters, and
#: the targets of an assignment opening a line.
_BINDER = re.compile(
    r"\b(?:def|class|function|let|const|var|for)\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)"
    r"|\bas\s+([A-Za-z_]\w*)"
    r"|^[ \t]*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=(?!=)",
    re.MULTILINE | re.IGNORECASE,
)
_PARAMS = re.compile(r"\b(?:def|function)\s*\w*\s*\(([^)]{0,200})\)|\blambda\s+([^:]{0,100}):")
#: A name used in code (not an attribute, not the text of a string literal)
_IDENT = re.compile(r"(?<![\w.'\"])[A-Za-z_]\w*(?!['\"])")


def renamed(code: str) -> str:
    """``code`` with the names it binds itself (its function's parameters, its variables, an
    SQL alias) renamed ``v0``, ``v1``, ... in order of first use: the same code handed back with
    its variables renamed reads the same (a clone); the names it only uses (columns, tables,
    functions of a library, attributes) are kept."""
    bound: set[str] = set()
    for match in [*_BINDER.finditer(code[:MAX_TEXT]), *_PARAMS.finditer(code[:MAX_TEXT])]:
        for group in match.groups():
            if group:
                bound.update(p.split("=")[0].split(":")[0].strip() for p in group.split(","))
    bound = {b.lstrip("*") for b in bound if b} - _KEEP
    if not bound:
        return code
    order: dict[str, str] = {}

    def rename(m: re.Match[str]) -> str:
        name = m[0]
        if name not in bound:
            return name
        return order.setdefault(name, f"v{len(order)}")

    return _IDENT.sub(rename, code[:MAX_TEXT])


_KEEP = frozenset({"self", "cls", "in", "if", "else", "not", "and", "or", "is", "None"})
