"""The PettingZoo AEC env: PettingZoo's own conformance tests, the known pitfalls of AEC envs,
end rewards, truncation, positions, seeds, illegal moves and pickling."""

from __future__ import annotations

import json
import pickle
from functools import partial

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils import wrappers

from positions import cost, points, position
from tabletop_rl.envs.aec import TabletopAEC, splendor_env
from tabletop_rl.games.splendor.actions import move_id
from tabletop_rl.games.splendor.game import IllegalActionError, SplendorGame
from tabletop_rl.games.splendor.observe import observe

raw_env = partial(TabletopAEC, "splendor")

PLAYERS = (2, 3, 4)
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # PettingZoo's advisory warnings


def end_position(num_players: int, winners: list[int]) -> dict:
    """The last turn of the final round: seat n-1 to act, then the game ends. Each winner holds the
    same 15 points in 4 level-3 cards (a 3 and three 4s); the others hold nothing."""
    fours = [c for c in range(70, 90) if points(c) == 4]
    threes = [c for c in range(70, 90) if points(c) == 3]
    bought = {w: fours[3 * k: 3 * k + 3] + [threes[k]] for k, w in enumerate(winners)}
    return position(num_players, bought=bought, final_round=True, current_player=num_players - 1)


def first_legal(obs: dict) -> int:
    return int(np.flatnonzero(obs["action_mask"])[0])


def play_out(env, choose=first_legal, limit: int = 10_000) -> int:
    """Play ``env`` to its end with ``choose``; return the number of live moves."""
    moves = 0
    for _ in env.agent_iter(limit):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
        else:
            env.step(choose(obs))
            moves += 1
    return moves


# --- PettingZoo's conformance tests -------------------------------------------------------------
@pytest.mark.parametrize("n", PLAYERS)
def test_api_test(n):
    api_test(splendor_env(n), num_cycles=300)


@pytest.mark.parametrize("n", PLAYERS)
def test_seed_test(n):
    seed_test(partial(splendor_env, n), num_cycles=200)


@pytest.mark.parametrize("n", PLAYERS)
def test_render_test(n):
    render_test(partial(splendor_env, n))


# --- the pitfalls -----------------------------------------------------------------------
@pytest.mark.parametrize("n", PLAYERS)
def test_observations_match_space_dtypes_and_masks_are_int8(n):
    env = raw_env(n)
    env.reset(seed=n)
    for agent in env.agents:
        obs = env.observe(agent)
        space = env.observation_space(agent)
        assert obs["observation"].dtype == space["observation"].dtype == np.float32
        assert obs["action_mask"].dtype == space["action_mask"].dtype == np.int8
        assert space.contains(obs)


@pytest.mark.parametrize("n", PLAYERS)
def test_mask_is_zeros_for_waiting_agents_and_never_zeros_for_the_mover(n):
    env = raw_env(n)
    env.reset(seed=10 + n)
    rng = np.random.default_rng(n)
    while not any(env.terminations.values()) and not any(env.truncations.values()):
        mover = env.agent_selection
        for agent in env.agents:
            mask = env.observe(agent)["action_mask"]
            if agent == mover:
                assert mask.any() and np.array_equal(mask, env.game.legal_mask().astype(np.int8))
            else:
                assert not mask.any()
        env.step(int(rng.choice(np.flatnonzero(env.observe(mover)["action_mask"]))))


def test_observation_space_is_the_same_object_every_call():
    env = splendor_env(3)
    env.reset(seed=0)
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)


def test_terminations_and_truncations_are_python_bools_at_start_and_end():
    env = splendor_env(2)
    env.reset(options={"position": end_position(2, [0])})
    assert all(type(v) is bool for d in (env.terminations, env.truncations) for v in d.values())
    env.step(first_legal(env.observe(env.agent_selection)))
    assert env.terminations == {"player_0": True, "player_1": True}
    assert all(type(v) is bool for d in (env.terminations, env.truncations) for v in d.values())
    assert all(type(v) is float for v in env.rewards.values())


@pytest.mark.parametrize("kind", [np.int64, np.int32, np.int8, int])
def test_numpy_integer_actions_are_accepted(kind):
    env = raw_env(2)
    env.reset(seed=5)
    a = first_legal(env.observe("player_0"))
    env.step(kind(a))
    expected = SplendorGame(2, seed=5)
    expected.step(a)
    assert env.game == expected


def test_action_names_are_accepted_by_raw_env():
    env = raw_env(2)
    env.reset(seed=5)
    env.step("take:white,blue,green")
    assert env.game.player(0)["tokens"]["white"] == 1


