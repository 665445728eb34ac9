"""Ratings from results: Bradley-Terry (two players), OpenSkill (3-4); Wilson intervals are in
``tabletop_rl.core.stats``."""

from __future__ import annotations

import math

import numpy as np
from openskill.models import PlackettLuce

__all__ = ["ELO_SCALE", "bootstrap_bradley_terry", "bradley_terry", "openskill_ratings", "win_matrix"]

ELO_SCALE = 400 / math.log(10)  # Elo points per unit of log-strength
_PRIOR_DRAWS = 1.0  # virtual drawn games per pair that met, so a 100% record still has a finite rating


def bradley_terry(wins: np.ndarray, prior_draws: float = _PRIOR_DRAWS, tol: float = 1e-10,
                  max_iter: int = 100_000) -> np.ndarray:
    """Log-strengths from ``wins[i, j]`` = games ``i`` won against ``j`` (draws count half to each),
    fitted by the MM algorithm (Hunter 2004), mean 0. ``prior_draws`` virtual draws are added to every
    pair that met, which keeps an unbeaten policy's rating finite.

    >>> s = bradley_terry(np.array([[0, 75], [25, 0]]), prior_draws=0)
    >>> round(float(s[0] - s[1]), 4) == round(math.log(3), 4)
    True
    """
    wins = np.asarray(wins, np.float64)
    games = wins + wins.T
    met = games > 0
    wins = wins + np.where(met, prior_draws / 2, 0.0)
    games = games + np.where(met, prior_draws, 0.0)
    total = wins.sum(axis=1)
    strength = np.ones(len(wins))
    for _ in range(max_iter):
        denom = (games / (strength[:, None] + strength[None, :])).sum(axis=1)
        new = np.where(denom > 0, total / np.where(denom > 0, denom, 1), strength)
        new /= np.exp(np.log(np.maximum(new, 1e-300)).mean())
        if np.max(np.abs(new - strength)) < tol:
            strength = new
            break
        strength = new
    logs = np.log(np.maximum(strength, 1e-300))
    return logs - logs.mean()


def bootstrap_bradley_terry(pair_games: list[tuple[int, int, float]], size: int, samples: int = 200,
                            seed: int = 0) -> np.ndarray:
    """Bradley-Terry log-strengths refitted on ``samples`` resamples (with replacement) of the games:
    an array ``[samples, size]`` whose quantiles give intervals. ``pair_games`` holds ``(i, j, score_i)``
    per game (score 1, 0.5 or 0)."""
    rng = np.random.default_rng(seed)
    rows = np.asarray(pair_games, np.float64).reshape(-1, 3)
    fits = np.empty((samples, size))
    for s in range(samples):
        fits[s] = bradley_terry(win_matrix(rows[rng.integers(len(rows), size=len(rows))], size))
    return fits


def win_matrix(pair_games: np.ndarray | list[tuple[int, int, float]], size: int) -> np.ndarray:
    """``wins[i, j]`` summed from ``(i, j, score_i)`` rows (each row also credits ``j`` with ``1 - score_i``)."""
    rows = np.asarray(pair_games, np.float64).reshape(-1, 3)
    i, j, score = rows[:, 0].astype(int), rows[:, 1].astype(int), rows[:, 2]
    wins = np.zeros((size, size))
    np.add.at(wins, (i, j), score)
    np.add.at(wins, (j, i), 1 - score)
    return wins


def openskill_ratings(games: list[tuple[list[int], list[int]]], size: int) -> tuple[np.ndarray, np.ndarray]:
    """OpenSkill (Plackett-Luce) ``(mu, sigma)`` per policy from ``(policy per seat, place per seat)``
    games, rated in the order given (places: 0 = first, ties shared)."""
    model = PlackettLuce()
    ratings = [model.rating() for _ in range(size)]
    for seats, places in games:
        new = model.rate([[ratings[p]] for p in seats], ranks=[float(r) for r in places])
        for p, team in zip(seats, new):
            ratings[p] = team[0]
    return np.array([r.mu for r in ratings]), np.array([r.sigma for r in ratings])
