"""The repair stack: schema-driven parameter repair that declines when a fix would change
what was asked (seed 003's self-correction loop, seed 002's validation and repair of model
output).

Free of pytest: production agents use it directly; the harness exercises it.
"""

from .audit import audit
from .diagnose import ERROR_PATTERNS, Diagnosis, ErrorPattern, diagnose, read_error
from .effective import Rules, effective_problems, rules_for
from .fixes import DROP, Context, Decline, Fix
from .infer import InferenceRequest, Inferer, LLMInferer, RuleInferer, loads_lenient
from .proposers import ModelProposer, Proposer, scripted_model
from .reading import ERROR_KINDS, ERROR_POLICY, ErrorReading, FieldEvidence
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
    "ERROR_KINDS",
    "ERROR_PATTERNS",
    "ERROR_POLICY",
    "PROBLEM_KINDS",
    "STRATEGIES",
    "Context",
    "Decline",
    "Diagnosis",
    "ErrorPattern",
    "ErrorReading",
    "FieldEvidence",
    "Fix",
    "InferenceRequest",
    "Inferer",
    "LLMInferer",
    "ModelProposer",
    "ParamRepairer",
    "Problem",
    "Proposer",
    "RepairError",
    "RepairPolicy",
    "RepairResult",
    "RepairStep",
    "RuleInferer",
    "Rules",
    "ToolSpec",
    "audit",
    "diagnose",
    "effective_problems",
    "loads_lenient",
    "read_error",
    "rules_for",
    "scripted_model",
]
