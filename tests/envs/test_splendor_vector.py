"""SplendorVectorEnv: batched stepping, autoreset, rewards, hooks, and the SB3 adapter."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from extra_skips import needs
from tabletop_rl.envs.splendor_vector import SplendorVectorEnv
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.game import IllegalActionError, SplendorGame
from tabletop_rl.games.splendor.observe import observe


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def play(env: SplendorVectorEnv, steps: int, seed: int = 0):
    """Random legal play; yields each step's outputs."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    for _ in range(steps):
        out = env.step(random_actions(info["action_mask"], rng))
        info = out[4]
        yield out


def test_reset_deals_game_i_as_splendor_game_seed_plus_i():
    env = SplendorVectorEnv(num_envs=3, seat=0)
    obs, info = env.reset(seed=100)
    for i in range(3):
        g = SplendorGame(2, seed=100 + i)
        np.testing.assert_array_equal(obs[i], observe(g.state, 0))
        np.testing.assert_array_equal(info["action_mask"][i], g.legal_mask())


@pytest.mark.parametrize("players", [2, 3, 4])
def test_learner_always_on_turn_and_masks_legal(players):
    env = SplendorVectorEnv(num_envs=16, num_players=players)
    ends = 0
    for obs, _rewards, term, trunc, info in play(env, 400):
        assert obs.dtype == np.float32 and obs.shape == (16, env.single_observation_space.shape[0])
        assert (env.states[:, R.CURRENT] == env.seats).all()
        assert info["action_mask"].any(axis=1).all()
        ends += int((term | trunc).sum())
    assert ends > 0


def test_end_rewards_are_zero_sum_and_final_obs_given():
    env = SplendorVectorEnv(num_envs=32, seat="random")
    totals = {"win": 0, "loss": 0}
    for _obs, rewards, term, trunc, info in play(env, 300, seed=3):
        done = term | trunc
        assert (rewards[~done] == 0).all()
        if done.any():
            assert info["_final_obs"].tolist() == done.tolist()
            for i in np.flatnonzero(done):
                assert info["final_obs"][i].shape == env.single_observation_space.shape
                assert rewards[i] in (-1.0, 0.0, 1.0)
            assert all(info["final_obs"][i] is None for i in np.flatnonzero(~done))
            totals["win"] += int((rewards == 1).sum())
            totals["loss"] += int((rewards == -1).sum())
    assert totals["win"] > 0 and totals["loss"] > 0


def test_outcome_is_the_end_reward_where_a_game_ended_and_zero_elsewhere():
    env = SplendorVectorEnv(num_envs=16, seat="random")
    ends = 0
    for _obs, rewards, term, trunc, info in play(env, 300, seed=4):
        done = term | trunc
        assert ("outcome" in info) == bool(done.any())
        if done.any():
            assert info["_outcome"].tolist() == done.tolist()
            assert info["outcome"][done].tolist() == rewards[done].tolist()  # the sparse reward is the end reward
            assert not info["outcome"][~done].any()
            ends += int(done.sum())
    assert ends > 16


def test_same_seed_same_trajectory_regardless_of_threads():
    import numba

    def run():
        return [(o.copy(), r.copy()) for o, r, *_ in play(SplendorVectorEnv(num_envs=8), 150, seed=5)]

    first = run()
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        second = run()
    finally:
        numba.set_num_threads(threads)
    for (o1, r1), (o2, r2) in zip(first, second):
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)


def test_illegal_action_raises_and_applies_nothing():
    env = SplendorVectorEnv(num_envs=4, seat=0)
    obs, info = env.reset(seed=1)
    before = env.states.copy()
    actions = random_actions(info["action_mask"], np.random.default_rng(0))
    actions[2] = R.PASS  # never legal at the start
    with pytest.raises(IllegalActionError, match="env 2: pass"):
        env.step(actions)
    np.testing.assert_array_equal(env.states, before)
    actions[2] = 99
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(actions)


def test_an_action_out_of_range_is_named_as_given_whatever_its_integer_type():
    env = SplendorVectorEnv(num_envs=4, seat=0)
    _obs, info = env.reset(seed=1)
    legal = random_actions(info["action_mask"], np.random.default_rng(0))
    for dtype, value in ((np.uint64, 2**63 + 5), (np.int8, -3), (np.int64, 72), (np.int64, -1)):
        actions = legal.astype(dtype)
        actions[1] = value
        with pytest.raises(IllegalActionError, match=rf"^env 1: action {value} is out of range 0\.\.71$"):
            env.step(actions)
    assert env.step(legal)[0].shape == (4, env.single_observation_space.shape[0])


def test_final_observations_are_the_callers_to_keep():
    env = SplendorVectorEnv(num_envs=8, seat=0)
    kept = []
    for _obs, _rewards, term, trunc, info in play(env, 300, seed=5):
        for i in np.flatnonzero(term | trunc):
            kept.append((info["final_obs"][i], info["final_obs"][i].copy()))
    assert len(kept) > 8
    for final, snapshot in kept:  # none of them written again by the later steps
        np.testing.assert_array_equal(final, snapshot)


