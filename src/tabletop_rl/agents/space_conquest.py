"""Space Conquest's policies in the registry: its own ``random`` (the RL action vector) and ``heuristic``
(``games/space_conquest/baselines.py``), and ``llm``, the tool-using chat-model player
(``agents/llm/space_conquest.py``). The registry imports this module on the first lookup for
``space_conquest``.

>>> from tabletop_rl.agents import known_policies
>>> [name for name in known_policies("space_conquest")]
['random', 'heuristic', 'llm']
"""

from __future__ import annotations

from tabletop_rl.agents.llm.space_conquest import SPACE_CONQUEST_LLM_OPTIONS, ToolLLMPolicy
from tabletop_rl.agents.registry import Option, register_policy
from tabletop_rl.games.space_conquest.baselines import HeuristicPolicy, RandomPolicy

__all__: list[str] = []

register_policy("space_conquest", "random", RandomPolicy)
register_policy("space_conquest", "heuristic", HeuristicPolicy,
                (Option("ru_weight", float, 3.0), Option("distance_weight", float, 1.0),
                 Option("threat_weight", float, 1.5), Option("margin", int, 1)))
register_policy("space_conquest", "llm", ToolLLMPolicy, SPACE_CONQUEST_LLM_OPTIONS)
