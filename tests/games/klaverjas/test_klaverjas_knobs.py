"""The rule knobs of docs/klaverjas.md (§1 match target, §3 kraken, §5.3 forced undertrumping, §6 quartet values
and stuk declared from hand) on hand-built positions, their checking, and random play under every
combination."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabletop_rl.games.klaverjas import rules as R

N, E, S, W = range(4)


def legal(state: np.ndarray) -> set[str]:
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    return {R.card_name(a) if a < R.NUM_CARDS else a for a in np.flatnonzero(mask)}


def play(state: np.ndarray, *cards: str) -> None:
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    for card in cards:
        R.legal_mask(state, mask)
        assert R.checked_step(state, R.card_id(card), mask), f"{card} should be legal"


def act(state: np.ndarray, action: int) -> None:
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    assert R.checked_step(state, action, mask), f"action {action} should be legal"


def play_out(state: np.ndarray, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    deal_no = int(state[R.DEAL_NO])
    while int(state[R.PHASE]) != R.OVER and int(state[R.DEAL_NO]) == deal_no:
        R.legal_mask(state, mask)
        R.apply_action(state, int(rng.choice(np.flatnonzero(mask))))


def base_score(state: np.ndarray) -> list[int]:
    """The deal score docs/klaverjas.md §7 gives the finished deal's points, before any kraken multiplier."""
    out = np.zeros(2, np.int64)
    R.score_deal(state[R.CARD_POINTS:R.CARD_POINTS + 2], state[R.ROEM:R.ROEM + 2],
                 state[R.TRICKS_WON:R.TRICKS_WON + 2], R.team_of(int(state[R.MAKER])), True, out)
    return out.tolist()


# --- kraken (§3) -------------------------------------------------------------------------------------
def test_kraken_off_by_default_play_starts_after_trump():
    state = R.new_state(seed=1)
    act(state, R.NAME_TRUMP + 2)
    assert int(state[R.PHASE]) == R.PLAYING


def test_both_defenders_pass_and_play_starts_undoubled():
    state = R.new_state(seed=1, kraken=True)
    act(state, R.NAME_TRUMP + 2)  # seat 0 makes hearts
    assert int(state[R.PHASE]) == R.DOUBLING and int(state[R.CURRENT]) == E
    assert legal(state) == {R.PASS, R.KRAAK}
    act(state, R.PASS)
    assert int(state[R.CURRENT]) == W and legal(state) == {R.PASS, R.KRAAK}
    act(state, R.PASS)
    assert int(state[R.PHASE]) == R.PLAYING and int(state[R.CURRENT]) == N and int(state[R.MULTIPLIER]) == 1


def test_kraak_then_the_makers_may_redouble_in_turn():
    state = R.new_state(seed=1, kraken=True)
    act(state, R.NAME_TRUMP + 2)
    act(state, R.PASS)
    act(state, R.KRAAK)  # W doubles
    assert int(state[R.MULTIPLIER]) == 2 and int(state[R.CURRENT]) == N
    assert legal(state) == {R.PASS, R.REKRAAK}
    act(state, R.PASS)
    assert int(state[R.CURRENT]) == S
    act(state, R.REKRAAK)
    assert int(state[R.MULTIPLIER]) == 4 and int(state[R.PHASE]) == R.PLAYING


@pytest.mark.parametrize("actions, multiplier", [((R.PASS, R.PASS), 1), ((R.KRAAK, R.PASS, R.PASS), 2),
                                                 ((R.KRAAK, R.REKRAAK), 4)])
def test_the_deal_result_is_multiplied(actions, multiplier):
    state = R.new_state(seed=7, kraken=True, first_lead="maker", trump_selection="free_with_pass")
    act(state, R.PASS)
    act(state, R.NAME_TRUMP + 3)  # seat 1 makes spades; the defenders are seats 2 and 0
    assert int(state[R.CURRENT]) == S
    for action in actions:
        act(state, action)
    assert int(state[R.CURRENT]) == E  # first_lead=maker
    play_out(state)
    expected = [multiplier * v for v in base_score(state)]
    assert state[R.DEAL_SCORE:R.DEAL_SCORE + 2].tolist() == expected
    assert state[R.MATCH_SCORE:R.MATCH_SCORE + 2].tolist() == expected


def test_the_next_deal_starts_undoubled():
    state = R.new_state(seed=7, kraken=True, deals=2)
    act(state, R.NAME_TRUMP)
    act(state, R.KRAAK)
    act(state, R.REKRAAK)
    play_out(state)
    assert int(state[R.DEAL_NO]) == 1 and int(state[R.PHASE]) == R.BIDDING and int(state[R.MULTIPLIER]) == 1


# --- match to a target score (§1) -------------------------------------------------------------------
def last_trick(target: int, match_score: list[int]) -> np.ndarray:
    """The last trick of a deal (N-S make it with JH), match scores so far preset."""
    state = R.position({N: ["JH"], E: ["7C"], S: ["AH"], W: ["8C"]}, "H", N, maker=N, target=target)
    state[R.MATCH_SCORE:R.MATCH_SCORE + 2] = match_score
    return state


