"""Train sb3-contrib's MaskablePPO on Splendor against a fixed opponent, then measure it.

    pip install -e ".[train]"
    python examples/sb3_maskable_ppo.py --opponent random --steps 200000

The learner plays one seat (random per game) of many games stepped inside numba by
SplendorVectorEnv; the other seats are played by the opponent inside the same numba call.
"""

import argparse
import ast
import dataclasses
import inspect
import time
from dataclasses import dataclass

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from tabletop_rl import SplendorVectorEnv


@dataclass
class Args:
    opponent: str = "random"
    """who plays the other seats: random or greedy"""
    players: int = 2
    """players per game (2, 3 or 4)"""
    reward: str = "dense"
    """sparse: the end reward only; dense adds the learner's points gained / 15 each step"""
    num_envs: int = 256
    """games stepped together"""
    steps: int = 200_000
    """learner steps to train for"""
    n_steps: int = 64
    """rollout length per game between updates"""
    batch_size: int = 2048
    """minibatch size of the PPO update"""
    epochs: int = 4
    """PPO epochs per update"""
    lr: float = 3e-4
    """learning rate"""
    eval_games: int = 512
    """games played after training to measure the policy"""
    seed: int = 0
    """seed of PPO and of the games"""
    threads: int = 1
    """torch threads (1 is fastest on small machines)"""
    save: str = ""
    """path to save the model (.zip); empty: don't save"""


def parse_args() -> Args:
    """One ``--flag`` per field of ``Args``, its docstring as the help (what ``tyro.cli(Args)`` would do)."""
    body = ast.parse(inspect.getsource(Args)).body[0].body
    docs = {a.target.id: b.value.value for a, b in zip(body, body[1:])
            if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr)}
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in dataclasses.fields(Args):
        flag, text = "--" + f.name.replace("_", "-"), f"{docs.get(f.name, '')} (default: {f.default})"
        if isinstance(f.default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=text)
        else:
            parser.add_argument(flag, type=type(f.default), default=f.default, help=text)
    return Args(**vars(parser.parse_args()))


if __name__ == "__main__":
    args = parse_args()
    torch.set_num_threads(args.threads)
    # parallel=False: PPO's update holds a core, and numba threads waiting on a busy core stall.
    env = SplendorVectorEnv(num_envs=args.num_envs, opponent=args.opponent, num_players=args.players,
                            reward=args.reward, parallel=False).to_sb3()
    env.seed(args.seed)
    model = MaskablePPO("MlpPolicy", env, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.epochs,
                        learning_rate=args.lr, seed=args.seed, device="cpu", verbose=0)
    start = time.perf_counter()
    model.learn(total_timesteps=args.steps)
    seconds = time.perf_counter() - start
    print(f"trained {model.num_timesteps:,} steps in {seconds:.1f} s ({model.num_timesteps / seconds:,.0f} steps/s)")

    # Evaluation: play on with the trained policy until enough games have ended, counting results.
    results = []
    obs = env.reset()
    while len(results) < args.eval_games:
        actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        obs, _rewards, dones, infos = env.step(actions)
        results += [infos[i]["outcome"] for i in np.flatnonzero(dones)]
    results = np.array(results[: args.eval_games])
    print(f"vs {args.opponent} over {len(results)} games: win rate {np.mean(results > 0):.3f}, "
          f"draws {np.mean(results == 0):.3f}, losses {np.mean(results < 0):.3f}")
    if args.save:
        model.save(args.save)
        print(f"saved {args.save}")
