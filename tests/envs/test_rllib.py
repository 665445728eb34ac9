"""The RLlib adapter (docs/rllib.md): observations and masks of every game, illegal moves, RLlib's vectorised
autoreset, the cause of the illegal moves at ply 0 (RLlib's env pre-check), and one training iteration with
2 env runners x 4 envs that makes no illegal move. Ray binds to 127.0.0.1, once for this module."""

import os

import numpy as np
import pytest

from extra_skips import needs

pytestmark = pytest.mark.ray
# Ray reads this when it is imported: without it Ray resolves 127.0.0.1 to the machine's own address.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
needs("ray")

import ray  # noqa: E402
from ray.rllib.env.vector.sync_vector_multi_agent_env import SyncVectorMultiAgentEnv  # noqa: E402
from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402

from tabletop_rl.core.game import IllegalActionError  # noqa: E402
from tabletop_rl.envs.rllib import MaskedPPOTorchModule, TabletopMultiAgentEnv, selfplay_config  # noqa: E402
from tabletop_rl.games.space_conquest import observe as space_conquest_observe  # noqa: E402

GAMES = {"splendor": {"num_players": 3}, "klaverjas": {"deals": 1}, "space_conquest": {"max_turns": 12}}


def legal_actions(env, observations, rng):
    """A random legal action for every agent that observed (per dimension for Space Conquest's orders)."""
    actions = {}
    for agent, obs in observations.items():
        mask = obs["action_mask"]
        space = env.action_spaces[agent]
        if hasattr(space, "nvec"):
            parts = np.split(mask, np.cumsum(space.nvec)[:-1])
            actions[agent] = np.array([rng.choice(np.flatnonzero(part)) for part in parts])
        else:
            actions[agent] = int(rng.choice(np.flatnonzero(mask)))
    return actions


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_step_observes_the_agents_to_act_with_their_masks(game):
    env = TabletopMultiAgentEnv({"game": game, **GAMES[game]})
    rng = np.random.default_rng(0)
    observations, infos = env.reset(seed=5)
    assert infos == {} and env.agents == env.possible_agents
    while True:
        for agent, obs in observations.items():
            assert sorted(obs) == ["action_mask", "observations"]
            assert env.observation_spaces[agent].contains(obs), agent
            assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].any()
        observations, rewards, terminateds, truncateds, _ = env.step(legal_actions(env, observations, rng))
        if terminateds["__all__"] or truncateds["__all__"]:
            break
        assert set(terminateds) == {"__all__"}
        if game != "space_conquest":  # one agent to act at a time
            assert len(observations) == 1
    assert set(observations) == set(env.possible_agents) == set(terminateds) - {"__all__"}
    assert sum(rewards.values()) == pytest.approx(0.0) and env.agents == []
    with pytest.raises(RuntimeError, match="call reset"):
        env.step({})


def test_the_turn_based_mask_is_the_games_and_reset_deals_by_seed():
    env = TabletopMultiAgentEnv()
    first, _ = env.reset(seed=11)
    again, _ = TabletopMultiAgentEnv().reset(seed=11)
    np.testing.assert_array_equal(first["player_0"]["observations"], again["player_0"]["observations"])
    mask = first["player_0"]["action_mask"]
    assert mask.shape == (72,) and mask.sum() == 30  # Splendor's opening: 10 + 5 takes, 12 + 3 reserves
    space_conquest = TabletopMultiAgentEnv({"game": "space_conquest"})
    assert space_conquest.observation_spaces["player_0"]["action_mask"].shape == (space_conquest_observe.MASK_SIZE,)


def test_an_illegal_move_raises_and_changes_nothing():
    env = TabletopMultiAgentEnv()
    observations, _ = env.reset(seed=2)
    with pytest.raises(IllegalActionError, match="action_mask"):
        env.step({"player_0": "return:gold"})
    after, _, terminateds, _, _ = env.step({"player_0": "take:white,blue,green"})
    assert list(after) == ["player_1"] and not terminateds["__all__"]


