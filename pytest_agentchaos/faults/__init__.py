"""Fault kinds, selectors and the seeded ``FaultPlan``."""

from ..rng import derive_seed, stable_int, stable_random, stable_uniform
from .effects import UNCHANGED, Effect, Failure
from .kinds import (
    CALL_CHANNELS,
    CHANNELS,
    KINDS,
    RUNNER_CHANNELS,
    CallInfo,
    FaultKind,
    garble,
    register,
)
from .mutations import MUTATIONS, apply_mutation, parameters_schema
from .output_kinds import INSTRUCTIONS, LOST_MODES
from .plan import Decision, FaultPlan, FaultSpec, parse_fault, parse_faults
from .rebirth import SNAPSHOT_MODES, CorruptSnapshot, Crash, corrupt
from .selectors import SELECTOR_KEYS, Selector, parse_selector
from .wire_kinds import BAD_ARGUMENTS, CUT_MODES

__all__ = [
    "BAD_ARGUMENTS",
    "CALL_CHANNELS",
    "CUT_MODES",
    "CHANNELS",
    "INSTRUCTIONS",
    "KINDS",
    "LOST_MODES",
    "MUTATIONS",
    "RUNNER_CHANNELS",
    "SELECTOR_KEYS",
    "SNAPSHOT_MODES",
    "UNCHANGED",
    "CallInfo",
    "CorruptSnapshot",
    "Crash",
    "Decision",
    "Effect",
    "Failure",
    "FaultKind",
    "FaultPlan",
    "FaultSpec",
    "Selector",
    "apply_mutation",
    "corrupt",
    "derive_seed",
    "garble",
    "parameters_schema",
    "parse_fault",
    "parse_faults",
    "parse_selector",
    "register",
    "stable_int",
    "stable_random",
    "stable_uniform",
]
