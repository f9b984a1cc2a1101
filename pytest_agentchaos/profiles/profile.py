"""Chaos profiles: TOML files of faults and budgets, with ``extends`` and a search path.

User profiles live in the directory named by the ini key ``chaos_profiles_dir`` and shadow
built-ins of the same name. A profile is data: it is parsed, never executed.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import check_table, fail
from ..errors import ChaosConfigError
from ..saferepr import short
from .budgets import Budgets, parse_budgets
from .sections import parse_section, sections

if TYPE_CHECKING:
    from ..faults.plan import FaultSpec


_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")

#: A profile's own keys; the stack's tables (``[escape]`` ...) come from :mod:`.sections`.
OWN_KEYS = ("description", "extends", "budgets", "faults")


@dataclass(frozen=True)
class Profile:
    """A resolved profile: its own faults after its ancestors', budgets and sections merged."""

    name: str
    description: str = ""
    faults: tuple[FaultSpec, ...] = ()
    budgets: Budgets = Budgets()
    sections: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    source: str = "<inline>"
    chain: tuple[str, ...] = ()
    #: the parsed policy of each stack table the profile (or an ancestor) has
    policies: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def policy(self, name: str) -> Any:
        """The policy object of table ``[name]`` (its defaults when the profile has none),
        validated when the profile loaded."""
        if name in self.policies:
            return self.policies[name]
        return parse_section(name, {}, f"{self.source}: [{name}]")


def builtin_dir() -> Path:
    """Where the built-in profiles are: inside the wheel, or the source checkout's top level."""
    packaged = resources.files("pytest_agentchaos").joinpath("chaos_profiles")
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "chaos_profiles"


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Merge nested tables; ``override`` wins for non-table values."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


class ProfileRegistry:
    """Finds profiles by name in ``dirs`` (earlier directories shadow later ones)."""

    def __init__(self, dirs: Sequence[Path | str]) -> None:
        self.dirs = [Path(d) for d in dirs]
        self._cache: dict[tuple[str, int], Profile] = {}

    @classmethod
    def default(cls, user_dir: Path | str | None = None) -> ProfileRegistry:
        """The user's profiles in ``user_dir`` (when it is a directory), then the built-in ones."""
        dirs: list[Path] = []
        if user_dir is not None and Path(user_dir).is_dir():
            dirs.append(Path(user_dir))
        builtin = builtin_dir()
        if not any(_same(d, builtin) for d in dirs):
            dirs.append(builtin)
        return cls(dirs)

    @staticmethod
    def check_name(name: object, where: str = "chaos profile") -> str:
        """A profile name is a file stem: letters, digits, ``_``, ``-`` and ``.``; no paths."""
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise fail(
                where,
                f"{short(name)} is not a profile name (letters, digits, '_', '-', '.'; no paths)",
            )
        return name

    def _find(self, name: str, start: int = 0) -> tuple[Path, int] | None:
        for i in range(start, len(self.dirs)):
            path = self.dirs[i] / f"{name}.toml"
            try:
                if path.is_file():
                    return path, i
            except OSError:  # a name too long for the file system: no such profile
                continue
        return None

    def names(self) -> list[str]:
        """Every profile name available, sorted."""
        found = {p.stem for d in self.dirs if d.is_dir() for p in d.glob("*.toml") if p.is_file()}
        return sorted(found)

    def path(self, name: str) -> Path | None:
        """The file profile ``name`` would load from, or ``None`` when there is none."""
        hit = self._find(name)
        return hit[0] if hit else None

    def get(self, name: str) -> Profile:
        """The resolved profile ``name``; ``ChaosConfigError`` lists the names available."""
        return self._load(name, 0, ())

    def _load(self, name: str, start: int, chain: tuple[str, ...]) -> Profile:
        self.check_name(name)
        hit = self._find(name, start)
        if hit is None:
            raise fail(
                f"chaos profile {short(name)}",
                f"not found; available: {', '.join(self.names()) or 'none'} "
                f"(searched {', '.join(str(d) for d in self.dirs)})",
            )
        path, index = hit
        if (name, index) in self._cache:
            return self._cache[(name, index)]
        key = f"{name}@{index}"
        if key in chain:
            cycle = " -> ".join([*(c.split("@")[0] for c in chain), name])
            raise fail(str(path), f"'extends' cycle: {cycle}")
        if len(chain) >= MAX_EXTENDS:
            raise fail(str(path), f"'extends' chain longer than {MAX_EXTENDS} profiles")
        raw = _read_toml(path)
        parent: Profile | None = None
        extends = raw.get("extends")
        if extends is not None:
            if not isinstance(extends, str):
                raise fail(str(path), f"extends: expected a profile name, got {short(extends)}")
            self.check_name(extends, f"{path}: extends")
            # A user profile that extends its own name builds on the one it shadows.
            if extends == name and self._find(name, index + 1) is None:
                raise fail(
                    f"{path}: extends",
                    f"{short(name)} extends itself, but no other profile {short(name)} is there to "
                    f"build on (a profile may extend its own name only to shadow one in a later "
                    f"directory: {', '.join(str(d) for d in self.dirs[index + 1 :]) or 'none'})",
                )
            try:
                parent = self._load(extends, index + 1 if extends == name else 0, (*chain, key))
            except ChaosConfigError as exc:
                if str(exc).startswith(f"chaos profile {short(extends)}:"):
                    raise fail(f"{path}: extends", str(exc)) from None
                raise
        profile = _build(name, raw, path, parent)
        self._cache[(name, index)] = profile
        return profile


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _read_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib  # imported here: most pytest runs never read a profile with faults
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        with path.open("rb") as fh:
            data: dict[str, Any] = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise fail(str(path), f"invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise fail(
            str(path),
            f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
            "TOML files must be UTF-8",
        ) from None
    except RecursionError:
        raise fail(str(path), f"invalid TOML: nested deeper than {MAX_NESTING} levels") from None
    except OSError as exc:
        raise fail(str(path), f"cannot read: {exc.strerror or exc}") from None
    if _depth(data) > MAX_NESTING:
        raise fail(str(path), f"invalid TOML: nested deeper than {MAX_NESTING} levels")
    return data


