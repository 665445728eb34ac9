"""Space Conquest, a two-player 4X game on a 12 x 10 map of 16 stars, played with simultaneous orders
under fog of war: send fleets through hyperspace, capture stars for their production, take the enemy's
home (docs/space_conquest.md). The package holds ``rules`` (the numba core: one ``int64`` row per game
and an event log), ``game`` (``SpaceConquestGame``, with save/load and replay), ``actions`` (the JSON
orders and their validation), ``observe`` (what a seat sees: ``player_view``, the RL vector and action
masks), ``render`` (the text map and turn report) and ``baselines`` (the random and heuristic players).
"""

from tabletop_rl.games.space_conquest.game import SpaceConquestGame
from tabletop_rl.games.space_conquest.observe import player_view

__all__ = ["SpaceConquestGame", "player_view"]
