"""The game-agnostic core: the game contract, shared numba kernels, the policy protocol and statistics."""

from tabletop_rl.core.numba_cache import install as _install_numba_cache_key

_install_numba_cache_key()  # before any module of the package compiles (core/numba_cache.py says why)

__all__: list[str] = []
