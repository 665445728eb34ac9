"""Train Splendor by self-play with RLlib's PPO on a few env runners, then measure it against random and greedy.

    pip install -e ".[ray]"
    python examples/rllib_selfplay.py --iterations 30 --runners 2 --envs-per-runner 4

Every seat plays the one shared module (``MaskedPPOTorchModule``: it never picks a move the action mask rules
out); ``selfplay_config`` from ``tabletop_rl.envs.rllib`` builds the config, the flags below fill in the
rest. Ray runs on this machine only, bound to 127.0.0.1. The evaluation plays the trained module's most
probable legal move in one seat (drawn per game) against our ``random`` and ``greedy`` policies in the other
seats (docs/rllib.md has the figures).
"""

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # read when ray is imported: stay on 127.0.0.1

import argparse  # noqa: E402
import ast  # noqa: E402
import dataclasses  # noqa: E402
import inspect  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import ray  # noqa: E402
import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

from tabletop_rl import SplendorGymEnv  # noqa: E402
from tabletop_rl.agents import make_policy  # noqa: E402
from tabletop_rl.envs.rllib import SHARED_MODULE, selfplay_config  # noqa: E402


@dataclass
class Args:
    iterations: int = 30
    """PPO iterations (each samples --batch env steps, then updates)"""
    runners: int = 2
    """env runners (Ray actors, one process each)"""
    envs_per_runner: int = 4
    """games each runner steps side by side"""
    players: int = 2
    """players per game (2, 3 or 4)"""
    reward: str = "score"
    """win: the end reward only; score adds each seat's points gained / 15 on every step"""
    batch: int = 4000
    """env steps sampled per iteration"""
    minibatch: int = 500
    """minibatch size of the PPO update"""
    epochs: int = 4
    """PPO epochs per iteration"""
    lr: float = 3e-4
    """learning rate"""
    hidden: str = "256,256"
    """hidden layer sizes of the policy and value networks"""
    eval_games: int = 100
    """games against each evaluation opponent"""
    eval_opponents: str = "random,greedy"
    """comma-separated policy specs to measure against"""
    seed: int = 0
    """seed of RLlib and of the evaluation games"""
    cpus: int = 0
    """CPUs Ray may use (0: one per runner plus one for the learner)"""


def parse_args() -> Args:
    """One ``--flag`` per field of ``Args``, its docstring as the help (what ``tyro.cli(Args)`` would do)."""
    body = ast.parse(inspect.getsource(Args)).body[0].body
    docs = {a.target.id: b.value.value for a, b in zip(body, body[1:])
            if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr)}
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in dataclasses.fields(Args):
        flag, text = "--" + f.name.replace("_", "-"), f"{docs.get(f.name, '')} (default: {f.default})"
        parser.add_argument(flag, type=type(f.default), default=f.default, help=text)
    return Args(**vars(parser.parse_args()))


def win_rate(module, opponent: str, args: Args) -> float:
    """Share of ``args.eval_games`` games the module wins (a shared win counts half) against ``opponent``."""
    policy = make_policy(opponent, game="splendor", seed=args.seed)
    env = SplendorGymEnv(opponent=policy, num_players=args.players)
    points = 0.0
    for game in range(args.eval_games):
        obs, info = env.reset(seed=args.seed + game)
        done = False
        while not done:
            batch = {Columns.OBS: {"observations": torch.from_numpy(obs)[None],
                                   "action_mask": torch.from_numpy(info["action_mask"])[None]}}
            with torch.inference_mode():
                logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
            obs, reward, terminated, truncated, info = env.step(int(logits.argmax()))
            done = terminated or truncated
        winners = info["winners"]
        points += (env.seat in winners) / len(winners) if winners else 0.0
    return points / args.eval_games


if __name__ == "__main__":
    args = parse_args()
    ray.init(num_cpus=args.cpus or args.runners + 1, _node_ip_address="127.0.0.1", include_dashboard=False,
             log_to_driver=False)
    hidden = tuple(int(h) for h in args.hidden.split(","))
    config = (selfplay_config("splendor", hidden=hidden, num_players=args.players, reward=args.reward)
              .env_runners(num_env_runners=args.runners, num_envs_per_env_runner=args.envs_per_runner)
              .learners(num_learners=0)  # the learner runs in this process
              .training(train_batch_size_per_learner=args.batch, minibatch_size=args.minibatch,
                        num_epochs=args.epochs, lr=args.lr)
              .debugging(seed=args.seed))
    algo = config.build_algo()

    start = time.perf_counter()
    for iteration in range(1, args.iterations + 1):
        runners = algo.train()["env_runners"]
        print(f"iteration {iteration}: {int(runners['num_env_steps_sampled_lifetime']):,} env steps, "
              f"{runners['num_episodes']} games ended, mean length {runners['episode_len_mean']:.0f} steps, "
              f"{time.perf_counter() - start:.0f} s", flush=True)

    module = algo.get_module(SHARED_MODULE)
    for opponent in args.eval_opponents.split(","):
        print(f"vs {opponent} over {args.eval_games} games: win rate {win_rate(module, opponent, args):.3f}")
    algo.stop()
    ray.shutdown()
