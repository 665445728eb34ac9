"""The observation's per-player counts against the game's own record (``to_json``) and its start player, from every
seat."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.observe import observation_layout, observe


@pytest.mark.parametrize("players", [2, 3, 4])
def test_each_players_nobles_and_cards_are_counted_from_every_seat(players: int) -> None:
    layout = observation_layout(players)
    rng = np.random.default_rng(players)
    most_nobles = 0
    for seed in range(6):
        game = SplendorGame(players, seed=seed)
        while not game.is_over:
            record = json.loads(game.to_json())["players"]
            for viewer in range(players):
                obs = observe(game.state, viewer)
                for k in range(players):
                    seat = record[(viewer + k) % players]
                    assert obs[layout[f"player[{k}].nobles_taken"]][0] == len(seat["nobles"])
                    assert obs[layout[f"player[{k}].cards_bought"]][0] == len(seat["bought"])
                    most_nobles = max(most_nobles, len(seat["nobles"]))
            game.step(int(rng.choice(np.flatnonzero(game.legal_mask()))))
    assert most_nobles >= 2  # the games reach players holding several nobles


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_start_player_is_marked_from_every_seat(players: int) -> None:
    """``start_player`` marks the start player's seat counted from the viewer's, in turn order."""
    field = observation_layout(players)["start_player"]
    position = json.loads(SplendorGame(players, seed=3).to_json())
    for start in range(players):
        game = SplendorGame.from_json({**position, "start_player": start})
        for viewer in range(players):
            marked = np.flatnonzero(observe(game.state, viewer)[field])
            assert marked.tolist() == [(start - viewer) % players], (start, viewer)
