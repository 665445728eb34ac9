"""Nim's rules as pure functions over one row of unsigned integers (its fields at the offsets below)."""

from __future__ import annotations

import numpy as np

from tabletop_rl.core.kernels import splitmix64

__all__ = ["HEAPS", "MAX_HEAP", "NUM_ACTIONS", "action", "heaps", "is_over", "legal_mask", "new_state",
           "random_below", "step", "winner"]

HEAPS, MAX_HEAP = 3, 7
#: Action ``heap * MAX_HEAP + take - 1`` takes ``take`` counters from ``heap``.
NUM_ACTIONS = HEAPS * MAX_HEAP
# the row: the heaps, the seat to move, the random stream
HEAP, CURRENT, RNG = 0, HEAPS, HEAPS + 1
SIZE = HEAPS + 2


def random_below(state: np.ndarray, n: int) -> int:
    """A uniform integer in ``[0, n)`` from the row's own stream, which advances."""
    state[RNG], z = splitmix64(state[RNG])
    return int(z % np.uint64(n))


def new_state(seed: int) -> np.ndarray:
    state = np.zeros(SIZE, np.uint64)
    state[RNG] = seed
    for h in range(HEAPS):
        state[HEAP + h] = 1 + random_below(state, MAX_HEAP)
    return state


def heaps(state: np.ndarray) -> list[int]:
    return [int(n) for n in state[HEAP:HEAP + HEAPS]]


def action(heap: int, take: int) -> int:
    return heap * MAX_HEAP + take - 1


def legal_mask(state: np.ndarray) -> np.ndarray:
    takes = np.arange(1, MAX_HEAP + 1)
    return (takes[None, :] <= np.array(heaps(state))[:, None]).ravel()


def is_over(state: np.ndarray) -> bool:
    return not any(heaps(state))


def step(state: np.ndarray, a: int) -> None:
    """Play the legal action ``a``; the other seat moves next."""
    heap, take = divmod(a, MAX_HEAP)
    state[HEAP + heap] -= take + 1
    state[CURRENT] ^= 1


def winner(state: np.ndarray) -> int:
    """The seat that took the last counter (the game is over)."""
    return 1 - int(state[CURRENT])
