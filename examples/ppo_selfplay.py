"""PPO self-play for Splendor with the library's trainer, then a tournament of the trained model.

    pip install -e ".[train]"
    python examples/ppo_selfplay.py --steps 2_000_000 --out runs/ppo --arena-games 100

A thin wrapper around the trainer of `tabletop train splendor`: the training knobs are the fields of
``TrainConfig`` (the same flags as `tabletop train splendor --help`) and the PPO loop itself lives in
``tabletop_rl.train.splendor_ppo.train``: MaskablePPO on SplendorVectorEnv, the learner playing one
random seat per game against a pool of its frozen past selves, random and greedy (docs/training.md).
For MaskablePPO's loop in one short file (against a fixed opponent), see examples/sb3_maskable_ppo.py.
"""

import argparse
import ast
import dataclasses
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path

from tabletop_rl.arena import format_table, run_arena
from tabletop_rl.core.extras import TRAIN_MODULES, missing_extra
from tabletop_rl.train.splendor_ppo import TrainConfig, train


@dataclass
class Args(TrainConfig):
    """Every field of TrainConfig (steps, out, num_envs, lr, ...), plus the final tournament's knobs."""

    arena_games: int = 100
    """games per pairing in the final tournament"""
    arena_players: str = "greedy,random"
    """policies the trained model meets (comma-separated specs)"""
    arena_jobs: int = 2
    """worker processes playing the tournament"""


def parse_args() -> Args:
    """One ``--flag`` per field of ``Args``: its docstring (or TrainConfig's help) as the help text."""
    body = ast.parse(inspect.getsource(Args)).body[0].body
    docs = {a.target.id: b.value.value for a, b in zip(body, body[1:])
            if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr)}
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in dataclasses.fields(Args):
        doc = docs.get(f.name) or f.metadata.get("help", "")
        flag, text = "--" + f.name.replace("_", "-"), f"{doc} (default: {f.default})"
        if isinstance(f.default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=text)
        else:
            parser.add_argument(flag, type=type(f.default), default=f.default, help=text)
    return Args(**vars(parser.parse_args()))


if __name__ == "__main__":  # the guard matters: the arena's worker processes import this file again
    args = parse_args()

    # 1. Train: checkpoints, eval.csv, TensorBoard logs and config.json go to --out.
    config = TrainConfig(**{f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)})
    try:
        final = train(config)
    except ModuleNotFoundError as e:  # the [train] extra is missing: one line, not a traceback
        module = (e.name or "").split(".")[0]
        if module not in TRAIN_MODULES:
            raise
        sys.exit(f"ppo_selfplay.py: error: {missing_extra(module, 'ppo_selfplay.py', 'train')}")
    print(f"trained model: {final}")

    # 2. Tournament: the model (as the policy spec "ppo:PATH") against the baselines, every pairing.
    players = [f"ppo:{final}", *args.arena_players.split(",")]
    summary = run_arena("splendor", players, games=args.arena_games, seed=args.seed, jobs=args.arena_jobs,
                        out=Path(args.out) / "arena")
    print(format_table(summary))
