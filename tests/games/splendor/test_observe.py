"""The observation's per-player counts against the game's own record (``to_json``) and its start player, from every
seat; renaming the colours of an encoded position (``permute_colours``) against encoding the renamed position."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.observe import (
    COLOUR_PERMUTATIONS,
    encode_into,
    observation_layout,
    observation_size,
    observe,
    permute_colours,
)


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


def renamed_game(state: np.ndarray, cards: np.ndarray, nobles: np.ndarray,
                 perm: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The position with colour ``c`` renamed ``perm[c]``: the state row's bank, tokens and bonuses moved to the
    renamed colours, and the card and noble tables renamed (cards are ids in the row, so the renamed cards are
    the same ids in renamed tables: the rules core reads its tables as arguments)."""
    row = state.copy()
    for at in [R.BANK] + [R.player_base(p) + f for p in range(R.MAX_PLAYERS) for f in (R.P_TOKENS, R.P_BONUS)]:
        row[at + perm] = state[at:at + 5]
    new_cards = cards.copy()
    new_cards[:, R.CARD_BONUS] = perm[cards[:, R.CARD_BONUS]]
    new_cards[:, R.CARD_COST + perm] = cards[:, R.CARD_COST:R.CARD_COST + 5]
    new_nobles = nobles.copy()
    new_nobles[:, perm] = nobles
    return row, new_cards, new_nobles


def legal(state: np.ndarray, cards: np.ndarray, nobles: np.ndarray) -> np.ndarray:
    mask = np.zeros(R.NUM_ACTIONS, np.int8)
    R.legal_mask(state, cards, nobles, mask)
    return mask.astype(bool)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_renaming_the_colours_of_an_encoded_position_encodes_the_renamed_position(players: int) -> None:
    """For random positions of random games (every phase) and random renamings: every seat's observation, the legal
    mask and a policy over it, renamed by ``permute_colours``, are those of the renamed position; and a move played
    in both (renamed in the renamed one) leads to positions that are again each other's renaming."""
    cards, nobles = R.tables()
    rng = np.random.default_rng(players)
    size = observation_size(players)
    obs, renamed_obs = np.empty(size, np.float32), np.empty(size, np.float32)
    phases = set()
    for seed in range(4):
        state = R.new_states(1)[0]
        R.reset_state(state, seed, players, R.DEFAULT_MAX_PLIES)
        while state[R.STATUS] == R.PLAYING:
            index = int(rng.integers(len(COLOUR_PERMUTATIONS)))
            row, new_cards, new_nobles = renamed_game(state, cards, nobles, COLOUR_PERMUTATIONS[index])
            mask = legal(state, cards, nobles)
            policy = rng.random(R.NUM_ACTIONS).astype(np.float32) * mask
            action = int(rng.choice(np.flatnonzero(mask)))
            for viewer in range(players):
                encode_into(state, viewer, cards, nobles, obs)
                encode_into(row, viewer, new_cards, new_nobles, renamed_obs)
                got_obs, got_mask, got_policy = permute_colours(obs[None], mask[None], policy[None], [index])
                np.testing.assert_array_equal(got_obs[0], renamed_obs)
            np.testing.assert_array_equal(got_mask[0], legal(row, new_cards, new_nobles))
            assert sorted(got_policy[0].tolist()) == sorted(policy.tolist())
            renamed_action = int(np.argmax(permute_colours(obs[None], mask[None], np.eye(72)[None, action],
                                                           [index])[2]))
            assert got_policy[0, renamed_action] == policy[action]
            phases.add(int(state[R.PHASE]))
            R.apply_action(state, action, cards, nobles)
            R.apply_action(row, renamed_action, new_cards, new_nobles)
            np.testing.assert_array_equal(row, renamed_game(state, cards, nobles, COLOUR_PERMUTATIONS[index])[0])
    assert phases >= {R.MAIN, R.RETURN}


def test_the_identity_renames_nothing_and_a_foreign_observation_is_refused() -> None:
    game = SplendorGame(2, seed=5)
    obs, mask = game.observe(0)[None], game.legal_mask()[None]
    policy = mask / mask.sum()
    for got, given in zip(permute_colours(obs, mask, policy, [0]), (obs, mask, policy)):
        np.testing.assert_array_equal(got, given)
    with pytest.raises(ValueError, match="observations of 300 values are not Splendor's"):
        permute_colours(np.zeros((1, 300), np.float32), mask, policy, [0])
