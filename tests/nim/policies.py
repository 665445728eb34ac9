"""Nim's own policy in the registry (``random`` serves every game): ``perfect``, Bouton's winning strategy."""

from __future__ import annotations

from collections.abc import Mapping
from functools import reduce
from operator import xor
from typing import Any

import numpy as np

from tabletop_rl.agents import register_policy
from tabletop_rl.core.game import view_game_and_seat
from tabletop_rl.core.policy import BasePolicy

from . import rules as R

__all__ = ["PerfectPolicy"]


class PerfectPolicy(BasePolicy):
    """Leaves heaps whose XOR is zero, a lost position for the other seat; from such a position itself, it takes
    one counter from the largest heap and waits for a mistake."""

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        game, _ = view_game_and_seat(info, self.name)
        heaps = game.heaps
        nim_sum = reduce(xor, heaps)
        for heap, n in enumerate(heaps):
            if n ^ nim_sum < n:
                return R.action(heap, n - (n ^ nim_sum))
        return R.action(heaps.index(max(heaps)), 1)


register_policy("nim", "perfect", PerfectPolicy)
