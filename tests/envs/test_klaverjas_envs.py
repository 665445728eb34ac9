"""The AEC env: PettingZoo conformance, hidden hands never reach another seat's observation, rendering."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from tabletop_rl.core.game import IllegalActionError
from tabletop_rl.envs.aec import TabletopAEC, klaverjas_env
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.observe import OBS_PARTS, OBS_SIZE, observe

raw_env = partial(TabletopAEC, "klaverjas", 2)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("options", [{}, {"rules": "amsterdam", "deals": 2, "trump_selection": "free_with_pass"},
                                     {"trump_selection": "proposed_suit", "all_pass": "redeal"},
                                     {"kraken": True, "target": 400, "stuk_mode": "declared_from_hand",
                                      "quartet_values": "low_100", "rules": "amsterdam",
                                      "amsterdam_undertrump_vs_opponent": "forced"}])
def test_api_and_seed_tests(options):
    api_test(klaverjas_env(**options), num_cycles=200)
    seed_test(partial(klaverjas_env, **options), num_cycles=100)


def test_observations_of_other_seats_do_not_depend_on_how_hidden_cards_are_split():
    """Swap one unplayed card between seats 1 and 3: seats 0 and 2 see byte-identical observations,
    seats 1 and 3 (who hold them) do see the difference."""
    state = R.new_state(seed=8, rules="amsterdam")
    R.apply_action(state, R.NAME_TRUMP + 1)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    for _ in range(6):
        R.legal_mask(state, mask)
        R.apply_action(state, int(np.flatnonzero(mask)[-1]))
    swapped = state.copy()
    a, b = R.cards_of(int(state[R.HAND + 1]))[0], R.cards_of(int(state[R.HAND + 3]))[0]
    swapped[R.HAND + 1] ^= (1 << a) | (1 << b)
    swapped[R.HAND + 3] ^= (1 << a) | (1 << b)
    for seat in range(4):
        same = observe(state, seat).tobytes() == observe(swapped, seat).tobytes()
        assert same == (seat in (0, 2)), f"seat {seat}"


def test_an_episode_ends_with_zero_sum_team_rewards_and_renders_only_the_viewers_hand():
    env = raw_env(render_mode="ansi", render_viewer=2, reward="points")
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    text = env.render()
    hand = R.cards_of(int(env.game.state[R.HAND + 2]))
    other = R.cards_of(int(env.game.state[R.HAND + 1]))
    assert all(R.card_name(c) in text for c in hand)
    assert "8 cards" in text and not any(f" {R.card_name(c)} " in f" {text.splitlines()[-3]} " for c in other)
    rewards = {}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        assert obs["observation"].shape == (OBS_SIZE,)
        if terminated or truncated:
            rewards[agent] = reward
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert rewards["player_0"] == rewards["player_2"] == -rewards["player_1"] != 0


def test_illegal_action_raises_and_leaves_the_env_unchanged():
    env = raw_env()
    env.reset(seed=1)
    before = env.game.state.copy()
    with pytest.raises(IllegalActionError, match="not legal"):
        env.step(R.PASS)  # forced forehand may not pass
    assert np.array_equal(before, env.game.state)


def test_kraken_decisions_reach_the_observation_and_the_rendering():
    env = raw_env(render_mode="ansi", kraken=True, target=1500)
    env.reset(seed=3)
    env.step(R.NAME_TRUMP + 1)  # player_0 makes diamonds; player_1 may double
    obs = env.observe("player_1")
    assert env.agent_selection == "player_1" and np.flatnonzero(obs["action_mask"]).tolist() == [R.PASS, R.KRAAK]
    env.step(R.KRAAK)
    assert np.flatnonzero(env.observe("player_0")["action_mask"]).tolist() == [R.PASS, R.REKRAAK]
    o = env.observe("player_2")["observation"]
    start = sum(size for name, size in OBS_PARTS[:[n for n, _ in OBS_PARTS].index("multiplier")])
    assert o[start:start + 3].tolist() == [0.0, 1.0, 0.0]
    assert "kraak x2" in env.render() and "deal 1 (to 1500)" in env.render()
    env.step(R.REKRAAK)
    assert env.game.state[R.PHASE] == R.PLAYING and "rekraak x4" in env.render()


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="rules"):
        klaverjas_env(rules="frisian")
    with pytest.raises(ValueError, match="stuk_mode"):
        klaverjas_env(stuk_mode="shouted")
    with pytest.raises(ValueError, match="reward"):
        raw_env(reward="money")
