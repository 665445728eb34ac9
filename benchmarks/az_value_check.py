"""How well does a Splendor network's value head predict the results of the games its search plays?

    python benchmarks/az_value_check.py --games 60                      # az:default's network
    python benchmarks/az_value_check.py --model runs/az/final.pt --games 60

Plays ``--games`` self-play games exactly as ``tabletop train splendor --algo az`` does (every seat the PUCT
search guided by the network, root noise, the first plies drawn by visits; ``splendor_az.play_game``), then
scores predictors of each position's result for the seat to move (+1 won, -1 lost, 0 shared or capped)
on those positions, by stage of the game:

- the network's value (what the search backs up);
- the points lead alone: the mean result, in the other half of the games, of positions with the same lead
  (the mover's prestige points minus the best rival's, from -10 to 10);
- the constant 0 (its squared error is the share of decided results; it names no winner);
- a linear fit on the policy network's last hidden layer, and one on the value network's (least squares with a
  small ridge, each half's fitted on the other half's games): what a value head would predict from features
  shared with the policy, beside a refit of the value network's own output layer.

A value head that a one-number lookup matches has learnt little beyond the score. Prints a markdown table:
squared error and how often the sign names the winner (decided games only), with positions and games.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tabletop_rl.agents import make_policy
from tabletop_rl.agents.search.splendor_puct import PUCTPolicy, mlp_forward
from tabletop_rl.games.splendor.observe import observation_layout
from tabletop_rl.train.splendor_az import Positions, SelfPlay, play_game
from tabletop_rl.ui.bench import print_markdown

STAGES = ((0, 20), (20, 40), (40, 1000))
MAX_LEAD = 10


def self_play_games(policy: PUCTPolicy, games: int, seed: int, simulations: int) -> list[Positions]:
    setup = SelfPlay(2, simulations, 1.5, 0.3, 0.25, 8, 200)
    return [play_game(policy.net, seed + g, setup) for g in range(games)]


def network_values(policy: PUCTPolicy, observations: np.ndarray) -> np.ndarray:
    net = policy.net
    return np.array([np.clip(mlp_forward(o, net.value_weights, net.value_biases)[0], -1, 1) for o in observations])


def hidden_features(weights: tuple, biases: tuple, observations: np.ndarray) -> np.ndarray:
    """The last hidden layer's activations (tanh) of the MLP ``weights``/``biases`` for each observation."""
    return np.tanh(np.array([mlp_forward(o, weights[:-1], biases[:-1]) for o in observations]))


def cross_fitted(features: np.ndarray, results: np.ndarray, half: np.ndarray, ridge: float = 1.0) -> np.ndarray:
    """Each half's predictions from a linear least-squares fit (with an intercept) on the other half's rows,
    clipped to [-1, 1]."""
    design = np.c_[features, np.ones(len(features))]
    out = np.empty(len(results))
    for h in (0, 1):
        fit, use = design[half != h], half == h
        coef = np.linalg.solve(fit.T @ fit + ridge * np.eye(design.shape[1]), fit.T @ results[half != h])
        out[use] = np.clip(design[use] @ coef, -1.0, 1.0)
    return out


def points_leads(observations: np.ndarray) -> np.ndarray:
    """The mover's points minus the best rival's (the observation is the mover's: seat 0 is the mover)."""
    layout = observation_layout(2)
    own, rival = observations[:, layout["player[0].points"].start], observations[:, layout["player[1].points"].start]
    return np.clip(own - rival, -MAX_LEAD, MAX_LEAD).astype(np.int64)


def lead_table(leads: np.ndarray, results: np.ndarray) -> np.ndarray:
    """The mean result per points lead (0 where a lead never occurred)."""
    sums = np.bincount(leads + MAX_LEAD, weights=results, minlength=2 * MAX_LEAD + 1)
    counts = np.bincount(leads + MAX_LEAD, minlength=2 * MAX_LEAD + 1)
    return np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default", help="az:MODEL's network (default: az:default's)")
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--simulations", type=int, default=200, help="self-play simulations a move (training's)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    policy = make_policy(f"az:{args.model}", game="splendor", seed=0)
    assert isinstance(policy, PUCTPolicy)
    tick = time.perf_counter()
    games = self_play_games(policy, args.games, args.seed, args.simulations)
    seconds = time.perf_counter() - tick
    plies = np.concatenate([np.arange(len(g.values)) for g in games])
    half = np.concatenate([np.full(len(g.values), i % 2) for i, g in enumerate(games)])
    observations = np.concatenate([g.observations for g in games])
    results = np.concatenate([g.results for g in games])
    leads = points_leads(observations)
    by_lead = np.empty(len(results))
    for h in (0, 1):  # each half's lookup table is fitted on the other half's games
        table = lead_table(leads[half != h], results[half != h])
        by_lead[half == h] = table[leads[half == h] + MAX_LEAD]
    net = policy.net
    predictors = {"network value": network_values(policy, observations), "points lead": by_lead,
                  "constant 0": np.zeros(len(results)),
                  "linear on policy features": cross_fitted(
                      hidden_features(net.policy_weights, net.policy_biases, observations), results, half),
                  "linear on value features": cross_fitted(
                      hidden_features(net.value_weights, net.value_biases, observations), results, half)}
    print(f"{args.games} self-play games of az:{args.model} at {args.simulations} simulations, "
          f"{len(results):,} positions, {seconds:.0f} s\n")
    lines = []
    for low, high in (*STAGES, (0, 1000)):
        stage = (plies >= low) & (plies < high)
        decided = stage & (results != 0)
        cells = [f"{((p[stage] - results[stage]) ** 2).mean():.3f} / "
                 + (f"{(np.sign(p[decided]) == results[decided]).mean():.0%}" if p.any() else "-")
                 for p in predictors.values()]
        label = "all" if high - low == 1000 else f"{low}-{min(high, 999) - 1}" if high < 1000 else f"{low}+"
        lines.append([label, f"{stage.sum():,}", *cells])
    print_markdown(["plies", "positions", *(f"{name}: squared error / sign right" for name in predictors)], lines)


if __name__ == "__main__":
    main()
