"""The fused step (``step_observe``, ``step_vs_random_observe``): one compiled call that plays a move and writes
the next observation and mask must agree with the separate calls it replaces, and refuse what they refuse."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabletop_rl.core.game import IllegalActionError
from tabletop_rl.envs.aec import TabletopAEC
from tabletop_rl.games.klaverjas.game import KlaverjasGame
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.observe import observation_size

MODEST = settings(max_examples=25, deadline=None)
SEEDS = st.integers(0, 2**31 - 1)


@MODEST
@given(st.sampled_from([2, 3, 4]), SEEDS, SEEDS)
def test_step_observe_agrees_with_step_then_observe(players: int, seed: int, choice_seed: int) -> None:
    rng = np.random.default_rng(choice_seed)
    game = SplendorGame(players, seed=seed, max_plies=300)
    while not game.is_over:
        plain = game.clone()
        action = int(rng.choice(game.legal_actions()))
        dtype = (np.bool_, np.int8)[int(rng.integers(2))]
        obs, mask = game.step_observe(action, dtype)
        plain.step(action)
        seat = plain.current_player
        assert np.array_equal(game.state, plain.state)
        assert obs.dtype == np.float32 and mask.dtype == dtype
        assert np.array_equal(obs, plain.observe(seat))
        assert np.array_equal(mask, plain.seat_mask(seat, dtype))
        assert np.array_equal(game.legal_mask(), plain.legal_mask())


@MODEST
@given(st.sampled_from([2, 3, 4]), SEEDS, SEEDS)
def test_step_vs_random_observe_agrees_with_the_separate_calls(players: int, seed: int, choice_seed: int) -> None:
    rng = np.random.default_rng(choice_seed)
    game = SplendorGame(players, seed=seed, max_plies=300)
    seat = game.current_player
    while not game.is_over:
        plain = game.clone()
        action = int(rng.choice(game.legal_actions()))
        seen = game.step_vs_random_observe(action, seat, np.int8)
        assert plain.step_vs_random(action, seat) and seen is not None
        assert np.array_equal(game.state, plain.state)  # the same random stream, so the same opponents' moves
        assert np.array_equal(seen[0], plain.observe(seat))
        assert seen[1].dtype == np.int8 and np.array_equal(seen[1], plain.seat_mask(seat, np.int8))


def test_an_illegal_move_changes_nothing_and_writes_nothing() -> None:
    game = SplendorGame(2, seed=4)
    before, mask_before = game.state.copy(), game.legal_mask()
    out = (np.full(observation_size(2), 7, np.float32), np.full(R.NUM_ACTIONS, 7, np.int8))
    with pytest.raises(IllegalActionError, match="pass"):
        game.step_observe(R.PASS, out=out)
    assert game.step_vs_random_observe(R.PASS, 0, out=out) is None
    assert np.array_equal(game.state, before) and np.array_equal(game.legal_mask(), mask_before)
    assert (out[0] == 7).all() and (out[1] == 7).all()
    with pytest.raises(ValueError, match="action"):
        game.step_observe(R.NUM_ACTIONS)
    assert np.array_equal(game.state, before)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8])
def test_out_buffers_are_written_and_returned(dtype: type) -> None:
    game, plain = SplendorGame(3, seed=2), SplendorGame(3, seed=2)
    out = (np.empty(observation_size(3), np.float32), np.empty(R.NUM_ACTIONS, dtype))
    for _ in range(12):
        action = game.legal_actions()[0]
        assert game.step_observe(action, out=out) is out
        fresh = plain.step_observe(action, dtype)
        assert np.array_equal(out[0], fresh[0]) and np.array_equal(out[1], fresh[1]) and out[1].dtype == dtype


def test_a_mask_type_other_than_bool_or_int8_is_refused() -> None:
    game = SplendorGame(2, seed=1)
    before = game.state.copy()
    with pytest.raises(ValueError, match="dtype must be bool or int8"):
        game.step_observe(game.legal_actions()[0], np.float32)
    assert np.array_equal(game.state, before)


@pytest.mark.parametrize("out", [
    (np.empty(312, np.float64), np.empty(72, np.int8)),
    (np.empty(311, np.float32), np.empty(72, np.int8)),
    (np.empty(312, np.float32), np.empty(72, np.uint8)),
    (np.empty(624, np.float32)[::2], np.empty(72, np.int8)),
    [np.empty(312, np.float32), np.empty(72, np.int8)],
    (np.empty(312, np.float32),),
    "buffers",
])
def test_bad_out_buffers_are_refused_before_the_move(out: object) -> None:
    game = SplendorGame(2, seed=1)
    before = game.state.copy()
    with pytest.raises(ValueError, match=r"^out must be a tuple \(observation, mask\)"):
        game.step_observe(game.legal_actions()[0], out=out)  # type: ignore[arg-type]
    assert np.array_equal(game.state, before)


def test_read_only_out_buffers_are_refused() -> None:
    game = SplendorGame(2, seed=1)
    obs = np.empty(312, np.float32)
    obs.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        game.step_observe(0, out=(obs, np.empty(72, np.int8)))


@pytest.mark.parametrize("row", [np.zeros(R.STATE_SIZE, np.int32), np.zeros(R.STATE_SIZE - 1, np.int16),
                                 np.zeros(2 * R.STATE_SIZE, np.int16)[::2]])
def test_a_game_refuses_a_row_the_compiled_calls_cannot_trust(row: np.ndarray) -> None:
    with pytest.raises(ValueError, match="int16"):
        SplendorGame._from_state(row)


def test_the_contract_default_serves_games_without_a_fused_step() -> None:
    game, plain = KlaverjasGame.new(seed=3), KlaverjasGame.new(seed=3)
    for _ in range(20):
        action = int(np.flatnonzero(game.legal_mask())[0])
        obs, mask = game.step_observe(action, np.int8)
        plain.step(action)
        seat = plain.current_player
        assert np.array_equal(obs, plain.observe(seat)) and np.array_equal(mask, plain.seat_mask(seat, np.int8))


def test_the_aec_env_hands_out_fresh_arrays_every_call() -> None:
    env = TabletopAEC("splendor")
    env.reset(seed=5)
    env.step(int(np.flatnonzero(env.observe("player_0")["action_mask"])[0]))
    first = env.observe("player_1")
    first["observation"][:] = -1.0
    first["action_mask"][:] = 0
    second = env.observe("player_1")
    assert np.array_equal(second["observation"], env.game.observe(1))
    assert np.array_equal(second["action_mask"], env.game.seat_mask(1, np.int8))
    assert second["action_mask"].any()


@pytest.mark.parametrize("dtype", [np.bool_, np.int8])
def test_a_game_pickles_after_fused_steps_into_buffers_and_continues_identically(dtype: type) -> None:
    import pickle
    game, plain = SplendorGame(2, seed=4), SplendorGame(2, seed=4)
    out = (np.empty(observation_size(2), np.float32), np.empty(R.NUM_ACTIONS, dtype))
    for _ in range(6):  # the compiled entries are resolved by now: a game must not carry them into a pickle
        action = game.legal_actions()[0]
        game.step_observe(action, out=out)
        plain.step(action)
    copy = pickle.loads(pickle.dumps(game))
    copy_out = (np.empty_like(out[0]), np.empty_like(out[1]))
    for _ in range(6):
        action = plain.legal_actions()[0]
        plain.step(action)
        copy.step_observe(action, out=copy_out)
        assert np.array_equal(copy.state, plain.state) and np.array_equal(copy_out[1], plain.seat_mask(
            plain.current_player, dtype))
