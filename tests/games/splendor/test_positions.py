"""Loading JSON positions: every invalid position is a ValueError naming the field; valid hand-written
positions round-trip exactly; finished games are recognised from the JSON alone."""

import copy
import json

import numpy as np
import pytest

from positions import game, position
from tabletop_rl.games.splendor.game import SplendorGame

FOUR_WHITE_FOUR_BLUE_FOUR_BLACK = [0, 1, 2, 3, 8, 9, 10, 11, 32, 33, 34, 35]  # meets nobles 0 and 1


def broken(change, **fields) -> dict:
    """A valid 2-player position with ``change(pos)`` applied to it."""
    pos = position(2, **fields)
    change(pos)
    return pos


def _move_market_card_to_bought(pos):
    pos["players"][0]["bought"].append(pos["market"]["1"][0])


def _drop_deck_card(pos):
    pos["decks"]["2"].pop(3)


def _noble_on_table_and_with_player(pos):
    pos["players"][1]["nobles"].append(pos["nobles"][0])


def _extra_red_in_bank(pos):
    pos["bank"]["red"] += 1


def _gold_missing(pos):
    pos["players"][0]["tokens"]["gold"] = 1


def _too_few_nobles(pos):
    pos["nobles"].pop()


def _unknown_top_key(pos):
    pos["score"] = [0, 0]


def _unknown_player_key(pos):
    pos["players"][1]["points"] = 0


def _unknown_colour_in_bank(pos):
    pos["bank"]["purple"] = 0


def _unknown_colour_in_hand(pos):
    pos["players"][0]["tokens"]["diamond"] = 0


def _level2_card_in_level1_deck(pos):
    pos["decks"]["1"][0], pos["decks"]["2"][0] = pos["decks"]["2"][0], pos["decks"]["1"][0]


def _level1_card_in_level3_market(pos):
    pos["players"][0]["bought"].append(pos["market"]["3"][2])
    pos["market"]["3"][2] = pos["decks"]["1"].pop()


def _empty_slot_with_cards_in_deck(pos):
    pos["decks"]["1"].append(pos["market"]["1"][1])
    pos["market"]["1"][1] = None


def _reserve_card_also_in_deck(pos):
    pos["players"][1]["reserved"].append({"card": pos["decks"]["3"][0], "blind": True})


@pytest.mark.parametrize(("change", "field"), [
    (_move_market_card_to_bought, r"players\[0\]\.bought\[0\]: card \d+ is also in market\.1\[0\]"),
    (_reserve_card_also_in_deck, r"players\[1\]\.reserved\[0\]: card \d+ is also in decks\.3\[0\]"),
    (_drop_deck_card, r"cards: card \d+ is nowhere"),
    (_noble_on_table_and_with_player, r"players\[1\]\.nobles\[0\]: noble 0 is also in nobles\[0\]"),
    (_too_few_nobles, r"nobles: 2 nobles .* has 3"),
    (_extra_red_in_bank, r"bank\.red: bank and players hold 5 red, a 2-player game has 4"),
    (_gold_missing, r"bank\.gold: bank and players hold 6 gold"),
    (_unknown_top_key, r"position: unknown key 'score'"),
    (_unknown_player_key, r"players\[1\]: unknown key 'points'"),
    (_unknown_colour_in_bank, r"bank: unknown key 'purple'"),
    (_unknown_colour_in_hand, r"players\[0\]\.tokens: unknown key 'diamond'"),
    (_level2_card_in_level1_deck, r"decks\.1\[0\]: card \d+ is not a level 1 card"),
    (_level1_card_in_level3_market, r"market\.3\[2\]: card \d+ is not a level 3 card"),
    (_empty_slot_with_cards_in_deck, r"market\.1\[1\]: empty slot while the level 1 deck still has cards"),
])
def test_invalid_position_names_the_field(change, field):
    with pytest.raises(ValueError, match=field):
        SplendorGame.from_json(broken(change))


@pytest.mark.parametrize(("pos", "field"), [
    (position(2, tokens={0: {"white": 4, "blue": 4, "green": 2}}, phase="return"),
     r"phase: 'return' but player 0 holds 10 tokens"),
    (position(2, tokens={1: {"white": 4, "blue": 4, "green": 3}}, current_player=1),
     r"phase: player 1 holds 11 tokens, so the phase must be 'return'"),
    (position(2, bought={0: FOUR_WHITE_FOUR_BLUE_FOUR_BLACK}, nobles=[0, 2, 3], phase="noble"),
     r"phase: 'noble' but player 0 qualifies for 1 noble"),
    (position(2, phase="dinner"), r"phase: 'dinner' is not one of"),
    (position(2, bought={0: [71, 73, 77, 7]}), r"final_round: player 0 has 15\+ points"),
    (position(2, final_round=True), r"final_round: true but no player has 15 points"),
    (position(2, tokens={1: {"white": 4, "blue": 4, "green": 3}}),
     r"players\[1\].tokens: 11 tokens; only the player to act may hold more than 10"),
    (position(2, player_nobles={1: [0]}, nobles=[1, 2]), r"players\[1\].nobles: noble 0 needs bonuses"),
    (position(2, bought={0: [71, 73, 77, 7]}, final_round=True, phase="return",
              tokens={0: {"white": 4, "blue": 4, "green": 3}}),
     r"phase: the final round is over once play is back at start_player"),
])
def test_phase_that_does_not_fit_names_the_field(pos, field):
    with pytest.raises(ValueError, match=field):
        SplendorGame.from_json(pos)


