"""Splendor through OpenSpiel (needs the ``[openspiel]`` extra): random play through ``pyspiel``, and the
clone and resample that search costs.

    python benchmarks/bench_openspiel.py --seconds 3

"Steps" count every ``apply_action``, chance nodes included (a card drawn is one), next to the same random
legal play on ``SplendorGame`` itself, and OpenSpiel's C++ Kuhn poker and Python tic-tac-toe as yardsticks.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

import pyspiel
from open_spiel.python.games import tic_tac_toe  # noqa: F401  (registers python_tic_tac_toe)

from tabletop_rl import SplendorGame
from tabletop_rl.envs.openspiel import GAME_NAME
from tabletop_rl.ui.bench import print_table


def per_second(work: Callable[[], int], seconds: float) -> float:
    """Units of ``work`` (it returns how many it did) per second, over about ``seconds``, after one untimed
    run (first calls compile and load)."""
    work()
    done, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        done += work()
    return done / elapsed


def spiel_playout(game: Any, rng: random.Random) -> Callable[[], int]:
    """One random game through pyspiel: chance outcomes by their odds, players uniformly among legal moves."""
    def play() -> int:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, odds = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, odds)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
        return len(state.history())
    return play


def core_playout(num_players: int, rng: random.Random) -> Callable[[], int]:
    def play() -> int:
        game = SplendorGame(num_players, seed=rng.randrange(1 << 30))
        while not game.is_over:
            game.step(rng.choice(game.legal_actions()))
        return game.ply
    return play


def mid_game(game: Any, rng: random.Random, plies: int = 60) -> Any:
    state = game.new_initial_state()
    while len(state.history()) < plies or not state.is_player_node():
        choices = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        state.apply_action(rng.choice(choices))
    return state


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=3.0, help="duration of each measurement")
    args = ap.parse_args()
    rng = random.Random(0)
    rows = [("OpenSpiel kuhn_poker (C++), random play",
             per_second(spiel_playout(pyspiel.load_game("kuhn_poker"), rng), args.seconds)),
            ("OpenSpiel python_tic_tac_toe, random play",
             per_second(spiel_playout(pyspiel.load_game("python_tic_tac_toe"), rng), args.seconds))]
    for n in (2, 3, 4):
        game = pyspiel.load_game(GAME_NAME, {"players": n})
        rows.append((f"{GAME_NAME}, {n} players, random play (steps/s)", per_second(spiel_playout(game, rng),
                                                                                    args.seconds)))
        rows.append((f"SplendorGame, {n} players, random play (plies/s)", per_second(core_playout(n, rng),
                                                                                     args.seconds)))
    state = mid_game(pyspiel.load_game(GAME_NAME), rng)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    rows.append(("state.clone() at ply ~60 (per s)", per_second(lambda: bool(state.clone()), args.seconds)))
    rows.append(("resample_from_infostate at ply ~60 (per s)",
                 per_second(lambda: bool(state.resample_from_infostate(state.current_player(), sampler)),
                            args.seconds)))
    print_table(("what", "per second"), [(k, f"{v:>12,.0f}") for k, v in rows])


if __name__ == "__main__":
    main()
