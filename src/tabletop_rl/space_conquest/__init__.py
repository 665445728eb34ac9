"""Space Conquest: a two-player 4X game with simultaneous orders and fog of war.

>>> from tabletop_rl.space_conquest import SpaceConquestGame, space_conquest_env
>>> SpaceConquestGame(seed=1).turn
1
"""

from .env import space_conquest_aec_env, space_conquest_env
from .game import SpaceConquestGame
from .observe import player_view

__all__ = ["SpaceConquestGame", "player_view", "space_conquest_aec_env", "space_conquest_env"]
