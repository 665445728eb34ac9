"""What limits a trained ``--algo az`` network: its shape, its fitting, or its data?

    python benchmarks/az_fit_check.py --model runs/az/checkpoints/iter_1160.pt --replay runs/az/replay.npz
    python benchmarks/az_fit_check.py --model M --replay R --steps 2000 --shapes 256,256 --distil 128,128
    python benchmarks/az_fit_check.py --model M --replay R --lrs "" --shapes 256,256 --shared 256,256 --distil

Holds out the newest 5% of the positions of a run's replay buffer (``replay.npz``, saved beside its checkpoints;
the positions the network has trained on least) and scores networks on them as the trainer's learning curves do
(``fresh_metrics``): the policy's cross-entropy to the search's visits less the visits' own entropy (what is left
to learn from the teacher), how often its most probable move is the most visited one, the value's squared error
to the results and how often its sign names the winner. The rows, each fitted on the other 95%:

- the model as trained;
- the model after ``--steps`` more minibatches of the trainer's update (``learn``: colours renamed, batches of
  256, the value loss weighted by ``--vf-coef``) at each learning rate of ``--lrs``, its Adam moments carried on:
  whether more fitting of the same data helps;
- a fresh network of each shape of ``--shapes`` (policy and value alike) fitted from scratch by the same update
  (Adam at 5e-4): whether a larger network fits the same data better;
- a fresh network of each shape of ``--shared``: one trunk of those layers under both heads (a linear policy
  head and a linear value head), fitted from scratch alike: whether the value learns more from the policy's
  features than from layers of its own;
- a network of each shape of ``--distil``, both parts fitted to the model's outputs (``fit_to``, as
  ``--value-net`` refits a value network): whether a smaller network can hold what the model learnt.

Prints a markdown table; the test suite never runs it. Needs the [train] extra (torch). The full default table
is about 25 minutes on one core.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from tabletop_rl.agents.ppo import build_network, load_checkpoint, network_widths
from tabletop_rl.games.splendor.rules import NUM_ACTIONS
from tabletop_rl.train.selfplay import hidden_layers
from tabletop_rl.train.splendor_az import (
    Args,
    Positions,
    ReplayBuffer,
    fit_to,
    fresh_metrics,
    held_out_rows,
    learn,
    positions_from,
)
from tabletop_rl.ui.bench import print_markdown


def load_buffer(path: Path) -> ReplayBuffer:
    with np.load(path) as saved:
        size, width = int(saved["size"]), int(saved["observations"].shape[1])
    buffer = ReplayBuffer(size, width)
    buffer.load(path)
    return buffer


HEADER = ("network", "minibatches", "policy: cross-entropy - entropy", "agreement", "value: squared error",
          "sign right", "seconds")


def scored(name: str, steps: int, net: Any, test: Positions, seconds: float) -> list[str]:
    """A row of the table: ``net`` scored on the held-out positions."""
    m = fresh_metrics(net, [test])
    return [name, f"{steps:,}", f"{m['fresh/policy_cross_entropy'] - m['fresh/target_entropy']:.4f}",
            f"{m['fresh/agreement']:.1%}", f"{m['fresh/value_mse']:.4f}", f"{m['fresh/value_sign_accuracy']:.1%}",
            f"{seconds:.0f}"]


def shared_network(size: int, widths: list[int]) -> Any:
    """``build_network``'s layout with one trunk under both heads: ``"vf"`` is the policy's hidden layers (the same
    modules, so the same weights) followed by a linear value head."""
    import torch

    net = build_network(size, widths, NUM_ACTIONS)
    head = torch.nn.Linear(widths[-1], 1)
    torch.nn.init.orthogonal_(head.weight, 1.0)
    torch.nn.init.zeros_(head.bias)
    net["vf"] = torch.nn.Sequential(net["pi"][:-1], head)
    return net


def fitted_fresh(name: str, net: Any, learning: ReplayBuffer, test: Positions, args: argparse.Namespace) -> list[str]:
    """A row for ``net`` fitted from scratch on ``learning`` by the trainer's update (Adam at 5e-4)."""
    import torch

    tick = time.perf_counter()
    train_on(net, torch.optim.Adam(net.parameters(), lr=5e-4, weight_decay=1e-4), learning, args)
    return scored(name, args.steps, net, test, time.perf_counter() - tick)


