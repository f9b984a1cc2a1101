"""Phoenix: snapshots of an agent's state, and rebirth from the newest healthy one.

Free of pytest: production agents use it directly; the harness exercises it.
"""

from .envelope import FORMAT_VERSION
from .policy import PhoenixPolicy
from .runner import (
    PhoenixAgent,
    PhoenixOutcome,
    PhoenixRunner,
    RebirthsExhausted,
    StepReport,
    Trouble,
)
from .state import SnapshotError, from_state, to_state
from .store import (
    LoadedSnapshot,
    MemorySnapshotStore,
    SkippedSnapshot,
    SnapshotInfo,
    SnapshotStore,
)

__all__ = [
    "FORMAT_VERSION",
    "LoadedSnapshot",
    "MemorySnapshotStore",
    "PhoenixAgent",
    "PhoenixOutcome",
    "PhoenixPolicy",
    "PhoenixRunner",
    "RebirthsExhausted",
    "SkippedSnapshot",
    "SnapshotError",
    "SnapshotInfo",
    "SnapshotStore",
    "StepReport",
    "Trouble",
    "from_state",
    "to_state",
]
