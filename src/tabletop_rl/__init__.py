"""tabletop_rl: fast, rules-exact tabletop-game environments for reinforcement learning."""

from .splendor import IllegalActionError, SplendorGame

__version__ = "0.1.0"
__all__ = ["IllegalActionError", "SplendorGame", "__version__"]
