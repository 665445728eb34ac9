"""Small statistics shared by the arena, training and benchmarks.

>>> low, high = wilson_interval(60, 100)
>>> round(low, 3), round(high, 3)
(0.502, 0.691)
"""

from __future__ import annotations

import math

__all__ = ["Z95", "wilson_interval"]

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval of a proportion; ``successes`` may be fractional (draws count half).

    >>> wilson_interval(0, 0)
    (0.0, 1.0)
    """
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)
