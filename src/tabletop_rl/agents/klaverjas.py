"""Klaverjas's policies in the registry: the rule-based ``heuristic`` and the distilled ``model``
(``games/klaverjas/baselines.py``) and the determinised ``search`` (``agents/search/klaverjas.py``);
``random`` is the shared one. The registry imports this module on the first lookup for ``klaverjas``.

>>> from tabletop_rl.agents import known_policies
>>> [name for name in known_policies("klaverjas")]
['random', 'heuristic', 'model', 'search']
"""

from __future__ import annotations

from typing import Any

from tabletop_rl.agents.registry import Option, register_policy
from tabletop_rl.agents.search.klaverjas import SearchPolicy
from tabletop_rl.games.klaverjas import model as M
from tabletop_rl.games.klaverjas.baselines import HeuristicPolicy, ModelPolicy

__all__: list[str] = []


def _model_problem(options: dict[str, Any]) -> str | None:
    """Why ``model`` cannot load its file here (``why_unavailable``), without reading it."""
    try:
        return M.load_problem(M.model_file(options["path"]))
    except ValueError as e:
        return str(e)


register_policy("klaverjas", "heuristic", HeuristicPolicy)
register_policy("klaverjas", "model", ModelPolicy, (Option("path", str, "packaged"),), check=_model_problem)
register_policy("klaverjas", "search", SearchPolicy, (Option("samples", int, 12), Option("objective", str, "score")))