def test_penalize_ends_the_episode_with_minus_one():
    env = TabletopMultiAgentEnv({"illegal": "penalize", "num_players": 2})
    env.reset(seed=2)
    observations, rewards, terminateds, _, infos = env.step({"player_0": 70})
    assert rewards == {"player_0": -1.0, "player_1": 0.0} and terminateds["__all__"]
    assert infos["player_0"]["illegal_action"] == 70 and set(observations) == {"player_0", "player_1"}


@pytest.mark.parametrize("config, message", [
    ({"game": "chess"}, "game must be one of"),
    ({"colour": "red"}, "splendor has no game option 'colour'"),
    ({"game": "space_conquest", "num_players": 2}, "space_conquest has no setting 'num_players'"),
    ({"illegal": "ignore"}, "illegal must be one of"),
])
def test_bad_settings_are_one_line_errors(config, message):
    with pytest.raises(ValueError, match=message):
        TabletopMultiAgentEnv(config)


def test_step_takes_the_agent_to_act_only():
    env = TabletopMultiAgentEnv()
    env.reset(seed=2)
    with pytest.raises(ValueError, match=r"step\(\) takes \{'player_0': action\}.*got keys \['player_1'\]"):
        env.step({"player_1": 0})


def test_the_module_refuses_observations_without_a_mask():
    with pytest.raises(ValueError, match="needs a Dict observation space"):
        MaskedPPOTorchModule(observation_space=TabletopMultiAgentEnv().observation_spaces["player_0"]["observations"])


def test_rllibs_vectorised_autoreset_hands_out_fresh_masks():
    """RLlib's vector env as its env runner drives it: a finished env is reset on the next step (its action
    ignored), and every action chosen from the masks it returns is legal, so none raises."""
    vector = SyncVectorMultiAgentEnv([lambda: TabletopMultiAgentEnv({"max_plies": 7})] * 4)
    rng = np.random.default_rng(1)
    observations, _ = vector.reset(seed=3)
    resets = 0
    done = np.zeros(4, bool)
    for _ in range(60):
        actions = [{} if done[i] else legal_actions(vector.envs[i], observations[i], rng) for i in range(4)]
        resets += int(done.sum())
        observations, _, terminateds, truncateds, _ = vector.step(actions)
        done = np.array([t["__all__"] or u["__all__"] for t, u in zip(terminateds, truncateds)])
    assert resets >= 20  # games of 7 plies: every env was reset several times


def test_rllibs_env_pre_check_is_what_played_the_illegal_moves_at_ply_0():
    """The ply-0 illegal moves of the issue: each new env runner steps every sub-env once with
    ``action_space.sample()``, unmasked (``check_multiagent_environments``), most often an illegal move. That
    step is no part of training; ``selfplay_config`` turns the pre-check off."""
    failures = 0
    for seed in range(16):  # 2 runners x 8 envs
        env = TabletopMultiAgentEnv()
        env.action_spaces["player_0"].seed(seed)
        try:
            check_multiagent_environments(env)
        except ValueError as e:
            assert isinstance(e.__cause__, IllegalActionError)
            failures += 1
    assert failures >= 4


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=3, _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    addresses = {node["NodeManagerAddress"] for node in ray.nodes()}
    if addresses != {"127.0.0.1"}:
        ray.shutdown()
        pytest.fail(f"Ray bound to {sorted(addresses)}: RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 must be set before "
                    "ray is first imported")
    yield
    ray.shutdown()


def test_a_training_iteration_with_2_runners_x_4_envs_makes_no_illegal_move(local_ray):
    """Every illegal move raises (``illegal="raise"``) and a failed env runner fails the iteration."""
    config = (selfplay_config("splendor", hidden=(16,), max_plies=30)
              .env_runners(num_env_runners=2, num_envs_per_env_runner=4, num_cpus_per_env_runner=1)
              .learners(num_learners=0)
              .training(train_batch_size_per_learner=480, minibatch_size=240, num_epochs=1)
              .fault_tolerance(restart_failed_env_runners=False))
    algo = config.build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    runners = result["env_runners"]
    assert runners["num_env_steps_sampled"] >= 480 and runners["num_episodes"] >= 8  # autoresets happened
