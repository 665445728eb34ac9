"""Our PettingZoo envs in PettingZoo's own registry (``pettingzoo.register`` / ``pettingzoo.make``, from
PettingZoo 1.27), under the ids gymnasium knows them by, so code written against the registry finds them:

>>> import pettingzoo
>>> register_pettingzoo_envs()
>>> pettingzoo.make("aec", "tabletop_rl/Splendor-v0", num_players=3).possible_agents
['player_0', 'player_1', 'player_2']

Older PettingZoo has no registry; there this registers nothing and the env functions work as before.
"""

from __future__ import annotations

import pettingzoo

__all__ = ["PETTINGZOO_IDS", "register_pettingzoo_envs"]

#: ``(env_type, id) -> entry point``: every game's AEC env, and Space Conquest's native parallel env.
PETTINGZOO_IDS = {
    ("aec", "tabletop_rl/Splendor-v0"): f"{__package__}.aec:splendor_env",
    ("aec", "tabletop_rl/Klaverjas-v0"): f"{__package__}.aec:klaverjas_env",
    ("aec", "tabletop_rl/SpaceConquest-v0"): f"{__package__}.space_conquest_parallel:space_conquest_aec_env",
    ("parallel", "tabletop_rl/SpaceConquest-v0"): f"{__package__}.space_conquest_parallel:space_conquest_env",
}


def register_pettingzoo_envs() -> None:
    """Register ``PETTINGZOO_IDS`` where PettingZoo has a registry (safe to call twice: an id already there
    is left alone, so re-importing warns of no override)."""
    if not hasattr(pettingzoo, "register"):
        return
    registries = {"aec": pettingzoo.aec_registry, "parallel": pettingzoo.parallel_registry}
    for (env_type, env_id), entry_point in PETTINGZOO_IDS.items():
        if env_id not in registries[env_type]:
            pettingzoo.register(env_type, env_id, entry_point)
