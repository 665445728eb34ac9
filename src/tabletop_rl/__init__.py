"""tabletop_rl: fast, rules-exact tabletop-game environments for reinforcement learning.

>>> from tabletop_rl import splendor_env
>>> env = splendor_env(num_players=2)
"""

from importlib import import_module

from .splendor import IllegalActionError, SplendorGame, SplendorGymEnv, SplendorVectorEnv, raw_env, splendor_env
from .splendor.gym_env import register_envs as _register_envs

_register_envs()  # gymnasium.make("tabletop_rl/Splendor-v0") works after `import tabletop_rl`

__version__ = "0.1.0"
# The other games load on first use, so `import tabletop_rl` stays quick.
_LAZY = {"klaverjas_env": "tabletop_rl.klaverjas", "space_conquest_env": "tabletop_rl.space_conquest",
         "SpaceConquestGame": "tabletop_rl.space_conquest"}
__all__ = ["IllegalActionError", "SplendorGame", "SplendorGymEnv", "SplendorVectorEnv", "__version__", "raw_env",
           "splendor_env", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tabletop_rl' has no attribute {name!r}")
