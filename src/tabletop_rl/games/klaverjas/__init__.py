"""Klaverjas, the Dutch trick-taking card game for four players in two partnerships (N-S against E-W),
played as a match of deals under the Rotterdam or Amsterdam rules and their house-rule knobs
(docs/klaverjas.md). The package holds ``rules`` (the numba core: one ``int64`` row per match, its
offsets and card helpers), ``game`` (``KlaverjasGame``), ``notation`` (the JSON position and the checks
that a loaded one is a position the rules reach), ``actions`` (the 40 move names), ``observe`` (the
observation vector, laid out by ``OBS_PARTS``), ``render`` (the table as text), ``determinize`` (deals of
the unseen cards consistent with what a seat has seen), ``solver`` (the open-hand alpha-beta solver),
``model`` (the distilled best-card network) and ``baselines`` (the heuristic and model players).
"""

from typing import Any

from tabletop_rl.games.registry import GameEntry, lazy_attribute

#: The game's record (``tabletop_rl.games.registry``).
ENTRY = GameEntry(
    name="klaverjas",
    game_class=f"{__name__}.game:KlaverjasGame",
    players=("random", "heuristic", "search:samples=4"),
    policies="tabletop_rl.agents.klaverjas",
    web_policies=("random", "heuristic", "model", "search:samples=4"),
    env_id="tabletop_rl/Klaverjas-v0",
    gym_env="tabletop_rl.envs.gym:KlaverjasGymEnv",
    pettingzoo_envs={"aec": "tabletop_rl.envs.aec:klaverjas_env"},
    board_view=f"{__name__}.render:board_view",
    # not played in the terminal: a player is a team of two seats, so a person would see their partner's hand
    commands={("serve", "klaverjas"): "tabletop_rl.ui.klaverjas_service:serve_main",
              ("train", "klaverjas_model"): "tabletop_rl.train.klaverjas_model:train_model_main"},
    exports={"KlaverjasGame": f"{__name__}.game"},
)

# The modules load on first use, so listing the games loads none.
_LAZY = {"KlaverjasGame": f"{__name__}.game", "OBS_PARTS": f"{__name__}.observe", "move_id": f"{__name__}.actions",
         "move_name": f"{__name__}.actions"}
__all__ = ["ENTRY", *_LAZY]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _LAZY, name)
