"""Distillation (``tabletop train splendor --algo distill``) end to end: a tiny run labels, fits, evaluates and
writes a model that plays as ``ppo:PATH`` and ``az:PATH``; a rerun labels only the games missing; a game's labels
depend on its index alone; the moves played are the teacher's, the student's or uniform, as the settings say; the
targets are a search's visits or another policy's move."""

from __future__ import annotations

import json
import multiprocessing
import shlex
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from extra_skips import needs

torch = needs("torch")

from tabletop_rl.agents import make_policy  # noqa: E402
from tabletop_rl.agents.ppo import build_network, load_checkpoint  # noqa: E402
from tabletop_rl.agents.search.splendor_puct import PUCTPolicy, random_net  # noqa: E402
from tabletop_rl.cli import main  # noqa: E402
from tabletop_rl.games.splendor.game import SplendorGame  # noqa: E402
from tabletop_rl.train.splendor_distill import (  # noqa: E402
    Args,
    Labelling,
    fit,
    label,
    label_game,
    load_positions,
    train,
    validate_args,
)

pytestmark = pytest.mark.train


def tiny(out, **changes) -> Args:
    base = dict(out=str(out), games=3, teacher="az:default,simulations=6", init="none", net="16", epochs=2,
                batch_size=32, workers=0, max_plies=200, eval_games=4, eval_opponents="random", progress=None)
    return Args(**{**base, **changes})


def setup(**changes) -> Labelling:
    base = dict(players=2, teacher="greedy", student_share=0.0, random_plies=0, epsilon=0.0, max_plies=200, seed=1)
    return Labelling(**{**base, **changes})


def replay(policies, deal: int) -> list[np.ndarray]:
    """The observations of the game ``deal`` played by ``policies`` (one per seat), mover's view."""
    game, seen = SplendorGame(2, seed=deal, max_plies=200), []
    while not game.is_over:
        seat, mask = game.current_player, game.legal_mask()
        seen.append(game.observe(seat))
        game.step(policies[seat].act(seen[-1], mask, game.policy_info(seat)))
    return seen


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("distill")
    return out, train(tiny(out))


def test_a_tiny_run_labels_fits_evaluates_and_writes_a_model(trained):
    out, final = trained
    assert final == out / "final.pt" and final.is_file()
    assert [p.name for p in (out / "checkpoints").iterdir()] == ["round_1.pt"]
    data, games = load_positions(out / "data")
    assert sorted(set(games.tolist())) == [0, 1, 2] and len(data.values) == len(games) > 0
    np.testing.assert_allclose(data.policies.sum(axis=1), 1.0, rtol=1e-5)
    assert not (data.policies[~data.masks]).any()  # no target on an illegal move
    rows = [r.split(",") for r in (out / "eval.csv").read_text().splitlines()]
    assert [(r[0], r[1], r[2]) for r in rows] == [("1", "random", "4")]
    checkpoint = load_checkpoint(final)
    assert checkpoint["meta"]["algo"] == "distill" and checkpoint["meta"]["net"] == [16] and checkpoint["step"] == 1
    timing = json.loads((out / "timing.json").read_text())
    assert timing["positions"] == len(games) and timing["label"] > 0 and timing["fit"] > 0


def test_the_model_plays_as_the_network_alone_and_as_a_search(trained):
    _, final = trained
    for spec in (f"ppo:{final}", f"az:{final},simulations=6"):
        assert len(replay([make_policy(spec, "splendor", seed=0)] * 2, deal=5)) > 0  # step raises on illegal


def test_a_rerun_labels_only_the_games_missing(trained, tmp_path):
    out, _ = trained
    before = {p.name: p.stat().st_mtime_ns for p in (out / "data").iterdir()}
    train(tiny(out, games=5, epochs=1))
    after = {p.name: p.stat().st_mtime_ns for p in (out / "data").iterdir()}
    assert all(after[name] == t for name, t in before.items())  # the first files untouched
    _, games = load_positions(out / "data")
    assert sorted(set(games.tolist())) == [0, 1, 2, 3, 4]
    assert len(after) == len(before) + 1  # games 3 and 4 in one new file, none labelled twice


