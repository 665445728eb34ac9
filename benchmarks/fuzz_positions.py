"""Mutated positions against a game's loader: each is refused cleanly or plays to its end correctly.

    python benchmarks/fuzz_positions.py [--game klaverjas|splendor|space_conquest|all] [--positions 3000]
        [--seed 0] [--max-moves 20000] [--timeout 20]

Positions are reached by random legal play from fresh matches (Klaverjas under several option sets), written
with ``to_json``, and one to three of their integers are changed (at random, near the old value, or to a
boundary such as -2**31, 64 or 1,000,000). Each mutated position goes through the game contract in a child
process of its own: ``from_json``, then random legal moves (``pending_seats``, ``seat_mask``, ``move_record``,
``step_joint``) to the end, and the final position must load again. The table counts:

- refused: ``from_json`` raised ``ValueError``;
- clean: accepted and played to its end with every check holding;
- wrong: accepted but then duplicated or missing cards (Klaverjas: every card exactly once across the hands and
  the deal's tricks, after every move), stuck (not over, no legal move), an exception while playing, or a final
  position its own loader refuses;
- unfinished: still going after ``--max-moves`` moves (a legitimately long match, or one that never ends);
- timeout: the playout took longer than ``--timeout`` seconds;
- crash: the child died (SIGSEGV, SIGABRT ``malloc(): ...``).

``--show N`` prints up to N positions of each of the outcomes wrong, timeout and crash to stderr, to reproduce.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from tabletop_rl.agents import make_policy
from tabletop_rl.core.game import policy_answer
from tabletop_rl.games import GAMES, game_class

#: Values a mutated integer may take besides its neighbours: the boundaries that break unchecked loaders.
BOUNDARY = (-(2**63), -(2**31), -2, -1, 0, 1, 2, 3, 4, 7, 8, 31, 32, 64, 1_000_000, 2**31 - 1, 2**63 - 1)
#: Match options the positions are drawn under, per game (the defaults where a game has no entry).
OPTION_SETS: dict[str, list[dict[str, Any]]] = {
    "klaverjas": [{}, {"deals": 2, "kraken": True, "trump_selection": "proposed_suit",
                       "all_pass": "second_proposal_then_redeal"},
                  {"rules": "amsterdam", "stuk_mode": "declared_from_hand", "trump_selection": "free_with_pass",
                   "all_pass": "redeal", "deals": 3},
                  {"target": 300, "first_lead": "maker", "rules": "amsterdam", "kraken": True,
                   "amsterdam_undertrump_vs_opponent": "forced", "trump_selection": "free_with_pass"}],
    "splendor": [{"num_players": 2}, {"num_players": 3}, {"num_players": 4}],
}
OUTCOMES = ("refused", "clean", "wrong", "unfinished", "timeout", "crash")


def random_move(game: Any, policy: Any) -> dict[int, Any] | None:
    """The ``random`` policy's move for each pending seat, as ``step_joint`` takes them; None when no seat is
    pending or a pending seat has no legal move."""
    moves = {}
    for seat in game.pending_seats():
        if not np.any(game.seat_mask(seat)):
            return None
        moves[seat] = policy_answer(game, seat, policy)
    return moves


def start_position(name: str, rng: random.Random) -> str:
    """The JSON of a position reached by random legal play from a fresh match."""
    options = dict(rng.choice(OPTION_SETS.get(name, [{}])))
    players = options.pop("num_players", game_class(name).player_counts[0])
    game = game_class(name).new(rng.randrange(2**31), players, None, **options)
    policy = make_policy("random", game=name, seed=rng.randrange(2**31))
    for _ in range(rng.randrange(80)):
        moves = random_move(game, policy)
        if game.is_over or not moves:
            break
        game.step_joint(moves)
    return game.to_json()


def mutated(text: str, rng: random.Random) -> str:
    """``text`` with one to three of its integers changed (each to another value)."""
    data = json.loads(text)
    leaves: list[tuple[Any, Any]] = []

    def collect(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            if isinstance(value, int) and not isinstance(value, bool):
                leaves.append((node, key))
            else:
                collect(value)

    collect(data)
    for node, key in rng.sample(leaves, min(len(leaves), rng.choice((1, 1, 2, 3)))):
        old = node[key]
        kind = rng.random()
        new = (rng.choice(BOUNDARY) if kind < 0.4 else old + rng.choice((-3, -2, -1, 1, 2, 3)) if kind < 0.8
               else rng.randrange(-1, 40))
        node[key] = new if new != old else old + 1
    return json.dumps(data)


def klaverjas_cards_ok(game: Any) -> bool:
    """Every card exactly once across the four hands and the current deal's tricks."""
    from tabletop_rl.games.klaverjas import rules as R

    state = game.state
    seen = [int(c) for c in state[R.TRICK:R.TRICK + 32] if c != -1]
    for seat in range(4):
        hand = int(state[R.HAND + seat])
        if not 0 <= hand <= R.ALL_CARDS:
            return False
        seen += R.cards_of(hand)
    return sorted(seen) == list(range(R.NUM_CARDS))


