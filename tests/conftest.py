"""Suite-wide guard: no test may leave global time frozen or sleep patched (DESIGN: no leaks)."""

from __future__ import annotations

import asyncio
import datetime
import time
from collections.abc import Iterator

import pytest

# In a tuple: virtual sleep and freezegun rebind module-level names bound to these.
_REAL = (time.time, time.monotonic, time.sleep, asyncio.sleep, datetime.datetime, datetime.date)


@pytest.fixture(autouse=True)
def _no_leaked_clock_patches() -> Iterator[None]:
    yield
    now = (time.time, time.monotonic, time.sleep, asyncio.sleep, datetime.datetime, datetime.date)
    leaked = [
        real.__name__ for real, current in zip(_REAL, now, strict=True) if current is not real
    ]
    assert not leaked, f"global time left patched after the test: {leaked}"
