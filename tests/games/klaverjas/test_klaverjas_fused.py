"""Klaverjas's fused steps (``step_observe``, ``step_vs_random_observe``: one compiled call for the move and what
the envs read after it) against the contract's plain-Python defaults: the same states, observations, masks and
random opponents' moves, and the same refusals."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl.core.game import IllegalActionError, TurnBased
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.game import KlaverjasGame

OPTIONS = [{}, {"rules": "amsterdam", "kraken": True, "deals": 2},
           {"trump_selection": "proposed_suit", "all_pass": "second_proposal_then_redeal", "target": 1200}]


def _plain_vs_random(game: KlaverjasGame, action: int, seat: int, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """The contract's default, all in Python: the move, random opponents by the contract's loop, then the view."""
    game.step(action)
    TurnBased.play_random_until(game, seat)
    return game.observe(seat), game.seat_mask(seat, dtype)


def _same(ours: tuple[np.ndarray, np.ndarray], theirs: tuple[np.ndarray, np.ndarray]) -> bool:
    return all(a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes() for a, b in zip(ours, theirs))


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("dtype", [np.bool_, np.int8])
def test_step_observe_is_the_contracts_default(options: dict, dtype: type) -> None:
    for seed in range(4):
        rng, game = np.random.default_rng(seed), KlaverjasGame.new(seed=seed, **options)
        while not game.is_over:
            plain = KlaverjasGame(game.state.copy())
            action = int(rng.choice(np.flatnonzero(game.legal_mask())))
            assert _same(game.step_observe(action, dtype), TurnBased.step_observe(plain, action, dtype))
            assert np.array_equal(game.state, plain.state)


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("dtype", [np.bool_, np.int8])
def test_step_vs_random_observe_plays_the_contracts_random_moves(options: dict, dtype: type) -> None:
    for seed in range(4):
        rng, game = np.random.default_rng(seed), KlaverjasGame.new(seed=seed, **options)
        seat = seed % 4
        game.play_random_until(seat)
        plain = KlaverjasGame(game.state.copy())
        while not game.is_over:
            action = int(rng.choice(np.flatnonzero(game.legal_mask())))
            seen = game.step_vs_random_observe(action, seat, dtype)
            assert seen is not None and _same(seen, _plain_vs_random(plain, action, seat, dtype))
            assert np.array_equal(game.state, plain.state)  # the same stream, so the same opponents' moves


def test_the_fused_steps_refuse_what_step_refuses_and_change_nothing() -> None:
    game = KlaverjasGame.new(seed=5)
    before = game.state.copy()
    illegal = int(np.flatnonzero(~game.legal_mask())[0])
    with pytest.raises(IllegalActionError, match="is not legal now"):
        game.step_observe(illegal)
    with pytest.raises(IllegalActionError, match=r"ids are 0\.\.39"):
        game.step_observe(R.NUM_ACTIONS)
    with pytest.raises(ValueError, match="action must be an integer"):
        game.step_observe(1.5)  # type: ignore[arg-type]
    assert game.step_vs_random_observe(illegal, 0) is None and game.step_vs_random_observe(-1, 0) is None
    assert np.array_equal(game.state, before)


def test_another_mask_type_takes_the_contracts_default() -> None:
    game, plain = KlaverjasGame.new(seed=2), KlaverjasGame.new(seed=2)
    action = int(np.flatnonzero(game.legal_mask())[0])
    obs, mask = game.step_observe(action, np.float32)
    assert mask.dtype == np.float32 and _same((obs, mask), TurnBased.step_observe(plain, action, np.float32))
