"""Splendor's policies in the registry: ``greedy`` (``games/splendor/baselines.py``), the searches
``expectiminimax`` and ``mcts`` (``agents/search/splendor.py``), ``llm`` (a chat model with the Splendor
prompt of ``agents/llm/splendor.py``) and ``ppo`` (a saved model: a ``.pt`` checkpoint of ``tabletop train
splendor``, a MaskablePPO zip or either exported as arrays) and ``az`` (PUCT search guided by a saved
policy-and-value network, ``agents/search/splendor_puct.py``). ``ppo:default`` (the shipped 2-player MaskablePPO
model) and ``az:default`` (the shipped 2-player network trained by search-guided self-play) load their networks
from plain arrays (``agents.ppo.export_arrays``), so they play without torch. The registry imports this module on
the first lookup for ``splendor``.

>>> from tabletop_rl.agents import known_policies
>>> [name for name in known_policies("splendor")]
['random', 'greedy', 'expectiminimax', 'mcts', 'llm', 'ppo', 'az']
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from tabletop_rl.agents.llm.policy import LLM_OPTIONS, LLMPolicy
from tabletop_rl.agents.ppo import PPOPolicy, check_meta, model_problem, network_state, read_meta
from tabletop_rl.agents.registry import Option, register_policy
from tabletop_rl.agents.search.splendor import ExpectiminimaxPolicy, MCTSPolicy
from tabletop_rl.agents.search.splendor_puct import PUCTPolicy, net_from_state_dict
from tabletop_rl.games.splendor.baselines import DEFAULT_GREEDY_WEIGHTS, GREEDY_WEIGHT_NAMES, GreedyPolicy
from tabletop_rl.games.splendor.observe import OBSERVATION_VERSION, observation_size

__all__ = ["default_az_model_path", "default_ppo_model_path"]

#: The shipped 2-player models under ``tabletop_rl/data``: ``ppo:default`` (MaskablePPO) and ``az:default``
#: (search-guided self-play; docs/training.md has the model cards), as trained; each ships beside its networks as
#: arrays (the same name, ``.npz``, written by ``agents.ppo.export_arrays``), which is what ``default`` plays.
_DEFAULT_PPO_MODEL = "ppo_splendor_2p.zip"
_DEFAULT_AZ_MODEL = "az_splendor_2p.pt"


def default_ppo_model_path() -> Path:
    """The shipped 2-player MaskablePPO zip (``ppo:default``, and ``--algo az``'s ``--init default``)."""
    return Path(str(resources.files("tabletop_rl") / "data" / _DEFAULT_PPO_MODEL))


def default_az_model_path() -> Path:
    """The shipped 2-player network of ``az:default`` (a ``tabletop-ppo/1`` checkpoint without optimizer)."""
    return Path(str(resources.files("tabletop_rl") / "data" / _DEFAULT_AZ_MODEL))


def _model_file(path: str, default: Path) -> Path:
    """The file a ``ppo:``/``az:`` spec's path names: ``default`` is the shipped network's arrays."""
    return default.with_suffix(".npz") if path == "default" else Path(path)


def _ppo_problem(options: dict[str, Any]) -> str | None:
    return model_problem(_model_file(options["path"], default_ppo_model_path()))


def _az_problem(options: dict[str, Any]) -> str | None:
    return model_problem(_model_file(options["path"], default_az_model_path()))


def _load_ppo_policy(name: str = "ppo:default", seed: int | None = None, path: str = "default") -> PPOPolicy:
    """The ``ppo:PATH`` policy (``ppo:default``: the shipped 2-player model's arrays), layout version checked."""
    resolved = _model_file(path, default_ppo_model_path())
    meta = read_meta(resolved)
    expected = {"game": "splendor", "observation_version": OBSERVATION_VERSION}
    check_meta(meta, expected, resolved)
    expected["observation_size"] = observation_size(int(meta.get("num_players", 2)))
    return PPOPolicy(name, seed, resolved, expected)


def _load_az_policy(name: str, seed: int | None = None, path: str = "default", simulations: int = 1400,
                    budget_ms: float | None = None, c: float = 0.4, mix: float = 0.5,
                    rollout_depth: int = 4, root: str = "puct", considered: int = 16,
                    renamings: int = 1, stop_early: bool = True) -> PUCTPolicy:
    """The ``az:PATH`` policy: PUCT search guided by a saved policy-and-value network, a ``.pt`` checkpoint of
    ``tabletop train splendor``, a MaskablePPO zip or either exported as arrays (``az:default``: the shipped
    network of ``--algo az``, as arrays)."""
    resolved = _model_file(path, default_az_model_path())
    meta, state = network_state(resolved)
    check_meta(meta, {"game": "splendor", "observation_version": OBSERVATION_VERSION,
                      "observation_size": observation_size(int(meta.get("num_players", 2)))}, resolved)
    return PUCTPolicy(net_from_state_dict(state), name, seed, simulations, budget_ms, c, mix=mix,
                      rollout_depth=rollout_depth, root=root, considered=considered, renamings=renamings,
                      stop_early=stop_early)


register_policy("splendor", "greedy", GreedyPolicy,
                tuple(Option(n, float, float(w)) for n, w in zip(GREEDY_WEIGHT_NAMES, DEFAULT_GREEDY_WEIGHTS)))
register_policy("splendor", "expectiminimax", ExpectiminimaxPolicy,
                (Option("depth", int, 20), Option("budget_ms", float, 100.0),  # turns; time per move (0: none)
                 Option("nodes", int, 0), Option("chance", int, 3)))  # node budget (0: none); cards per chance node
register_policy("splendor", "mcts", MCTSPolicy,
                (Option("simulations", int, 2000), Option("budget_ms", float, None),  # budget_ms replaces simulations
                 Option("c", float, 0.7), Option("rollout", str, "greedy"),  # UCT constant; greedy|random
                 Option("rollout_depth", int, 4), Option("epsilon", float, 0.1)))  # turns; random-move rate
# The LLM client is game-agnostic; it finds the Splendor prompt (agents/llm/splendor.py) from the game.
register_policy("splendor", "llm", LLMPolicy, LLM_OPTIONS)
# A saved model (tabletop train splendor: .pt; --algo sb3: .zip; torch and sb3-contrib load them) or its networks
# exported as arrays (.npz, numpy alone: ppo:default).
register_policy("splendor", "ppo", _load_ppo_policy, (Option("path", str, "default"),), positional="path",
                check=_ppo_problem)
# PUCT over the seat's information set with a saved network's priors and values (simulations=0: the network
# alone); az:default searches with the shipped network trained by search-guided self-play. A leaf's value is
# mixed with greedy's after rollout_depth greedy turns (mix=0: the network's alone); docs/agents.md has why.
# root=gumbel chooses the root move by sequential halving over the `considered` most probable moves; stop_early
# ends a search of `simulations` once the simulations left could not change its move (the same move, sooner).
register_policy("splendor", "az", _load_az_policy,
                (Option("path", str, "default"), Option("simulations", int, 1400), Option("budget_ms", float, None),
                 Option("c", float, 0.4), Option("mix", float, 0.5), Option("rollout_depth", int, 4),
                 Option("root", str, "puct"), Option("considered", int, 16), Option("renamings", int, 1),
                 Option("stop_early", bool, True)),
                positional="path", check=_az_problem)
