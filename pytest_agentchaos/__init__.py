"""pytest-agentchaos: chaos testing for tool-using agents.

Public names are imported lazily, so loading the pytest plugin stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import exports

__version__ = "0.1.0"

_EXPORTS = {
    "BudgetExhausted": "errors",
    "ChaosConfigError": "errors",
    "HaltSwallowed": "errors",
    "HardHalt": "errors",
    "NetworkBlocked": "errors",
    "ProviderScriptError": "errors",
    "ReplayDiverged": "errors",
    "RunClosed": "errors",
    "WallTimeout": "errors",
    "Trace": "trace",
    "Clock": "clock",
    "RealClock": "clock",
    "VirtualClock": "clock",
    "FaultPlan": "faults",
    "FaultSpec": "faults",
    "Selector": "faults",
    "parse_fault": "faults",
    "parse_faults": "faults",
    "Budgets": "profiles",
    "Profile": "profiles",
    "ProfileRegistry": "profiles",
    "Chaos": "inject",
    "ChaosSession": "inject",
    "InjectedFault": "inject",
    "InjectedTimeout": "inject",
    "InjectedHTTPError": "inject",
    "InjectedProtocolError": "inject",
    "InjectedConnectionError": "inject",
    "InjectedCrash": "inject",
    "LoopObserver": "escape",
    "LoopPolicy": "escape",
    "Supervisor": "escape",
    "detect_loops": "escape",
    "Verdict": "verdicts",
    "must_halt": "verdicts",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


__getattr__, __dir__ = exports(__name__, _EXPORTS, globals())


if TYPE_CHECKING:
    from .clock import Clock, RealClock, VirtualClock
    from .errors import (
        BudgetExhausted,
        ChaosConfigError,
        HaltSwallowed,
        HardHalt,
        NetworkBlocked,
        ProviderScriptError,
        ReplayDiverged,
        RunClosed,
        WallTimeout,
    )
    from .escape import LoopObserver, LoopPolicy, Supervisor, detect_loops
    from .faults import FaultPlan, FaultSpec, Selector, parse_fault, parse_faults
    from .inject import (
        Chaos,
        ChaosSession,
        InjectedConnectionError,
        InjectedCrash,
        InjectedFault,
        InjectedHTTPError,
        InjectedProtocolError,
        InjectedTimeout,
    )
    from .profiles import Budgets, Profile, ProfileRegistry
    from .trace import Trace
    from .verdicts import Verdict, must_halt