def test_target_match_ends_when_a_team_reaches_it():
    state = last_trick(1500, [1480, 1300])
    play(state, "JH", "7C", "AH", "8C")  # N-S make the deal: JH + AH + last trick = 41
    assert state[R.DEAL_SCORE:R.DEAL_SCORE + 2].tolist() == [41, 0]
    assert int(state[R.PHASE]) == R.OVER and state[R.MATCH_SCORE:R.MATCH_SCORE + 2].tolist() == [1521, 1300]


def test_target_match_goes_on_below_the_target():
    state = last_trick(1500, [1400, 1300])
    play(state, "JH", "7C", "AH", "8C")
    assert int(state[R.PHASE]) == R.BIDDING and int(state[R.DEAL_NO]) == 1
    assert state[R.MATCH_SCORE:R.MATCH_SCORE + 2].tolist() == [1441, 1300]


def test_both_past_the_target_the_higher_score_wins_and_a_tie_plays_on():
    state = last_trick(1500, [1480, 1520])
    play(state, "JH", "7C", "AH", "8C")
    assert int(state[R.PHASE]) == R.OVER and state[R.MATCH_SCORE:R.MATCH_SCORE + 2].tolist() == [1521, 1520]
    tie = last_trick(1500, [1479, 1520])
    play(tie, "JH", "7C", "AH", "8C")
    assert tie[R.MATCH_SCORE:R.MATCH_SCORE + 2].tolist() == [1520, 1520]
    assert int(tie[R.PHASE]) == R.BIDDING  # equal scores: another deal decides


def test_a_whole_target_match_by_random_play():
    state = R.new_state(seed=5, target=500)
    while int(state[R.PHASE]) != R.OVER:
        before = state[R.MATCH_SCORE:R.MATCH_SCORE + 2].copy()
        assert max(before) < 500 or before[0] == before[1]
        play_out(state, seed=int(state[R.DEAL_NO]))
    final = state[R.MATCH_SCORE:R.MATCH_SCORE + 2].tolist()
    assert max(final) >= 500 and final[0] != final[1] and int(state[R.NUM_DEALS_AT]) == 0


# --- quartet values (§6) ----------------------------------------------------------------------------
@pytest.mark.parametrize("values, quartet, roem", [
    ("standard", "8", 0), ("low_100", "8", 100), ("low_100", "J", 200), ("all_100", "J", 100),
    ("all_100", "9", 100), ({"9": 50}, "9", 50), ({"9": 50}, "A", 100)])
def test_quartet_values(values, quartet, roem):
    hands = {seat: [quartet + suit] for seat, suit in enumerate("CDHS")}
    state = R.position(hands, "H", N, quartet_values=values)
    play(state, *(quartet + suit for suit in "CDHS"))
    assert int(state[R.TRICK_ROEM + 7]) == roem
    assert int(state[R.ROEM] + state[R.ROEM + 1]) == roem


# --- stuk declared from hand (§6) -------------------------------------------------------------------
def test_declared_stuk_scores_for_the_holder_when_the_second_card_is_played():
    hands = {N: ["QH", "KH", "7C"], E: ["8C", "9C", "AD"], S: ["10C", "JC", "7D"], W: ["AC", "8D", "9D"]}
    state = R.position(hands, "H", N, maker=E, stuk_mode="declared_from_hand")
    play(state, "QH", "8C", "10C", "AC")  # N's QH (the only trump) wins; the first of N's pair: nothing yet
    assert int(state[R.ROEM]) == 0 and int(state[R.DECLARED_STUK]) == -1
    play(state, "KH", "9C", "JC", "8D")  # the second one: 20 for N-S at once
    assert int(state[R.ROEM]) == R.STUK_ROEM and int(state[R.DECLARED_STUK]) == 0
    assert state[R.TRICK_ROEM + 5:R.TRICK_ROEM + 7].tolist() == [0, 0]  # no trick roem: stuk is not in a trick


def test_declared_stuk_goes_to_the_holder_even_when_the_tricks_are_lost():
    hands = {N: ["QH", "KH"], E: ["JH", "9H"], S: ["7C", "8C"], W: ["9C", "10C"]}
    state = R.position(hands, "H", N, stuk_mode="declared_from_hand")
    play(state, "QH", "JH", "7C", "9C")  # E must overtrump: JH wins
    assert int(state[R.WINNER + 6]) == E and int(state[R.ROEM]) == 0
    play(state, "9H", "8C", "10C", "KH")  # N cannot beat 9H; its KH completes the pair in a trick E wins
    assert int(state[R.WINNER + 7]) == E
    assert state[R.ROEM:R.ROEM + 2].tolist() == [R.STUK_ROEM, 0]


def test_declared_mode_ignores_king_and_queen_of_two_players_in_one_trick():
    hands = {N: ["KH"], E: ["QH"], S: ["7C"], W: ["8C"]}
    declared = R.position(hands, "H", N, stuk_mode="declared_from_hand")
    same = R.position(hands, "H", N)
    for state in (declared, same):
        play(state, "KH", "QH", "7C", "8C")
    assert int(declared[R.ROEM]) == 0 and int(declared[R.DECLARED_STUK]) == -1
    assert int(same[R.ROEM]) == R.STUK_ROEM


