"""numba helpers shared by the game cores: the splitmix64 generator, a uniform draw below ``n``, a shuffle,
the k-th legal move (of a mask, or of a set of moves held as the bits of one ``uint64``).

Each game keeps its generator's state in its own row and draws with ``splitmix64``; ``below`` and
``shuffle`` work on a ``uint64[1]`` holding that state (Splendor's deal and determinisation, Klaverjas's deals
and random play). Space Conquest draws ``(z >> 32) % n`` instead, kept because its maps, and so every
recorded game, follow from that stream. Random players pick among the legal moves with ``pick_legal``.

>>> import numpy as np
>>> hex(int(splitmix64(np.uint64(0))[1]))
'0xe220a8397b1dcdaf'
>>> rng = np.array([7], np.uint64); values = np.arange(5); shuffle(values, rng); sorted(values.tolist())
[0, 1, 2, 3, 4]
>>> pick_legal(np.array([False, True, False, True]), 1)
3
>>> bits = np.uint64(0b101100); int(popcount(bits)), int(pick_bit(bits, 0)), int(pick_bit(bits, 2))
(3, 2, 5)
>>> row = np.zeros(3, np.int16); copy_into(row, np.array([4, 5, 6], np.int16)); row.tolist()
[4, 5, 6]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["Direct", "below", "copy_into", "pick_bit", "pick_legal", "popcount", "shuffle", "splitmix64"]

@njit(cache=True, inline="always")
def splitmix64(x):
    """Advance the generator state ``x`` (uint64); return ``(new state, 64 random bits)``."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def below(rng, n):
    """A uniform int in ``[0, n)`` from the splitmix64 stream held in ``rng[0]`` (advanced)."""
    rng[0], z = splitmix64(rng[0])
    return np.int64(z % np.uint64(n))


@njit(cache=True, inline="always")  # inlined: no compile of its own on a cold start
def shuffle(values, rng):
    """Fisher-Yates: permute ``values`` in place uniformly, drawing with ``below(rng, ...)``."""
    for i in range(values.shape[0] - 1, 0, -1):
        j = below(rng, i + 1)
        t = values[i]
        values[i] = values[j]
        values[j] = t


@njit(cache=True, inline="always")
def pick_legal(mask, k):
    """Index of the ``k``-th (0-based) set entry of ``mask``, -1 if there are fewer."""
    for a in range(mask.shape[0]):
        k -= np.int64(mask[a] != 0)  # no branch per entry: a third faster on a Splendor mask of ~20 of 72
        if k < 0:
            return a
    return -1


@intrinsic
def _ctpop(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])  # i64 in, i64 out
    return types.int64(types.uint64), codegen


@intrinsic
def _cttz(typingctx, x):
    def codegen(context, builder, signature, args):  # x == 0 is undefined: callers never pass it
        return builder.cttz(args[0], context.get_constant(types.boolean, True))
    return types.int64(types.uint64), codegen


@njit(cache=True, inline="always")
def popcount(bits):
    """How many bits of the ``uint64`` ``bits`` are set (one machine instruction where the CPU has one)."""
    return _ctpop(np.uint64(bits))


@njit(cache=True, inline="always")
def pick_bit(bits, k):
    """Index of the ``k``-th (0-based, from the lowest) set bit of the ``uint64`` ``bits``; the caller guarantees
    ``k < popcount(bits)``. A set of moves held as bits gives its k-th move without scanning a mask."""
    x = np.uint64(bits)
    for _ in range(k):
        x &= x - np.uint64(1)  # drop the lowest set bit
    return _cttz(x)


@njit(cache=True, inline="always")
def copy_into(dst, src):
    """``dst[:] = src`` for two 1-D arrays of one length, as a plain loop. numba's slice assignment first copies
    ``src`` aside in case the two overlap: an allocation that made copying a Splendor row (462 bytes) take 78 ns
    instead of 12, in the searches' inner loops."""
    for i in range(dst.shape[0]):
        dst[i] = src[i]


class Direct:
    """A kernel called without numba's type dispatch, for the Python methods that call one every step.

    A numba dispatcher works out the types of its arguments on every call, about 60 ns an array; for a
    method that passes the same kinds of arrays each time (its own row, tables and buffers) that is most
    of the call. ``Direct(kernel).call(...)`` resolves the compiled code for the first call's argument types
    (compiling it, or loading it from numba's cache, as that call would) and then calls it directly.
    The caller promises the same argument types on every call: they are not checked again.

    >>> clamp = Direct(pick_legal)
    >>> clamp.call(np.array([False, True]), 0), clamp.call(np.array([True, True]), 1)
    (1, 1)
    """

    __slots__ = ("call", "kernel")

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.call: Callable[..., Any] = self._resolve

    def _resolve(self, *args: Any) -> Any:
        self.call = self.kernel.compile(tuple(numba.typeof(a) for a in args))
        return self.call(*args)
