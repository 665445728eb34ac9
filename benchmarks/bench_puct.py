"""How fast the ``az`` search evaluates its network, and how fast it searches. Prints two tables; never part
of the test suite.

    python benchmarks/bench_puct.py                      # az:default's network, 1 thread
    python benchmarks/bench_puct.py --model runs/az/final.pt --simulations 200,1000,2000
    python benchmarks/bench_puct.py --simulations 700 --options mix=0,c=1.5   # without the heuristic blend

Table 1, network evaluations per second (a policy and a value forward pass for one position), on real
positions (the observations of greedy self-play games):

- ``numba, one at a time``: ``mlp_forward`` as the search calls it, once per position, inside numba;
- ``torch, batch of B``: the same two MLPs in torch (one thread) over B positions at a time, as a search
  that gathered B leaves before evaluating them (virtual loss) would call it.

Table 2, the search itself from those positions: milliseconds per move, the simulations run a move (fewer than
the budget where the search stops early), simulations per second, tree nodes per second (every simulation but
the ones that end in a finished game adds a node).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tabletop_rl.agents import make_policy
from tabletop_rl.agents.search.splendor_puct import mlp_forward
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.observe import observe
from tabletop_rl.ui.bench import print_markdown


def positions(count: int, seed: int) -> list[SplendorGame]:
    """``count`` mid-game positions from greedy games (copies, one per ply)."""
    greedy = make_policy("greedy", game="splendor", seed=seed)
    found: list[SplendorGame] = []
    game_seed = seed
    while len(found) < count:
        game = SplendorGame(2, seed=game_seed)
        while not game.is_over and len(found) < count:
            found.append(game.clone())
            game.step(greedy.act(None, game.legal_mask(), game.policy_info(game.current_player)))
        game_seed += 1
    return found


def numba_rate(net, observations: np.ndarray, seconds: float) -> float:
    """Evaluations per second of the policy and value MLPs inside numba, one position at a time."""
    pw, pb, vw, vb = net
    mlp_forward(observations[0], pw, pb)  # compiled (or loaded from the cache) outside the clock
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for obs in observations:
            mlp_forward(obs, pw, pb)
            mlp_forward(obs, vw, vb)
        done += len(observations)
    return done / (time.perf_counter() - start)


def torch_rate(net, observations: np.ndarray, batch: int, seconds: float) -> float | None:
    """Evaluations per second of the same MLPs in torch (one thread), ``batch`` positions per call."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)

    def mlp(weights, biases) -> torch.nn.Sequential:
        layers: list[torch.nn.Module] = []
        for i, (w, b) in enumerate(zip(weights, biases)):
            linear = torch.nn.Linear(*w.shape)
            linear.weight.data, linear.bias.data = torch.from_numpy(w.T.copy()), torch.from_numpy(b.copy())
            layers += [linear] if i == len(weights) - 1 else [linear, torch.nn.Tanh()]
        return torch.nn.Sequential(*layers)

    pi, vf = mlp(net[0], net[1]), mlp(net[2], net[3])
    tiled = np.resize(observations, (max(len(observations), batch), observations.shape[1]))  # >= one batch
    chunks = [torch.from_numpy(tiled[i:i + batch]) for i in range(0, len(tiled) - batch + 1, batch)]
    done, start = 0, time.perf_counter()
    with torch.inference_mode():
        while time.perf_counter() - start < seconds:
            for x in chunks:
                pi(x)
                vf(x)
                done += len(x)
    return done / (time.perf_counter() - start)


def search_rates(spec: str, games: list[SplendorGame], simulations: int) -> tuple[float, float, float, float]:
    """ms per move, simulations run per move, simulations/s and nodes/s of ``spec`` at ``simulations`` from each
    position."""
    policy = make_policy(f"{spec},simulations={simulations}", game="splendor", seed=0)
    views = [(game.legal_mask(), game.policy_info(game.current_player)) for game in games]  # outside the clock
    policy.act(None, *views[0])  # compiled outside the clock too
    nodes_before, sims, start = policy.stats.nodes, 0, time.perf_counter()
    for mask, view in views:
        policy.act(None, mask, view)
        sims += policy.simulations_run
    seconds = time.perf_counter() - start
    return 1000 * seconds / len(games), sims / len(games), sims / seconds, (policy.stats.nodes - nodes_before) / seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="default", help="the az:PATH network (default: az:default's)")
    ap.add_argument("--positions", type=int, default=400, help="positions from greedy games")
    ap.add_argument("--batches", default="1,8,32,256", help="torch batch sizes")
    ap.add_argument("--simulations", default="200,1000", help="search budgets of table 2")
    ap.add_argument("--options", default="", help="more az options for table 2, e.g. mix=0 (the network's "
                                                 "value alone)")
    ap.add_argument("--seconds", type=float, default=2.0, help="time per network measurement")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    spec = f"az:{args.model}"
    games = positions(args.positions, args.seed)
    net = make_policy(spec, game="splendor").net
    observations = np.stack([observe(g.state, g.current_player) for g in games]).astype(np.float32)
    rows: list[tuple[str, ...]] = [("numba, one at a time", f"{numba_rate(net, observations, args.seconds):,.0f}")]
    for batch in (int(b) for b in args.batches.split(",")):
        rate = torch_rate(net, observations, batch, args.seconds)
        rows.append((f"torch (1 thread), batch of {batch}", "torch not installed" if rate is None else f"{rate:,.0f}"))
    print_markdown(("network evaluation (policy + value)", "positions/s"), rows)
    print()
    searched = games[:: max(1, len(games) // 100)]
    rows.clear()
    if args.options:
        spec += "," + args.options
    for simulations in (int(s) for s in args.simulations.split(",")):
        ms, run, sims, nodes = search_rates(spec, searched, simulations)
        rows.append((f"{spec},simulations={simulations}", f"{ms:.1f}", f"{run:,.0f}", f"{sims:,.0f}", f"{nodes:,.0f}"))
    print_markdown(("search", "ms/move", "simulations run a move", "simulations/s", "nodes/s"), rows)


if __name__ == "__main__":
    main()
