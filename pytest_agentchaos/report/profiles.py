"""The listing of available chaos profiles (``pytest --chaos-list-profiles``)."""

from __future__ import annotations

from ..errors import ChaosConfigError
from ..profiles.profile import ProfileRegistry, builtin_dir

__all__ = ["profile_listing"]


def profile_listing(registry: ProfileRegistry) -> str:
    """Every profile the registry finds: origin, description, fault kinds and budgets; a
    profile that does not load is listed as BROKEN with its error."""
    builtin = builtin_dir().resolve()
    lines = [f"chaos profiles (searched: {', '.join(str(d) for d in registry.dirs)}):"]
    for name in registry.names():
        path = registry.path(name)
        origin = "built-in" if path is not None and path.parent.resolve() == builtin else "user"
        try:
            profile = registry.get(name)
        except ChaosConfigError as exc:
            lines.append(f"  {name:<14} [{origin}] BROKEN: {exc}")
            continue
        kinds = ", ".join(dict.fromkeys(f.kind.name for f in profile.faults)) or "no faults"
        budgets = ", ".join(f"{k}={v:g}" for k, v in profile.budgets.as_dict().items()) or "none"
        lines.append(f"  {name:<14} [{origin}] {profile.description}")
        lines.append(f"  {'':<14} faults: {kinds}; budgets: {budgets}")
    return "\n".join(lines)
