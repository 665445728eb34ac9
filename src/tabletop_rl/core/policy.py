"""The policy contract every game's players share: the ``Policy`` protocol, decision statistics
(``PolicyStats``), and ``SeededPolicy`` and ``BasePolicy``, the plumbing a policy class builds on.

It lives in the core layer so that a game's own baselines (``games/<game>/baselines.py``) can subclass
``BasePolicy`` without importing the agents layer; the spec strings and the registry are in
``tabletop_rl.agents.registry``.

>>> class First(BasePolicy):
...     def decide(self, observation, mask, info):
...         return int(mask.argmax())
>>> policy = First("first")
>>> policy.act(None, [False, False, True]), policy.stats.decisions, isinstance(policy, Policy)
(2, 1, True)
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["BasePolicy", "Policy", "PolicyStats", "SeededPolicy"]


@dataclass
class PolicyStats:
    """Decisions made since the policy's last ``reset``: count, wall time, and search nodes.

    >>> s = PolicyStats(); s.record(0.5, nodes=100); s.record(1.5)
    >>> s.decisions, s.mean_time_s, s.nodes, s.last_nodes
    (2, 1.0, 100, 0)
    """

    decisions: int = 0
    total_time_s: float = 0.0
    nodes: int = 0
    last_time_s: float = 0.0
    last_nodes: int = 0

    def record(self, seconds: float, nodes: int = 0) -> None:
        self.decisions += 1
        self.total_time_s += seconds
        self.nodes += nodes
        self.last_time_s = seconds
        self.last_nodes = nodes

    @property
    def mean_time_s(self) -> float:
        return self.total_time_s / self.decisions if self.decisions else 0.0

    def as_dict(self) -> dict[str, float | int]:
        """Plain numbers for result files: decisions, total_time_s, mean_time_s, nodes."""
        return {"decisions": self.decisions, "total_time_s": self.total_time_s,
                "mean_time_s": self.mean_time_s, "nodes": self.nodes}


@runtime_checkable
class Policy(Protocol):
    """Anything that picks a legal action. ``reset(seed)`` (start of a game) is optional.

    ``info`` carries what a policy may need beyond the observation: the seat's view (``core.game.SeatView``,
    from ``game.policy_info(seat)``), an information-set copy of the match, never the live game.
    """

    name: str
    stats: PolicyStats

    def act(self, observation: Any, action_mask: Any, info: Mapping[str, Any] | None = None) -> int:
        ...


class SeededPolicy:
    """What every policy class shares: its ``name``, decision ``stats``, a seeded ``rng`` that ``reset``
    renews, and the count of positions searched (``add_nodes``). ``BasePolicy`` adds ``act`` for actions
    that index a mask; a game whose actions are not indices (Space Conquest's orders) writes its own ``act``.
    """

    def __init__(self, name: str, seed: int | None = None) -> None:
        self.name = name
        self.stats = PolicyStats()
        self.rng = np.random.default_rng(seed)
        self._nodes = 0

    def reset(self, seed: int | None = None) -> None:
        """Start a new game: reseed ``rng`` and clear ``stats``."""
        self.rng = np.random.default_rng(seed)
        self.stats = PolicyStats()

    def add_nodes(self, count: int) -> None:
        """Count positions searched for the decision in progress (reported in ``stats``)."""
        self._nodes += int(count)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class BasePolicy(SeededPolicy):
    """A ``SeededPolicy`` whose ``act`` answers an index the mask allows: it checks the mask, times the
    decision into ``stats`` and checks the answer; subclasses write ``decide``.

    >>> class First(BasePolicy):
    ...     def decide(self, observation, mask, info):
    ...         return int(mask.argmax())
    >>> First("first").act(None, np.array([0, 0, 1]))
    2
    """

    def act(self, observation: Any, action_mask: Any, info: Mapping[str, Any] | None = None) -> int:
        mask = _legal_mask_of(action_mask)
        self._nodes = 0
        start = time.perf_counter()
        action = int(self.decide(observation, mask, {} if info is None else info))
        self.stats.record(time.perf_counter() - start, self._nodes)
        if not 0 <= action < mask.size or not mask[action]:
            raise RuntimeError(f"policy {self.name!r} chose action {action}, which the mask does not allow")
        return action

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        """The chosen action: an index the mask allows."""
        raise NotImplementedError


def _legal_mask_of(action_mask: Any) -> np.ndarray:
    """``action_mask`` as a 1-D bool array with at least one legal action, or ``ValueError``.

    >>> _legal_mask_of([0, 1]).tolist()
    [False, True]
    """
    mask = np.asarray(action_mask)
    if mask.ndim != 1:
        raise ValueError(f"action_mask must be 1-D, got shape {mask.shape}")
    mask = mask.astype(bool, copy=False)
    if not mask.any():
        raise ValueError("action_mask allows no action (is the game over?)")
    return mask
