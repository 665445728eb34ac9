"""Baselines: the solver against plain minimax, determinisation respects every inference, policies play legally."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl.agents import make_policy
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.determinize import determinize, excluded_by_play, hidden_constraints
from tabletop_rl.games.klaverjas.game import KlaverjasGame
from tabletop_rl.games.klaverjas.solver import card_values_of


def endgame(seed: int, rules: str, tricks_left: int) -> np.ndarray:
    state = R.new_state(seed=seed, rules=rules)
    R.apply_action(state, R.NAME_TRUMP + seed % 4)
    rng = np.random.default_rng(seed)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    while int(state[R.TRICK_NO]) < 8 - tricks_left or int(state[R.IN_TRICK]) != seed % 4:
        R.legal_mask(state, mask)
        R.apply_action(state, int(rng.choice(np.flatnonzero(mask))))
    return state


@pytest.mark.parametrize("rules", R.RULE_SETS)
def test_determinised_hands_respect_counts_and_every_inference(rules):
    """Sampled deals keep the seat's own hand, give each seat its number of cards, and would have made
    every card each seat played legal (so no revealed void or trump limit is broken)."""
    regime = R.FOLLOW_AMSTERDAM if rules == "amsterdam" else R.FOLLOW_ROTTERDAM
    rng = np.random.default_rng(3)
    for seed in range(12):
        state = endgame(seed, rules, tricks_left=4)
        seat = int(state[R.CURRENT])
        allowed, counts = hidden_constraints(state, seat)
        for _ in range(5):
            d = determinize(state, seat, rng)
            assert int(d[R.HAND + seat]) == int(state[R.HAND + seat])
            for s in range(4):
                if s != seat:
                    assert bin(int(d[R.HAND + s])).count("1") == counts[s]
                    assert int(d[R.HAND + s]) & ~allowed[s] == 0
        true_hands = state[R.HAND:R.HAND + 4]
        for s in range(4):  # the truth is always among the consistent deals
            if s != seat:
                assert int(true_hands[s]) & ~allowed[s] == 0
    # partner's AC holds the trick and the third player discards: only Rotterdam proves "no trump"
    partner_holds = [R.card_id("AC"), R.card_id("7C")]
    assert excluded_by_play(partner_holds, R.card_id("7S"), 2, regime) & (1 << R.card_id("JH")) == \
        (0 if regime == R.FOLLOW_AMSTERDAM else 1 << R.card_id("JH"))
    # second to play, an opponent holds the trick: a discard proves "no trump" under both rule sets
    assert excluded_by_play(partner_holds[:1], R.card_id("7S"), 2, regime) & (1 << R.card_id("JH"))


def test_forced_undertrumping_changes_what_a_discard_proves():
    """Amsterdam, an opponent's 9H (trump) holds the trick: a discard proves "no higher trump" under the
    default rule, "no trump at all" when undertrumping is forced; an undertrump proves "only trumps" by
    default, only "no higher trump" when forced."""
    before = [R.card_id("KC"), R.card_id("9H")]
    trumps, higher = R.hand_of(range(16, 24)), R.hand_of([R.card_id("JH")])
    clubs, plain = R.hand_of(range(0, 8)), R.ALL_CARDS & ~R.hand_of(range(16, 24))
    assert excluded_by_play(before, R.card_id("10D"), 2, R.FOLLOW_AMSTERDAM) == clubs | higher
    assert excluded_by_play(before, R.card_id("10D"), 2, R.FOLLOW_AMSTERDAM_FORCED) == clubs | trumps
    assert excluded_by_play(before, R.card_id("7H"), 2, R.FOLLOW_AMSTERDAM) == clubs | higher | plain
    assert excluded_by_play(before, R.card_id("7H"), 2, R.FOLLOW_AMSTERDAM_FORCED) == clubs | higher


def test_determinisation_depends_only_on_what_the_seat_sees():
    state = endgame(5, "rotterdam", tricks_left=6)
    seat = int(state[R.CURRENT])
    others = [s for s in range(4) if s != seat]
    swapped = state.copy()
    a, b = R.cards_of(int(state[R.HAND + others[0]]))[0], R.cards_of(int(state[R.HAND + others[1]]))[0]
    for s, give, take in ((others[0], b, a), (others[1], a, b)):
        swapped[R.HAND + s] = (int(swapped[R.HAND + s]) & ~(1 << take)) | (1 << give)
    x = determinize(state, seat, np.random.default_rng(9))
    y = determinize(swapped, seat, np.random.default_rng(9))
    assert np.array_equal(x, y)


@pytest.mark.parametrize("spec", ["random", "heuristic", "model", "search:samples=2"])
def test_policies_play_whole_deals_legally(spec):
    policies = [make_policy(spec, game="klaverjas", seed=i) for i in range(4)]
    for seed, scheme in zip(range(2), ("free_with_pass", "proposed_suit")):
        state = R.new_state(seed=seed, trump_selection=scheme)
        mask = np.zeros(R.NUM_ACTIONS, np.bool_)
        # skip most of the first tricks for the search policy: early solves are the slow part
        skip = 12 if spec.startswith("search") else 0
        rng = np.random.default_rng(seed)
        steps = 0
        while int(state[R.PHASE]) != R.OVER:
            R.legal_mask(state, mask)
            seat = int(state[R.CURRENT])
            use_policy = int(state[R.PHASE]) == R.BIDDING or steps >= skip
            action = (policies[seat].act(None, mask, KlaverjasGame(state).policy_info(seat)) if use_policy
                      else int(rng.choice(np.flatnonzero(mask))))
            assert mask[action]
            R.apply_action(state, action)
            steps += int(state[R.PHASE]) != R.BIDDING
        assert int(state[R.CARD_POINTS] + state[R.CARD_POINTS + 1]) == 162


def test_heuristic_takes_cheaply_smears_on_partner_and_pulls_trumps():
    policy = make_policy("heuristic", game="klaverjas")

    def choose(hands, table, leader, maker=0):
        state = R.position(hands, "H", leader, table, maker=maker)
        mask = np.zeros(R.NUM_ACTIONS, np.bool_)
        R.legal_mask(state, mask)
        return R.card_name(policy.act(None, mask, KlaverjasGame(state).policy_info(int(state[R.CURRENT]))))

    # last to play, opponent holds the trick with KS: take it with 10S, not AS
    assert choose({3: ["AS", "10S", "7S"]}, ["KS", "QS", "8S"], leader=0) == "10S"
    # last to play, partner (seat 1) holds the trick: add the ace
    assert choose({3: ["AS", "7S"]}, ["QS", "AD", "8S"], leader=0) in {"AS"}
    # leading for the makers with the highest trump left
    assert choose({0: ["JH", "AS", "7C"]}, [], leader=0, maker=0) == "JH"
    # leading for the defenders: a plain ace
    assert choose({1: ["JH", "AS", "7C"]}, [], leader=1, maker=0) == "AS"


@pytest.mark.parametrize("objective", ["points", "score"])
def test_search_plays_the_best_mean_over_its_determinised_deals(objective):
    """The search's card is the best average over deals sampled from the seat's view of the exact solves,
    taken as points or as the deal score (nat: the makers lose everything)."""
    from tabletop_rl.agents.search.klaverjas import SearchPolicy, deal_score_difference

    state = endgame(7, "amsterdam", tricks_left=4)
    seat = int(state[R.CURRENT])
    policy = SearchPolicy(samples=5, seed=21, objective=objective)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    action = policy.act(None, mask, KlaverjasGame(state).policy_info(seat))
    rng = np.random.default_rng(21)
    totals: dict[int, float] = {}
    for _ in range(5):
        for card, value in card_values_of(determinize(state, seat, rng)).items():
            scored = value if objective == "points" else deal_score_difference(state, seat % 2, np.array(value))
            totals[card] = totals.get(card, 0.0) + float(scored)
    assert set(totals) == set(np.flatnonzero(mask).tolist())
    assert totals[action] == max(totals.values())


def test_deal_score_difference_counts_nat_from_either_side():
    from tabletop_rl.agents.search.klaverjas import deal_score_difference

    state = R.position({0: ["AS"], 1: ["7S"], 2: ["9H"], 3: ["8S"]}, "H", leader=0, maker=1)
    state[R.CARD_POINTS:R.CARD_POINTS + 2] = [60, 70]
    state[R.ROEM:R.ROEM + 2] = [20, 0]
    # so far N-S 80, E-W 70 (makers). The rest decides: E-W need strictly more than N-S.
    assert deal_score_difference(state, 1, np.array([30.0, 10.0, -10.0])).tolist() == [20.0, -182.0, -182.0]
    assert deal_score_difference(state, 0, np.array([-30.0, -10.0, 10.0])).tolist() == [-20.0, 182.0, 182.0]


def doubling_position(defender_hand: list[str], maker_hand: list[str] | None = None) -> np.ndarray:
    """Seat 0 made hearts under kraken; seat 1 (a defender) holds ``defender_hand`` and is to decide.
    With ``maker_hand``, seat 1 has doubled and seat 0 (holding it) decides whether to redouble."""
    rest = [c for c in range(32) if R.card_name(c) not in defender_hand + (maker_hand or [])]
    hands = {1: [R.card_id(c) for c in defender_hand]}
    hands[0] = [R.card_id(c) for c in maker_hand] if maker_hand else rest[:8]
    rest = [c for c in rest if c not in hands[0]]
    hands[2], hands[3] = rest[:8], rest[8:16]
    state = R.new_state(seed=1, kraken=True)
    state[R.HAND:R.HAND + 4] = [R.hand_of(hands[s]) for s in range(4)]
    R.apply_action(state, R.NAME_TRUMP + 2)
    if maker_hand:
        R.apply_action(state, R.KRAAK)
    return state


@pytest.mark.parametrize("hand, expected", [
    (["JH", "9H", "7H", "AC", "KC", "8D", "9D", "7S"], R.KRAAK),    # J 9 and a third trump: 34 + 30
    (["7H", "AC", "KC", "QC", "8D", "9D", "7S", "8S"], R.PASS)])   # one low trump
def test_heuristic_kraak_rule(hand, expected):
    state = doubling_position(hand)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    policy = make_policy("heuristic", game="klaverjas")
    assert policy.act(None, mask, KlaverjasGame(state).policy_info(1)) == expected


def test_heuristic_rekraak_rule():
    strong = ["JH", "9H", "AH", "10H", "KH", "AC", "AD", "AS"]
    weak = ["7H", "8H", "AC", "KC", "QC", "9D", "7S", "8S"]
    policy = make_policy("heuristic", game="klaverjas")
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    for hand, expected in ((strong, R.REKRAAK), (weak, R.PASS)):
        state = doubling_position(["QH", "8C", "9C", "10C", "7D", "10D", "JD", "QD"], maker_hand=hand)
        R.legal_mask(state, mask)
        assert policy.act(None, mask, KlaverjasGame(state).policy_info(0)) == expected


def test_search_doubles_from_its_estimate_of_the_makers_margin():
    """The defender's decision follows the sign of the mean solved margin over its own samples, and the
    search sees only the defender's hand (the other hands blanked give the same decision)."""
    from tabletop_rl.agents.search.klaverjas import SearchPolicy

    state = doubling_position(["JH", "9H", "AH", "10H", "AC", "AD", "AS", "10S"])
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    view = state.copy()
    view[R.HAND] = view[R.HAND + 2] = view[R.HAND + 3] = 0
    margin = SearchPolicy(samples=3, seed=4).makers_margin(view, 1)
    assert margin < 0  # the defender holds the four best trumps and three aces: the makers go nat
    action = SearchPolicy(samples=3, seed=4).act(None, mask, KlaverjasGame(view).policy_info(1))
    assert action == R.KRAAK


@pytest.mark.parametrize("spec", ["heuristic", "model", "search:samples=1"])
def test_policies_play_kraken_deals(spec):
    policies = [make_policy(spec, game="klaverjas", seed=i) for i in range(4)]
    state = R.new_state(seed=9, kraken=True, rules="amsterdam")
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    rng = np.random.default_rng(0)
    while int(state[R.PHASE]) != R.OVER:
        R.legal_mask(state, mask)
        seat = int(state[R.CURRENT])
        early = int(state[R.PHASE]) == R.PLAYING and int(state[R.TRICK_NO]) < 3 and spec.startswith("search")
        action = (int(rng.choice(np.flatnonzero(mask))) if early
                  else policies[seat].act(None, mask, KlaverjasGame(state).policy_info(seat)))
        assert mask[action]
        R.apply_action(state, action)
    assert int(state[R.MULTIPLIER]) in (1, 2, 4)
