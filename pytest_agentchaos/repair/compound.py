"""Values in the wrong shape of object: one value holding two parameters, or parameters that
belong inside another.

- :func:`split_compound`: ``repo="acme/widgets"`` (or the repository's URL) for a tool that
  takes ``owner`` and ``repo`` apart.
- :func:`regroup`: ``oldText`` and ``newText`` sent at the top where the tool wants them in an
  object of its required ``edits`` list.

For :func:`split_compound`: tools of code hosts and registries (GitHub, GitLab, Hugging
Face, Docker Hub) name a project by an owner and a name in two parameters; models often send
the full name, or the URL, in the name's parameter. Where the schema has such a pair, the
name's value is split when the owner is missing or the same as the value's first part; a
different owner is declined (which one is meant?). Anything but ``owner/name`` (or a URL
ending in it) is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .fixes import Decline, Fix, shown
from .policy import RepairPolicy
from .results import RepairStep
from .spec import nullable_branch
from .words import name_tokens

__all__ = [
    "entries_as_items",
    "flatten_wrapper",
    "name_in_task",
    "regroup",
    "reshape",
    "split_compound",
]

_STRATEGY = "split_compound"
_OWNERS = ("owner", "org", "organization", "organisation", "namespace", "user", "username")
_NAMES = ("repo", "repository", "repo_name", "repository_name", "project", "name")
_FULL = re.compile(
    r"(?:https?://[\w.-]+(?::\d+)?/|git@[\w.-]+:)?([\w.-]+)/([\w.-]+?)(?:\.git)?/?", re.ASCII
)


def _pair(props: Mapping[str, Any]) -> tuple[str, str] | None:
    owners = [k for k in props if str(k).lower() in _OWNERS]
    names = [k for k in props if str(k).lower() in _NAMES]
    if len(owners) == 1 and len(names) == 1:
        return owners[0], names[0]
    return None


def split_compound(
    args: Mapping[str, Any], schema: Mapping[str, Any]
) -> dict[str, Fix] | Decline | None:
    """``{owner_key: Fix, name_key: Fix}`` splitting a full name sent in the name's parameter,
    a decline when the owner given is another, None when there is nothing to split."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return None
    pair = _pair(props)
    if pair is None:
        return None
    owner_key, name_key = pair
    value = args.get(name_key)
    if not isinstance(value, str) or len(value) > 300:
        return None
    match = _FULL.fullmatch(value.strip())
    if match is None:
        return None
    owner, name = match[1], match[2]
    given = args.get(owner_key)
    if given is not None and (not isinstance(given, str) or given.lower() != owner.lower()):
        return Decline(
            _STRATEGY,
            f"{name_key}: {shown(value)} names the owner {owner!r}, but {owner_key} is "
            f"{shown(given)}: which one is meant is not for us to tell",
        )
    why = f"{shown(value)} is {owner_key} {owner!r} and {name_key} {name!r}"
    return {
        owner_key: Fix(_STRATEGY, given or owner, 0.9, why),
        name_key: Fix(_STRATEGY, name, 0.9, why),
    }


def name_in_task(
    missing: str, args: Mapping[str, Any], schema: Mapping[str, Any], task: str
) -> Any | None:
    """The name half of an owner/name pair the task writes in full ("in octo-org/octo-repo")
    after the owner the call gives, when ``missing`` is the name's parameter; else None."""
    props = schema.get("properties")
    pair = _pair(props) if isinstance(props, Mapping) else None
    if pair is None or pair[1] != missing:
        return None
    owner = args.get(pair[0])
    if not isinstance(owner, str) or not owner:
        return None
    found = {
        m[1].rstrip(".")
        for m in re.finditer(rf"(?<![\w.-]){re.escape(owner)}/([\w.-]+)", task[:4000])
    }
    found.discard("")
    return found.pop() if len(found) == 1 else None


def regroup(args: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Fix]:
    """``{key: Fix}`` for each object (or list of objects) the call lacks whose fields the
    call sends beside it instead, all its required ones among them: a required one, or an
    optional one that every such stray field belongs to (no other object takes any of them,
    two fields at least). The fields moved are dropped by the caller (the fix's value holds
    them)."""
    props = schema.get("properties")
    required = schema.get("required")
    if not isinstance(props, Mapping):
        return {}
    required = required if isinstance(required, list) else []
    stray = [k for k in args if k not in props]
    if not stray:
        return {}
    found: dict[str, Fix] = {}
    shapes: dict[str, tuple[bool, Mapping[str, Any]]] = {}
    for key, inner in props.items():
        if key in args or not isinstance(inner, Mapping):
            continue
        inner = nullable_branch(inner) or inner
        many = inner.get("type") == "array"
        shape = inner.get("items") if many else inner
        if isinstance(shape, Mapping) and isinstance(shape.get("properties"), Mapping):
            shapes[str(key)] = (many, shape)
    for key, (many, shape) in shapes.items():
        fields = [k for k in stray if k in shape["properties"]]
        needed = [k for k in shape.get("required", []) if isinstance(k, str)]
        if not fields or not all(k in fields for k in needed):
            continue
        if key not in required:
            others = [o for o, (_m, s) in shapes.items() if o != key and any(
                k in s["properties"] for k in stray)]  # fmt: skip
            if len(fields) < 2 or len(fields) != len(stray) or others:
                continue
        held = {k: args[k] for k in fields}
        why = f"{', '.join(map(repr, fields))} belong in {key!r}"
        found[key] = Fix("wrap_in_object", [held] if many else held, 0.9, why)
    return found