def test_external_hook_plays_the_other_seats():
    calls = []

    def hook(obs, masks, envs):
        calls.append(len(envs))
        assert (env.states[envs, R.CURRENT] != 1).all()
        assert masks.any(axis=1).all()
        return masks.argmax(axis=1)  # lowest legal id: a deterministic, legal policy

    env = SplendorVectorEnv(num_envs=6, opponent=hook, seat=1)
    list(play(env, 50))
    assert calls and max(calls) <= 6
    assert (env.states[:, R.CURRENT] == 1).all()


def test_bad_arguments_are_one_line_errors():
    with pytest.raises(ValueError, match="opponent"):
        SplendorVectorEnv(4, opponent="strong")
    with pytest.raises(ValueError, match="num_players"):
        SplendorVectorEnv(4, num_players=5)
    with pytest.raises(ValueError, match="seat"):
        SplendorVectorEnv(4, seat=2)
    with pytest.raises(ValueError, match="num_envs"):
        SplendorVectorEnv(0)
    env = SplendorVectorEnv(4)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="expected 4 actions"):
        env.step(np.zeros(3, np.int64))


def test_reset_from_position():
    g = SplendorGame(2, seed=9)
    for a in ("take:white,blue,green", "take:green,red,black"):
        g.step(a)
    env = SplendorVectorEnv(num_envs=2, seat=0)
    obs, _ = env.reset(seed=0, options={"position": g.to_json()})
    np.testing.assert_array_equal(obs[0], observe(g.state, 0))
    with pytest.raises(ValueError, match="position has 2 players but the env was made for 3"):
        SplendorVectorEnv(2, num_players=3).reset(options={"position": g.to_json()})


def test_greedy_opponent_runs_inside_numba():
    env = SplendorVectorEnv(num_envs=8, opponent="greedy")
    ends = sum(int((t | u).sum()) for _, _, t, u, _ in play(env, 300))
    assert ends > 0


