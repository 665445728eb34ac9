"""Splendor, the base game for 2-4 players (docs/splendor.md): players take gem tokens, buy development
cards for their bonuses and points and attract nobles; reaching 15 points starts the final round. The
package holds ``rules`` (the numba core: one ``int16`` row per game, its offsets and tables), ``game``
(``SplendorGame``), ``actions`` (the 72 move names, and the move text a person types), ``observe`` (the
observation vector), ``notation`` (JSON positions), ``render`` and ``picture`` (the text board and the
image) and ``baselines`` (the greedy player).
"""

from tabletop_rl.games.splendor.actions import ACTION_NAMES, NUM_ACTIONS, move_id, move_name
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.observe import OBSERVATION_VERSION, observation_layout

__all__ = ["ACTION_NAMES", "NUM_ACTIONS", "OBSERVATION_VERSION", "SplendorGame", "move_id", "move_name",
           "observation_layout"]
