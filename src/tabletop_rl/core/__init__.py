"""The game-agnostic core: the game contract, shared numba kernels, the policy protocol and statistics."""

from tabletop_rl.core.numba_cache import install as _install_numba_cache_key
from tabletop_rl.core.numba_threads import spin_briefly as _spin_briefly

_install_numba_cache_key()  # before any module of the package compiles (core/numba_cache.py says why)
_spin_briefly()  # before numba loads OpenMP at the first parallel loop (core/numba_threads.py says why)

__all__: list[str] = []