@pytest.mark.train
def test_maskable_ppo_trains_on_the_sb3_adapter():
    needs("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    venv = SplendorVectorEnv(num_envs=16).to_sb3()
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=256, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    obs = venv.reset()
    actions, _ = model.predict(obs, action_masks=venv.action_masks())
    assert venv.action_masks()[np.arange(16), actions].all()


@pytest.mark.parametrize("opponent", ["random", "greedy"])
def test_same_seed_same_trajectory_as_the_gymnasium_env(opponent):
    from tabletop_rl.envs.gym import SplendorGymEnv

    single = SplendorGymEnv(opponent=opponent, seat="random")
    batch = SplendorVectorEnv(num_envs=2, opponent=opponent, seat="random")
    rng = np.random.default_rng(4)
    for seed in (11, 12, 13):
        obs1, info1 = single.reset(seed=seed)
        obs2, info2 = batch.reset(seed=seed)
        done = False
        while not done:
            np.testing.assert_array_equal(obs1, obs2[0])
            np.testing.assert_array_equal(info1["action_mask"].astype(bool), info2["action_mask"][0])
            action = rng.choice(np.flatnonzero(info2["action_mask"][0]))
            obs1, r1, t1, u1, info1 = single.step(int(action))
            obs2, r2, t2, u2, info2 = batch.step(np.array([action, batch.action_masks()[1].argmax()]))
            assert (r1, t1, u1) == (r2[0], t2[0], u2[0])
            done = t1 or u1
        np.testing.assert_array_equal(obs1, info2["final_obs"][0])


def test_make_vec_gives_the_native_env_and_matches_gymnasiums_sync_vectorisation():
    import gymnasium

    import tabletop_rl  # noqa: F401  (registers the env)

    native = gymnasium.make_vec("tabletop_rl/Splendor-v0", num_envs=3, opponent="greedy", seat=1)
    sync = gymnasium.make_vec("tabletop_rl/Splendor-v0", num_envs=3, vectorization_mode="sync",
                              opponent="greedy", seat=1)
    assert isinstance(native, SplendorVectorEnv) and native.seat_option == 1
    obs1, info1 = native.reset(seed=9)
    obs2, info2 = sync.reset(seed=9)
    for _ in range(25):
        np.testing.assert_array_equal(obs1, obs2)
        np.testing.assert_array_equal(info1["action_mask"], info2["action_mask"].astype(bool))
        actions = info1["action_mask"].argmax(axis=1)
        obs1, _r, _t, _u, info1 = native.step(actions)
        obs2, _r, _t, _u, info2 = sync.step(actions)


def test_dense_reward_adds_the_learners_points_over_15():
    env = SplendorVectorEnv(num_envs=16, reward="dense", seat=0)
    rng = np.random.default_rng(2)
    _obs, info = env.reset(seed=8)
    totals = np.zeros(16)
    finished = []
    for _ in range(400):
        points_before = env.states[:, R.player_base(0) + R.P_POINTS].copy()
        _obs, rewards, term, trunc, info = env.step(random_actions(info["action_mask"], rng))
        totals += rewards
        for i in np.flatnonzero(term | trunc):
            finished.append(totals[i])
            totals[i] = 0.0
        running = ~(term | trunc)
        gained = (env.states[:, R.player_base(0) + R.P_POINTS] - points_before) / 15
        np.testing.assert_allclose(rewards[running], gained[running])
    assert finished and all(-1.0 <= t <= 1.0 + 30 / 15 for t in finished)
    with pytest.raises(ValueError, match="reward"):
        SplendorVectorEnv(4, reward="shaped")


def test_set_opponents_takes_effect_at_the_next_game_or_now():
    env = SplendorVectorEnv(num_envs=8, opponent="random")
    list(play(env, 1))
    env.set_opponents(np.full(8, 1))
    assert (env.opponents == 0).all()
    ended = np.zeros(8, bool)
    for _o, _r, term, trunc, _i in play_on(env, 200):
        ended |= term | trunc
        assert (env.opponents[ended] == 1).all() and (env.opponents[~ended] == 0).all()
    assert ended.any()
    env.set_opponents(np.zeros(8), now=True)
    assert (env.opponents == 0).all()
    with pytest.raises(ValueError, match="8 values"):
        env.set_opponents(np.zeros(3))
    with pytest.raises(ValueError, match="hook"):
        env.set_opponents(np.full(8, 2))


def play_on(env: SplendorVectorEnv, steps: int):
    """Random legal play from wherever ``env`` is."""
    rng = np.random.default_rng(1)
    for _ in range(steps):
        yield env.step(random_actions(env.action_masks(), rng))


def test_copy_false_returns_the_envs_own_buffers_and_the_same_values():
    fresh = SplendorVectorEnv(num_envs=4, seat=0)
    shared = SplendorVectorEnv(num_envs=4, seat=0, copy=False)
    obs1, info1 = fresh.reset(seed=3)
    obs2, info2 = shared.reset(seed=3)
    assert obs2 is shared._obs and info2["action_mask"] is shared._masks
    assert info1["action_mask"] is not fresh._masks
    first = obs1.copy()
    actions = info1["action_mask"].argmax(axis=1)
    after_fresh, after_shared = fresh.step(actions)[0], shared.step(actions)[0]
    np.testing.assert_array_equal(after_fresh, after_shared)
    assert not np.array_equal(after_fresh, first)
    np.testing.assert_array_equal(obs1, first)  # a returned array is never written again
    assert after_shared is obs2  # copy=False: the buffer is rewritten in place



def test_parallel_false_envs_step_from_two_threads_at_once():
    """``parallel=False`` (what the trainers use) runs every kernel on the calling thread, dealing and the hook's
    views included. Before, those two always ran numba's parallel loops: two trainers on a 2-core machine
    stalled each other about six times over, and two threads stepping such envs crashed numba's ``workqueue``
    layer, which allows one parallel launch at a time (so that layer is what this test runs on)."""
    import os
    import subprocess
    import sys

    script = """
import threading, numpy as np
from tabletop_rl.envs.splendor_vector import SplendorVectorEnv
def hook(obs, masks, envs):
    return np.array([int(np.flatnonzero(m)[0]) for m in masks], np.int64)
def play():
    env = SplendorVectorEnv(num_envs=16, opponent=hook, parallel=False)
    _, info = env.reset(seed=0)
    for _ in range(300):
        _, _, _, _, info = env.step(np.array([int(np.flatnonzero(m)[0]) for m in info["action_mask"]], np.int64))
threads = [threading.Thread(target=play) for _ in range(2)]
for t in threads: t.start()
for t in threads: t.join()
print("done")
"""
    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr[-2000:]


_WAIT_SETTING = """
import os, numpy as np
from tabletop_rl.envs.splendor_vector import SplendorVectorEnv
loaded_before = any("libgomp" in line for line in open("/proc/self/maps"))
env = SplendorVectorEnv(num_envs=4)
env.reset(seed=0)
import numba
print(loaded_before, numba.threading_layer(), os.environ.get("OMP_WAIT_POLICY"), os.environ.get("GOMP_SPINCOUNT"))
"""


def _wait_setting(**chosen: str) -> list[str]:
    """(OpenMP loaded before the first step, numba's threading layer, OMP_WAIT_POLICY and GOMP_SPINCOUNT at the
    end) of a fresh process whose environment holds ``chosen`` and no other OpenMP wait setting."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")} | chosen
    out = subprocess.run([sys.executable, "-c", _WAIT_SETTING], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_numbas_openmp_threads_spin_briefly_unless_the_user_chose():
    """A thread spinning for OpenMP's own 3 ms at a barrier takes the core from the one it waits for when other
    processes share the cores (two threads then ran at a twentieth of one); the package shortens the spin before
    numba loads OpenMP, and keeps a wait setting of the user's own."""
    assert _wait_setting() == ["False", "omp", "None", "3000"]
    assert _wait_setting(OMP_WAIT_POLICY="passive") == ["False", "omp", "passive", "None"]
    assert _wait_setting(GOMP_SPINCOUNT="1000") == ["False", "omp", "None", "1000"]