#: The longest chain of profiles extending each other (real ones have two or three).
MAX_EXTENDS = 32
#: How deep a profile's tables and arrays may nest (real profiles use three or four levels).
MAX_NESTING = 32


def _depth(value: Any) -> int:
    """How deep tables and arrays nest in ``value`` (without recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_NESTING:
            break
        if isinstance(current, Mapping):
            stack.extend((v, depth + 1) for v in current.values())
        elif isinstance(current, list):
            stack.extend((v, depth + 1) for v in current)
    return deepest


def _build(name: str, raw: Mapping[str, Any], path: Path, parent: Profile | None) -> Profile:
    where = str(path)
    check_table(raw, (*OWN_KEYS, *sections()), where, "a profile")
    description = raw.get("description", parent.description if parent else "")
    if not isinstance(description, str):
        raise fail(where, f"description: expected a string, got {short(description)}")
    faults: tuple[FaultSpec, ...] = ()
    if raw.get("faults") is not None:
        from ..faults.plan import parse_faults  # only profiles with faults need the fault kinds

        faults = parse_faults(raw.get("faults"), f"{where}: faults")
    budgets = parse_budgets(raw.get("budgets"), f"{where}: budgets")
    tables: dict[str, Any] = dict(parent.sections) if parent else {}
    policies: dict[str, Any] = dict(parent.policies) if parent else {}
    for section in sections():
        if section in raw:
            if not isinstance(raw[section], Mapping):
                raise fail(where, f"[{section}] must be a table")
            tables[section] = deep_merge(tables.get(section, {}), raw[section])
            policies[section] = parse_section(section, tables[section], f"{where}: [{section}]")
    if parent is not None:
        faults = parent.faults + faults
        budgets = parent.budgets.override(budgets)
    return Profile(
        name=name,
        description=description,
        faults=faults,
        budgets=budgets,
        sections=tables,
        policies=policies,
        source=where,
        chain=((*parent.chain,) if parent else ()) + (name,),
    )


def inline_profile(
    name: str, faults: Sequence[FaultSpec] = (), budgets: Budgets | None = None
) -> Profile:
    """A profile built in code (no file)."""
    return Profile(name=name, faults=tuple(faults), budgets=budgets or Budgets())