def test_observe_returns_fresh_arrays():
    env = raw_env(2)
    env.reset(seed=1)
    first, second = env.observe("player_0"), env.observe("player_0")
    for key in ("observation", "action_mask"):
        assert not np.shares_memory(first[key], second[key])
    assert not np.shares_memory(first["action_mask"], env.game._mask)
    kept = first["observation"].copy()
    env.step(first_legal(first))
    first["action_mask"][:] = 0
    assert np.array_equal(first["observation"], kept), "a returned observation changed after a step"
    assert env.observe("player_1")["action_mask"].any(), "writing into a returned mask reached the env"


# --- rewards ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "winners", "expected"), [
    (2, [0], [1.0, -1.0]),
    (2, [1], [-1.0, 1.0]),
    (2, [0, 1], [0.0, 0.0]),
    (3, [1], [-0.5, 1.0, -0.5]),
    (3, [0, 2], [0.5, -1.0, 0.5]),
    (4, [0, 3], [0.5, -0.5, -0.5, 0.5]),
    (4, [2], [-1 / 3, -1 / 3, 1.0, -1 / 3]),
])
def test_end_rewards_are_zero_sum_and_shared(n, winners, expected):
    env = splendor_env(n)
    env.reset(seed=0, options={"position": end_position(n, winners)})
    env.step(first_legal(env.observe(env.agent_selection)))
    assert env.unwrapped.game.winners == winners
    seen = {}
    for agent in env.agent_iter():
        _, reward, terminated, truncated, _ = env.last()
        assert terminated and not truncated
        seen[agent] = reward
        env.step(None)
    assert [seen[f"player_{p}"] for p in range(n)] == pytest.approx(expected)
    assert sum(seen.values()) == pytest.approx(0.0)


@pytest.mark.parametrize("n", PLAYERS)
def test_truncation_at_the_ply_cap_gives_zero(n):
    env = splendor_env(n, max_plies=7)
    env.reset(seed=3)
    for _ in range(7):
        env.step(first_legal(env.observe(env.agent_selection)))
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert set(env.rewards.values()) == {0}
    assert env.unwrapped.game.ply == 7


def test_random_games_reach_an_end_with_zero_sum_rewards():
    env = splendor_env(3)
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert sum(totals.values()) == pytest.approx(0.0)
    assert env.agents == []


def test_dense_reward_is_points_gained_over_15_plus_the_end_reward():
    card = next(c for c in range(40) if points(c) == 1)
    row = [card] + [c for c in range(40) if c != card][:3]
    env = splendor_env(2, reward="dense")
    env.reset(options={"position": position(2, market={1: row}, tokens={0: cost(card)})})
    env.step(move_id("buy:1.0"))
    assert env.rewards == {"player_0": pytest.approx(1 / 15), "player_1": 0.0}
    env.step(first_legal(env.observe("player_1")))
    _, reward, *_ = env.last()
    assert env.agent_selection == "player_0" and reward == pytest.approx(1 / 15)


def test_dense_end_reward_adds_the_terminal_reward():
    env = splendor_env(2, reward="dense")
    env.reset(options={"position": end_position(2, [0])})
    env.step(move_id("take:white,blue,green"))
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}


# --- positions and seeds ------------------------------------------------------------------------
def test_reset_with_a_position_dict_or_text_starts_there():
    pos = position(3, tokens={1: {"red": 2}}, current_player=2, start_player=1)
    for given in (pos, json.dumps(pos)):
        env = raw_env(3)
        env.reset(options={"position": given})
        assert env.agent_selection == "player_2"
        expected = SplendorGame.from_json(pos)
        assert env.game == expected
        for p, agent in enumerate(env.agents):
            assert np.array_equal(env.observe(agent)["observation"], observe(expected.state, p))


def test_reset_with_a_position_of_another_player_count_is_refused():
    env = raw_env(2)
    with pytest.raises(ValueError, match="position has 3 players but the env was made for 2"):
        env.reset(options={"position": position(3)})


def test_reset_with_a_finished_position_is_refused():
    g = SplendorGame.from_json(end_position(2, [0]))
    g.step("take:white,blue,green")
    with pytest.raises(ValueError, match="already finished"):
        raw_env(2).reset(options={"position": g.to_dict()})


def test_unknown_reset_options_warn():
    with pytest.warns(UserWarning, match="unknown reset option"):
        raw_env(2).reset(seed=0, options={"postion": {}})


@pytest.mark.parametrize("n", PLAYERS)
def test_seed_deals_the_same_game_as_splendor_game(n):
    env = raw_env(n)
    env.reset(seed=1234)
    assert env.game == SplendorGame(n, seed=1234)


def test_unseeded_resets_follow_from_the_last_seed():
    a, b = raw_env(2), raw_env(2)
    a.reset(seed=9)
    b.reset(seed=9)
    a.reset()
    b.reset()
    assert a.game == b.game and a.game != SplendorGame(2, seed=9)


