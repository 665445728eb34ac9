"""The CleanRL-style PPO loop (``tabletop train splendor``'s default) end to end: its checkpoints load as
``ppo:PATH`` and play legal moves, resume continues the step count, an incompatible model is refused in
one line, and the masked categorical never draws an illegal action."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extra_skips import needs

torch = needs("torch")

from interrupts import interrupt_after_saving, resume_hint  # noqa: E402
from tabletop_rl.agents import make_policy  # noqa: E402
from tabletop_rl.agents.ppo import load_checkpoint, save_checkpoint  # noqa: E402
from tabletop_rl.cli import main  # noqa: E402
from tabletop_rl.games.splendor.game import SplendorGame  # noqa: E402
from tabletop_rl.games.splendor.observe import observe  # noqa: E402
from tabletop_rl.train.splendor_cleanrl_ppo import Args, sample_masked, train, validate_args  # noqa: E402

pytestmark = pytest.mark.train


def small(out, **changes) -> Args:
    base = dict(steps=3000, out=str(out), num_envs=16, n_steps=16, batch_size=128, epochs=2, net="32,32",
                snapshot_every=2, eval_every=1024, eval_games=8, checkpoint_every=1024, progress=False)
    return Args(**{**base, **changes})


def play_with(policy, seed: int, players: int = 2) -> SplendorGame:
    g = SplendorGame(players, seed=seed)
    while not g.is_over:
        g.step(policy.act(observe(g.state, g.current_player), g.legal_mask(), {}))
    return g


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("cleanrl")
    return out, train(small(out))


def test_a_short_run_writes_checkpoints_evaluations_and_a_final_model(trained):
    out, final = trained
    assert final == out / "final.pt" and final.is_file()
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["step_1024.pt", "step_2048.pt", "step_3072.pt"]
    rows = [r.split(",") for r in (out / "eval.csv").read_text().splitlines()]
    assert {r[1] for r in rows} == {"random", "greedy"} and {int(r[0]) for r in rows} == {1024, 2048, 3072}
    assert json.loads((out / "config.json").read_text())["steps"] == 3000
    timing = json.loads((out / "timing.json").read_text())
    assert timing["steps"] == 3072  # 3000 rounded up to whole rollouts of 16 x 16
    assert 0 < timing["env_seconds"] < timing["seconds"] and 0 < timing["update_seconds"] < timing["seconds"]
    checkpoint = load_checkpoint(final)
    assert checkpoint["step"] == 3072 and checkpoint["meta"]["net"] == [32, 32]
    assert checkpoint["meta"]["num_players"] == 2 and checkpoint["args"]["num_envs"] == 16
    assert any((out / "logs").iterdir())  # TensorBoard's event file


def test_a_checkpoint_loads_as_ppo_path_and_plays_legal_moves(trained):
    out, final = trained
    for path in [final, out / "checkpoints" / "step_1024.pt"]:
        policy = make_policy(f"ppo:{path}", game="splendor", seed=0)
        assert play_with(policy, seed=3).is_over  # SplendorGame.step raises on an illegal move
    sampled = make_policy(f"ppo:{final},name=s", game="splendor", seed=1)
    sampled.deterministic = False
    assert play_with(sampled, seed=4).is_over


def test_act_batch_agrees_with_act(trained):
    _, final = trained
    policy = make_policy(f"ppo:{final}", game="splendor", seed=0)
    games = [SplendorGame(2, seed=s) for s in range(5)]
    obs = np.stack([observe(g.state, g.current_player) for g in games])
    masks = np.stack([g.legal_mask() for g in games])
    batch = policy.act_batch(obs, masks)
    assert [policy.act(o, m, {}) for o, m in zip(obs, masks)] == batch.tolist()
    assert masks[np.arange(5), batch].all()


def test_resume_continues_the_step_count_and_the_optimizer(trained, tmp_path):
    out, _ = trained
    start = out / "checkpoints" / "step_2048.pt"
    resumed = train(small(tmp_path, steps=4096, resume=str(start)))
    checkpoint = load_checkpoint(resumed)
    assert checkpoint["step"] == 4096 > load_checkpoint(start)["step"]
    assert checkpoint["optimizer"]["state"]  # Adam's moments carried on
    evaluated = sorted({int(row.split(",")[0]) for row in (tmp_path / "eval.csv").read_text().splitlines()})
    assert evaluated == [3072, 4096]  # no catching up on the evaluations before the resume
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["step_3072.pt", "step_4096.pt"]
    assert json.loads((tmp_path / "timing.json").read_text())["steps"] == 2048


def test_a_resumed_run_trains_with_its_own_learning_rate(trained, tmp_path):
    """Adam's moments carry on, its learning rate does not: the resumed run's --lr wins over the checkpoint's."""
    out, _ = trained
    start = out / "checkpoints" / "step_2048.pt"
    assert [g["lr"] for g in load_checkpoint(start)["optimizer"]["param_groups"]] == [3e-4]
    resumed = load_checkpoint(train(small(tmp_path, steps=4096, resume=str(start), lr=1e-5)))
    assert [g["lr"] for g in resumed["optimizer"]["param_groups"]] == [1e-5]
    assert resumed["optimizer"]["state"]


