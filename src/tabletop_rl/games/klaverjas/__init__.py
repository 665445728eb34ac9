"""Klaverjas, the Dutch trick-taking card game for four players in two partnerships (N-S against E-W),
played as a match of deals under the Rotterdam or Amsterdam rules and their house-rule knobs
(docs/klaverjas.md). The package holds ``rules`` (the numba core: one ``int64`` row per match, its
offsets and card helpers), ``game`` (``KlaverjasGame``), ``notation`` (the JSON position and the checks
that a loaded one is a position the rules reach), ``actions`` (the 40 move names), ``observe`` (the
observation vector, laid out by ``OBS_PARTS``), ``render`` (the table as text), ``determinize`` (deals of
the unseen cards consistent with what a seat has seen), ``solver`` (the open-hand alpha-beta solver),
``model`` (the distilled best-card network) and ``baselines`` (the heuristic and model players).
"""

from tabletop_rl.games.klaverjas.actions import move_id, move_name
from tabletop_rl.games.klaverjas.game import KlaverjasGame
from tabletop_rl.games.klaverjas.observe import OBS_PARTS

__all__ = ["KlaverjasGame", "OBS_PARTS", "move_id", "move_name"]
