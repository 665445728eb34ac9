"""PPO self-play for Splendor, then a tournament of the trained model against the baselines.

    pip install -e ".[train]"
    python examples/ppo_selfplay.py --steps 2_000_000 --out runs/ppo --arena-games 100

Every knob of the training is a flag (the same as `tabletop train splendor --help`); the learner
plays one random seat per game against a pool of its frozen past selves, random and greedy.
"""

import argparse
from pathlib import Path

from tabletop_rl.arena import format_table, run_arena
from tabletop_rl.train.splendor_ppo import add_arguments, config_from_args, train

if __name__ == "__main__":  # the arena's worker processes import this file again
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    parser.add_argument("--arena-games", type=int, default=100, help="games per pairing in the final tournament")
    parser.add_argument("--arena-players", default="greedy,random", help="policies the trained model meets")
    args = parser.parse_args()

    final = train(config_from_args(args))
    print(f"trained model: {final}")

    players = [f"ppo:{final}", *args.arena_players.split(",")]
    summary = run_arena("splendor", players, games=args.arena_games, seed=args.seed, jobs=2,
                        out=Path(args.out) / "arena")
    print(format_table(summary))
