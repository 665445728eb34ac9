"""The Gymnasium env of the game contract serves Klaverjas too: one seat against three opponent seats."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import tabletop_rl  # noqa: F401  (registers the ids)
from tabletop_rl import IllegalActionError, KlaverjasGymEnv


def play(env: KlaverjasGymEnv, seed: int) -> tuple[float, dict]:
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total, terminated, truncated = 0.0, False, False
    while not (terminated or truncated):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
    return total, info


def test_gymnasium_checks_the_klaverjas_env():
    check_env(gymnasium.make("tabletop_rl/Klaverjas-v0", opponent="heuristic").unwrapped)


@pytest.mark.parametrize("opponent", ["random", "heuristic"])
def test_a_match_ends_with_the_learners_team_result_and_the_scores(opponent):
    env = KlaverjasGymEnv(opponent=opponent, seat=1)
    total, info = play(env, seed=3)
    ns, ew = info["scores"]
    assert total == (np.sign(ew - ns))  # seat 1 plays for E-W; "win" rewards are +1 / -1 / 0
    assert info["winners"] == ([0, 1] if ns == ew else [0] if ns > ew else [1])


def test_the_score_reward_is_the_match_difference_scaled_by_the_deals():
    env = KlaverjasGymEnv(opponent="heuristic", seat=0, reward="score", deals=2)
    total, info = play(env, seed=5)
    ns, ew = info["scores"]
    assert total == pytest.approx((ns - ew) / (162 * 2))


def test_the_same_seed_plays_the_same_match_and_a_bad_move_changes_nothing():
    a, b = KlaverjasGymEnv(opponent="heuristic", illegal="raise"), KlaverjasGymEnv(opponent="heuristic")
    (total_a, info_a), (total_b, info_b) = play(a, 7), play(b, 7)
    assert (total_a, info_a["scores"]) == (total_b, info_b["scores"])
    obs, info = a.reset(seed=8)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    before = a.game.state.copy()
    with pytest.raises(IllegalActionError, match=r"klaverjas, seat \d: .* is not legal now"):
        a.step(illegal)
    assert np.array_equal(a.game.state, before)
