"""Hostile input through the envs: deep JSON positions, the vector env's action checks, and values that are no
action id on every turn-based door (AEC wrapped and raw, Gymnasium)."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl.envs.splendor_vector import SplendorVectorEnv


def test_vector_env_deep_json_position():
    env = SplendorVectorEnv(num_envs=2, seat=0)
    with pytest.raises(ValueError) as err:
        env.reset(seed=1, options={"position": "[" * 1000})
    assert len(str(err.value)) < 300 and "\n" not in str(err.value)


def test_gym_and_aec_deep_json_position():
    from tabletop_rl import SplendorGymEnv, klaverjas_env, space_conquest_env
    from tabletop_rl.envs.aec import TabletopAEC

    envs = [SplendorGymEnv(), TabletopAEC("splendor"), klaverjas_env()]
    for env in envs:
        with pytest.raises(ValueError) as err:
            env.reset(seed=1, options={"position": "[" * 1000})
        assert len(str(err.value)) < 300 and "\n" not in str(err.value)
    par = space_conquest_env()
    with pytest.raises(ValueError) as err:
        par.reset(seed=1, options={"game": "[" * 1000})
    assert len(str(err.value)) < 300 and "\n" not in str(err.value)


def _bad_actions(masks: np.ndarray) -> list:
    legal = np.array([np.flatnonzero(m)[0] for m in masks])
    return [
        legal.astype(np.float64) + 0.5,  # floats, truncated before
        legal.astype(np.float64),  # integral floats are still floats
        [str(a) for a in legal],  # digit strings
        np.ones(len(legal), np.bool_),  # bool arrays
        legal.reshape(len(legal), 1, 1),  # wrong shape
        np.concatenate([legal, legal]).reshape(2, len(legal)),
        [2**70] * len(legal),
        legal[:1],
    ]


@pytest.mark.parametrize("which", range(8))
def test_vector_env_refuses_non_integer_actions(which):
    env = SplendorVectorEnv(num_envs=3, seat=0)
    _, info = env.reset(seed=5)
    before = env.states.copy()
    bad = _bad_actions(info["action_mask"])[which]
    with pytest.raises(ValueError) as err:
        env.step(bad)
    assert len(str(err.value)) < 300 and "\n" not in str(err.value)
    assert np.array_equal(env.states, before)


def test_vector_env_takes_integer_lists_and_arrays():
    env = SplendorVectorEnv(num_envs=3, seat=0)
    _, info = env.reset(seed=5)
    legal = [int(np.flatnonzero(m)[0]) for m in info["action_mask"]]
    env.step(legal)
    _, info = env.reset(seed=5)
    env.step(np.array(legal, np.int32))


#: Actions no turn-based door may take: ids past int64 either way, negative or past the table, and values that are
#: no id (the raw AEC and Gymnasium envs take move names, so "3" is an unknown name there).
NOT_AN_ID = [2**63, 2**64, -(2**63) - 1, 10**30, -1, 72, 1.5, np.float64(1.0), True, np.bool_(True), np.array([3]),
             np.array(3.0), None, "3"]


def _doors():
    from tabletop_rl import KlaverjasGymEnv, SplendorGymEnv, klaverjas_env, splendor_env
    from tabletop_rl.envs.aec import TabletopAEC

    return {
        "splendor-aec": splendor_env, "klaverjas-aec": klaverjas_env,
        "splendor-raw-aec": lambda: TabletopAEC("splendor"), "klaverjas-raw-aec": lambda: TabletopAEC("klaverjas"),
        "splendor-gym": lambda: SplendorGymEnv(seat=0), "klaverjas-gym": lambda: KlaverjasGymEnv(seat=0),
        "splendor-gym-raise": lambda: SplendorGymEnv(seat=0, illegal="raise"),
        "klaverjas-gym-raise": lambda: KlaverjasGymEnv(seat=0, illegal="raise"),
    }


def _seen(env) -> tuple:
    """What a step could change: the game, and the AEC env's per-agent fields (the Gymnasium env has none)."""
    fields = ("agent_selection", "rewards", "terminations", "truncations")
    return env.unwrapped.game.to_json(), [repr(getattr(env, f, None)) for f in fields]


@pytest.mark.parametrize("door", list(_doors()))
def test_turn_based_doors_refuse_what_is_no_action_id_in_one_line(door):
    """Not an illegal move to penalize (the wrapped AEC env, the Gymnasium env's default): a value outside the
    action space is the caller's mistake, refused with the env unchanged."""
    env = _doors()[door]()
    env.reset(seed=1)
    before = _seen(env)
    for action in NOT_AN_ID:
        with pytest.raises(ValueError) as err:
            env.step(action)
        assert len(str(err.value)) < 300 and "\n" not in str(err.value), (action, str(err.value))
        assert _seen(env) == before, action
