"""Chaos profiles (TOML) and run budgets."""

from .budgets import BUDGET_KEYS, Budgets, parse_budgets
from .profile import (
    Profile,
    ProfileRegistry,
    builtin_dir,
    deep_merge,
    inline_profile,
)
from .sections import parse_section, register_section, sections

__all__ = [
    "BUDGET_KEYS",
    "parse_section",
    "register_section",
    "sections",
    "Budgets",
    "Profile",
    "ProfileRegistry",
    "builtin_dir",
    "deep_merge",
    "inline_profile",
    "parse_budgets",
]
