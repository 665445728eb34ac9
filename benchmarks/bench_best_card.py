"""Load benchmark of the best-card service: a real uvicorn on loopback, a real HTTP client.

    python benchmarks/bench_best_card.py --requests 2000 --concurrency 8 [--model PATH|packaged|none]

Prints p50/p95/p99 latency (ms) and requests/s. Needs the [serve] extra (fastapi, uvicorn, httpx).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import threading
import time

import httpx
import numpy as np
import uvicorn

from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.ui.klaverjas_service import ServiceConfig, create_app


def requests_from_play(count: int, seed: int) -> list[dict]:
    """Requests for real positions: random legal deals, the seat to act at a random moment."""
    rng = np.random.default_rng(seed)
    bodies = []
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    while len(bodies) < count:
        state = R.new_state(seed=int(rng.integers(1 << 40)), rules=R.RULE_SETS[len(bodies) % 2])
        R.apply_action(state, R.NAME_TRUMP + int(rng.integers(4)))
        stop = int(rng.integers(32))
        for _ in range(stop):
            R.legal_mask(state, mask)
            R.apply_action(state, int(rng.choice(np.flatnonzero(mask))))
        bodies.append(request_for(state))
    return bodies


def request_for(state: np.ndarray) -> dict:
    seat, t, n = int(state[R.CURRENT]), int(state[R.TRICK_NO]), int(state[R.IN_TRICK])
    leader = int(state[R.LEADER + t])
    history = [{"leader": int(state[R.LEADER + i]),
                "plays": [R.card_name(int(c)) for c in state[R.TRICK + 4 * i:R.TRICK + 4 * i + 4]]}
               for i in range(t)]
    return {"hand": [R.card_name(c) for c in R.cards_of(int(state[R.HAND + seat]))],
            "table": [{"player": (leader + k) % 4, "card": R.card_name(int(state[R.TRICK + 4 * t + k]))}
                      for k in range(n)],
            "history": history, "trump": R.SUITS[int(state[R.TRUMP])], "playerPosition": seat,
            "leaderPosition": leader, "partnerPosition": (seat + 2) % 4, "makerPosition": int(state[R.MAKER]),
            "rules": R.RULE_SETS[int(state[R.RULE_SET])]}


async def load(port: int, bodies: list[dict], concurrency: int) -> tuple[list[float], float]:
    latencies: list[float] = []
    queue = list(bodies)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        async def worker() -> None:
            while queue:
                body = queue.pop()
                start = time.perf_counter()
                reply = await client.post("/v1/best-card", json=body)
                latencies.append((time.perf_counter() - start) * 1000)
                reply.raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return latencies, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--model", default="packaged", help="model.txt path, 'packaged', or 'none' (heuristic)")
    args = parser.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = ServiceConfig(model_path="" if args.model == "none" else args.model)
    server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    bodies = requests_from_play(args.requests, seed=0)
    asyncio.run(load(port, bodies[:50], args.concurrency))  # warm-up
    latencies, seconds = asyncio.run(load(port, bodies, args.concurrency))
    p50, p95, p99 = np.percentile(latencies, [50, 95, 99])
    print(f"model={args.model} requests={len(latencies)} concurrency={args.concurrency}")
    print(f"p50 {p50:.1f} ms  p95 {p95:.1f} ms  p99 {p99:.1f} ms  {len(latencies) / seconds:.0f} requests/s")
    server.should_exit = True


if __name__ == "__main__":
    main()
