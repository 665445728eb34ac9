"""Game-agnostic policies: the ``Policy`` protocol (from ``core.policy``), spec strings and the registry.

Importing this package loads no game: each game's policies are registered by its registration module
(``tabletop_rl.agents.splendor``, ``.klaverjas``, ``.space_conquest``) on the first lookup for that game.

>>> from tabletop_rl.agents import make_policy
>>> make_policy("greedy", game="splendor").name
'greedy'
"""

from tabletop_rl.agents.random_policy import RandomPolicy
from tabletop_rl.agents.registry import (
    ANY_GAME,
    Option,
    PolicyEntry,
    PolicySpec,
    describe_policies,
    known_games,
    known_policies,
    make_policy,
    parse_spec,
    register_policy,
    split_specs,
    why_unavailable,
)
from tabletop_rl.core.policy import BasePolicy, Policy, PolicyStats, SeededPolicy

register_policy(ANY_GAME, "random", RandomPolicy)

__all__ = [
    "ANY_GAME",
    "BasePolicy",
    "Option",
    "Policy",
    "PolicyEntry",
    "PolicySpec",
    "PolicyStats",
    "RandomPolicy",
    "SeededPolicy",
    "describe_policies",
    "known_games",
    "known_policies",
    "make_policy",
    "parse_spec",
    "register_policy",
    "split_specs",
    "why_unavailable",
]
