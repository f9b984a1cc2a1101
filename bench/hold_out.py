"""``--hold-out NAME[,NAME...]``: leave corpus files out of a quality bench's run.

A round that develops on the dev half keeps one or more files of it unread (its held-out
files, measured by their summary line only). ``-v`` over ``--split dev`` would list their
cases too; with ``--hold-out batch11.json`` the bench neither scores nor lists them. A name is
a file's name (``batch11.json``) or its path in the corpus (``dev/batch11.json``); a name that
matches no file of the split is an error, not silently nothing held out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

__all__ = ["drop", "parse"]


def parse(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The held-out names given by ``--hold-out A,B`` / ``--hold-out=A,B`` (repeatable), and
    ``argv`` without them. A ``--hold-out`` with no value is an error (``ValueError``)."""
    names: list[str] = []
    rest: list[str] = []
    items = list(argv)
    at = 0
    while at < len(items):
        arg = items[at]
        if arg == "--hold-out":
            if at + 1 >= len(items) or items[at + 1].startswith("-"):
                raise ValueError("--hold-out needs a file name (e.g. --hold-out batch11.json)")
            names += [n for n in items[at + 1].split(",") if n]
            at += 2
            continue
        if arg.startswith("--hold-out="):
            value = arg.split("=", 1)[1]
            if not value:
                raise ValueError("--hold-out needs a file name (e.g. --hold-out batch11.json)")
            names += [n for n in value.split(",") if n]
        else:
            rest.append(arg)
        at += 1
    return names, rest


def drop(items: Sequence[T], names: Sequence[str], file_of: Callable[[T], str]) -> list[T]:
    """``items`` without those of the named files; ``ValueError`` naming any name that
    matches no file of ``items``."""
    if not names:
        return list(items)
    files = {file_of(item) for item in items}
    unknown = [n for n in names if not any(f == n or f.rsplit("/", 1)[-1] == n for f in files)]
    if unknown:
        shown = ", ".join(sorted(f.rsplit("/", 1)[-1] for f in files))
        raise ValueError(f"--hold-out {', '.join(unknown)}: no such file in this split ({shown})")
    wanted = set(names)
    return [
        item
        for item in items
        if file_of(item) not in wanted and file_of(item).rsplit("/", 1)[-1] not in wanted
    ]
