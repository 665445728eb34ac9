"""Search policies: Splendor's expectiminimax and MCTS, Klaverjas's determinised Monte Carlo search."""

__all__: list[str] = []
