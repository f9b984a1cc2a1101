"""Real and virtual clocks, and the switch that makes global time virtual."""

from .clock import Clock, RealClock, VirtualClock
from .patch import DEFAULT_EPOCH, ClockInstallation, install

__all__ = ["DEFAULT_EPOCH", "Clock", "ClockInstallation", "RealClock", "VirtualClock", "install"]
