"""tabletop_rl: fast, rules-exact tabletop-game environments for reinforcement learning.

The public surface, the same for every game: the games (``SplendorGame``, ``KlaverjasGame``,
``SpaceConquestGame``, each a ``Game``), their PettingZoo envs (``splendor_env``, ``klaverjas_env``,
``space_conquest_env``), the Gymnasium envs (``SplendorGymEnv``, ``KlaverjasGymEnv``, also through
``gymnasium.make("tabletop_rl/Splendor-v0")``), Splendor's batched ``SplendorVectorEnv``, and the one
``IllegalActionError``; ``TabletopAEC`` (the unwrapped AEC env of any turn-based game), Space Conquest's
turn-order ``space_conquest_aec_env`` and Splendor's ``observation_layout``. Everything else lives in the layers
below (docs/architecture.md).

>>> from tabletop_rl import splendor_env
>>> env = splendor_env(num_players=2)
"""

from typing import Any

from tabletop_rl.core.game import Game, IllegalActionError
from tabletop_rl.envs.aec import TabletopAEC, klaverjas_env, splendor_env
from tabletop_rl.envs.gym import KlaverjasGymEnv, SplendorGymEnv
from tabletop_rl.envs.gym import register_envs as _register_envs
from tabletop_rl.envs.pettingzoo_registry import register_pettingzoo_envs as _register_pettingzoo_envs
from tabletop_rl.envs.splendor_vector import SplendorVectorEnv
from tabletop_rl.games import entries as _entries
from tabletop_rl.games.registry import lazy_attribute as _lazy_attribute
from tabletop_rl.games.splendor.game import SplendorGame

_register_envs()  # gymnasium.make("tabletop_rl/Splendor-v0") works after `import tabletop_rl`
_register_pettingzoo_envs()  # and pettingzoo.make("aec", "tabletop_rl/Splendor-v0") where PettingZoo has a registry

__version__ = "0.1.0"
# The names each game's record exports (``GameEntry.exports``) load on first use, so `import tabletop_rl` stays quick.
_LAZY = {name: module for record in _entries() for name, module in record.exports.items()}
__all__ = ["Game", "IllegalActionError", "KlaverjasGymEnv", "SplendorGame", "SplendorGymEnv", "SplendorVectorEnv",
           "TabletopAEC", "__version__", "klaverjas_env", "splendor_env", *_LAZY]


def __getattr__(name: str) -> Any:
    return _lazy_attribute(__name__, _LAZY, name)
