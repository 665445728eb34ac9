"""Arena throughput past one process: the process pool against Ray, for CPU policies and for LLM players.

    python benchmarks/bench_scale.py                 # needs the [ray] extra (and [llm] for the LLM rows)

Prints two markdown tables.

- CPU policies: games/s of ``run_arena`` for each pairing with the process pool (``--jobs 1`` plays in this
  process; ``--jobs 2`` starts two spawned workers, which is part of each run) and with Ray (a local instance of
  ``--ray-cpus`` CPUs started once, bound to 127.0.0.1; a warm-up run first, so its workers are up), with 1 and 2
  games in flight. The wall time is the whole run: warm-up move, scheduling, writing every record.
- LLM players: a loopback OpenAI-compatible server (tests/helpers/fake_openai_server.py) that answers each
  request after ``--latency`` seconds; an ``llm`` seat against ``random``, ``--llm-games`` games with
  ``--llm-jobs`` in flight, at each server concurrency limit (the spec's ``concurrency=``). Games/s and the most
  requests the server ever had open at once: at most the limit, on either backend.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "helpers"))
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # read when Ray is imported: loopback only

import ray  # noqa: E402

from fake_openai_server import FakeOpenAIServer, legal_move_player  # noqa: E402
from tabletop_rl.arena import run_arena  # noqa: E402

CPU_PAIRINGS = (("greedy", "random", 40), ("mcts:simulations=200", "greedy", 8))


def games_per_s(**arena: Any) -> float:
    """Games per second of one ``run_arena(**arena)`` into a fresh folder."""
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        summary = run_arena(out=Path(out) / "run", progress=False, **arena)
        return summary["games"] / (time.perf_counter() - start)


def slow_server(latency: float, seed: int) -> FakeOpenAIServer:
    """The loopback server, answering every request with a legal move after ``latency`` seconds."""
    legal = legal_move_player(seed)
    return FakeOpenAIServer(lambda request: replace(legal(request), delay_s=latency))


def cpu_table(seed: int) -> list[str]:
    lines = ["| pairing | games | process, 1 job | process, 2 jobs | Ray, 1 in flight | Ray, 2 in flight |",
             "|---|---:|---:|---:|---:|---:|"]
    for a, b, games in CPU_PAIRINGS:
        runs = [(1, "process"), (2, "process"), (1, "ray"), (2, "ray")]
        games_per_s(players=[a, b], games=games, seed=seed, jobs=2, backend="ray")  # warm-up: Ray's workers start
        rates = [games_per_s(players=[a, b], games=games, seed=seed, jobs=jobs, backend=backend)
                 for jobs, backend in runs]
        lines.append(f"| {a} vs {b} | {games} | " + " | ".join(f"{r:.2f}" for r in rates) + " |")
    return lines


def llm_table(latency: float, games: int, jobs: int, limits: list[int]) -> list[str]:
    lines = ["| server concurrency limit | backend | games | games/s | most requests open at once |",
             "|---:|---|---:|---:|---:|"]
    for limit in limits:
        for backend in ("process", "ray"):
            with slow_server(latency, seed=limit) as server:
                spec = f"llm:model=fake,base_url={server.base_url},concurrency={limit}"
                rate = games_per_s(players=[spec, "random"], games=games, jobs=jobs, max_plies=10, backend=backend)
            lines.append(f"| {limit} | {backend} | {games} | {rate:.2f} | {server.max_in_flight} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ray-cpus", type=int, default=2, help="CPUs of the local Ray instance (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the server takes per request")
    parser.add_argument("--llm-games", type=int, default=32)
    parser.add_argument("--llm-jobs", type=int, default=32, help="LLM games in flight (default 32)")
    parser.add_argument("--limits", default="1,8,32", help="server concurrency limits (default 1,8,32)")
    args = parser.parse_args()
    ray.init(address="local", num_cpus=args.ray_cpus, include_dashboard=False, logging_level=logging.WARNING)
    try:
        print(f"## CPU policies ({os.cpu_count()} cores here, Ray with {args.ray_cpus} CPUs)\n")
        print("\n".join(cpu_table(args.seed)))
        print(f"\n## LLM players ({args.latency * 1000:.0f} ms per request, {args.llm_jobs} games in flight, "
              "10 plies per game)\n")
        print("\n".join(llm_table(args.latency, args.llm_games, args.llm_jobs,
                                  [int(x) for x in args.limits.split(",")])))
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
