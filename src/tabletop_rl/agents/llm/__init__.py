"""LLM players: the game-agnostic chat client and harness, and one prompt module per game."""

__all__: list[str] = []
