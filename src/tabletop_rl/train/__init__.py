"""Training: PPO self-play for Splendor, and the Klaverjas teacher data and model."""

__all__: list[str] = []