#: A check that must hold after every move, per game (the loader's own checks cover the others).
INVARIANTS: dict[str, Callable[[Any], bool]] = {"klaverjas": klaverjas_cards_ok}


def play_out(name: str, text: str, max_moves: int, seed: int) -> str:
    """The outcome of loading ``text`` and playing it to its end with random legal moves."""
    cls = game_class(name)
    try:
        game = cls.from_json(text)
    except ValueError:
        return "refused"
    policy, holds = make_policy("random", game=name, seed=seed), INVARIANTS.get(name, lambda g: True)
    try:
        for _ in range(max_moves):
            if not holds(game):
                return "wrong"
            if game.is_over or game.is_truncated:
                cls.from_json(game.to_json())
                return "clean"
            moves = random_move(game, policy)
            if not moves:
                return "wrong"  # stuck: not over and a pending seat (or none at all) with no legal move
            game.step_joint(moves)
    except Exception:  # any exception after loading is a position the loader should have refused
        return "wrong"
    return "unfinished"


def child(conn: Connection, job: tuple[str, str, int, int]) -> None:
    conn.send(play_out(*job))


def isolated(job: tuple[str, str, int, int], timeout: float) -> str:
    """``play_out(*job)`` in a child process forked for it alone, so memory a position corrupts dies with it:
    "crash" when the child dies, "timeout" when it takes longer than ``timeout`` seconds."""
    context = mp.get_context("fork")  # the child starts with what this process has imported and compiled
    ours, theirs = context.Pipe()
    process = context.Process(target=child, args=(theirs, job), daemon=True)
    process.start()
    theirs.close()
    outcome = "timeout"
    try:
        if ours.poll(timeout):
            outcome = str(ours.recv())
    except EOFError:
        outcome = "crash"
    process.kill()
    process.join()
    ours.close()
    return outcome


def fuzz(name: str, positions: int, seed: int, max_moves: int, timeout: float, show: int) -> Counter:
    """Outcome counts of ``positions`` mutated positions of game ``name``."""
    rng = random.Random(f"{seed}:{name}")
    counts: Counter = Counter()
    play_out(name, start_position(name, rng), max_moves, 0)  # compiled here once, so no child compiles
    for i in range(positions):
        text = mutated(start_position(name, rng), rng)
        outcome = isolated((name, text, max_moves, i), timeout)
        counts[outcome] += 1
        if outcome in ("wrong", "timeout", "crash") and counts[outcome] <= show:
            print(f"{name} {outcome} (playout seed {i}): {text}", file=sys.stderr)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="klaverjas", choices=[*sorted(GAMES), "all"])
    parser.add_argument("--positions", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-moves", type=int, default=20_000)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds one playout may take")
    parser.add_argument("--show", type=int, default=0, help="positions of each bad outcome to print to stderr")
    args = parser.parse_args()
    print(f"| game | tried | {' | '.join(OUTCOMES)} | seconds |")
    print(f"|---|---:|{'---:|' * len(OUTCOMES)}---:|")
    for name in sorted(GAMES) if args.game == "all" else [args.game]:
        start = time.perf_counter()
        counts = fuzz(name, args.positions, args.seed, args.max_moves, args.timeout, args.show)
        cells = " | ".join(f"{counts[o]:,}" for o in OUTCOMES)
        print(f"| {name} | {args.positions:,} | {cells} | {time.perf_counter() - start:.0f} |", flush=True)


if __name__ == "__main__":
    main()
