"""The Gymnasium single-agent env: gymnasium's env checker, registration, seats, opponents,
illegal moves, end rewards, truncation, positions and pickling."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils import seeding
from gymnasium.utils.env_checker import check_env

import tabletop_rl  # noqa: F401  (registers the env)
from extra_skips import needs
from positions import position
from tabletop_rl.envs.gym import ENV_ID, SplendorGymEnv
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.actions import move_id
from tabletop_rl.games.splendor.game import IllegalActionError, SplendorGame
from tabletop_rl.games.splendor.observe import observe
from test_aec import end_position

PLAYERS = (2, 3, 4)


def first_legal(info: dict) -> int:
    return int(np.flatnonzero(info["action_mask"])[0])


def last_legal(observation, mask, info) -> int:
    return int(np.flatnonzero(mask)[-1])


@pytest.mark.parametrize("n", PLAYERS)
def test_check_env(n):
    # the checker steps unmasked random actions: with default arguments an illegal one ends the episode
    env = gym.make(ENV_ID, num_players=n, render_mode="ansi")
    check_env(env.unwrapped, skip_render_check=False)


def test_stable_baselines3_checks_the_default_env():
    sb3_check_env = needs("stable_baselines3.common.env_checker").check_env
    sb3_check_env(gym.make(ENV_ID).unwrapped)


def test_registered_on_import_and_makes_the_env():
    env = gym.make(ENV_ID, num_players=3, seat=2)
    obs, info = env.reset(seed=0)
    assert isinstance(env.unwrapped, SplendorGymEnv)
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    assert info["action_mask"].dtype == np.int8
    assert np.array_equal(env.unwrapped.action_masks(), info["action_mask"].astype(bool))
    assert env.unwrapped.action_masks().dtype == np.bool_


@pytest.mark.parametrize("n", PLAYERS)
def test_fixed_seat_is_the_learners_view_and_turn(n):
    for seat in range(n):
        env = SplendorGymEnv(num_players=n, seat=seat)
        obs, info = env.reset(seed=seat)
        assert env.game.current_player == seat
        assert np.array_equal(obs, observe(env.game.state, seat))
        assert np.array_equal(info["action_mask"].astype(bool), env.game.legal_mask())


def test_random_seat_follows_the_seed_and_covers_every_seat():
    env = SplendorGymEnv(num_players=3, seat="random")
    seats = set()
    for seed in range(30):
        env.reset(seed=seed)
        first = env.seat
        env.reset(seed=seed)
        assert env.seat == first
        seats.add(first)
    assert seats == {0, 1, 2}


@pytest.mark.parametrize("seat", ["first", 2, -1, True])
def test_bad_seat_is_named(seat):
    with pytest.raises(ValueError, match="seat must be 'random' or a seat 0..1"):
        SplendorGymEnv(seat=seat)


def test_callable_opponent_moves_for_the_other_seats_and_its_moves_are_played():
    calls = []

    def opponent(observation, mask, info):
        calls.append(info["player"])
        assert observation.dtype == np.float32 and mask.dtype == np.bool_
        assert np.array_equal(mask, info["game"].legal_mask())
        assert info["game"].current_player == info["player"]
        moves.append(last_legal(observation, mask, info))
        return moves[-1]

    moves: list[int] = []
    env = SplendorGymEnv(opponent=opponent, num_players=3, seat=1)
    _, info = env.reset(seed=8)
    for _ in range(30):
        moves.append(first_legal(info))
        _, _, terminated, truncated, info = env.step(moves[-1])
        assert not (terminated or truncated)
    assert calls and set(calls) == {0, 2}
    replay = SplendorGame(3, seed=8)
    for move in moves:
        replay.step(move)
    assert replay == env.game


def test_np_random_is_gymnasiums_generator_of_the_reset_seed():
    # np_random is made from the seed when first read, not at reset: it must be the very generator Gymnasium
    # would have made, for every way it is read, and a seed of any integer type is taken
    env = SplendorGymEnv()
    env.reset(seed=np.int64(9))
    assert env.np_random_seed == 9
    assert env.np_random.integers(1 << 62) == seeding.np_random(9)[0].integers(1 << 62)
    env.reset()  # no seed: the generator goes on
    assert env.unwrapped._np_random.integers(1 << 62) == _draws(9, 2)[1]
    env.reset(seed=9)
    env.np_random = np.random.default_rng(1)  # set by the caller: kept, the pending seed dropped
    assert env.np_random.integers(1 << 62) == np.random.default_rng(1).integers(1 << 62)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        env.reset(seed=-1)


def _draws(seed: int, n: int) -> list[int]:
    rng = seeding.np_random(seed)[0]
    return [int(rng.integers(1 << 62)) for _ in range(n)]


def test_policy_objects_are_reset_and_asked_to_act():
    class Last:
        def __init__(self):
            self.seeds = []

        def reset(self, seed):
            self.seeds.append(seed)

        def act(self, observation, mask, info):
            return last_legal(observation, mask, info)

    policy = Last()
    env = SplendorGymEnv(opponent=policy, seat=1)
    env.reset(seed=0)
    assert len(policy.seeds) == 1 and env.game.ply == 1


def test_an_opponent_choosing_an_illegal_move_is_named():
    env = SplendorGymEnv(opponent=lambda obs, mask, info: move_id("pass"), seat=1)
    with pytest.raises(IllegalActionError, match="splendor, seat 0: the opponent chose an illegal move: pass"):
        env.reset(seed=0)


@pytest.mark.parametrize("opponent", [42, None])
def test_an_opponent_that_is_not_a_policy_is_named(opponent):
    with pytest.raises(ValueError, match="opponent must be a policy spec string"):
        SplendorGymEnv(opponent=opponent)


def test_illegal_raise_leaves_the_env_unchanged():
    env = SplendorGymEnv(seat=0, illegal="raise")
    _, info = env.reset(seed=4)
    before = env.game.to_dict()
    with pytest.raises(IllegalActionError, match="pass is legal only when no other action is"):
        env.step(move_id("pass"))
    assert env.game.to_dict() == before
    env.step(np.int64(first_legal(info)))
    assert env.game.ply >= 2


def test_illegal_penalize_ends_the_episode_with_minus_one():
    env = SplendorGymEnv(seat=0, illegal="penalize")
    env.reset(seed=4)
    before = env.game.to_dict()
    obs, reward, terminated, truncated, info = env.step(move_id("pass"))
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["illegal_action"] == move_id("pass") and env.game.to_dict() == before
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(first_legal(info))


@pytest.mark.parametrize(("n", "winners", "seat", "expected"), [
    (2, [1], 1, 1.0), (2, [0], 1, -1.0), (2, [0, 1], 1, 0.0),
    (3, [0], 2, -0.5), (3, [2], 2, 1.0), (4, [0, 3], 3, 0.5),
])
def test_end_reward_is_the_learners_share(n, winners, seat, expected):
    env = SplendorGymEnv(num_players=n, seat=seat)
    _, info = env.reset(options={"position": end_position(n, winners)})
    _, reward, terminated, truncated, _ = env.step(first_legal(info))
    assert type(terminated) is bool and type(truncated) is bool
    assert (terminated, truncated) == (True, False)
    assert reward == pytest.approx(expected)


def test_the_game_ending_on_an_opponents_move_ends_the_learners_episode():
    pos = end_position(3, [0])
    pos["current_player"] = 1  # the learner (seat 1) moves, then seat 2 makes the last move of the game
    env = SplendorGymEnv(num_players=3, seat=1)
    _, info = env.reset(options={"position": pos})
    _, reward, terminated, truncated, _ = env.step(first_legal(info))
    assert (terminated, truncated) == (True, False)
    assert reward == pytest.approx(-0.5) and env.game.winners == [0] and env.game.ply == 2


@pytest.mark.parametrize("n", PLAYERS)
def test_truncation_at_the_ply_cap_gives_zero(n):
    env = SplendorGymEnv(num_players=n, seat=0, max_plies=20)
    _, info = env.reset(seed=1)
    truncated = False
    while not truncated:
        _, reward, terminated, truncated, info = env.step(first_legal(info))
        assert not terminated and reward == 0.0
    assert env.game.ply == 20


def test_dense_reward_counts_the_learners_points():
    env = SplendorGymEnv(seat=0, reward="dense")
    rng = np.random.default_rng(3)
    total, done = 0.0, False
    _, info = env.reset(seed=3)
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        _, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
        total += reward
        done = terminated or truncated
    assert env.game.scores[0] > 0
    assert total == pytest.approx(env.game.scores[0] / 15 + env.game.end_rewards()[0])


def test_reset_with_a_position_plays_the_opponents_first():
    pos = position(2, current_player=0)
    env = SplendorGymEnv(seat=1)
    obs, _ = env.reset(seed=5, options={"position": pos})
    assert env.game.current_player == 1 and env.game.ply == 1
    assert np.array_equal(obs, observe(env.game.state, 1))


def test_reset_from_a_position_ending_before_the_learner_acts_is_refused():
    env = SplendorGymEnv(seat=0)
    with pytest.raises(ValueError, match="the game ended before seat 0 could act"):
        env.reset(options={"position": end_position(2, [0])})


def test_same_seed_and_moves_give_the_same_episode():
    def run():
        env = SplendorGymEnv(num_players=3)
        obs, info = env.reset(seed=77)
        seen = [obs]
        for _ in range(40):
            obs, *_, info = env.step(first_legal(info))
            seen.append(obs)
        return np.stack(seen)

    assert np.array_equal(run(), run())


def test_random_opponent_plays_from_the_games_playout_rng():
    env = SplendorGymEnv(seat=1)
    env.reset(seed=12)
    expected = SplendorGame(2, seed=12)
    cards, nobles = R.tables()
    R.random_step(expected.state, cards, nobles)
    assert np.array_equal(env.game.state, expected.state)


def test_pickle_round_trip_mid_episode_continues_identically():
    env = SplendorGymEnv(num_players=3)
    _, info = env.reset(seed=30)
    for _ in range(10):
        _, *_, info = env.step(first_legal(info))
    copy = pickle.loads(pickle.dumps(env))
    info_copy = dict(info)
    for _ in range(20):
        a, *_, info = env.step(first_legal(info))
        b, *_, info_copy = copy.step(first_legal(info_copy))
        assert np.array_equal(a, b)
    assert copy.game == env.game


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"num_players": 1}, "num_players must be 2, 3 or 4"),
    ({"illegal": "ignore"}, "illegal must be one of"),
    ({"reward": "shaped"}, "reward must be one of"),
    ({"render_mode": "video"}, "render_mode must be one of"),
    ({"max_plies": -3}, "max_plies must be a positive integer"),
])
def test_bad_constructor_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SplendorGymEnv(**kwargs)


def test_step_before_reset_is_refused():
    with pytest.raises(RuntimeError, match="call reset"):
        SplendorGymEnv().step(0)


def test_a_spec_string_opponent_comes_from_the_policy_registry(monkeypatch):
    import tabletop_rl.agents as agents

    made = []

    class Last:
        def act(self, observation, mask, info):
            return last_legal(observation, mask, info)

    def make_policy(spec, game):
        made.append((spec, game))
        return Last()

    monkeypatch.setattr(agents, "make_policy", make_policy, raising=False)
    env = SplendorGymEnv(opponent="greedy:depth=1", num_players=3, seat=0)
    _, info = env.reset(seed=0)
    env.step(first_legal(info))
    assert made == [("greedy:depth=1", "splendor")] * 3
    assert env.game.ply == 3 and env.game.current_player == 0
