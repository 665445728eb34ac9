"""tabletop_rl: fast, rules-exact tabletop-game environments for reinforcement learning.

>>> from tabletop_rl import splendor_env
>>> env = splendor_env(num_players=2)
"""

from .splendor import IllegalActionError, SplendorGame, SplendorGymEnv, SplendorVectorEnv, raw_env, splendor_env
from .splendor.gym_env import register_envs as _register_envs

_register_envs()  # gymnasium.make("tabletop_rl/Splendor-v0") works after `import tabletop_rl`

__version__ = "0.1.0"
__all__ = ["IllegalActionError", "SplendorGame", "SplendorGymEnv", "SplendorVectorEnv", "__version__", "raw_env",
           "splendor_env"]
