"""The repair stack: schema-driven parameter repair that declines when a fix would change
what was asked (seed 003's self-correction loop, seed 002's validation and repair of model
output).

Free of pytest: production agents use it directly; the harness exercises it.
"""

from .diagnose import ERROR_PATTERNS, Diagnosis, ErrorPattern, diagnose
from .fixes import DROP, Context, Decline, Fix
from .infer import InferenceRequest, Inferer, LLMInferer, RuleInferer, loads_lenient
from .repairer import (
    STRATEGIES,
    ParamRepairer,
    RepairError,
    RepairPolicy,
    RepairResult,
    RepairStep,
)
from .spec import PROBLEM_KINDS, Problem, ToolSpec

__all__ = [
    "DROP",
    "ERROR_PATTERNS",
    "PROBLEM_KINDS",
    "STRATEGIES",
    "Context",
    "Decline",
    "Diagnosis",
    "ErrorPattern",
    "Fix",
    "InferenceRequest",
    "Inferer",
    "LLMInferer",
    "ParamRepairer",
    "Problem",
    "RepairError",
    "RepairPolicy",
    "RepairResult",
    "RepairStep",
    "RuleInferer",
    "ToolSpec",
    "diagnose",
    "loads_lenient",
]
