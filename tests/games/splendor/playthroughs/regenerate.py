"""Write the golden Splendor playthroughs: seeded random games recorded ply by ply as JSON lines.

Run from the repository root after a deliberate change of behaviour (and review the diff):

    python tests/games/splendor/playthroughs/regenerate.py

Each file starts with a header line (how the game was set up), then one line per ply with the position,
the legal action names and the action chosen, and ends with the final position and its result.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from tabletop_rl.games.splendor.game import SplendorGame

HERE = Path(__file__).resolve().parent
# (num_players, seed): the game's seed also seeds the random choice of legal actions
GAMES = ((2, 1), (3, 2), (4, 3))
MAX_PLIES = 1000


def playthrough_path(num_players: int, seed: int) -> Path:
    """Where a playthrough lives, e.g. ``playthrough_path(2, 1).name == "splendor_2p_seed1.jsonl"``."""
    return HERE / f"splendor_{num_players}p_seed{seed}.jsonl"


def ply_record(game: SplendorGame) -> dict[str, Any]:
    """What a playthrough stores for the current position (the chosen action is added by the writer)."""
    record: dict[str, Any] = {"ply": game.ply, "position": game.to_dict(),
                              "legal": [game.move_name(a) for a in game.legal_actions()]}
    if game.is_over:
        record["result"] = {"winners": game.winners, "scores": game.scores, "truncated": game.is_truncated}
    return record


def play(num_players: int, seed: int) -> list[dict[str, Any]]:
    """The header plus one record per ply of a seeded random game."""
    rng = np.random.default_rng(seed)
    game = SplendorGame(num_players, seed=seed, max_plies=MAX_PLIES)
    lines: list[dict[str, Any]] = [{"game": "splendor", "num_players": num_players, "seed": seed,
                                    "max_plies": MAX_PLIES}]
    while not game.is_over:
        record = ply_record(game)
        action = int(rng.choice(game.legal_actions()))
        record["action"] = game.move_name(action)
        lines.append(record)
        game.step(action)
    lines.append(ply_record(game))
    return lines


def main() -> None:
    for num_players, seed in GAMES:
        path = playthrough_path(num_players, seed)
        text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in play(num_players, seed))
        path.write_text(text)
        print(f"wrote {path} ({text.count(chr(10)) - 1} records)")


if __name__ == "__main__":
    main()
