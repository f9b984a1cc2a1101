"""Parameter names the model got wrong: a key that is not a parameter but obviously names one.

A key the schema does not list is renamed to the one parameter it names, when that parameter
is not given already:

- the same name in another case or style (``exclude_patterns`` -> ``excludePatterns``,
  ``To`` -> ``to``, ``from`` -> ``_from``), or in the singular or plural (``assignee`` ->
  ``assignees``);
- a name sharing a word with exactly one parameter the call lacks, when that parameter is
  required (``pr_number`` -> ``pull_number``, ``file_path`` -> ``path``, ``channel`` ->
  ``channel_id``);
- an abbreviation of exactly one parameter the call lacks: its initials (``ttl`` ->
  ``time_to_live``) or its letters in order from its first (``q`` -> ``query``, ``lng`` ->
  ``longitude``, ``tz`` -> ``timezone``), the value fitting the parameter;
- the words of exactly one lacking parameter's own description (``num_results`` -> ``count``
  described as "Number of results"), the value fitting the parameter;
- by elimination: the one leftover key and the one parameter the call lacks that its value
  fits, where that parameter is required or its schema says more than "some text"
  (``party_size`` -> ``number_of_seats``, an integer from 1 to 6); several leftover keys and
  as many required parameters lacking, each value fitting, paired in the order both are written
  (``from``, ``to`` -> ``source_timezone``, ``target_timezone``), and in the order the task
  writes the values where it writes them.

There is no table of synonyms: what links a key to a parameter is the schema's own names and
prose and the value's fit; where two parameters fit equally, the key is not renamed.

This runs whether the schema forbids other keys or not: a tool that drops unknown keys
silently loses what they said, so a misnamed key is a problem either way. A key that names no
parameter is left to the schema (dropped where it forbids unknown keys).
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["rename_keys"]

#: Work allowed for the comparisons that scan every free parameter per leftover key (a hostile
#: call with thousands of keys that name nothing is declined, not compared pairwise).
_PAIRWISE_BUDGET = 20_000
#: A parameter's schema that says more than "some text": a value fitting it is evidence.
_TELLING = ("enum", "const", "pattern", "format")  # a length alone tells no text apart


def words(name: str) -> list[str]:
    """The words of a parameter's name: ``excludePatterns`` -> ``["exclude", "patterns"]``."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w.lower() for w in re.split(r"[\W_]+", spaced) if w]


def _squash(name: str) -> str:
    return "".join(words(name))


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def rename_keys(
    args: Mapping[str, Any], schema: Mapping[str, Any], task: str | None = None
) -> list[tuple[str, str, float, str]]:
    """``[(key, parameter, confidence, how)]``: the keys of ``args`` the schema does not list
    that name one of its parameters the call lacks (``task``: read only for the order in which
    it writes values paired by elimination)."""
    props = schema.get("properties")
    if not isinstance(props, Mapping) or not props:
        return []
    unknown = [k for k in args if isinstance(k, str) and k not in props]
    if not unknown:
        return []
    required = set(schema.get("required", []))
    free = [p for p in props if isinstance(p, str) and p not in args]
    # indexes over the free parameters, built once: each key is looked up, not compared
    by_squash: dict[str, list[str]] = {}
    by_singular: dict[tuple[str, ...], list[str]] = {}
    by_word: dict[str, list[str]] = {}
    for param in free:
        ws = words(param)
        by_squash.setdefault("".join(ws), []).append(param)
        by_singular.setdefault(tuple(_singular(w) for w in ws), []).append(param)
        for w in {_singular(w) for w in ws}:
            by_word.setdefault(w, []).append(param)
    pairwise = len(unknown) * len(free) <= _PAIRWISE_BUDGET
    taken: set[str] = set()
    renames: list[tuple[str, str, float, str]] = []
    done: set[str] = set()

    def options(key: str, step: str) -> list[str]:
        ws = words(key)
        if step == "same":
            found = by_squash.get("".join(ws), [])
        elif step == "plural":
            found = by_singular.get(tuple(_singular(w) for w in ws), [])
        elif step == "word":
            mine = {_singular(w) for w in ws}
            near = {p for w in mine for p in by_word.get(w, ())}
            found = [p for p in near if _shared_word(key, p, p in required)]
        elif not pairwise:
            found = []
        elif step == "initials":  # "ttl" for time_to_live
            squashed = "".join(ws)
            found = [
                p for p in free
                if len(words(p)) >= 2 and "".join(w[0] for w in words(p)) == squashed
            ]  # fmt: skip
        elif step == "abbreviation":  # "lng" for longitude, "q" for query
            found = [p for p in free if _abbreviates("".join(ws), _squash(p))]
            found = [p for p in found if _fits(args[key], props[p])]
        elif step == "word_abbreviation":  # "extra_wh" for extra_withholding
            found = [p for p in free if _abbreviates_words(ws, words(p))]
            found = [p for p in found if _fits(args[key], props[p])]
        else:  # "described": every word of the key in the parameter's own description
            found = [p for p in free if _described_by(ws, props[p])]
            found = [p for p in found if _fits(args[key], props[p])]
        return sorted({p for p in found if p not in taken})

    for how, confidence, step in (
        ("in another case or style", 0.97, "same"),
        ("in the singular or plural", 0.93, "plural"),
        ("sharing a word with it", 0.85, "word"),
        ("its initials", 0.85, "initials"),
        ("an abbreviation of it", 0.85, "abbreviation"),
        ("its words, one abbreviated", 0.85, "word_abbreviation"),
        ("in the words its description uses", 0.85, "described"),
    ):
        found_by_key = {key: options(key, step) for key in unknown if key not in done}
        claims: dict[str, int] = {}
        for found in found_by_key.values():
            for param in found:
                claims[param] = claims.get(param, 0) + 1
        for key, found in found_by_key.items():
            # a parameter two keys name alike ("first_name" and "last_name" for "name") is
            # neither one's: which holds what was meant, or whether both do, is open
            if len(found) == 1 and claims[found[0]] == 1 and found[0] not in taken:
                renames.append((key, found[0], confidence, how))
                taken.add(found[0])
                done.add(key)
    renames.extend(_by_elimination(args, props, required, unknown, free, done, taken, task))
    return renames


