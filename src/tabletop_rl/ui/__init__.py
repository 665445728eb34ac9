"""Terminal play and replays, the Klaverjas best-card service, and the benchmark command."""

__all__: list[str] = []
