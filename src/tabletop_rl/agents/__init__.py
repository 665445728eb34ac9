"""Game-agnostic policies: the ``Policy`` protocol, spec strings and the registry.

>>> from tabletop_rl.agents import make_policy
>>> make_policy("greedy", game="splendor").name
'greedy'
"""

from tabletop_rl.agents.base import (
    ANY_GAME,
    BasePolicy,
    Option,
    Policy,
    PolicyEntry,
    PolicySpec,
    PolicyStats,
    describe_policies,
    known_games,
    known_policies,
    make_policy,
    parse_spec,
    register_policy,
)
from tabletop_rl.agents.llm.policy import LLM_OPTIONS, LLMPolicy
from tabletop_rl.agents.random_policy import RandomPolicy

register_policy(ANY_GAME, "random", RandomPolicy)
# Planned (issue 4, later): named now so specs and listings know them.
register_policy(ANY_GAME, "ppo", None, (Option("path", str),), positional="path")  # a saved MaskablePPO .zip
# The LLM client (agents/llm.py) is game-agnostic; each game package brings its prompt module.
register_policy(ANY_GAME, "llm", LLMPolicy, LLM_OPTIONS)

__all__ = [
    "ANY_GAME",
    "BasePolicy",
    "Option",
    "Policy",
    "PolicyEntry",
    "PolicySpec",
    "PolicyStats",
    "RandomPolicy",
    "describe_policies",
    "known_games",
    "known_policies",
    "make_policy",
    "parse_spec",
    "register_policy",
]