def _by_elimination(
    args: Mapping[str, Any],
    props: Mapping[str, Any],
    required: set[str],
    unknown: list[str],
    free: list[str],
    done: set[str],
    taken: set[str],
    task: str | None,
) -> list[tuple[str, str, float, str]]:
    left = [k for k in unknown if k not in done]
    wanted = [p for p in free if p in required and p not in taken]
    if not left or len(left) > 8:
        return []
    if len(left) == 1:
        value = args[left[0]]
        if (
            len(wanted) == 1
            and _fits(value, props[wanted[0]])
            and not _task_gives_other(wanted[0], props[wanted[0]], value, task)
        ):
            return [(left[0], wanted[0], 0.85, "by elimination (the one required parameter "
                     "missing, and the value fits it)")]  # fmt: skip
        if wanted:
            return []
        # no required parameter lacking: an optional one only where its schema tells values
        # apart and it is the one the value fits
        fitting = [p for p in free if p not in taken and _fits(value, props[p])]
        if _named_beside(left[0], value, task):
            return []  # "page 2": the task names the key's own thing, which the tool lacks
        if len(fitting) == 1 and _telling(props[fitting[0]]):
            return [(left[0], fitting[0], 0.85, "by elimination (the one parameter the call "
                     "lacks that the value fits, and what it takes is stated)")]  # fmt: skip
        return []
    if len(left) != len(wanted):
        return []
    # as many leftover keys as required parameters lacking: paired in the order both are
    # written, each value fitting its parameter and no other pairing of them
    if not all(_fits(args[k], props[p]) for k, p in zip(left, wanted, strict=True)):
        return []
    if all(_fits(args[k], props[p]) for k in left for p in wanted) and not _task_order(
        [args[k] for k in left], task
    ):
        return []
    how = "by elimination (as many required parameters missing, in the order both are written)"
    return [(k, p, 0.85, how) for k, p in zip(left, wanted, strict=True)]


def _task_gives_other(param: str, schema: Any, value: Any, task: str | None) -> bool:
    """Whether the task ties another value than the leftover key's to a free-text parameter:
    any text fits one, so only the task can tie the key's value to it; it does not where it
    never writes that value, or quotes another after the parameter's own name ('the title
    "Q3 plan"')."""
    if not task or _telling(schema):
        return False
    from .audit import task_states
    from .infer import _quoted_after

    if not task_states(value, task[:8000]):
        return True  # any text fits: the task writes other values, not this one

    quoted = _quoted_after({w for w in words(param) if len(w) >= 3}, task[:4000])
    return quoted is not None and str(quoted.value).strip() != str(value).strip()


def _named_beside(key: str, value: Any, task: str | None) -> bool:
    """Whether the task writes a word of ``key`` within three words of ``value`` ("page 2"
    for ``page``): the key then means what it says, not a parameter it might stand for."""
    if not task or isinstance(value, (dict, list)) or value is None:
        return False
    mine = {_singular(w) for w in words(key) if len(w) >= 3}
    spoken = [_singular(w) for w in words(task[:4000])]
    written = [_singular(w) for w in words(str(value)[:100])]
    if not mine or not written:
        return False
    for i in range(len(spoken) - len(written) + 1):
        if spoken[i : i + len(written)] == written:
            near = spoken[max(0, i - 3) : i] + spoken[i + len(written) : i + len(written) + 3]
            if mine & set(near):
                return True
    return False


