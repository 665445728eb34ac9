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

from tabletop_rl.games import entries

__all__ = ["pettingzoo_ids", "register_pettingzoo_envs"]


def pettingzoo_ids() -> dict[tuple[str, str], str]:
    """``(env_type, id) -> entry point``, from the game records (``GameEntry.env_id`` and ``pettingzoo_envs``):
    every turn-based game's AEC env, and Space Conquest's native parallel env beside its AEC one.

    >>> pettingzoo_ids()[("aec", "tabletop_rl/Klaverjas-v0")]
    'tabletop_rl.envs.aec:klaverjas_env'
    """
    return {(env_type, record.env_id): entry_point for record in entries() if record.env_id is not None
            for env_type, entry_point in record.pettingzoo_envs.items()}


def register_pettingzoo_envs() -> None:
    """Register ``pettingzoo_ids()`` where PettingZoo has a registry (safe to call twice: an id already there
    is left alone, so re-importing warns of no override)."""
    if not hasattr(pettingzoo, "register"):
        return
    registries = {"aec": pettingzoo.aec_registry, "parallel": pettingzoo.parallel_registry}
    for (env_type, env_id), entry_point in pettingzoo_ids().items():
        if env_id not in registries[env_type]:
            pettingzoo.register(env_type, env_id, entry_point)
