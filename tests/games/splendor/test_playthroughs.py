"""Golden playthroughs: replaying each recorded game must reproduce every position, legal action list and
result exactly, so any change of behaviour shows up here (regenerate deliberately with
``python tests/games/splendor/playthroughs/regenerate.py`` and review the diff)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from playthroughs.regenerate import GAMES, playthrough_path, ply_record
from tabletop_rl.games.splendor.game import SplendorGame


def _first_difference(expected: Any, got: Any, where: str = "") -> str:
    """Path and values of the first place two JSON values differ, e.g. ``position.bank.red: 3 != 2``."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in sorted(set(expected) | set(got)):
            if expected.get(key) != got.get(key):
                return _first_difference(expected.get(key), got.get(key), f"{where}.{key}".lstrip("."))
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            if e != g:
                return _first_difference(e, g, f"{where}[{i}]")
    return f"{where}: recorded {json.dumps(expected)}, now {json.dumps(got)}"


@pytest.mark.parametrize(("num_players", "seed"), GAMES)
def test_replay_matches_the_recorded_playthrough(num_players: int, seed: int) -> None:
    path = playthrough_path(num_players, seed)
    header, *records = (json.loads(line) for line in path.read_text().splitlines())
    assert (header["num_players"], header["seed"]) == (num_players, seed), path.name
    game = SplendorGame(num_players, seed=seed, max_plies=header["max_plies"])
    for record in records:
        now = ply_record(game)
        if "action" in record:
            now["action"] = record["action"]
        assert now == record, f"{path.name} differs at ply {record['ply']}: {_first_difference(record, now)}"
        if "action" in record:
            game.step(record["action"])
    assert game.is_over and "result" in records[-1], f"{path.name}: the recording ended, the replay did not"