def test_unseeded_first_resets_differ():
    a, b = raw_env(2), raw_env(2)
    a.reset()
    b.reset()
    assert a.game != b.game


# --- illegal moves and bad input ----------------------------------------------------------------
def test_raw_env_raises_on_an_illegal_move_and_changes_nothing():
    env = raw_env(2)
    env.reset(seed=2)
    before = env.game.to_dict()
    with pytest.raises(IllegalActionError, match=r"splendor, seat 0: pass: pass is legal only when no other"):
        env.step(move_id("pass"))
    assert env.game.to_dict() == before and env.agent_selection == "player_0"
    with pytest.raises(ValueError, match="out of range"):
        env.step(72)
    env.step(first_legal(env.observe("player_0")))
    assert env.agent_selection == "player_1"


def test_wrapped_env_ends_the_game_with_minus_one_for_an_illegal_move():
    env = splendor_env(2)
    env.reset(seed=2)
    env.step(move_id("pass"))
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": -1.0, "player_1": 0}


def pettingzoo_classic(num_players: int) -> AECEnv:
    """The env in PettingZoo's own classic wrappers, as ``splendor_env`` wrapped it before its faster reads."""
    env = wrappers.TerminateIllegalWrapper(TabletopAEC("splendor", num_players), illegal_reward=-1)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(env))


def _before_reset(env: AECEnv) -> list[str]:
    seen = []
    for name in ("agents", "rewards", "agent_selection", "_cumulative_rewards", "num_agents"):
        try:
            seen.append(repr(getattr(env, name)))
        except AttributeError as e:
            seen.append(str(e))
    return seen


def _trace(env: AECEnv, illegal_at: int | None) -> list:
    """Everything a player of ``env`` reads, each turn, through a game with an illegal move at turn ``illegal_at``."""
    env.reset(seed=3)
    seen: list = [str(env)]
    for turn, agent in enumerate(env.agent_iter(400)):
        obs, reward, terminated, truncated, info = env.last()
        seen.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, terminated,
                     truncated, info, dict(env.rewards), dict(env.terminations), dict(env.truncations), env.agents[:]))
        if terminated or truncated:
            env.step(None)
        else:
            env.step(move_id("pass") if turn == illegal_at else int(np.flatnonzero(obs["action_mask"])[-1]))
    return seen + [env.agents]


@pytest.mark.parametrize("illegal_at", [None, 0, 7])
def test_the_wrapped_env_reads_as_pettingzoos_own_wrappers(illegal_at: int | None) -> None:
    ours, theirs = splendor_env(2), pettingzoo_classic(2)
    assert isinstance(ours, wrappers.OrderEnforcingWrapper) and isinstance(ours.env, wrappers.AssertOutOfBoundsWrapper)
    assert _before_reset(ours) == _before_reset(theirs)
    assert _trace(ours, illegal_at) == _trace(theirs, illegal_at)


@pytest.mark.parametrize("value", [0, 71, 72, -1, 1 << 40, np.int64(3), np.int8(-2), np.array(4), np.array([4]), 3.0,
                                   True, "3", None])
def test_the_action_space_answers_as_gymnasiums_discrete(value: object) -> None:
    ours = raw_env(2).action_space("player_0")
    assert ours == spaces.Discrete(72) and repr(ours) == "Discrete(72)"
    assert ours.contains(value) is spaces.Discrete(72).contains(value)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"num_players": 5}, "num_players must be 2, 3 or 4"),
    ({"render_mode": "video"}, "render_mode must be one of"),
    ({"reward": "shaped"}, "reward must be one of"),
    ({"render_viewer": 2}, "render_viewer must be None or a seat 0..1"),
    ({"max_plies": 0}, "max_plies must be a positive integer"),
])
def test_bad_constructor_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        raw_env(**kwargs)


def test_observing_an_unknown_agent_is_named():
    env = raw_env(2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent 'player_2'"):
        env.observe("player_2")


# --- pickling -----------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [raw_env, splendor_env])
def test_pickle_round_trip_mid_game_continues_identically(make):
    env = make(3)
    env.reset(seed=21)
    for _ in range(25):
        env.step(first_legal(env.observe(env.agent_selection)))
    copy = pickle.loads(pickle.dumps(env))
    assert copy.unwrapped.game == env.unwrapped.game and copy.agent_selection == env.agent_selection
    rng_a, rng_b = np.random.default_rng(4), np.random.default_rng(4)
    play_out(env, lambda obs: int(rng_a.choice(np.flatnonzero(obs["action_mask"]))))
    play_out(copy, lambda obs: int(rng_b.choice(np.flatnonzero(obs["action_mask"]))))
    assert copy.unwrapped.game == env.unwrapped.game
    assert copy.unwrapped.game.is_over
