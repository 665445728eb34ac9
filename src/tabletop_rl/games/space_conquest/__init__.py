"""Space Conquest, a two-player 4X game on a 12 x 10 map of 16 stars, played with simultaneous orders
under fog of war: send fleets through hyperspace, capture stars for their production, take the enemy's
home (docs/space_conquest.md). The package holds ``rules`` (the numba core: one ``int64`` row per game
and an event log), ``game`` (``SpaceConquestGame``, with save/load and replay), ``actions`` (the JSON
orders and their validation), ``observe`` (what a seat sees: ``player_view``, the RL vector and action
masks), ``render`` (the text map and turn report) and ``baselines`` (the random and heuristic players).
"""

from typing import Any

from tabletop_rl.games.registry import GameEntry, lazy_attribute

#: The game's record (``tabletop_rl.games.registry``).
ENTRY = GameEntry(
    name="space_conquest",
    game_class=f"{__name__}.game:SpaceConquestGame",
    players=("random", "heuristic"),
    policies="tabletop_rl.agents.space_conquest",
    llm_prompt="tabletop_rl.agents.llm.space_conquest",
    env_id="tabletop_rl/SpaceConquest-v0",
    pettingzoo_envs={"aec": "tabletop_rl.envs.space_conquest_parallel:space_conquest_aec_env",
                     "parallel": "tabletop_rl.envs.space_conquest_parallel:space_conquest_env"},
    board_view=f"{__name__}.render:board_view",
    commands={("play", "space_conquest"): "tabletop_rl.ui.space_conquest_play:play_main"},
    exports={"SpaceConquestGame": f"{__name__}.game",
             "space_conquest_env": "tabletop_rl.envs.space_conquest_parallel",
             "space_conquest_aec_env": "tabletop_rl.envs.space_conquest_parallel"},
)

# The modules load on first use, so listing the games loads none.
_LAZY = {"SpaceConquestGame": f"{__name__}.game", "player_view": f"{__name__}.observe"}
__all__ = ["ENTRY", *_LAZY]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _LAZY, name)