def train_on(net: Any, optimizer: Any, learning: ReplayBuffer, args: argparse.Namespace) -> None:
    """``--steps`` minibatches of the trainer's update, the value loss weighted by ``--vf-coef``."""
    learn(net, optimizer, learning, Args(train_steps=args.steps, vf_coef=args.vf_coef),
          np.random.default_rng(args.seed))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a .pt checkpoint of --algo az (with Adam's state: a run's)")
    ap.add_argument("--replay", required=True, help="the run's replay.npz")
    ap.add_argument("--steps", type=int, default=8000, help="minibatches of each fit")
    ap.add_argument("--lrs", default="1e-4,2e-5", help="learning rates of the model's further fitting")
    ap.add_argument("--shapes", nargs="*", default=["256,256", "512,512,512"], help="fresh networks' shapes")
    ap.add_argument("--shared", nargs="*", default=[], help="shapes of fresh networks whose heads share one trunk")
    ap.add_argument("--distil", nargs="*", default=["128,128", "64,64"], help="shapes fitted to the model")
    ap.add_argument("--vf-coef", type=float, default=Args.vf_coef, help="the value loss's weight in every fit")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    checkpoint = load_checkpoint(Path(args.model))
    hidden, value_hidden = network_widths(checkpoint["meta"])
    size = int(checkpoint["meta"]["observation_size"])
    buffer = load_buffer(Path(args.replay))
    fit, test_rows = held_out_rows(buffer)
    columns = buffer.data._asdict()
    test, learning = positions_from(columns, test_rows), ReplayBuffer(len(fit), size)
    learning.add(positions_from(columns, fit))

    def model() -> Any:
        net = build_network(size, hidden, NUM_ACTIONS, value_hidden)
        net.load_state_dict(checkpoint["model"])
        return net

    table = [scored("the model as trained", 0, model(), test, 0.0)]
    for lr in (float(x) for x in args.lrs.split(",") if x.strip()):
        tick, net = time.perf_counter(), model()
        optimizer = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=1e-4)
        optimizer.load_state_dict(checkpoint["optimizer"])
        for group in optimizer.param_groups:
            group["lr"] = lr
        train_on(net, optimizer, learning, args)
        table.append(scored(f"the model, fitted on at lr {lr:g}", args.steps, net, test, time.perf_counter() - tick))
    for shape in args.shapes:
        torch.manual_seed(args.seed)
        net = build_network(size, hidden_layers(shape), NUM_ACTIONS)
        table.append(fitted_fresh(f"fresh {shape}, fitted from scratch", net, learning, test, args))
    for shape in args.shared:
        torch.manual_seed(args.seed)
        net = shared_network(size, hidden_layers(shape, "--shared"))
        table.append(fitted_fresh(f"fresh {shape} shared by both heads, fitted from scratch", net, learning, test,
                                  args))
    for shape in args.distil:
        torch.manual_seed(args.seed)
        tick, teacher = time.perf_counter(), model()
        net = build_network(size, hidden_layers(shape), NUM_ACTIONS, hidden_layers(shape))
        for part in ("pi", "vf"):
            fit_to(net, teacher, part, buffer, args.steps, 512, "colours", np.random.default_rng(args.seed))
        table.append(scored(f"{shape}, fitted to the model", args.steps, net, test, time.perf_counter() - tick))
    print(f"{args.model}: {len(test.values):,} held-out positions (the newest 5% of {buffer.size:,})")
    print_markdown(HEADER, table)


if __name__ == "__main__":
    main()
