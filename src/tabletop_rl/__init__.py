"""tabletop_rl: fast, rules-exact tabletop-game environments for reinforcement learning.

>>> from tabletop_rl import splendor_env
>>> env = splendor_env(num_players=2)
"""

from importlib import import_module

from tabletop_rl.envs.splendor_aec import raw_env, splendor_env
from tabletop_rl.envs.splendor_gym import SplendorGymEnv
from tabletop_rl.envs.splendor_gym import register_envs as _register_envs
from tabletop_rl.envs.splendor_vector import SplendorVectorEnv
from tabletop_rl.games.splendor.game import IllegalActionError, SplendorGame

_register_envs()  # gymnasium.make("tabletop_rl/Splendor-v0") works after `import tabletop_rl`

__version__ = "0.1.0"
# The other games load on first use, so `import tabletop_rl` stays quick.
_LAZY = {"klaverjas_env": "tabletop_rl.envs.klaverjas_aec",
         "space_conquest_env": "tabletop_rl.envs.space_conquest_parallel",
         "SpaceConquestGame": "tabletop_rl.games.space_conquest.game"}
__all__ = ["IllegalActionError", "SplendorGame", "SplendorGymEnv", "SplendorVectorEnv", "__version__", "raw_env",
           "splendor_env", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tabletop_rl' has no attribute {name!r}")
