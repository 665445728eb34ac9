"""tabletop_rl: fast, rules-exact tabletop-game environments for reinforcement learning."""

from .splendor import IllegalActionError, SplendorGame
from .splendor.gym_env import register_envs as _register_envs

_register_envs()  # gymnasium.make("tabletop_rl/Splendor-v0") works after `import tabletop_rl`

__version__ = "0.1.0"
__all__ = ["IllegalActionError", "SplendorGame", "__version__"]
