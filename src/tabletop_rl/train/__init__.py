"""Training: PPO self-play and self-play with search for Splendor, and the Klaverjas teacher data and model."""

__all__: list[str] = []