def test_same_trick_mode_ignores_king_and_queen_played_by_one_player_in_two_tricks():
    hands = {N: ["QH", "KH"], E: ["JH", "9H"], S: ["7C", "8C"], W: ["9C", "10C"]}
    state = R.position(hands, "H", N)
    play(state, "QH", "JH", "7C", "9C", "9H", "8C", "10C", "KH")
    assert int(state[R.ROEM] + state[R.ROEM + 1]) == 0


# --- forced undertrumping (§5.3) ---------------------------------------------------------------------
def test_amsterdam_forced_undertrump_against_an_opponent():
    """docs/klaverjas.md §8.1 example 3: N (partner) KC, E 9H; S holds AH 7H 10D. Amsterdam forbids undertrumping
    (10D only); the house rule forces it (AH or 7H, like Rotterdam)."""
    table = ["KC", "9H"]
    default = R.position({S: ["AH", "7H", "10D"]}, "H", N, table, rules="amsterdam")
    forced = R.position({S: ["AH", "7H", "10D"]}, "H", N, table, rules="amsterdam",
                        amsterdam_undertrump_vs_opponent="forced")
    assert legal(default) == {"10D"}
    assert legal(forced) == {"AH", "7H"}


def test_forced_undertrump_leaves_the_partner_rule_alone():
    """Example 2: partner's 10H holds the trick; Amsterdam frees S to discard either way."""
    forced = R.position({S: ["AH", "8H", "KS"]}, "H", W, ["AC", "10H", "7C"], rules="amsterdam",
                        amsterdam_undertrump_vs_opponent="forced")
    assert legal(forced) == {"AH", "KS"}


# --- checking ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("options, words", [
    ({"kraken": "yes"}, "kraken"),
    ({"target": 0}, "target"),
    ({"target": 1500, "deals": 16}, "deals or target"),
    ({"quartet_values": "lots"}, "quartet_values"),
    ({"quartet_values": {"X": 100}}, "unknown rank"),
    ({"quartet_values": {"9": -5}}, "quartet_values"),
    ({"stuk_mode": "claimed"}, "stuk_mode"),
    ({"amsterdam_undertrump_vs_opponent": "sometimes", "rules": "amsterdam"}, "amsterdam_undertrump"),
    ({"amsterdam_undertrump_vs_opponent": "forced"}, "needs rules='amsterdam'"),
    ({"pit_for_defenders": "no"}, "pit_for_defenders"),
])
def test_bad_knobs_are_named(options, words):
    with pytest.raises(ValueError, match=words):
        R.new_state(**options)


# --- properties under every combination ----------------------------------------------------------------
@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**40), rules=st.sampled_from(R.RULE_SETS), kraken=st.booleans(),
       quartets=st.sampled_from(sorted(R.QUARTET_PRESETS)), stuk=st.sampled_from(R.STUK_MODES),
       forced=st.booleans(), pit=st.booleans())
def test_random_play_accounts_every_point_under_any_knobs(seed, rules, kraken, quartets, stuk, forced, pit):
    options = {"rules": rules, "kraken": kraken, "quartet_values": quartets, "stuk_mode": stuk,
               "pit_for_defenders": pit}
    if forced and rules == "amsterdam":
        options["amsterdam_undertrump_vs_opponent"] = "forced"
    state = R.new_state(seed=seed, **options)
    rng = np.random.default_rng(seed)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    while int(state[R.PHASE]) != R.OVER:
        R.legal_mask(state, mask)
        if int(state[R.PHASE]) == R.PLAYING:
            hand = int(state[R.HAND + state[R.CURRENT]])
            assert all((hand >> int(a)) & 1 for a in np.flatnonzero(mask))
        R.apply_action(state, int(rng.choice(np.flatnonzero(mask))))
    assert sorted(state[R.TRICK:R.TRICK + 32].tolist()) == list(range(32))
    assert int(state[R.CARD_POINTS] + state[R.CARD_POINTS + 1]) == R.DEAL_TOTAL
    declared = R.STUK_ROEM if int(state[R.DECLARED_STUK]) >= 0 else 0
    assert declared == 0 or stuk == "declared_from_hand"
    assert int(state[R.ROEM] + state[R.ROEM + 1]) == int(state[R.TRICK_ROEM:R.TRICK_ROEM + 8].sum()) + declared
    out = np.zeros(2, np.int64)
    R.score_deal(state[R.CARD_POINTS:R.CARD_POINTS + 2], state[R.ROEM:R.ROEM + 2],
                 state[R.TRICKS_WON:R.TRICKS_WON + 2], R.team_of(int(state[R.MAKER])), pit, out)
    multiplier = int(state[R.MULTIPLIER])
    assert multiplier in ((1, 2, 4) if kraken else (1,))
    assert state[R.DEAL_SCORE:R.DEAL_SCORE + 2].tolist() == (multiplier * out).tolist()
