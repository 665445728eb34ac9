"""The game-agnostic core: the game contract, shared numba kernels, the policy protocol and statistics."""

__all__: list[str] = []
