"""The open-hand solver (pruned: equivalent cards, table bounds, ordering) against plain exhaustive
minimax through the rules core, on many random endgames under every rule knob that changes values."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas import solver as S

CONFIGS = [
    {"rules": "rotterdam"},
    {"rules": "amsterdam"},
    {"rules": "amsterdam", "amsterdam_undertrump_vs_opponent": "forced"},
    {"rules": "rotterdam", "stuk_mode": "declared_from_hand", "quartet_values": "low_100"},
    {"rules": "amsterdam", "stuk_mode": "declared_from_hand", "quartet_values": "all_100"},
]


def minimax(state: np.ndarray) -> int:
    """Plain exhaustive minimax through the rules core: team 0 minus team 1 card points + roem from here."""
    if int(state[R.PHASE]) == R.OVER:
        return 0
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    values = [gain(state, int(card)) + minimax(child) for card, child in children(state, mask)]
    return max(values) if int(state[R.CURRENT]) % 2 == 0 else min(values)


def children(state: np.ndarray, mask: np.ndarray):
    for card in np.flatnonzero(mask):
        child = state.copy()
        R.apply_action(child, int(card))
        yield card, child


def gain(state: np.ndarray, card: int) -> int:
    """Team 0 minus team 1 card points + roem that playing ``card`` adds (a finished trick, a declared stuk)."""
    child = state.copy()
    before = [int(child[R.CARD_POINTS + t] + child[R.ROEM + t]) for t in range(2)]
    R.apply_action(child, card)
    after = [int(child[R.CARD_POINTS + t] + child[R.ROEM + t]) for t in range(2)]
    return (after[0] - before[0]) - (after[1] - before[1])


def endgame(seed: int, options: dict, tricks_left: int, rich: bool) -> np.ndarray:
    """A random position with ``tricks_left`` tricks to go, 0-3 cards on the table. ``rich``: every seat was
    dealt one card of each rank, so quartets and runs are possible in every trick."""
    rng = np.random.default_rng(seed)
    state = R.new_state(seed=seed, **options)
    if rich:
        suits = [rng.permutation(4) for _ in range(8)]
        state[R.HAND:R.HAND + 4] = [R.hand_of([8 * int(suits[r][s]) + r for r in range(8)]) for s in range(4)]
    R.apply_action(state, R.NAME_TRUMP + int(rng.integers(4)))
    on_table = int(rng.integers(4))
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    while int(state[R.TRICK_NO]) < 8 - tricks_left or int(state[R.IN_TRICK]) != on_table:
        R.legal_mask(state, mask)
        R.apply_action(state, int(rng.choice(np.flatnonzero(mask))))
    return state


def positions(config: dict, count: int):
    for seed in range(count):
        yield endgame(seed, config, tricks_left=1 + seed % 4, rich=seed % 2 == 1)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_solver_values_equal_plain_minimax(config):
    """Every legal card's value, from a fresh small table and from one large table shared by all positions
    (as the search policy shares it across deals and rule sets), equals exhaustive minimax."""
    shared = S.new_table()
    out = np.empty(R.NUM_CARDS, np.int64)
    for state in positions(config, 24):
        sign = 1 if int(state[R.CURRENT]) % 2 == 0 else -1
        mask = np.zeros(R.NUM_ACTIONS, np.bool_)
        R.legal_mask(state, mask)
        expected = {int(card): sign * (gain(state, int(card)) + minimax(child))
                    for card, child in children(state, mask)}
        assert S.card_values_of(state) == expected
        S.card_values(state, out, shared, np.zeros(1, np.int64))
        assert {c: int(v) for c, v in enumerate(out) if v > -S.INF} == expected
        assert S.deal_value(state, shared, np.zeros(1, np.int64)) == sign * max(expected.values())


def test_low_cards_of_one_hand_are_searched_once_unless_roem_could_differ():
    """7C and 8C of one hand, no other hand holding a club between them: one search serves both. With 9C
    and 10C in other hands the 8C could complete a run (8-9-10) the 7C cannot, so both are searched."""
    trump = R.suit_id("H")
    cfg = np.zeros(S.C_SIZE, np.int64)
    cfg[S.C_TRUMP], cfg[S.C_STUK_SEAT] = trump, -1
    cfg[S.C_QUARTETS:S.C_QUARTETS + 8] = R.QUARTET_PRESETS["standard"]
    mine = R.hand_of([R.card_id(c) for c in ("7C", "8C", "AS")])
    foreign_without_run = R.hand_of([R.card_id(c) for c in ("AC", "KC", "9S")])
    assert S._equivalents(mine, foreign_without_run, cfg) == 1 << R.card_id("8C")
    foreign_with_run = R.hand_of([R.card_id(c) for c in ("9C", "10C", "9S")])
    assert S._equivalents(mine, foreign_with_run, cfg) == 0
    # a foreign 8C between 7C and 9C keeps them apart; without it they are neighbours
    mine = R.hand_of([R.card_id("7C"), R.card_id("9C")])
    assert S._equivalents(mine, R.hand_of([R.card_id("8C")]), cfg) == 0
    assert S._equivalents(mine, R.hand_of([R.card_id("AC")]), cfg) == 1 << R.card_id("9C")
    # with four 7s worth 100 (low_100), a 7 whose three brothers are all out there may make a quartet
    cfg[S.C_QUARTETS:S.C_QUARTETS + 8] = R.QUARTET_PRESETS["low_100"]
    mine = R.hand_of([R.card_id("7C"), R.card_id("8C")])
    assert S._equivalents(mine, R.hand_of([R.card_id(c) for c in ("7D", "7H", "7S")]), cfg) == 0