def test_a_model_for_another_player_count_is_refused_in_one_line(trained, tmp_path):
    _, final = trained
    policy = make_policy(f"ppo:{final}", game="splendor", seed=0)
    with pytest.raises(ValueError, match=r"expects \(312,\) \(it was trained for 2-player games\)") as error:
        play_with(policy, seed=0, players=3)
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="trained with num_players=2, this version needs num_players=3"):
        train(small(tmp_path, players=3, resume=str(final)))


def test_a_model_for_another_observation_version_is_refused_in_one_line(trained, tmp_path):
    _, final = trained
    checkpoint = load_checkpoint(final)
    stale = tmp_path / "stale.pt"
    network = checkpoint["model"]
    save_checkpoint(stale, network, {**checkpoint["meta"], "observation_version": 0}, step=checkpoint["step"])
    for attempt in (lambda: make_policy(f"ppo:{stale}", game="splendor"),
                    lambda: train(small(tmp_path / "run", resume=str(stale)))):
        with pytest.raises(ValueError, match="observation_version=0.*needs observation_version=1") as error:
            attempt()
        assert "\n" not in str(error.value)


def test_foreign_files_and_the_wrong_trainer_are_refused_in_one_line(trained, tmp_path):
    _, final = trained
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        make_policy(f"ppo:{junk}", game="splendor")
    sb3_zip = tmp_path / "model.zip"
    sb3_zip.write_bytes(b"PK")
    with pytest.raises(ValueError, match="not a .pt checkpoint of this trainer"):
        validate_args(small(tmp_path, resume=str(sb3_zip)))
    checkpoint = load_checkpoint(final)  # a checkpoint of --algo az: its step counts iterations, not env steps
    az = tmp_path / "az.pt"
    save_checkpoint(az, checkpoint["model"], {**checkpoint["meta"], "algo": "az"}, step=7)
    with pytest.raises(ValueError, match="az.pt' is a checkpoint of --algo az; resume it with --algo az, or start "
                                         "from its network with --init") as error:
        train(small(tmp_path / "run", resume=str(az)))
    assert "\n" not in str(error.value) and not (tmp_path / "run" / "checkpoints").exists()


def test_a_run_from_init_starts_from_that_network_with_a_fresh_optimizer(trained, tmp_path):
    """--init takes another trainer's network (here an --algo az checkpoint): its weights and shapes, step 0."""
    _, final = trained
    checkpoint = load_checkpoint(final)
    az = tmp_path / "az.pt"
    save_checkpoint(az, checkpoint["model"], {**checkpoint["meta"], "algo": "az"}, step=7)
    started = load_checkpoint(train(small(tmp_path / "run", steps=256, init=str(az), lr=1e-12, net="8")))
    assert started["step"] == 256 and started["meta"]["net"] == [32, 32]  # the network's shape, not --net's
    assert started["optimizer"]["state"] and all(s["step"] == 4 for s in started["optimizer"]["state"].values())
    for name, weights in checkpoint["model"].items():  # a learning rate of 1e-12 leaves its weights in place
        assert torch.allclose(started["model"][name], weights, atol=1e-6), name


@pytest.mark.parametrize(("changes", "message"), [
    ({"init": "nowhere.pt"}, "--init: no model at 'nowhere.pt'"),
    ({"init": "az", "players": 3}, "--init az is a 2-player network; with --players 3 start from --init none"),
    ({"init": "default", "resume": "x.pt"}, "--resume continues a run and --init starts one from a network"),
])
def test_bad_init_settings_are_one_line_errors(tmp_path, changes, message):
    if "resume" in changes:
        save_checkpoint(tmp_path / "x.pt", {}, {}, step=0)
        changes = {**changes, "resume": str(tmp_path / "x.pt")}
    with pytest.raises(ValueError, match=message):
        validate_args(small(tmp_path, **changes))


