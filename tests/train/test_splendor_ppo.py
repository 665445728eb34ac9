"""PPO self-play training end to end (needs the [train] extra): checkpoints load as policies, play legal
moves, resume continues the step count, and a model for another observation layout is refused."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from extra_skips import needs

needs("sb3_contrib")

from tabletop_rl.agents import make_policy  # noqa: E402
from tabletop_rl.agents.ppo import META_FILE  # noqa: E402
from tabletop_rl.games.splendor.game import SplendorGame  # noqa: E402
from tabletop_rl.games.splendor.observe import observe  # noqa: E402
from tabletop_rl.train.selfplay import eval_specs  # noqa: E402
from tabletop_rl.train.splendor_ppo import TrainConfig, parse_mix, train, validate  # noqa: E402

pytestmark = pytest.mark.train


def small(out, **changes) -> TrainConfig:
    base = dict(steps=2048, out=str(out), num_envs=32, n_steps=32, batch_size=512, epochs=1, net="32,32",
                snapshot_every=1, eval_every=1024, eval_games=16, checkpoint_every=1024, progress=False)
    return TrainConfig(**{**base, **changes})


def play_with(policy, seed: int) -> SplendorGame:
    g = SplendorGame(2, seed=seed)
    while not g.is_over:
        g.step(policy.act(observe(g.state, g.current_player), g.legal_mask(), {}))
    return g


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("ppo")
    return out, train(small(out))


def test_training_writes_checkpoints_evaluations_and_a_final_model(trained):
    out, final = trained
    assert final.is_file() and sorted(p.name for p in (out / "checkpoints").iterdir())
    rows = (out / "eval.csv").read_text().splitlines()
    assert {r.split(",")[1] for r in rows} == {"random", "greedy"}
    assert json.loads((out / "config.json").read_text())["steps"] == 2048
    assert (out / "logs" / "progress.csv").is_file()
    timing = json.loads((out / "timing.json").read_text())
    assert timing["steps"] >= 2048 and 0 < timing["env_seconds"] < timing["seconds"]


def test_a_checkpoint_loads_as_a_policy_and_plays_legal_moves(trained):
    out, final = trained
    for path in [final, *sorted((out / "checkpoints").iterdir())]:
        game = play_with(make_policy(f"ppo:{path}", game="splendor", seed=0), seed=3)
        assert game.is_over


def test_resume_continues_the_step_count(trained, tmp_path):
    _, final = trained
    resumed = train(small(tmp_path, steps=4096, resume=str(final)))
    from sb3_contrib import MaskablePPO

    start = MaskablePPO.load(final).num_timesteps
    assert MaskablePPO.load(resumed).num_timesteps >= 4096 > start
    evaluated = sorted({int(row.split(",")[0]) for row in (tmp_path / "eval.csv").read_text().splitlines()})
    assert evaluated and evaluated[0] > start  # no catching up on the evaluations before the resume
    assert all(int(p.stem.split("_")[1]) > start for p in (tmp_path / "checkpoints").iterdir())


def test_a_resumed_run_trains_with_its_own_settings(trained, tmp_path):
    """The resumed run's flags win over the settings saved in the zip: its learning rate, entropy bonus, ..."""
    _, final = trained
    from sb3_contrib import MaskablePPO

    before = MaskablePPO.load(final)
    assert (before.learning_rate, before.ent_coef, before.gamma) == (3e-4, 0.01, 0.995)
    resumed = MaskablePPO.load(train(small(tmp_path, steps=4096, resume=str(final), lr=1e-5, ent_coef=0.0,
                                           gamma=0.9)))
    assert (resumed.learning_rate, resumed.ent_coef, resumed.gamma) == (1e-5, 0.0, 0.9)
    assert [g["lr"] for g in resumed.policy.optimizer.param_groups] == [1e-5]


def test_a_model_for_another_observation_layout_is_refused(trained, tmp_path):
    _, final = trained
    stale = tmp_path / "stale.zip"
    with zipfile.ZipFile(final) as src, zipfile.ZipFile(stale, "w") as dst:
        for item in src.namelist():
            data = src.read(item)
            if item == META_FILE:
                data = json.dumps({**json.loads(data), "observation_version": 0}).encode()
            dst.writestr(item, data)
    with pytest.raises(ValueError, match="observation_version=0.*needs observation_version=1"):
        make_policy(f"ppo:{stale}", game="splendor")
    with pytest.raises(ValueError, match="does not exist"):
        make_policy(f"ppo:{tmp_path / 'missing.zip'}", game="splendor")


@pytest.mark.parametrize(("changes", "message"), [
    ({"steps": 0}, "--steps must be positive"),
    ({"players": 5}, "--players"),
    ({"mix": "random=1,strong=2"}, "unknown opponent 'strong'"),
    ({"mix": "random=0"}, "add up to 0"),
    ({"net": "64,x"}, "--net"),
    ({"eval_opponents": "random,nobody"}, "nobody"),
    ({"resume": "nowhere.zip"}, "--resume"),
])
def test_bad_settings_are_one_line_errors(tmp_path, changes, message):
    with pytest.raises(ValueError, match=message):
        validate(small(tmp_path, **changes))


def test_an_eval_opponent_keeps_its_own_options(tmp_path):
    search = "expectiminimax:depth=20,budget_ms=0,nodes=60000"  # the yardstick for the network alone
    assert eval_specs(f"greedy,{search}, random") == ["greedy", search, "random"]
    assert eval_specs("") == []
    validate(small(tmp_path, eval_opponents=f"greedy,{search}"))


def test_mix_is_normalised():
    np.testing.assert_allclose(parse_mix("random=1,greedy=1,self=2"), [0.25, 0.25, 0.5])


def test_the_shipped_model_loads_and_plays_legal_moves():
    policy = make_policy("ppo:default", game="splendor", seed=0)
    assert policy.meta["observation_version"] == 1 and policy.meta["num_players"] == 2
    for seed in range(3):
        assert play_with(policy, seed).is_over
