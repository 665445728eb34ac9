"""Loading a Klaverjas position (``KlaverjasGame.from_json``): every position the rules reach loads and plays on;
a row the rules could not reach (a card twice or nowhere, counts and seats out of range, scores the tricks do
not give, fields of another phase) is refused with a one-line ``ValueError`` naming the field, and never
crashes the process, loads with corrupt cards, or leaves a match with no legal move."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tabletop_rl import klaverjas_env
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.game import KlaverjasGame

#: Option sets the positions are played under: every scheme, all-pass rule, first lead, stuk mode, kraken, target.
OPTION_SETS = (
    {},
    {"deals": 2, "kraken": True, "trump_selection": "proposed_suit", "all_pass": "second_proposal_then_redeal"},
    {"rules": "amsterdam", "stuk_mode": "declared_from_hand", "trump_selection": "free_with_pass",
     "all_pass": "redeal", "deals": 3},
    {"target": 300, "first_lead": "maker", "rules": "amsterdam", "kraken": True,
     "amsterdam_undertrump_vs_opponent": "forced", "trump_selection": "free_with_pass", "quartet_values": "all_100"},
    {"trump_selection": "proposed_suit", "all_pass": "forced_forehand", "pit_for_defenders": False, "deals": 2},
)
BOUNDARY = (-(2**63), -(2**31), -2, -1, 0, 1, 2, 3, 4, 7, 8, 31, 32, 64, 1_000_000, 2**31 - 1, 2**63 - 1)


def random_move(game: KlaverjasGame, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(game.legal_mask())
    assert legal.size, f"stuck: not over and no legal move in {game.to_json()}"
    return int(rng.choice(legal))


def played(seed: int, moves: int, **options) -> KlaverjasGame:
    """A match after ``moves`` random legal moves (fewer if it ends first)."""
    game, rng = KlaverjasGame.new(seed, **options), np.random.default_rng(seed)
    for _ in range(moves):
        if game.is_over:
            break
        game.step(random_move(game, rng))
    return game


def row_of(game: KlaverjasGame) -> list[int]:
    return [int(v) for v in game.state]


def load(row: list[int]) -> KlaverjasGame:
    return KlaverjasGame.from_json({"game": "klaverjas", "state": row})


def refused(row: list[int], field: str) -> str:
    """The one-line message of loading ``row``, which must be refused naming ``field``."""
    with pytest.raises(ValueError) as err:
        load(row)
    text = str(err.value)
    assert "\n" not in text and len(text) < 300, text
    assert field in text, text
    return text


def cards_once(state: np.ndarray) -> bool:
    """Every card exactly once across the four hands and the deal's tricks."""
    seen = [int(c) for c in state[R.TRICK:R.TRICK + 32] if c != -1]
    for seat in range(4):
        seen += R.cards_of(int(state[R.HAND + seat]))
    return sorted(seen) == list(range(R.NUM_CARDS))


def check_plays_out(game: KlaverjasGame, seed: int) -> None:
    """Random legal moves to the end of the loaded deal (every card once after each move, never stuck), then the
    rules core's own random play to the end of the match."""
    rng, deal_no = np.random.default_rng(seed), int(game.state[R.DEAL_NO])
    while not game.is_over and int(game.state[R.DEAL_NO]) == deal_no:
        game.step(random_move(game, rng))
        assert cards_once(game.state), game.to_json()
    R.play_random(game.state)
    assert game.is_over
    assert KlaverjasGame.from_json(game.to_json()) == game


# --- positions the rules reach load ---------------------------------------------------------------------------
@pytest.mark.parametrize("options", OPTION_SETS, ids=range(len(OPTION_SETS)))
def test_every_position_of_random_play_loads(options):
    rng = np.random.default_rng(1)
    for seed in range(4):
        game = KlaverjasGame.new(seed, **options)
        while True:
            assert load(row_of(game)) == game
            if game.is_over:
                break
            game.step(random_move(game, rng))


# --- the examples of corrupt rows ------------------------------------------------------------------------------
def test_in_trick_count_64_is_refused():
    row = row_of(played(3, 10))
    row[R.IN_TRICK] = 64
    refused(row, "in_trick")


def test_trick_number_a_million_is_refused():
    row = row_of(played(3, 10))
    row[R.TRICK_NO] = 1_000_000
    refused(row, "trick_no")


def test_forehand_minus_two_to_the_31_is_refused():
    row = row_of(played(3, 10))
    row[R.FOREHAND] = -(2**31)
    refused(row, "forehand")


