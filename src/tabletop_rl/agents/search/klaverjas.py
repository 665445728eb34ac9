"""Determinised search for Klaverjas: perfect-information Monte Carlo over deals of the unseen cards.

``search`` (``SearchPolicy``) reads only what its seat may see: it solves determinised copies
(``games/klaverjas/determinize.py``) with the exact solver (``games/klaverjas/solver.py``), never the
true deal. Trump choice is the heuristic's (``games/klaverjas/baselines.py``). The same sampling
(``pimc_card_samples``, ``card_means``) labels the training data of the local model
(``train/klaverjas_teacher.py``).

>>> from tabletop_rl.games.klaverjas.game import KlaverjasGame
>>> s = R.new_state(seed=2); R.apply_action(s, R.NAME_TRUMP + 1)
>>> mask = np.zeros(R.NUM_ACTIONS, np.bool_); _ = R.legal_mask(s, mask)
>>> policy = SearchPolicy(samples=2, seed=0)
>>> card = policy.act(None, mask, KlaverjasGame(s).policy_info(int(s[R.CURRENT])))
>>> bool(mask[card]), policy.stats.nodes > 0
(True, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tabletop_rl.core.policy import BasePolicy
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.baselines import bid_action, state_and_seat
from tabletop_rl.games.klaverjas.determinize import determinize
from tabletop_rl.games.klaverjas.solver import INF, card_values, deal_value, new_table

__all__ = ["MAX_SAMPLES", "SearchPolicy", "card_means", "deal_score_difference", "pimc_card_samples"]

_OBJECTIVES = ("score", "points")
#: Deals solved per decision: the exact solver takes up to a fifth of a second for a deal solved from the first
#: trick (measured on a busy 2-core machine), so this bounds a decision to under a minute.
MAX_SAMPLES = 200


def pimc_card_samples(state: np.ndarray, seat: int, samples: int, rng: np.random.Generator, table: np.ndarray,
                      counter: np.ndarray | None = None) -> np.ndarray:
    """Perfect-information Monte Carlo from ``seat``'s view: ``float[samples, 32]``, for each of ``samples``
    deals of the unseen cards consistent with what the seat has seen (``determinize``), the exact value
    (``solver.card_values``: the rest of the deal's points for the seat's team minus the other's) of each
    legal card, NaN for the others. ``table``: a ``solver.new_table()`` to reuse across calls.

    >>> from tabletop_rl.games.klaverjas.game import KlaverjasGame
>>> s = R.new_state(seed=2); R.apply_action(s, R.NAME_TRUMP + 1)
    >>> values = pimc_card_samples(s, 0, 2, np.random.default_rng(0), new_table(12))
    >>> values.shape, np.flatnonzero(~np.isnan(values[0])).tolist() == R.cards_of(int(s[R.HAND]))
    ((2, 32), True)
    """
    out = np.empty(R.NUM_CARDS, np.int64)
    counter = np.zeros(1, np.int64) if counter is None else counter
    values = np.empty((samples, R.NUM_CARDS), np.float64)
    for i in range(samples):
        card_values(determinize(state, seat, rng), out, table, counter)
        values[i] = np.where(out > -INF, out, np.nan)
    return values


def deal_score_difference(state: np.ndarray, team: int, rest: np.ndarray) -> np.ndarray:
    """The deal score of ``team`` minus the other team's when the rest of the deal adds ``rest`` (point
    differences for ``team``) to the points so far: the point difference while the makers make it, else
    nat: the defenders' 162 plus the roem so far (roem still to come and pit are not counted). NaN stays.

    >>> s = R.position({0: ["AS"], 1: ["7S"], 2: ["9H"], 3: ["8S"]}, "H", leader=0, maker=0)
    >>> deal_score_difference(s, 0, np.array([21.0, -21.0, np.nan])).tolist()
    [21.0, -162.0, nan]
    """
    so_far = [int(state[R.CARD_POINTS + t] + state[R.ROEM + t]) for t in range(2)]
    d = so_far[team] - so_far[1 - team] + rest
    nat = R.DEAL_TOTAL + int(state[R.ROEM] + state[R.ROEM + 1])
    if R.team_of(int(state[R.MAKER])) == team:
        scored = np.where(d > 0, d, -nat)
    else:
        scored = np.where(d < 0, d, nat)
    return np.where(np.isnan(rest), np.nan, scored)


def card_means(state: np.ndarray, seat: int, values: np.ndarray, objective: str) -> dict[int, float]:
    """Mean over the samples of each legal card's value (``pimc_card_samples``) for ``objective``:
    ``points`` (point difference) or ``score`` (``deal_score_difference``: nat counts)."""
    if objective == "score":
        values = deal_score_difference(state, R.team_of(seat), values)
    legal = np.flatnonzero(~np.isnan(values[0]))
    return dict(zip(legal.tolist(), values[:, legal].mean(axis=0).tolist()))


class SearchPolicy(BasePolicy):
    """Perfect-information Monte Carlo (``pimc_card_samples``) with ``samples`` deals per decision: the card
    with the best mean value for ``objective`` (``score``: the deal score, nat included, the default;
    ``points``: the point difference). Trump choice as ``heuristic``. Kraken: the same samples, each deal
    solved from its first lead (``solver.deal_value``), give the mean deal-score margin of the makers; a
    defender doubles when it is below zero, a maker redoubles when it is above. ``stats.nodes``: solver nodes."""

    def __init__(self, name: str = "search", seed: int | None = None, samples: int = 12,
                 objective: str = "score") -> None:
        super().__init__(name, seed)
        if not 1 <= samples <= MAX_SAMPLES:
            raise ValueError(f"samples must be in 1..{MAX_SAMPLES}, got {samples}")
        self.samples = samples
        self.objective = _OBJECTIVES[R.option_index(objective, "objective", _OBJECTIVES)]
        self._table = new_table()

    def card_means(self, state: np.ndarray, seat: int) -> dict[int, float]:
        """Mean value (for ``objective``, the seat's team) of each legal card over the samples."""
        counter = np.zeros(1, np.int64)
        values = pimc_card_samples(state, seat, self.samples, self.rng, self._table, counter)
        self.add_nodes(int(counter[0]))
        return card_means(state, seat, values, self.objective)

    def makers_margin(self, state: np.ndarray, seat: int) -> float:
        """Mean over the samples of the makers' deal score minus the defenders' (``deal_score_difference``),
        each sampled deal solved from its first lead; ``state`` is in the doubling phase."""
        counter = np.zeros(1, np.int64)
        makers = R.team_of(int(state[R.MAKER]))
        rest = np.empty(self.samples)
        for i in range(self.samples):
            deal = determinize(state, seat, self.rng)
            R.open_play(deal)
            rest[i] = (1 if makers == 0 else -1) * deal_value(deal, self._table, counter)
        self.add_nodes(int(counter[0]))
        return float(deal_score_difference(state, makers, rest).mean())

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        state, seat = state_and_seat(info, "search")
        if int(state[R.PHASE]) == R.DOUBLING:
            margin = self.makers_margin(state, seat)
            if mask[R.KRAAK]:
                return R.KRAAK if margin < 0 else R.PASS
            return R.REKRAAK if margin > 0 else R.PASS
        if int(state[R.PHASE]) == R.BIDDING:
            return bid_action(state, mask)
        means = self.card_means(state, seat)
        return max(means, key=lambda c: (means[c], -c))
