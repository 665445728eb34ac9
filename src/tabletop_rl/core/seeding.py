"""Seeds, one rule for every game, env and the arena: a seed is a non-negative integer (Python's or numpy's,
never a bool), and only its low 63 bits count, so every seed reaches a numba core as a non-negative int64 and
``s`` and ``s + 2**63`` deal the same game everywhere.

>>> check_seed(7), check_seed(2**63 + 7), check_seed(np.uint64(7))
(7, 7, 7)
>>> check_seed(-1)
Traceback (most recent call last):
ValueError: seed must be a non-negative integer, got -1
>>> 0 <= fresh_seed() <= SEED_MASK
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tabletop_rl.core.text import quote

__all__ = ["SEED_MASK", "check_seed", "fresh_seed"]

#: The bits of a seed that count.
SEED_MASK = (1 << 63) - 1


def check_seed(seed: Any) -> int:
    """``seed`` folded to its low 63 bits; ``ValueError`` for anything but a non-negative integer."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {quote(seed)}")
    return int(seed) & SEED_MASK


def fresh_seed() -> int:
    """A seed from the operating system's entropy, for a game or episode started without one."""
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0]) & SEED_MASK
