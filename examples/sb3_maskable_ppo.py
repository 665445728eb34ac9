"""Train sb3-contrib's MaskablePPO on Splendor against a fixed opponent, then measure it.

    pip install -e ".[train]"
    python examples/sb3_maskable_ppo.py --opponent random --steps 200000

The learner plays one seat (random per game) of many games stepped inside numba by
SplendorVectorEnv; the other seats are played by the opponent inside the same numba call.
"""

import argparse
import time

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from tabletop_rl.envs.splendor_vector import SplendorVectorEnv

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--opponent", default="random", choices=["random", "greedy"], help="who plays the other seats")
parser.add_argument("--players", type=int, default=2, choices=[2, 3, 4])
parser.add_argument("--reward", default="dense", choices=["sparse", "dense"], help="dense adds points gained / 15")
parser.add_argument("--num-envs", type=int, default=256, help="games stepped together")
parser.add_argument("--steps", type=int, default=200_000, help="learner steps to train for")
parser.add_argument("--n-steps", type=int, default=64, help="rollout length per game between updates")
parser.add_argument("--batch-size", type=int, default=2048)
parser.add_argument("--epochs", type=int, default=4)
parser.add_argument("--lr", type=float, default=3e-4)
parser.add_argument("--eval-games", type=int, default=512, help="games played after training to measure")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest on small machines)")
parser.add_argument("--save", default="", help="path to save the model (.zip); empty: don't save")
args = parser.parse_args()

torch.set_num_threads(args.threads)
env = SplendorVectorEnv(num_envs=args.num_envs, opponent=args.opponent, num_players=args.players,
                        reward=args.reward).to_sb3()
env.seed(args.seed)
model = MaskablePPO("MlpPolicy", env, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.epochs,
                    learning_rate=args.lr, seed=args.seed, device="cpu", verbose=0)
start = time.perf_counter()
model.learn(total_timesteps=args.steps)
seconds = time.perf_counter() - start
print(f"trained {model.num_timesteps:,} steps in {seconds:.0f} s ({model.num_timesteps / seconds:,.0f} steps/s)")

# Evaluation: play on with the trained policy until enough games have ended, counting results.
results = []
obs = env.reset()
while len(results) < args.eval_games:
    actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    obs, _rewards, dones, infos = env.step(actions)
    results += [infos[i]["outcome"] for i in np.flatnonzero(dones)]
results = np.array(results[: args.eval_games])
print(f"vs {args.opponent}: won {np.mean(results > 0):.1%}, drew {np.mean(results == 0):.1%}, "
      f"lost {np.mean(results < 0):.1%} over {len(results)} games")
if args.save:
    model.save(args.save)
    print(f"saved {args.save}")
