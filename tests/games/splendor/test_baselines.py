"""The greedy look-ahead reuses the terms of the evaluation that a move leaves as they were (the opponents'
values, the market cards' terms of a slot it empties, the mover's nobles' terms); its values must be exactly
those of evaluating every position in full."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.baselines import DEFAULT_GREEDY_WEIGHTS, _hide_drawn_card, action_values, evaluate
from tabletop_rl.games.splendor.game import SplendorGame

CARDS, NOBLES = R.tables()
W = DEFAULT_GREEDY_WEIGHTS


def full_value(state: np.ndarray, action: int) -> float:
    """The look-ahead value of ``action``, every position evaluated in full (sub-steps: best value, lowest id)."""
    mover = int(state[R.CURRENT])
    after = state.copy()
    R.apply_action(after, action, CARDS, NOBLES)
    _hide_drawn_card(after, mover, action)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    while after[R.STATUS] == R.PLAYING and after[R.CURRENT] == mover and after[R.PHASE] != R.MAIN:
        R.legal_mask(after, CARDS, NOBLES, mask)
        best, best_value = -1, -np.inf
        for a in np.flatnonzero(mask):
            inner = after.copy()
            R.apply_action(inner, int(a), CARDS, NOBLES)
            value = evaluate(inner, mover, CARDS, NOBLES, W)
            if best < 0 or value > best_value:
                best, best_value = int(a), value
        R.apply_action(after, best, CARDS, NOBLES)
    return float(evaluate(after, mover, CARDS, NOBLES, W))


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([2, 3, 4]), st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1))
def test_greedy_values_equal_full_evaluation(players: int, seed: int, choice_seed: int) -> None:
    rng = np.random.default_rng(choice_seed)
    game = SplendorGame(players, seed=seed, max_plies=400)
    mask, scratch, values = np.zeros(R.NUM_ACTIONS, np.bool_), np.zeros(R.STATE_SIZE, np.int16), np.zeros(72)
    checked = 0
    while not game.is_over:
        if game.ply % 3 == 0 or game.phase != "main":  # every sub-step position, and a third of the others
            action_values(game.state, CARDS, NOBLES, W, mask, scratch, values)
            for a in np.flatnonzero(mask):
                assert values[a] == full_value(game.state, int(a)), (game.ply, int(a))
                checked += 1
        game.step(int(rng.choice(game.legal_actions())))
    assert checked > 0


@pytest.mark.parametrize("players", [2, 3, 4])
def test_greedy_values_equal_full_evaluation_when_a_return_ends_the_turn_with_a_noble(players: int) -> None:
    """A set-up position (not reachable in play, where a noble visits at the end of the turn that qualified for
    it): the player to act already meets a table noble's requirement and holds 9 tokens. Every take then ends
    with token returns whose last one ends the turn with that noble's visit: the table changes (the nobles
    shift left) under the returns' candidates and the valuation after them, and the opponents' noble terms
    change with it. Every value must still be the full evaluation's."""
    game = SplendorGame(players, seed=3)
    state = game.state
    b = R.player_base(int(state[R.CURRENT]))
    noble = int(state[R.TABLE_NOBLES])
    state[b + R.P_BONUS:b + R.P_BONUS + 5] = NOBLES[noble, :5]
    for q in range(players):  # the opponents' nobles' terms count too, so the visit changes their values
        if q != state[R.CURRENT]:
            state[R.player_base(q) + R.P_BONUS:R.player_base(q) + R.P_BONUS + 5] = 1
    held = np.array([2, 2, 2, 2, 1, 0])
    state[b + R.P_TOKENS:b + R.P_TOKENS + 6] = held
    state[R.BANK:R.BANK + 6] -= held
    assert (state[R.BANK:R.BANK + 6] >= 0).all()
    mask, scratch, values = np.zeros(R.NUM_ACTIONS, np.bool_), np.zeros(R.STATE_SIZE, np.int16), np.zeros(72)
    action_values(state, CARDS, NOBLES, W, mask, scratch, values)
    takes = [a for a in np.flatnonzero(mask) if a < R.RESERVE]
    assert takes
    for a in np.flatnonzero(mask):
        assert values[a] == full_value(state, int(a)), int(a)
    after = state.copy()  # the set-up does what it says: a take, two returns, and the noble leaves the table
    R.apply_action(after, int(takes[0]), CARDS, NOBLES)
    while after[R.CURRENT] == state[R.CURRENT] and after[R.PHASE] == R.RETURN:
        R.apply_action(after, R.RETURN_TOKEN + int(np.flatnonzero(after[b + R.P_TOKENS:b + R.P_TOKENS + 6])[0]),
                       CARDS, NOBLES)
    assert noble not in after[R.TABLE_NOBLES:R.TABLE_NOBLES + R.MAX_TABLE_NOBLES]
