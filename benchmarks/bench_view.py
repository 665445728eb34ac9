"""What a seat's view costs a decision: each policy handed the live game (as policies were once handed it) against
the same policy handed ``game.policy_info(seat)``, the information-set copy every door hands it now. Prints two
tables; never part of the test suite.

    python benchmarks/bench_view.py
    python benchmarks/bench_view.py --positions 300 --games 40 --repeats 5

The first table times decisions on the same positions (from seeded Splendor games of random play, 2 players):
``live`` hands the policy ``{"game": game, "seat": seat}``; ``view`` makes the seat's view first and hands it
that, so its time includes making the view. The search policies re-deal the hidden cards from their own seed
either way, so both columns choose the same moves (``same moves`` says whether they did). The second table
plays whole games between two policies, as the arena's loop does (``policy_answer`` then ``step_joint``), one
process, in games a second. Each figure is the best of ``--repeats`` passes, the two columns run alternately.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from tabletop_rl.agents import make_policy
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.ui.bench import print_markdown

POLICIES = ("greedy", "mcts:simulations=200", "az:default")
MATCHES = (("greedy", "random"), ("greedy", "greedy"), ("az:default,simulations=50", "greedy"))


def live_info(game: SplendorGame, seat: int) -> dict[str, Any]:
    return {"game": game, "seat": seat}


def view_info(game: SplendorGame, seat: int) -> Any:
    return game.policy_info(seat)


INFOS: dict[str, Callable[[SplendorGame, int], Any]] = {"live": live_info, "view": view_info}


def positions(count: int, seed: int) -> list[SplendorGame]:
    """``count`` positions of 2-player games in random play, a few plies apart."""
    rng, found = np.random.default_rng(seed), []
    game = SplendorGame(2, seed=seed)
    while len(found) < count:
        if game.is_over:
            game = SplendorGame(2, seed=int(rng.integers(1 << 30)))
        if rng.random() < 0.3:
            found.append(game.clone())
        game.step(int(rng.choice(np.flatnonzero(game.legal_mask()))))
    return found


def decide_all(spec: str, games: list[SplendorGame], info: Callable[[SplendorGame, int], Any]) -> tuple[float, list]:
    policy = make_policy(spec, game="splendor", seed=1)
    start, moves = time.perf_counter(), []
    for game in games:
        seat = game.current_player
        moves.append(policy.act(None, game.legal_mask(), info(game, seat)))
    return time.perf_counter() - start, moves


def play(specs: tuple[str, str], games: int, info: Callable[[SplendorGame, int], Any]) -> float:
    policies = [make_policy(spec, game="splendor", seed=s) for s, spec in enumerate(specs)]
    start = time.perf_counter()
    for g in range(games):
        game = SplendorGame(2, seed=g)
        while not game.is_over:
            seat = game.current_player
            game.step(policies[seat].act(None, game.legal_mask(), info(game, seat)))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    found = positions(args.positions, seed=0)
    making = min(_time_views(found) for _ in range(args.repeats))
    print(f"making a view: {making * 1e6 / len(found):.1f} us a decision ({len(found)} positions)\n")
    rows = []
    for spec in POLICIES:
        decide_all(spec, found[:5], live_info)  # compiled and loaded before timing
        best = {name: np.inf for name in INFOS}
        moves: dict[str, list] = {}
        for _ in range(args.repeats):
            for name, info in INFOS.items():
                seconds, moves[name] = decide_all(spec, found, info)
                best[name] = min(best[name], seconds)
        per = {name: best[name] * 1e3 / len(found) for name in INFOS}
        rows.append([f"`{spec}`", f"{per['live']:.3f}", f"{per['view']:.3f}", f"{per['view'] / per['live']:.3f}",
                     "yes" if moves["live"] == moves["view"] else "no"])
    print_markdown(["policy", "ms a move, live game", "ms a move, view", "view / live", "same moves"], rows)
    print()
    rows = []
    for specs in MATCHES:
        games = args.games if "az" not in specs[0] else max(2, args.games // 10)
        play(specs, 1, live_info)
        best = {name: min(play(specs, games, info) for _ in range(args.repeats)) for name in INFOS}
        rate = {name: games / best[name] for name in INFOS}
        rows.append([f"`{specs[0]}` vs `{specs[1]}`", str(games), f"{rate['live']:.1f}", f"{rate['view']:.1f}",
                     f"{rate['view'] / rate['live']:.3f}"])
    print_markdown(["match", "games", "games/s, live game", "games/s, view", "view / live"], rows)


def _time_views(found: list[SplendorGame]) -> float:
    start = time.perf_counter()
    for game in found:
        game.policy_info(game.current_player)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