def test_a_second_round_labels_new_games_with_the_fitted_student(tmp_path):
    train(tiny(tmp_path, games=2, rounds=2, epochs=1))
    _, games = load_positions(tmp_path / "data")
    assert sorted(set(games.tolist())) == [0, 1, 2, 3]
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["round_1.pt", "round_2.pt"]


@pytest.mark.parametrize("epochs", [1, 2, 9, 10, 11, 20])
def test_the_fit_runs_for_any_number_of_minibatch_steps(epochs):
    """The one-cycle schedule holds for every step count, ten included (torch's divides by a warm-up of
    10% x steps - 1 steps, which is zero there)."""
    net = random_net((8,), seed=2)
    positions, _ = label_game(net, 4, setup())
    student = build_network(312, [8], 72)
    before = [w.detach().clone() for w in student.parameters()]
    games = np.zeros(len(positions.values), np.int64)
    args = tiny("unused", epochs=epochs, batch_size=len(games))  # one minibatch a pass: `epochs` steps
    stats = fit(student, positions, games, args, np.random.default_rng(0))
    assert np.isnan(stats["agreement"])  # nothing held out: every position is game 0
    assert any(not torch.equal(a, b) for a, b in zip(before, student.parameters()))


def test_the_teachers_moves_are_played_when_no_student_and_no_noise():
    net = random_net((8,), seed=2)
    positions, index = label_game(net, 4, setup())
    greedy = make_policy("greedy", "splendor")
    seen = replay([greedy, greedy], deal=1_000_004)
    assert index == 4 and len(seen) == len(positions.values)
    np.testing.assert_array_equal(np.array(seen), positions.observations)
    chosen = positions.policies.argmax(axis=1)  # greedy's targets are one-hot: its moves, as played
    np.testing.assert_array_equal(positions.policies.max(axis=1), 1.0)
    assert len(set(chosen.tolist())) > 1


def test_the_students_moves_are_played_on_its_seats():
    net = random_net((8,), seed=2)
    positions, _ = label_game(net, 4, setup(student_share=1.0))
    student = PUCTPolicy(net, "student", 0, simulations=0)
    np.testing.assert_array_equal(np.array(replay([student, student], deal=1_000_004)), positions.observations)


def test_uniform_moves_open_the_game_and_a_game_depends_on_its_index_alone():
    net = random_net((8,), seed=2)
    plain, _ = label_game(net, 4, setup())
    noisy, _ = label_game(net, 4, setup(random_plies=6))
    np.testing.assert_array_equal(plain.observations[0], noisy.observations[0])
    assert not np.array_equal(plain.observations[:8], noisy.observations[:8])
    again, _ = label_game(net, 4, setup(random_plies=6))
    for a, b in zip(noisy, again):
        np.testing.assert_array_equal(a, b)
    other, _ = label_game(net, 5, setup(random_plies=6))
    assert not np.array_equal(other.observations[0], noisy.observations[0])  # another index, another deal


def test_a_search_teacher_gives_its_visit_distribution():
    positions, _ = label_game(random_net((8,), seed=2), 0, setup(teacher="az:default,simulations=20"))
    searched = positions.masks.sum(axis=1) > 1
    spread = (positions.policies[searched] > 0).sum(axis=1)
    assert spread.max() > 1  # visits over several moves, not the move alone
    counts = positions.policies[searched] * 19  # 20 simulations: the first expands the root, 19 visit its moves
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-4)


