"""Stable, salt-free randomness: every random choice derives from a seed and a key.

Python's ``hash`` is salted per process, so it cannot make choices that replay under
pytest-xdist or in another session. blake2b over a canonical encoding of the parts can.
"""

from __future__ import annotations

import hashlib
import random

_SCALE = float(1 << 64)


def stable_int(*parts: object, bits: int = 64) -> int:
    """An integer determined only by ``parts`` (their ``str`` forms, in order)."""
    text = "\x1f".join(str(p) for p in parts).encode("utf-8")
    digest = hashlib.blake2b(text, digest_size=bits // 8).digest()
    return int.from_bytes(digest, "big")


def stable_uniform(*parts: object) -> float:
    """A float in [0, 1) determined only by ``parts``."""
    return stable_int(*parts) / _SCALE


def stable_random(*parts: object) -> random.Random:
    """A ``random.Random`` seeded from ``parts``: for choices that need several draws."""
    return random.Random(stable_int(*parts))


def derive_seed(session_seed: int, test_id: str) -> int:
    """The per-test seed: the same for the same session seed and node id, in any order."""
    return stable_int("agentchaos-test", session_seed, test_id, bits=32)