def _task_order(values: list[Any], task: str | None) -> bool:
    """Whether the task writes the values in this order: the words of each value that the
    task writes all stand before those of the next (every value having some); values that
    could go either way are paired only where the task settles it."""
    if not task or not all(isinstance(v, str) and v.strip() for v in values):
        return False
    spoken = words(task[:4000])
    spans: list[tuple[int, int]] = []
    for value in values:
        mine = {w for w in words(str(value)[:200]) if len(w) >= 3}
        at = [i for i, w in enumerate(spoken) if w in mine]
        if not at:
            return False
        spans.append((min(at), max(at)))
    return all(a[1] < b[0] for a, b in itertools.pairwise(spans))


def named_for(key: str, target: str, said: str) -> bool:
    """Whether anything besides a model ties a key the tool does not have to the parameter
    ``target``: a word of the two names the same (or one abbreviating the other), the names
    a letter or two apart (``lable`` / ``label``), or a word of the target's name (three
    letters or more) standing in ``said`` (the task and the error), as itself or written out
    (``ref`` for "reference")."""
    a, b = [_singular(w) for w in words(key)], [_singular(w) for w in words(target)]
    if set(a) & set(b) or any(_abbreviates(x, y) or _abbreviates(y, x) for x in a for y in b):
        return True
    if difflib.SequenceMatcher(None, _squash(key), _squash(target)).ratio() >= 0.8:
        return True
    told = {_singular(w) for w in words(said[:8000])}
    return any(len(w) >= 3 and (w in told or any(_abbreviates(w, t) for t in told)) for w in b)


def _abbreviates(short: str, long: str) -> bool:
    """``short`` abbreviates ``long``: a prefix of it or its first letter and consonants in
    order within it, at most 4 letters and well under its length (``lat`` and ``lng`` /
    ``latitude`` and ``longitude``; not ``count`` / ``country``, nor ``to`` / ``timeout``)."""
    if not short or not long or short[0] != long[0] or len(short) > 4:
        return False
    if len(short) * 5 > len(long) * 3:
        return False
    if not long.startswith(short) and any(c in "aeiou" for c in short[1:]):
        return False  # a prefix ("lat"), or its consonants ("lng", "tz"); not "to" / "timeout"
    at = 0
    for char in short:
        at = long.find(char, at)
        if at < 0:
            return False
        at += 1
    return True


def _abbreviates_words(short: list[str], long: list[str]) -> bool:
    """Word for word, the same words but abbreviated ones (``extra_wh`` and
    ``extra_withholding``, ``max_conn`` and ``max_connections``): one word at least the same,
    one at least abbreviated."""
    if len(short) != len(long) or len(short) < 2:
        return False
    same = [_singular(a) == _singular(b) for a, b in zip(short, long, strict=True)]
    cut = [not s and len(a) >= 2 and _abbreviates(a, b)
           for s, a, b in zip(same, short, long, strict=True)]  # fmt: skip
    return any(same) and any(cut) and all(s or c for s, c in zip(same, cut, strict=True))


def _described_by(key_words: list[str], schema: Any) -> bool:
    """Every word of the key (three letters or more) stands in the parameter's description,
    as itself, in the singular or plural, or abbreviated (``num`` for "number")."""
    if not isinstance(schema, Mapping) or not key_words or any(len(w) < 3 for w in key_words):
        return False  # "to", "n": words too short to tell a parameter by
    text = schema.get("description")
    if not isinstance(text, str) or not text:
        return False
    said = {_singular(w) for w in words(text[:400])}
    return all(_singular(w) in said or any(_abbreviates(w, s) for s in said) for w in key_words)


def _telling(schema: Any) -> bool:
    """A schema that says more than "some text": a type other than a string, or a string
    with its values, pattern, format or bounds."""
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    if kind is not None and kind != "string":
        return True
    return any(k in schema for k in _TELLING)


def _fits(value: Any, schema: Any) -> bool:
    from .spec import checker_for

    return isinstance(schema, Mapping) and bool(schema) and checker_for(schema).is_valid(value)


def _same_name(key: str, param: str, required: bool) -> bool:
    return _squash(key) == _squash(param)


def _plural(key: str, param: str, required: bool) -> bool:
    a, b = words(key), words(param)
    return len(a) == len(b) and [_singular(w) for w in a] == [_singular(w) for w in b]


def _shared_word(key: str, param: str, required: bool) -> bool:
    # only towards a required parameter the call lacks, and only when it is the one such
    # parameter sharing a word (rename_keys takes a match only when it is unique)
    a = {_singular(w) for w in words(key)}
    b = {_singular(w) for w in words(param)}
    if a <= b or b <= a:  # "travel_mode" for "mode", "type" for "entityType"
        return bool(a & b)
    return required and bool(a & b)
