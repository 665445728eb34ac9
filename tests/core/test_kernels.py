"""The bit helpers of ``core.kernels`` against plain Python, on random 64-bit sets and their corners."""

from __future__ import annotations

import numpy as np

from tabletop_rl.core.kernels import pick_bit, popcount


def test_popcount_and_pick_bit_agree_with_python_on_64_bit_sets() -> None:
    rng = np.random.default_rng(3)
    values = [0, 1, 1 << 63, (1 << 64) - 1, 0b101100] + [int(v) for v in rng.integers(0, 1 << 63, 200)]
    values += [v | 1 << 63 for v in values[5:50]]  # the top bit, which int64 arithmetic would take as the sign
    for value in values:
        ones = [i for i in range(64) if value >> i & 1]
        assert popcount(np.uint64(value)) == len(ones)
        assert [pick_bit(np.uint64(value), k) for k in range(len(ones))] == ones
