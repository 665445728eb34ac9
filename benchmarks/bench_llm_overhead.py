"""Our per-move overhead for LLM players: what a move costs besides the model itself.

    python benchmarks/bench_llm_overhead.py --moves 300

Positions come from seeded random games. Measured per move, in milliseconds:
  prompt building     system + user message (the seat's text board, numbered legal moves)
  reply parsing       JSON extraction + move validation against the legal moves
  policy, in-process  a whole ``LLMPolicy.act`` with an instant in-process backend (request building,
                      accounting; no HTTP): the overhead we add per move, target < 2 ms
  policy, loopback    a whole ``act`` through the ``openai`` SDK to a loopback server that answers at once
                      (adds the SDK and the local HTTP round trip)
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "helpers"))

from fake_openai_server import FakeOpenAIServer, legal_ids, legal_move_player  # noqa: E402
from tabletop_rl.agents.llm.client import ChatReply, ChatRequest  # noqa: E402
from tabletop_rl.agents.llm.policy import LLMPolicy, parse_reply  # noqa: E402
from tabletop_rl.agents.llm.splendor import PROMPT  # noqa: E402
from tabletop_rl.games.splendor.game import SplendorGame  # noqa: E402

TARGET_MS = 2.0


def positions(count: int, seed: int = 0) -> list[SplendorGame]:
    """``count`` main-phase positions from random 2-player games."""
    rng = random.Random(seed)
    found: list[SplendorGame] = []
    while len(found) < count:
        game = SplendorGame(2, seed=rng.randrange(1 << 30))
        for _ in range(rng.randrange(0, 60)):
            if game.is_over:
                break
            game.step(rng.choice(game.legal_actions()))
        if not game.is_over and game.phase == "main" and len(game.legal_actions()) > 1:
            found.append(game)
    return found


class Instant:
    """A backend that answers at once with the first legal id of the schema."""

    def complete(self, request: ChatRequest) -> ChatReply:
        legal = legal_ids(request.response_format["json_schema"]["schema"]["properties"]["action"])
        return ChatReply(json.dumps({"reasoning": "the first legal move", "action": legal[0]}), "stop")


def per_move_ms(games: list[SplendorGame], work: Callable[[SplendorGame], object]) -> float:
    work(games[0])  # warm-up: imports, numba caches
    start = time.perf_counter()
    for game in games:
        work(game)
    return (time.perf_counter() - start) / len(games) * 1000


def act_with(policy: LLMPolicy) -> Callable[[SplendorGame], int]:
    def act(game: SplendorGame) -> int:
        return policy.act(None, game.legal_mask(), game.policy_info(game.current_player))
    return act


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moves", type=int, default=300, help="positions measured per row")
    args = ap.parse_args()
    games = positions(args.moves)

    def build(game: SplendorGame) -> str:
        return PROMPT.system_prompt + PROMPT.user_message(game, game.current_player, game.legal_actions(), True)

    def parse(game: SplendorGame) -> object:
        legal = game.legal_actions()
        _, value = parse_reply(json.dumps({"reasoning": "x" * 300, "action": legal[-1]}))
        return PROMPT.parse_action(value, game, game.current_player, legal)

    rows = [("prompt building", per_move_ms(games, build)),
            ("reply parsing + validation", per_move_ms(games, parse)),
            ("policy, in-process backend", per_move_ms(games, act_with(LLMPolicy(seed=0, backend=Instant()))))]
    with FakeOpenAIServer(legal_move_player(0)) as server:
        policy = LLMPolicy(seed=0, base_url=server.base_url, model="fake")
        rows.append(("policy, loopback server via SDK", per_move_ms(games, act_with(policy))))
    prompt_chars = sum(len(build(g)) for g in games) / len(games)
    print(f"{len(games)} positions; mean prompt {prompt_chars:,.0f} characters; target for our overhead "
          f"< {TARGET_MS} ms per move\n")
    width = max(len(name) for name, _ in rows)
    print(f"{'measure':<{width}}  ms/move")
    print(f"{'-' * width}  -------")
    for name, ms in rows:
        print(f"{name:<{width}}  {ms:7.3f}")


if __name__ == "__main__":
    main()