def test_worker_processes_label_the_same_games(tmp_path):
    net, how = random_net((8,), seed=2), setup(random_plies=4, epsilon=0.2, student_share=0.5)
    label(net, [0, 1], how, tmp_path / "here", None, progress=None)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        label(net, [0, 1], how, tmp_path / "there", pool, progress=None)
    here, there = load_positions(tmp_path / "here"), load_positions(tmp_path / "there")
    for a, b in zip([*here[0], here[1]], [*there[0], there[1]]):
        np.testing.assert_array_equal(a, b)


def test_games_finished_before_an_interrupt_are_kept(tmp_path, monkeypatch):
    import tabletop_rl.train.splendor_distill as distill

    played = distill._label_task

    def stop_at_two(task):
        if task[1] == 2:
            raise KeyboardInterrupt
        return played(task)

    monkeypatch.setattr(distill, "_label_task", stop_at_two)
    with pytest.raises(KeyboardInterrupt):
        label(random_net((8,), seed=2), [0, 1, 2, 3], setup(), tmp_path, None, progress=None)
    _, games = load_positions(tmp_path)
    assert sorted(set(games.tolist())) == [0, 1]


def test_the_command_trains_by_distillation(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "splendor", "--algo", "distill", "--games", "1", "--teacher", "greedy", "--net", "8",
                 "--init", "none", "--workers", "0", "--epochs", "1", "--eval-games", "2", "--out", "run",
                 "--no-progress"]) == 0
    assert "ppo:run/final.pt (the network alone)" in capsys.readouterr().out
    assert main(["train", "splendor", "--algo", "distill", "--simulations", "8"]) == 2
    assert "--simulations is not a setting of --algo distill" in capsys.readouterr().err
    assert main(["train", "splendor", "--algo", "az", "--teacher", "greedy"]) == 2
    assert "--teacher is not a setting of --algo az" in capsys.readouterr().err


@pytest.mark.parametrize(("changes", "message"), [
    ({"games": 0}, "--games must be positive"),
    ({"rounds": 0}, "--rounds must be positive"),
    ({"student_share": 1.5}, r"--student-share and --epsilon must be in \[0, 1\]"),
    ({"epsilon": -0.1}, r"--student-share and --epsilon must be in \[0, 1\]"),
    ({"random_plies": -1}, "--random-plies must be >= 0"),
    ({"players": 5}, "--players must be 2, 3 or 4"),
    ({"teacher": "nobody"}, "nobody"),
    ({"init": "nowhere.pt"}, "--init: no model"),
    ({"init": "az", "players": 3}, "--init az is a 2-player network; with --players 3 start from --init none"),
    ({"net": "a,b"}, "--net must be"),
])
def test_bad_settings_are_one_line_errors(tmp_path, changes, message):
    with pytest.raises(ValueError, match=message):
        validate_args(tiny(tmp_path, **changes))


def test_an_interrupted_run_prints_the_command_that_goes_on_labelling(tmp_path, monkeypatch, capsys):
    """Ctrl-C while labelling game 1: the hint's command labels only game 1 (game 0 is kept) and finishes."""
    import tabletop_rl.train.splendor_distill as distill

    played = distill._label_task

    def stop_at_one(task):
        if task[1] == 1:
            raise KeyboardInterrupt
        return played(task)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(distill, "_label_task", stop_at_one)
    command = ["train", "splendor", "--algo", "distill", "--games", "2", "--teacher", "greedy", "--net", "8",
               "--init", "none", "--workers", "0", "--epochs", "1", "--eval-games", "2", "--out", "run"]
    assert main(command) == 130
    hint = capsys.readouterr().err.strip().splitlines()[-1]
    resume = hint.partition("go on with: ")[2].partition(" (")[0]
    assert resume == "tabletop train splendor --algo distill " + " ".join(command[4:]), hint
    assert distill.labelled_games(tmp_path / "run" / "data") == {0}
    labelled: list[int] = []
    monkeypatch.setattr(distill, "_label_task", lambda task: labelled.append(task[1]) or played(task))
    assert main(shlex.split(resume)[1:]) == 0
    assert labelled == [1] and (tmp_path / "run" / "final.pt").is_file()