def test_the_command_trains_with_the_loop_by_default_and_names_sb3(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "splendor", "--steps", "256", "--num-envs", "16", "--n-steps", "16", "--batch-size", "128",
                 "--net", "16", "--eval-games", "4", "--out", "run", "--no-progress"]) == 0
    assert (tmp_path / "run" / "final.pt").is_file() and "ppo:run/final.pt" in capsys.readouterr().out
    assert main(["train", "splendor", "--algo", "sb3", "--target-kl", "0.1"]) == 2
    assert "--target-kl is not a setting of --algo sb3" in capsys.readouterr().err
    assert main(["train", "splendor", "--algo", "sb3", "--resume", "run/final.pt"]) == 2
    assert "resume it without --algo sb3" in capsys.readouterr().err


def test_bf16_updates_train_and_save_a_float32_model(tmp_path):
    final = train(small(tmp_path, steps=512, eval_games=4, bf16=True))
    assert all(t.dtype == torch.float32 for t in load_checkpoint(final)["model"].values())
    assert play_with(make_policy(f"ppo:{final}", game="splendor", seed=0), seed=5).is_over


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 64), st.integers(0, 2**32 - 1), st.floats(0.01, 0.99))
def test_the_masked_categorical_never_draws_an_illegal_action(rows, seed, density):
    rng = np.random.default_rng(seed)
    masks = rng.random((rows, 72)) < density
    masks[np.arange(rows), rng.integers(0, 72, rows)] = True  # every row has a legal action
    logits = torch.from_numpy(rng.normal(0, 30, (rows, 72)).astype(np.float32))  # illegal ones often the largest
    generator = torch.Generator().manual_seed(seed)
    actions, log_probs = sample_masked(logits, torch.from_numpy(masks), generator)
    assert masks[np.arange(rows), actions.numpy()].all()
    assert torch.isfinite(log_probs).all() and (log_probs <= 0).all()


@pytest.mark.parametrize(("changes", "message"), [
    ({"steps": 0}, "--steps must be positive"),
    ({"vf_coef": -1.0}, "--vf-coef"),
    ({"max_grad_norm": 0.0}, "--max-grad-norm"),
    ({"mix": "random=1,strong=2"}, "unknown opponent 'strong'"),
    ({"resume": "nowhere.pt"}, "--resume"),
])
def test_bad_settings_are_one_line_errors(tmp_path, changes, message):
    with pytest.raises(ValueError, match=message):
        validate_args(small(tmp_path, **changes))


def test_updates_keep_the_thread_count_when_something_resets_it(tmp_path, monkeypatch):
    """numba compiling its parallel kernels (an empty cache) resets the process's OpenMP thread count, torch's
    included; the loop sets its own back before each update. Here the env's reset plays numba's part."""
    from tabletop_rl.envs.splendor_vector import SplendorVectorEnv

    reset = SplendorVectorEnv.reset

    def reset_and_meddle(self, **kwargs):
        out = reset(self, **kwargs)
        torch.set_num_threads(2)
        return out

    before = torch.get_num_threads()
    monkeypatch.setattr(SplendorVectorEnv, "reset", reset_and_meddle)
    try:
        train(small(tmp_path, steps=512, eval_every=10**6, checkpoint_every=10**6, threads=1))
        assert json.loads((tmp_path / "timing.json").read_text())["update_threads"] == 1
    finally:
        torch.set_num_threads(before)


def test_an_interrupted_run_prints_the_command_that_resumes_it(tmp_path, monkeypatch, capsys):
    """Ctrl-C after the checkpoint at step 1,024: the hint resumes there, and the resumed run trains the rest."""
    import tabletop_rl.train.splendor_cleanrl_ppo as loop

    monkeypatch.chdir(tmp_path)
    saved = interrupt_after_saving(monkeypatch, loop, "step_1024.pt")
    command = ["train", "splendor", "--steps", "2048", "--num-envs", "16", "--n-steps", "16", "--batch-size", "128",
               "--net", "16", "--eval-games", "2", "--eval-every", "100000", "--checkpoint-every", "512",
               "--no-progress", "--out", "run"]
    assert main(command) == 130
    hint, resume = resume_hint(capsys.readouterr().err)
    assert resume.startswith("tabletop train splendor ") and resume.endswith("--resume run/checkpoints/step_1024.pt")
    monkeypatch.setattr(loop, "_save", saved)
    assert main(shlex.split(resume)[1:]) == 0
    assert load_checkpoint(tmp_path / "run" / "final.pt")["step"] == 2048
    assert json.loads((tmp_path / "run" / "timing.json").read_text())["steps"] == 1024  # only the rest
