"""Fault kinds, selectors and the seeded ``FaultPlan``."""

from ..rng import derive_seed, stable_int, stable_random, stable_uniform
from .effects import Effect, Failure
from .kinds import CHANNELS, KINDS, CallInfo, FaultKind, garble, register
from .mutations import MUTATIONS, apply_mutation, parameters_schema
from .plan import Decision, FaultPlan, FaultSpec, parse_fault, parse_faults
from .selectors import SELECTOR_KEYS, Selector, parse_selector

__all__ = [
    "CHANNELS",
    "KINDS",
    "MUTATIONS",
    "SELECTOR_KEYS",
    "CallInfo",
    "Decision",
    "Effect",
    "Failure",
    "FaultKind",
    "FaultPlan",
    "FaultSpec",
    "Selector",
    "apply_mutation",
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
