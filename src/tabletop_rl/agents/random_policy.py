"""``random``: a uniformly random legal action, from the policy's own seeded generator.

>>> from tabletop_rl.agents import make_policy
>>> p = make_policy("random", game="splendor", seed=3)
>>> p.act(None, [0, 1, 0, 1]) in (1, 3)
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tabletop_rl.core.policy import BasePolicy

__all__ = ["RandomPolicy"]


class RandomPolicy(BasePolicy):
    """Uniform over the legal actions of the mask; ``reset(seed)`` makes a game's choices repeatable."""

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[self.rng.integers(legal.size)])
