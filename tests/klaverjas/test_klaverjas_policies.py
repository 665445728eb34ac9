"""Baselines: the solver against plain minimax, determinisation respects every inference, policies play legally."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl.agents import make_policy
from tabletop_rl.klaverjas import rules as R
from tabletop_rl.klaverjas.determinize import determinize, excluded_by_play, hidden_constraints
from tabletop_rl.klaverjas.solver import card_values_of


def minimax(state: np.ndarray) -> int:
    """Plain exhaustive minimax through the rules core: team 0 minus team 1 card points + roem from here."""
    if int(state[R.PHASE]) == R.OVER:
        return 0
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    values = []
    for card in np.flatnonzero(mask):
        child = state.copy()
        before = [int(child[R.CARD_POINTS + t] + child[R.ROEM + t]) for t in range(2)]
        R.apply_action(child, int(card))
        gain = [int(child[R.CARD_POINTS + t] + child[R.ROEM + t]) - before[t] for t in range(2)]
        values.append(gain[0] - gain[1] + minimax(child))
    return max(values) if int(state[R.CURRENT]) % 2 == 0 else min(values)


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
@pytest.mark.parametrize("seed", range(6))
def test_solver_agrees_with_plain_minimax(seed, rules):
    state = endgame(seed, rules, tricks_left=3)
    sign = 1 if int(state[R.CURRENT]) % 2 == 0 else -1
    for card, value in card_values_of(state).items():
        child = state.copy()
        before = [int(child[R.CARD_POINTS + t] + child[R.ROEM + t]) for t in range(2)]
        R.apply_action(child, card)
        gain = [int(child[R.CARD_POINTS + t] + child[R.ROEM + t]) - before[t] for t in range(2)]
        assert value == sign * (gain[0] - gain[1] + minimax(child)), R.card_name(card)


@pytest.mark.parametrize("rules", R.RULE_SETS)
def test_determinised_hands_respect_counts_and_every_inference(rules):
    """Sampled deals keep the seat's own hand, give each seat its number of cards, and would have made
    every card each seat played legal (so no revealed void or trump limit is broken)."""
    amsterdam = rules == "amsterdam"
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
    assert excluded_by_play(partner_holds, R.card_id("7S"), 2, amsterdam) & (1 << R.card_id("JH")) == \
        (0 if amsterdam else 1 << R.card_id("JH"))
    # second to play, an opponent holds the trick: a discard proves "no trump" under both rule sets
    assert excluded_by_play(partner_holds[:1], R.card_id("7S"), 2, amsterdam) & (1 << R.card_id("JH"))


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
            action = (policies[seat].act(None, mask, {"state": state, "player": seat}) if use_policy
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
        return R.card_name(policy.act(None, mask, {"state": state, "player": int(state[R.CURRENT])}))

    # last to play, opponent holds the trick with KS: take it with 10S, not AS
    assert choose({3: ["AS", "10S", "7S"]}, ["KS", "QS", "8S"], leader=0) == "10S"
    # last to play, partner (seat 1) holds the trick: add the ace
    assert choose({3: ["AS", "7S"]}, ["QS", "AD", "8S"], leader=0) in {"AS"}
    # leading for the makers with the highest trump left
    assert choose({0: ["JH", "AS", "7C"]}, [], leader=0, maker=0) == "JH"
    # leading for the defenders: a plain ace
    assert choose({1: ["JH", "AS", "7C"]}, [], leader=1, maker=0) == "AS"


def test_search_plays_the_best_mean_over_its_determinised_deals():
    """The search's card is the best average of exact solves over deals sampled from the seat's view."""
    from tabletop_rl.klaverjas.policies import SearchPolicy

    state = endgame(7, "amsterdam", tricks_left=4)
    seat = int(state[R.CURRENT])
    policy = SearchPolicy(samples=5, seed=21)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    action = policy.act(None, mask, {"state": state, "player": seat})
    rng = np.random.default_rng(21)
    totals: dict[int, float] = {}
    for _ in range(5):
        for card, value in card_values_of(determinize(state, seat, rng)).items():
            totals[card] = totals.get(card, 0.0) + value
    assert set(totals) == set(np.flatnonzero(mask).tolist())
    assert totals[action] == max(totals.values())