@pytest.mark.parametrize("text", ['{"num_players": 2,', "", "[1, 2", "not json"])
def test_malformed_json_text_is_a_value_error(text):
    with pytest.raises(ValueError, match="not valid JSON"):
        SplendorGame.from_json(text)


def test_noble_phase_with_two_qualifying_loads():
    g = game(position(2, bought={0: FOUR_WHITE_FOUR_BLUE_FOUR_BLACK}, nobles=[2, 0, 1], phase="noble"))
    assert g.phase == "noble" and g.legal_actions() == [61, 62]


def test_hand_written_position_round_trips_exactly():
    pos = position(3, tokens={0: {"red": 2, "gold": 1}, 2: {"white": 3, "black": 1, "gold": 2}},
                   bought={1: [0, 1, 3, 8, 9, 10, 15, 16, 40, 71]},
                   reserved={0: [(75, True)], 2: [12, (50, True)]},
                   player_nobles={1: [0]}, nobles=[9, 2, 4], decks={2: [69, 41]},
                   current_player=2, start_player=1, ply=37, passes_in_a_row=0, max_plies=None)
    g = game(pos)
    assert g.to_dict() == pos
    text = g.to_json()
    assert json.loads(text) == pos
    assert SplendorGame.from_json(text).to_json() == text
    assert g.scores == [0, 1 + 0 + 1 + 4 + 3, 0]  # card 15, card 16, card 40, card 71, noble 0


def test_loading_does_not_change_the_dict_given():
    pos = position(2)
    kept = copy.deepcopy(pos)
    game(pos).step("take:white,blue,green")
    assert pos == kept


def test_finished_by_final_round_back_at_start_player():
    pos = position(3, bought={2: [71, 73, 77, 7]}, final_round=True, current_player=1, start_player=1)
    g = game(pos)
    assert (g.is_over, g.is_truncated, g.winners) == (True, False, [2])
    assert not g.legal_mask().any()


def test_final_round_not_yet_back_at_start_player_is_still_playing():
    g = game(position(3, bought={2: [71, 73, 77, 7]}, final_round=True, current_player=0, start_player=1))
    assert (g.is_over, g.winners) == (False, [])


def test_finished_by_a_full_round_of_passes():
    g = game(position(2, bought={1: [7]}, passes_in_a_row=2))
    assert (g.is_over, g.is_truncated, g.winners) == (True, False, [1])


def test_ply_at_cap_is_truncated():
    g = game(position(2, ply=20, max_plies=20))
    assert (g.is_over, g.is_truncated, g.winners) == (True, True, [])
    assert not game(position(2, ply=19, max_plies=20)).is_over


def test_game_ended_by_the_rules_at_the_cap_is_not_truncated():
    g = game(position(2, bought={0: [71, 73, 77, 7]}, final_round=True, ply=20, max_plies=20))
    assert (g.is_over, g.is_truncated, g.winners) == (True, False, [0])


def _played(plies: int, seed: int) -> SplendorGame:
    g = SplendorGame(2, seed=seed)
    for ply in range(plies):
        g.step(g.legal_actions()[(seed + ply) % len(g.legal_actions())])
    return g


def test_a_state_row_loads_as_the_position_it_holds():
    for plies in (0, 7, 30):
        g = _played(plies, seed=plies)
        loaded = SplendorGame.from_state(g.state)
        assert loaded.to_dict() == g.to_dict()
        assert (loaded.legal_mask() == g.legal_mask()).all() and (loaded.observe(1) == g.observe(1)).all()
        assert loaded.state is not g.state


def test_a_state_row_the_engine_never_wrote_is_a_value_error_never_a_crash():
    """Replay files keep positions as state rows; a damaged one must be refused before it reaches a kernel."""
    rng = np.random.default_rng(0)
    base = _played(20, seed=3).state
    refused = 0
    for trial in range(600):
        if trial < 200:
            row = rng.integers(-32768, 32767, size=base.shape, dtype=np.int16)
        else:
            row = base.copy()
            row[rng.integers(0, len(row), size=3)] = rng.integers(-40, 120, size=3)
        try:
            loaded = SplendorGame.from_state(row)
        except ValueError as e:
            assert str(e).startswith("invalid position") and "\n" not in str(e)
            refused += 1
        else:
            assert SplendorGame.from_json(loaded.to_json()).to_dict() == loaded.to_dict()
    assert refused >= 200  # every random row, and the damaged ones that break a rule
    with pytest.raises(ValueError, match=r"a Splendor state is an int16\[\d+\] row, got int32\[\d+\]"):
        SplendorGame.from_state(base.astype(np.int32))