def reshape(
    args: dict[str, Any], schema: Mapping[str, Any], policy: RepairPolicy, steps: list[RepairStep]
) -> Decline | None:
    """Both passes over ``args`` in place, each step recorded; a decline of the split (the
    call names two owners) ends the repair."""
    split = split_compound(args, schema)
    if isinstance(split, Decline):
        return split
    sure = policy.threshold <= 0.9  # the confidence of both passes' fixes
    if split and sure and policy.allows(_STRATEGY):
        for key, fix in split.items():
            if args.get(key) != fix.value:
                step = (fix.value, fix.confidence, fix.reason, True)
                steps.append(RepairStep(key, "pattern", fix.strategy, args.get(key), *step))
                args[key] = fix.value
    if sure and policy.allows("wrap_in_object"):
        _regroup_all(args, schema, (), steps)
    return None


def _regroup_all(
    value: Any, schema: Mapping[str, Any], path: tuple[str, ...], steps: list[RepairStep]
) -> None:
    """:func:`regroup` at every depth of objects the schema describes, in place."""
    if not isinstance(value, dict) or not isinstance(schema, Mapping):
        return
    for key, fix in regroup(value, schema).items():
        moved = fix.value[0] if isinstance(fix.value, list) else fix.value
        for name in moved:
            value.pop(name, None)
        value[key] = fix.value
        step = (fix.value, fix.confidence, fix.reason, True)
        where = ".".join((*path, key))
        steps.append(RepairStep(where, "missing", fix.strategy, dict(moved), *step))
    props = schema.get("properties")
    if not isinstance(props, Mapping) or len(path) >= 8:
        return
    for key, inner in props.items():
        if isinstance(value.get(key), dict) and isinstance(inner, Mapping):
            _regroup_all(value[key], nullable_branch(inner) or inner, (*path, str(key)), steps)


def flatten_wrapper(
    args: dict[str, Any], schema: Mapping[str, Any], steps: list[RepairStep]
) -> None:
    """The parameters sent inside one wrapper object (``{"params": {"url": ...}}``): the one
    undeclared key whose object holds only declared parameters, among them every required one
    the call lacks, is replaced by its keys."""
    props = schema.get("properties")
    required = schema.get("required")
    if not isinstance(props, Mapping) or not isinstance(required, list):
        return
    unknown = [k for k in args if k not in props]
    if len(unknown) != 1 or not isinstance(args[unknown[0]], dict) or not args[unknown[0]]:
        return
    inner = args[unknown[0]]
    missing = {r for r in required if r not in args}
    if not missing or not missing <= set(inner) or not set(inner) <= set(props):
        return
    if any(k in args for k in inner):
        return
    args.pop(unknown[0])
    args.update(inner)
    why = f"the parameters were sent inside {unknown[0]!r}"
    steps.append(RepairStep(unknown[0], "unknown", "unwrap_object", dict(inner), dict(inner),
                            0.9, why, True))  # fmt: skip


def entries_as_items(value: Mapping[str, Any], items: Any) -> Fix | Decline | None:
    """An object sent where a list of objects is due, none of whose keys is a field of the
    list's items (``{"heart_rate": "80"}`` for items ``{name, value}``): as one item per
    entry where the items are name/value pairs (a field named for a name or key, the other
    for a value, each entry fitting), else declined (wrapped whole it would validate where
    the items let other keys pass, and say nothing the tool reads). None when a key of it is
    an item's field (one item, sent without its list)."""
    from .spec import checker_for

    props = items.get("properties") if isinstance(items, Mapping) else None
    if not isinstance(props, Mapping) or not props or not value:
        return None
    if any(k in props for k in value):
        return None
    keys = [k for k in props if {"name", "key"} & set(name_tokens(str(k)))]
    values = [k for k in props if "value" in name_tokens(str(k))]
    if len(props) == 2 and len(keys) == 1 and len(values) == 1 and keys != values:
        made = [{keys[0]: k, values[0]: v} for k, v in value.items()]
        try:
            fits = all(checker_for(items).is_valid(m) for m in made)
        except Exception:
            fits = False
        if fits:
            why = f"each entry of the object as a {keys[0]}/{values[0]} pair"
            return Fix("wrap_in_list", made, 0.9, why)
    shown_keys = ", ".join(repr(k) for k in list(value)[:4])
    return Decline(
        "wrap_in_list",
        f"an object of {shown_keys} where a list of items with {', '.join(map(repr, props))} "
        "is due: its keys are none of the items' fields",
    )
