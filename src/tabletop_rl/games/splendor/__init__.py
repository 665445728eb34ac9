"""Splendor, the base game for 2-4 players (docs/splendor.md): players take gem tokens, buy development
cards for their bonuses and points and attract nobles; reaching 15 points starts the final round. The
package holds ``rules`` (the numba core: one ``int16`` row per game, its offsets and tables), ``game``
(``SplendorGame``), ``actions`` (the 72 move names, and the move text a person types), ``observe`` (the
observation vector), ``notation`` (JSON positions), ``render`` and ``picture`` (the text board and the
image) and ``baselines`` (the greedy player).
"""

from typing import Any

from tabletop_rl.games.registry import GameEntry, lazy_attribute

#: The game's record (``tabletop_rl.games.registry``).
ENTRY = GameEntry(
    name="splendor",
    game_class=f"{__name__}.game:SplendorGame",
    # the baselines, search at small node budgets (reproducible, unlike time budgets), and the strongest agent,
    # az (its shipped network is plain arrays: no torch needed)
    players=("random", "greedy", "expectiminimax:depth=3,budget_ms=0,nodes=20000", "mcts:simulations=200",
             "az:default,simulations=200"),
    policies="tabletop_rl.agents.splendor",
    llm_prompt="tabletop_rl.agents.llm.splendor",
    env_id="tabletop_rl/Splendor-v0",
    gym_env="tabletop_rl.envs.gym:SplendorGymEnv",
    gym_vector_env="tabletop_rl.envs.splendor_vector:SplendorVectorEnv",
    pettingzoo_envs={"aec": "tabletop_rl.envs.aec:splendor_env"},
    board_view=f"{__name__}.render:board_view",
    terminal=True,
    exports={"observation_layout": f"{__name__}.observe"},
)

# The modules load on first use, so listing the games loads none.
_LAZY = {"ACTION_NAMES": f"{__name__}.actions", "NUM_ACTIONS": f"{__name__}.actions", "move_id": f"{__name__}.actions",
         "move_name": f"{__name__}.actions", "SplendorGame": f"{__name__}.game",
         "OBSERVATION_VERSION": f"{__name__}.observe", "observation_layout": f"{__name__}.observe"}
__all__ = ["ENTRY", *_LAZY]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _LAZY, name)
