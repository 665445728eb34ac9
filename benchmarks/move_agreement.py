"""How often do other Splendor policies choose the move a policy plays, on the positions its games reach?

    python benchmarks/move_agreement.py --player az:default --judge az:default \
        --judge "az:default,simulations=0" --games 24

Plays ``--games`` two-player games with ``--player`` in every seat (deal ``--seed + g``) and, at every decision
with more than one legal move, asks each ``--judge`` for its move on the same view. A judge with the player's
own spec is a second copy with its own random streams, so its row is the player's agreement with itself: the
ceiling for any network taught to copy the player (a search's choice varies with its seed). Prints a markdown
table: each judge's agreement with a 95% Wilson interval, the positions asked and its ms a move.

With ``--opponent SPEC`` the player takes one seat (seat ``g % 2`` in game ``g``) and that policy the other, and
the judges are asked at the player's decisions only: do they agree with it as often on the positions another
player's style leads to as on those of its own games?

    python benchmarks/move_agreement.py --player "az:default,simulations=0" \
        --judge "az:default,simulations=2000" --opponent "mcts:simulations=1000" --games 30
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tabletop_rl.agents import make_policy
from tabletop_rl.core.stats import wilson_interval
from tabletop_rl.games.splendor import SplendorGame
from tabletop_rl.ui.bench import print_markdown


def agreement(player_spec: str, judge_specs: list[str], games: int, seed: int,
              opponent_spec: str | None = None) -> list[list[str]]:
    """One table row per judge: its spec, agreement [95%], positions and ms a move."""
    player = make_policy(player_spec, "splendor")
    judges = [make_policy(spec, "splendor") for spec in judge_specs]
    opponent = make_policy(opponent_spec, "splendor") if opponent_spec else None
    agreed, seconds = np.zeros(len(judges)), np.zeros(len(judges))
    asked = 0
    for g in range(games):
        game = SplendorGame(2, seed=seed + g)
        player.reset(seed + g)
        for k, judge in enumerate(judges):
            judge.reset(1_000_003 * (k + 1) + seed + g)  # never the player's stream, even for its own spec
        if opponent is not None:
            opponent.reset(2_000_003 + seed + g)
        while not game.is_over:
            seat, mask = game.current_player, game.legal_mask()
            observation, info = game.observe(seat), game.policy_info(seat)
            if opponent is not None and seat != g % 2:
                game.step(opponent.act(observation, mask, info))
                continue
            move = player.act(observation, mask, info)
            if mask.sum() > 1:
                asked += 1
                for k, judge in enumerate(judges):
                    tick = time.perf_counter()
                    agreed[k] += judge.act(observation, mask, info) == move
                    seconds[k] += time.perf_counter() - tick
            game.step(move)
    rows = []
    shown = max(asked, 1)  # every Splendor game has a choice; the guard keeps an empty table readable anyway
    for spec, same, spent in zip(judge_specs, agreed, seconds):
        low, high = wilson_interval(float(same), asked)
        rows.append([spec, f"{same / shown:.1%} [{low:.1%}, {high:.1%}]", f"{asked:,}", f"{1000 * spent / shown:.1f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--player", default="az:default", help="the policy that plays every seat")
    parser.add_argument("--judge", action="append", required=True, help="a policy asked at each decision (repeat)")
    parser.add_argument("--games", type=int, default=24, help="games played")
    parser.add_argument("--seed", type=int, default=777000, help="first deal's seed")
    parser.add_argument("--opponent", help="a policy in the other seat (default: the player in every seat)")
    args = parser.parse_args()
    if args.games <= 0:
        parser.error(f"--games must be positive, got {args.games}")
    rows = agreement(args.player, args.judge, args.games, args.seed, args.opponent)
    seats = f"against {args.opponent}" if args.opponent else "in every seat"
    print(f"judges asked on the positions of {args.games} games of {args.player} {seats} (deals {args.seed}-"
          f"{args.seed + args.games - 1})")
    print_markdown(["judge", "agreement with the player [95%]", "positions", "ms/move"], rows)


if __name__ == "__main__":
    main()
