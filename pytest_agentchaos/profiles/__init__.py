"""Chaos profiles (TOML) and run budgets."""

from .budgets import BUDGET_KEYS, Budgets, parse_budgets
from .profile import (
    SECTIONS,
    Profile,
    ProfileRegistry,
    builtin_dir,
    deep_merge,
    inline_profile,
)

__all__ = [
    "BUDGET_KEYS",
    "SECTIONS",
    "Budgets",
    "Profile",
    "ProfileRegistry",
    "builtin_dir",
    "deep_merge",
    "inline_profile",
    "parse_budgets",
]
