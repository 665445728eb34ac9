"""The rules core against every worked example of docs/klaverjas.md §8 under both rule sets, the
trump-choice schemes, matches of several deals, and properties of random legal play."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabletop_rl.games.klaverjas import rules as R

N, E, S, W = range(4)
BOTH = R.RULE_SETS


def legal_names(state: np.ndarray) -> set[str]:
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    return {R.card_name(a) for a in np.flatnonzero(mask)}


# --- §8.1 follow / trump obligations: (trump, leader, table, seat to act, hand, rotterdam, amsterdam)
FOLLOW_EXAMPLES = [
    ("H", N, ["AS", "7S"], ["9H", "8H", "KD", "10C"], {"9H", "8H"}, {"9H", "8H", "KD", "10C"}),
    ("H", W, ["AC", "10H", "7C"], ["AH", "8H", "KS"], {"AH"}, {"AH", "KS"}),
    ("H", N, ["KC", "9H"], ["AH", "7H", "10D"], {"AH", "7H"}, {"10D"}),
    ("S", W, ["KS", "AS", "8S"], ["9S", "7S", "AD"], {"9S"}, {"9S"}),
    ("S", W, ["QS", "JS", "7S"], ["9S", "8S", "AD"], {"9S", "8S"}, {"9S", "8S"}),
    ("D", N, ["8C", "AD"], ["10D", "7D"], {"10D", "7D"}, {"10D", "7D"}),
    ("H", E, ["AC"], ["7H", "AS"], {"7H"}, {"7H"}),
    ("D", N, ["7C", "QD"], ["AD", "8D", "KS"], {"AD"}, {"AD"}),
    ("H", W, ["10C"], ["AC", "7C", "JH"], {"AC", "7C"}, {"AC", "7C"}),
]


@pytest.mark.parametrize("rules", BOTH)
@pytest.mark.parametrize("example", range(1, len(FOLLOW_EXAMPLES) + 1))
def test_follow_examples(example, rules):
    trump, leader, table, hand, rotterdam, amsterdam = FOLLOW_EXAMPLES[example - 1]
    seat = (leader + len(table)) % 4
    state = R.position({seat: hand}, trump, leader, table, rules=rules)
    assert int(state[R.CURRENT]) == seat
    assert legal_names(state) == (rotterdam if rules == "rotterdam" else amsterdam)


# --- §8.2 trick winners, card points, roem: (trump, trick, winning card, card points, roem)
TRICK_EXAMPLES = [
    ("D", ["10C", "AC", "7D", "KC"], "7D", 25, 0),
    ("D", ["10C", "KC", "AS", "QC"], "10C", 28, 0),
    ("H", ["JH", "9H", "AS", "10S"], "JH", 55, 0),
    ("C", ["QC", "KC", "AC", "7H"], "AC", 18, 40),
    ("H", ["7S", "8S", "9S", "10S"], "10S", 10, 50),
    ("S", ["9H", "10H", "JH", "8D"], "10H", 12, 20),
    ("D", ["JD", "QD", "KD", "AD"], "JD", 38, 70),
    ("H", ["10H", "JH", "QH", "KH"], "JH", 37, 70),
    ("D", ["9D", "KD", "QD", "JD"], "JD", 41, 40),
    ("H", ["KH", "QH", "7C", "AS"], "KH", 18, 20),
    ("H", ["JC", "JD", "JH", "JS"], "JH", 26, 200),
    ("H", ["AC", "AD", "AH", "AS"], "AH", 44, 100),
    ("H", ["8C", "8D", "8H", "8S"], "8H", 0, 0),
]


@pytest.mark.parametrize("rules", BOTH)
@pytest.mark.parametrize("leader", [N, E])
@pytest.mark.parametrize("example", range(1, len(TRICK_EXAMPLES) + 1))
def test_trick_examples_played_as_the_last_trick(example, leader, rules):
    trump, trick, winning_card, points, roem = TRICK_EXAMPLES[example - 1]
    hands = {(leader + k) % 4: [card] for k, card in enumerate(trick)}
    state = R.position(hands, trump, leader, rules=rules)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    for card in trick:
        R.legal_mask(state, mask)
        assert R.checked_step(state, R.card_id(card), mask), f"{card} should be legal as a singleton hand"
    winner = (leader + trick.index(winning_card)) % 4
    team = R.team_of(winner)
    assert int(state[R.WINNER + 7]) == winner
    assert int(state[R.CARD_POINTS + team]) == points + R.LAST_TRICK_BONUS
    assert int(state[R.ROEM + team]) == roem
    assert int(state[R.CARD_POINTS + 1 - team]) == 0 and int(state[R.ROEM + 1 - team]) == 0
    assert int(state[R.PHASE]) == R.OVER


@pytest.mark.parametrize("example", range(1, len(TRICK_EXAMPLES) + 1))
def test_trick_examples_functions(example):
    trump, trick, winning_card, points, roem = TRICK_EXAMPLES[example - 1]
    cards = np.array([R.card_id(c) for c in trick], np.int64)
    suit = R.suit_id(trump)
    assert R.winning_position(cards, 4, suit) == trick.index(winning_card)
    assert R.trick_points(cards, suit) == points
    assert R.trick_roem(cards, suit, np.array(R.QUARTET_PRESETS["standard"]), True) == roem


# --- §8.3 deal results: (cards makers, roem makers, cards defenders, roem defenders, tricks makers,
#                         recorded makers, recorded defenders, defenders without pit for defenders)
DEAL_EXAMPLES = [
    (94, 20, 68, 0, 5, 114, 68, 68),
    (70, 20, 92, 50, 3, 0, 232, 232),
    (81, 0, 81, 0, 4, 0, 162, 162),
    (85, 0, 77, 20, 4, 0, 182, 182),
    (162, 40, 0, 0, 8, 302, 0, 0),
    (0, 0, 162, 30, 0, 0, 292, 192),
]


@pytest.mark.parametrize("maker_team", [0, 1])
@pytest.mark.parametrize("example", range(1, len(DEAL_EXAMPLES) + 1))
def test_deal_examples(example, maker_team):
    cm, rm, cd, rd, tm, makers, defenders, defenders_no_pit = DEAL_EXAMPLES[example - 1]
    d = 1 - maker_team
    cards, roem, tricks = (np.zeros(2, np.int64) for _ in range(3))
    cards[maker_team], cards[d], roem[maker_team], roem[d] = cm, cd, rm, rd
    tricks[maker_team], tricks[d] = tm, 8 - tm
    for pit_for_defenders, expected_defenders in ((True, defenders), (False, defenders_no_pit)):
        out = np.zeros(2, np.int64)
        R.score_deal(cards, roem, tricks, maker_team, pit_for_defenders, out)
        assert (int(out[maker_team]), int(out[d])) == (makers, expected_defenders)


@pytest.mark.parametrize("rules", BOTH)
def test_a_played_pit_deal_scores_through_the_state(rules):
    """Seat 0 holds every trump and leads them: N-S take all 8 tricks (pit) and are the makers."""
    hands = {N: ["JH", "9H", "AH", "10H", "KH", "QH", "8H", "7H"],
             E: ["7C", "8C", "9C", "10C", "7D", "8D", "9D", "10D"],
             S: ["JC", "QC", "KC", "AC", "JD", "QD", "KD", "AD"],
             W: ["7S", "8S", "9S", "10S", "JS", "QS", "KS", "AS"]}
    state = R.position(hands, "H", N, maker=N, rules=rules)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    while int(state[R.PHASE]) != R.OVER:
        R.legal_mask(state, mask)
        R.apply_action(state, int(np.flatnonzero(mask)[0]))
    roem = sum(int(r) for r in state[R.TRICK_ROEM:R.TRICK_ROEM + 8])
    assert int(state[R.TRICKS_WON]) == 8
    assert int(state[R.DEAL_SCORE]) == 162 + roem + R.PIT_BONUS
    assert int(state[R.DEAL_SCORE + 1]) == 0


# --- trump choice and matches ----------------------------------------------------------------------
def bid(state: np.ndarray, action: int) -> None:
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    assert R.checked_step(state, action, mask), f"action {action} should be legal in the bidding"


def test_forced_forehand_must_name_a_suit():
    state = R.new_state(seed=5)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    assert R.legal_mask(state, mask) == 4 and not mask[R.PASS]
    bid(state, R.NAME_TRUMP + 2)
    assert (int(state[R.TRUMP]), int(state[R.MAKER]), int(state[R.PHASE])) == (2, 0, R.PLAYING)
    assert int(state[R.CURRENT]) == 0


def test_free_with_pass_third_seat_makes_and_forehand_leads():
    state = R.new_state(seed=5, trump_selection="free_with_pass")
    bid(state, R.PASS)
    bid(state, R.PASS)
    bid(state, R.NAME_TRUMP + 1)
    assert (int(state[R.TRUMP]), int(state[R.MAKER]), int(state[R.CURRENT])) == (1, 2, 0)


def test_first_lead_maker_option():
    state = R.new_state(seed=5, trump_selection="free_with_pass", first_lead="maker")
    bid(state, R.PASS)
    bid(state, R.NAME_TRUMP + 3)
    assert int(state[R.CURRENT]) == 1 and int(state[R.LEADER]) == 1


def test_free_with_pass_all_pass_forces_forehand():
    state = R.new_state(seed=5, trump_selection="free_with_pass")
    for _ in range(4):
        bid(state, R.PASS)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    assert R.legal_mask(state, mask) == 4 and not mask[R.PASS] and int(state[R.CURRENT]) == 0


def test_free_with_pass_all_pass_redeals():
    state = R.new_state(seed=5, trump_selection="free_with_pass", all_pass="redeal")
    hands = state[R.HAND:R.HAND + 4].copy()
    for _ in range(4):
        bid(state, R.PASS)
    assert int(state[R.PHASE]) == R.BIDDING and int(state[R.CURRENT]) == 0 and int(state[R.DEALER]) == 3
    assert not np.array_equal(hands, state[R.HAND:R.HAND + 4])


def test_proposed_suit_second_proposal_then_redeal():
    state = R.new_state(seed=9, trump_selection="proposed_suit", all_pass="second_proposal_then_redeal")
    first = int(state[R.PROPOSED])
    hands = state[R.HAND:R.HAND + 4].copy()
    for _ in range(4):
        bid(state, R.PASS)
    second = int(state[R.PROPOSED])
    assert second != first and int(state[R.PROPOSALS]) == 2
    assert np.array_equal(hands, state[R.HAND:R.HAND + 4])
    for _ in range(4):
        bid(state, R.PASS)
    assert not np.array_equal(hands, state[R.HAND:R.HAND + 4]) and int(state[R.PROPOSALS]) == 1
    bid(state, R.PASS)
    proposed = int(state[R.PROPOSED])
    bid(state, R.ACCEPT)
    assert (int(state[R.TRUMP]), int(state[R.MAKER])) == (proposed, 1)


def test_proposed_suit_all_pass_forces_forehand_to_accept():
    state = R.new_state(seed=2, trump_selection="proposed_suit")
    for _ in range(4):
        bid(state, R.PASS)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    assert R.legal_mask(state, mask) == 1 and mask[R.ACCEPT]


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="rules"):
        R.new_state(rules="utrecht")
    with pytest.raises(ValueError, match="all_pass"):
        R.new_state(all_pass="second_proposal_then_redeal")
    with pytest.raises(ValueError, match="deals"):
        R.new_state(deals=0)
    with pytest.raises(ValueError, match="bad card"):
        R.card_id("11H")


def test_match_of_four_deals_rotates_the_dealer_and_sums_scores():
    state = R.new_state(seed=11, deals=4)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    forehands, totals = [], np.zeros(2, np.int64)
    while int(state[R.PHASE]) != R.OVER:
        if int(state[R.PHASE]) == R.BIDDING:
            forehands.append(int(state[R.CURRENT]))
        deals_before = int(state[R.DEAL_NO])
        count = R.legal_mask(state, mask)
        R.apply_action(state, R.pick_legal(mask, R.random_below(state, count)))
        if int(state[R.DEAL_NO]) > deals_before:
            totals += state[R.DEAL_SCORE:R.DEAL_SCORE + 2]
    assert forehands == [0, 1, 2, 3]
    assert list(state[R.MATCH_SCORE:R.MATCH_SCORE + 2]) == list(totals)


# --- properties ------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**40), rules=st.sampled_from(BOTH), scheme=st.sampled_from(R.TRUMP_SCHEMES))
def test_random_legal_play_completes_a_deal_and_accounts_every_point(seed, rules, scheme):
    state = R.new_state(seed=seed, rules=rules, trump_selection=scheme)
    rng = np.random.default_rng(seed)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    tricks, history = 0, None
    while int(state[R.PHASE]) != R.OVER:
        R.legal_mask(state, mask)
        legal = np.flatnonzero(mask)
        if int(state[R.PHASE]) == R.PLAYING:
            hand = int(state[R.HAND + state[R.CURRENT]])
            assert all((hand >> int(a)) & 1 for a in legal), "a legal card outside the hand"
            tricks += int(state[R.IN_TRICK]) == 3
            history = state.copy()
        R.apply_action(state, int(rng.choice(legal)))
    assert tricks == 8
    played = state[R.TRICK:R.TRICK + 32]
    assert sorted(played.tolist()) == list(range(32))
    assert int(state[R.CARD_POINTS] + state[R.CARD_POINTS + 1]) == R.DEAL_TOTAL
    roem = int(state[R.TRICK_ROEM:R.TRICK_ROEM + 8].sum())
    assert int(state[R.ROEM] + state[R.ROEM + 1]) == roem
    maker_team = R.team_of(int(state[R.MAKER]))
    made = int(state[R.DEAL_SCORE + maker_team]) > 0
    pit = R.PIT_BONUS if 8 in state[R.TRICKS_WON:R.TRICKS_WON + 2] else 0
    if made:
        assert int(state[R.DEAL_SCORE] + state[R.DEAL_SCORE + 1]) == R.DEAL_TOTAL + roem + pit
    else:
        assert int(state[R.DEAL_SCORE + 1 - maker_team]) == R.DEAL_TOTAL + roem + pit
    assert history is not None and int(history[R.TRICK_NO]) == 7


def test_batch_api_matches_single_matches():
    seeds = np.arange(40, dtype=np.int64) * 7919
    states = R.new_states(len(seeds), deals=2, rules="amsterdam", trump_selection="free_with_pass")
    R.reset_batch(states, seeds)
    steps = np.zeros(len(seeds), np.int64)
    R.play_random_batch(states, steps)
    for i, seed in enumerate(seeds):
        single = R.new_state(int(seed), deals=2, rules="amsterdam", trump_selection="free_with_pass")
        assert R.play_random(single) == steps[i]
        assert np.array_equal(single, states[i])
    assert (states[:, R.PHASE] == R.OVER).all()