def test_a_card_in_two_places_is_refused():
    game = played(3, 10)
    row = row_of(game)
    on_table = int(game.state[R.TRICK])  # the first card of the first trick
    row[R.HAND] |= 1 << on_table
    refused(row, R.card_name(on_table))


def test_a_missing_card_is_refused():
    row = row_of(played(3, 1))
    row[R.HAND + 2] &= row[R.HAND + 2] - 1  # drop seat 2's lowest card
    refused(row, "cards")


def test_a_hand_out_of_range_is_refused():
    row = row_of(played(3, 1))
    row[R.HAND] = -1
    refused(row, "hand[0]")


def test_card_points_the_tricks_do_not_give_are_refused():
    row = row_of(played(3, 12))
    assert row[R.TRICKS_WON] + row[R.TRICKS_WON + 1] >= 2
    row[R.CARD_POINTS] += 10
    refused(row, "card_points[0]")


def test_an_illegal_card_in_a_trick_is_refused():
    """A trick whose second card does not follow suit although its player held the suit."""
    game = played(3, 1)
    hands = [R.cards_of(int(game.state[R.HAND + s])) for s in range(4)]
    lead = hands[0][0]
    discard = next((c for c in hands[1] if R.suit_of(c) != R.suit_of(lead)), None)
    assert discard is not None and any(R.suit_of(c) == R.suit_of(lead) for c in hands[1])
    row = row_of(game)
    row[R.HAND] &= ~(1 << lead)
    row[R.HAND + 1] &= ~(1 << discard)
    row[R.TRICK:R.TRICK + 2] = [lead, discard]
    row[R.IN_TRICK], row[R.CURRENT] = 2, 2
    refused(row, "trick[0][1]")


def test_a_finished_match_that_should_go_on_is_refused():
    game = played(5, 200, deals=2)
    assert game.is_over
    row = row_of(game)
    row[R.NUM_DEALS_AT] = 3
    refused(row, "phase")


def test_fields_of_another_phase_are_refused():
    row = row_of(played(3, 0))  # bidding
    row[R.TRUMP] = 2
    refused(row, "trump")


def test_a_match_of_more_deals_than_allowed_is_refused():
    row = row_of(played(3, 0))
    row[R.NUM_DEALS_AT] = 2**62
    refused(row, "deals")
    with pytest.raises(ValueError, match="deals"):
        KlaverjasGame.new(1, deals=R.MAX_DEALS + 1)


def test_the_env_refuses_a_corrupt_position():
    row = row_of(played(3, 10))
    row[R.IN_TRICK] = 64
    env = klaverjas_env()
    with pytest.raises(ValueError, match="in_trick"):
        env.reset(options={"position": json.dumps({"game": "klaverjas", "state": row})})


# --- mutated positions: refused cleanly, or played to the end ----------------------------------------------------
def mutate(row: list[int], rng: np.random.Generator) -> list[int]:
    """``row`` with one to three cells changed: to a boundary value, a neighbour of the old value, or at random."""
    row = list(row)
    for i in rng.choice(R.STATE_SIZE, size=int(rng.integers(1, 4)), replace=False):
        kind = rng.random()
        new = (int(rng.choice(BOUNDARY)) if kind < 0.4 else row[i] + int(rng.choice([-3, -2, -1, 1, 2, 3]))
               if kind < 0.8 else int(rng.integers(-1, 40)))
        row[i] = new if new != row[i] else row[i] + 1  # a changed cell, past int64 at the ends
    return row


def fuzz(count: int, seed: int) -> dict[str, int]:
    """Load ``count`` mutated positions of random play; each accepted one must play to its end correctly."""
    rng = np.random.default_rng(seed)
    tally = {"refused": 0, "accepted": 0}
    for i in range(count):
        options = OPTION_SETS[i % len(OPTION_SETS)]
        row = mutate(row_of(played(int(rng.integers(2**31)), int(rng.integers(80)), **options)), rng)
        try:
            game = load(row)
        except ValueError as err:
            assert str(err).startswith("klaverjas position: ") and "\n" not in str(err), str(err)
            tally["refused"] += 1
            continue
        tally["accepted"] += 1
        check_plays_out(game, i)
    return tally


def test_mutated_positions_are_refused_or_play_to_the_end():
    tally = fuzz(1000, seed=0)
    assert tally["refused"] > 0 and tally["accepted"] > 0, tally


@pytest.mark.slow
def test_many_mutated_positions_are_refused_or_play_to_the_end():
    tally = fuzz(30_000, seed=1)
    assert tally["refused"] > 0 and tally["accepted"] > 0, tally
