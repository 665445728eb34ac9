"""Search-guided self-play (``tabletop train splendor --algo az``) end to end: a tiny run writes its model,
checkpoints and evaluations; its checkpoints play as ``az:PATH`` and ``ppo:PATH``; resume continues the
iteration count and the replay buffer; the value targets have the right sign and seat; the update step learns
targets whose answer is known, with and without renamed colours; worker processes record the same games as the
trainer's own process."""

from __future__ import annotations

import json
import multiprocessing
import shlex
import shutil
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from extra_skips import needs

torch = needs("torch")

from interrupts import interrupt_after_saving, resume_hint  # noqa: E402
from tabletop_rl.agents import make_policy  # noqa: E402
from tabletop_rl.agents.ppo import (  # noqa: E402
    build_network,
    export_model,
    load_checkpoint,
    masked_logits,
    network_widths,
)
from tabletop_rl.agents.search.splendor_puct import random_net  # noqa: E402
from tabletop_rl.cli import main  # noqa: E402
from tabletop_rl.games.splendor.game import SplendorGame  # noqa: E402
from tabletop_rl.games.splendor.observe import observation_layout, observation_size  # noqa: E402
from tabletop_rl.games.splendor.rules import NUM_ACTIONS, STATE_SIZE, TAKE2_SAME  # noqa: E402
from tabletop_rl.train.splendor_az import (  # noqa: E402
    Args,
    Positions,
    ReplayBuffer,
    SelfPlay,
    fit_to,
    game_seeds,
    learn,
    losses,
    play_game,
    reanalyse,
    search_again,
    self_play,
    tempered,
    train,
    validate_args,
    value_targets,
)

pytestmark = pytest.mark.train


def no_states(n: int) -> np.ndarray:
    """The state column of positions that kept none."""
    return np.zeros((n, STATE_SIZE), np.int16)


def tiny(out, **changes) -> Args:
    base = dict(iterations=2, out=str(out), games=2, simulations=8, net="16", init="none", workers=0, max_plies=120,
                batch_size=32, train_steps=4, eval_every=1, eval_games=4, eval_search_games=2,
                eval_search_simulations=4, checkpoint_every=1, progress=False)
    return Args(**{**base, **changes})


def play_with(policy, seed: int, players: int = 2) -> SplendorGame:
    g = SplendorGame(players, seed=seed, max_plies=200)
    while not g.is_over:
        g.step(policy.act(g.observe(g.current_player), g.legal_mask(), g.policy_info(g.current_player)))
    return g


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("az")
    return out, train(tiny(out))


def test_a_tiny_run_writes_a_model_checkpoints_evaluations_and_logs(trained):
    out, final = trained
    assert final == out / "final.pt" and final.is_file()
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["iter_0.pt", "iter_1.pt", "iter_2.pt"]
    rows = [r.split(",") for r in (out / "eval.csv").read_text().splitlines()]
    assert {r[1] for r in rows} == {"random", "greedy", "start", "search:greedy"}
    assert {int(r[0]) for r in rows} == {1, 2}
    checkpoint = load_checkpoint(final)
    assert checkpoint["step"] == 2 and checkpoint["meta"]["algo"] == "az" and checkpoint["meta"]["net"] == [16]
    assert checkpoint["optimizer"]["state"]
    timing = json.loads((out / "timing.json").read_text())
    assert timing["games"] == 4 and timing["positions"] > 0 and timing["iterations"] == 2
    assert json.loads((out / "config.json").read_text())["simulations"] == 8
    with np.load(out / "replay.npz") as replay:
        assert int(replay["iteration"]) == 2 and int(replay["size"]) == timing["positions"]


def test_a_checkpoint_plays_as_the_search_and_as_the_network_alone(trained):
    out, final = trained
    for spec in (f"az:{final},simulations=8", f"ppo:{out / 'checkpoints' / 'iter_1.pt'}"):
        assert play_with(make_policy(spec, game="splendor", seed=0), seed=3).is_over  # step raises on illegal


def test_an_exported_model_keeps_the_network_and_drops_the_optimizer(trained, tmp_path):
    _, final = trained
    exported = export_model(final, tmp_path / "shipped.pt")
    data, original = load_checkpoint(exported), load_checkpoint(final)
    assert data["optimizer"] == {} and data["rng"] == {} and data["meta"] == original["meta"]
    assert data["step"] == original["step"] and data["args"] == original["args"]
    assert all(torch.equal(data["model"][k], v) for k, v in original["model"].items())
    assert exported.stat().st_size < final.stat().st_size / 2
    for spec in ("az:{},simulations=8", "ppo:{}"):
        moves = [play_with(make_policy(spec.format(path), game="splendor", seed=0), seed=5).state.tolist()
                 for path in (final, exported)]
        assert moves[0] == moves[1]


def test_resume_continues_the_iteration_count_and_the_replay_buffer(trained, tmp_path):
    out, final = trained
    resumed = train(tiny(tmp_path, iterations=3, resume=str(final)))
    assert load_checkpoint(resumed)["step"] == 3
    assert load_checkpoint(resumed)["optimizer"]["state"]  # Adam's moments carried on
    assert {int(r.split(",")[0]) for r in (tmp_path / "eval.csv").read_text().splitlines()} == {3}
    with np.load(out / "replay.npz") as before, np.load(tmp_path / "replay.npz") as after:
        assert int(after["size"]) > int(before["size"])  # the old positions were loaded, the new ones added
    plain = tmp_path / "plain.pt"  # a checkpoint of the PPO loop
    data = load_checkpoint(final)
    torch.save({**data, "meta": {k: v for k, v in data["meta"].items() if k != "algo"}}, plain)
    with pytest.raises(ValueError, match="plain.pt' is a checkpoint of --algo ppo; resume it with --algo ppo, "
                                         "or start from its network with --init"):
        train(tiny(tmp_path / "again", resume=str(plain)))
    assert not (tmp_path / "again").exists()


def test_a_resumed_run_trains_with_its_own_learning_rate_and_weight_decay(trained, tmp_path):
    """Adam's moments carry on, its settings do not: the flags of the resumed run win over the checkpoint's."""
    _, final = trained
    saved = load_checkpoint(final)["optimizer"]["param_groups"]
    assert [(g["lr"], g["weight_decay"]) for g in saved] == [(1e-4, 1e-4)]
    resumed = load_checkpoint(train(tiny(tmp_path, iterations=3, resume=str(final), lr=3e-5, weight_decay=0.0)))
    assert [(g["lr"], g["weight_decay"]) for g in resumed["optimizer"]["param_groups"]] == [(3e-5, 0.0)]
    assert resumed["optimizer"]["state"]


def test_a_run_trains_only_once_its_replay_buffer_holds_min_buffer_positions(trained, tmp_path):
    """A run resumed without its replay buffer plays with the checkpoint's network until the buffer holds
    --min-buffer positions, rather than fitting the first few games over and over."""
    _, final = trained
    lone = tmp_path / "lone" / "final.pt"  # no replay.npz beside it: the buffer starts empty
    lone.parent.mkdir()
    shutil.copy(final, lone)
    before = load_checkpoint(final)
    waited = load_checkpoint(train(tiny(tmp_path / "wait", iterations=3, resume=str(lone), min_buffer=100_000)))
    assert all(torch.equal(before["model"][k], waited["model"][k]) for k in before["model"])
    row = (tmp_path / "wait" / "curves.csv").read_text().splitlines()[-1].split(",")
    assert row[0] == "3" and row[-2:] == ["nan", "nan"]  # no minibatch, no loss
    trained_now = load_checkpoint(train(tiny(tmp_path / "go", iterations=3, resume=str(lone), min_buffer=1)))
    assert not all(torch.equal(before["model"][k], trained_now["model"][k]) for k in before["model"])


def _values(checkpoint, observations):
    """The value network of a saved model on ``observations``, through ``build_network`` as the trainer builds it."""
    hidden, value_hidden = network_widths(checkpoint["meta"])
    net = build_network(observation_size(2), hidden, NUM_ACTIONS, value_hidden)
    net.load_state_dict(checkpoint["model"])
    return net["vf"](torch.from_numpy(observations)).squeeze(1)


def test_resume_with_a_value_network_of_another_shape_fits_it_to_the_old_one(trained, tmp_path):
    """The policy and the iteration count carry on; the new value network starts as a copy, on the replay
    buffer's positions, of the checkpoint's (far closer to it than a fresh network of that shape), and the model
    plays as ``az:`` and ``ppo:`` and resumes with its new shape."""
    out, final = trained
    old = load_checkpoint(final)
    resumed = train(tiny(tmp_path, iterations=3, resume=str(final), value_net="8,8", refit_steps=2000,
                         augment="none"))  # the tiny network was not trained colour-blind
    start = load_checkpoint(tmp_path / "checkpoints" / "iter_2.pt")  # saved before iteration 3 learnt anything
    assert start["meta"]["net"] == [16] and start["meta"]["value_net"] == [8, 8]
    assert all(torch.equal(start["model"][k], v) for k, v in old["model"].items() if k.startswith("pi."))
    assert start["model"]["vf.0.weight"].shape == (8, observation_size(2))
    with np.load(out / "replay.npz") as replay:
        observations = replay["observations"][: int(replay["size"])]
    fresh = {"meta": start["meta"],
             "model": build_network(observation_size(2), [16], NUM_ACTIONS, [8, 8]).state_dict()}
    with torch.no_grad():
        target = _values(old, observations)
        fitted = ((_values(start, observations) - target) ** 2).mean().item()
        unfitted = ((_values(fresh, observations) - target) ** 2).mean().item()
    assert fitted < unfitted / 4, (fitted, unfitted)
    assert load_checkpoint(resumed)["meta"]["value_net"] == [8, 8]
    for spec in (f"az:{resumed},simulations=8", f"ppo:{resumed}"):
        assert play_with(make_policy(spec, game="splendor", seed=0), seed=3).is_over
    again = train(tiny(tmp_path / "again", iterations=4, resume=str(resumed)))
    assert load_checkpoint(again)["model"]["vf.2.weight"].shape == (8, 8)


def test_a_value_network_of_another_shape_needs_the_checkpoints_replay_buffer(trained, tmp_path):
    _, final = trained
    lonely = tmp_path / "lonely" / "model.pt"
    lonely.parent.mkdir()
    lonely.write_bytes(final.read_bytes())
    with pytest.raises(ValueError, match=r"--value-net 8 differs from the value network of .*model.pt' \(16\): "
                                         r"it is fitted to that one on the replay buffer, and no replay.npz of "
                                         r"iteration 2 is beside it"):
        train(tiny(tmp_path / "run", iterations=3, resume=str(lonely), value_net="8"))
    assert not (tmp_path / "run").exists()


def test_a_run_from_init_with_a_value_network_of_another_shape_keeps_the_policy(trained, tmp_path):
    _, final = trained
    train(tiny(tmp_path, iterations=1, init=str(final), value_net="8", eval_past=False, eval_search_games=0))
    start, old = load_checkpoint(tmp_path / "checkpoints" / "iter_0.pt"), load_checkpoint(final)
    assert start["meta"]["net"] == [16] and start["meta"]["value_net"] == [8]
    assert all(torch.equal(start["model"][k], v) for k, v in old["model"].items() if k.startswith("pi."))


def test_a_three_player_run_goes_through_the_same_code(tmp_path):
    final = train(tiny(tmp_path, players=3, iterations=1, games=1, eval_search_games=1, eval_past=False))
    assert load_checkpoint(final)["meta"]["num_players"] == 3
    assert play_with(make_policy(f"az:{final},simulations=4", game="splendor", seed=0), seed=1, players=3).is_over


def test_value_targets_score_the_mover():
    seats = np.array([0, 1, 0, 1, 2])
    assert value_targets([1], False, seats, 3).tolist() == [-1, 1, -1, 1, -1]
    assert value_targets([0, 1], False, seats, 3).tolist() == [0, 0, 0, 0, -1]  # a shared win: 2/k - 1
    assert value_targets([], True, seats, 3).tolist() == [0] * 5  # a capped game
    setup = SelfPlay(2, 8, 1.5, 0.3, 0.25, 10, 1000)
    positions = play_game(random_net((8,), seed=0), 5, setup)  # a whole game: one seat won, or they shared it
    for mask, policy in zip(positions.masks, positions.policies):
        assert np.isclose(policy.sum(), 1) and not policy[~mask].any()
    per_seat = [set(positions.values[positions.seats == s].tolist()) for s in (0, 1)]
    assert all(len(v) == 1 for v in per_seat)  # one result per seat, the same at each of its positions
    assert per_seat[0].pop() == -per_seat[1].pop()  # zero-sum between the two seats


def test_the_value_target_is_the_result_of_the_seat_that_was_to_move(monkeypatch):
    """Each recorded position against the game that was played: its seat is the mover's, its observation the
    mover's view, and its value +1 where that seat won and -1 where it lost."""
    import tabletop_rl.train.splendor_az as loop

    played = []

    class Recorded(SplendorGame):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.movers: list[tuple[int, np.ndarray]] = []
            played.append(self)

        def step(self, action):
            self.movers.append((self.current_player, self.observe(self.current_player)))
            super().step(action)

    monkeypatch.setattr(loop, "SplendorGame", Recorded)
    positions = play_game(random_net((8,), seed=0), 5, SelfPlay(2, 8, 1.5, 0.3, 0.25, 10, 1000))
    (game,) = played
    assert game.is_over and not game.is_truncated and len(game.winners) == 1  # a game with one known winner
    assert positions.seats.tolist() == [seat for seat, _ in game.movers]
    np.testing.assert_array_equal(positions.observations, np.array([obs for _, obs in game.movers]))
    assert positions.values.tolist() == [1.0 if seat in game.winners else -1.0 for seat in positions.seats]
    assert {1.0, -1.0} <= set(positions.values.tolist())


def known_answer(n: int, seed: int) -> tuple[ReplayBuffer, np.ndarray]:
    """A buffer of real positions (random play) whose targets follow a rule: the bank's five colours hold 0-4
    tokens, each count once, and the policy target is all on take2 of the colour with 4 (made legal); the mover's
    points are 0-15 and the value target is +1 from 8 points on, else -1. Both rules hold in every renaming of the
    colours. Also returns each position's target move."""
    rng = np.random.default_rng(seed)
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    deal = 0
    while len(observations) < n:
        game, deal = SplendorGame(2, seed=deal), deal + 1
        while not game.is_over and len(observations) < n:
            observations.append(game.observe(game.current_player))
            masks.append(game.legal_mask())
            game.step(int(rng.choice(np.flatnonzero(masks[-1]))))
    obs, mask = np.array(observations, np.float32), np.array(masks, bool)
    bank, points = observation_layout(2)["bank"].start, observation_layout(2)["player[0].points"].start
    obs[:, bank:bank + 5] = [rng.permutation(5) for _ in range(n)]
    obs[:, points] = rng.integers(0, 16, n)
    target = TAKE2_SAME + np.argmax(obs[:, bank:bank + 5], axis=1)
    mask[np.arange(n), target] = True
    policies = np.zeros((n, NUM_ACTIONS), np.float32)
    policies[np.arange(n), target] = 1.0
    values = np.where(obs[:, points] >= 8, 1.0, -1.0).astype(np.float32)
    buffer = ReplayBuffer(n, obs.shape[1])
    buffer.add(Positions(obs, mask, policies, np.zeros(n, np.int64), values, values, no_states(n)))
    return buffer, target


@pytest.mark.parametrize("part", ["pi", "vf"])
def test_fit_to_brings_a_network_of_another_shape_to_its_teachers_outputs(part):
    """On held-out positions the fitted network's loss less the teacher's own falls far below that of a network
    fitted for one step, and stays >= 0 (for the policy it is the KL divergence)."""
    buffer, _ = known_answer(1024, seed=1)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    try:
        teacher = build_network(observation_size(2), [64], NUM_ACTIONS)  # taught the buffer's rule first
        learn(teacher, torch.optim.Adam(teacher.parameters(), lr=3e-3), buffer,
              Args(batch_size=64, train_steps=600, augment="none"), np.random.default_rng(0))
        gaps = [fit_to(build_network(observation_size(2), [32], NUM_ACTIONS, [16, 16]), teacher, part, buffer,
                       steps, 64, "none", np.random.default_rng(0)) for steps in (1, 800)]
    finally:
        torch.set_num_threads(threads)
    assert -1e-6 <= gaps[1] < gaps[0] / 4, gaps


@pytest.mark.parametrize("augment", ["none", "colours"])
def test_the_update_step_learns_targets_whose_answer_is_known(augment):
    """A wrong sign, a target on the wrong move, a mask that hides the target or a renaming that moves the
    observation without its target would each keep the network from reproducing the rule."""
    buffer, target = known_answer(512, seed=0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    try:
        net = build_network(observation_size(2), [64], NUM_ACTIONS)
        args = Args(batch_size=64, train_steps=1200, lr=3e-3, augment=augment)
        optimizer = torch.optim.Adam(net.parameters(), lr=args.lr, weight_decay=args.weight_decay)
        data = [torch.from_numpy(c) for c in (buffer.data.observations, buffer.data.masks, buffer.data.policies,
                                              buffer.data.values)]
        with torch.no_grad():
            before = [float(loss) for loss in losses(net, *data)]
        learn(net, optimizer, buffer, args, np.random.default_rng(1))
        with torch.no_grad():
            after = [float(loss) for loss in losses(net, *data)]
            moves = masked_logits(net["pi"](data[0]), data[1]).argmax(dim=1).numpy()
            values = net["vf"](data[0]).squeeze(1).numpy()
    finally:
        torch.set_num_threads(threads)
    assert after[0] < before[0] / 5 and after[1] < before[1] / 10, (before, after)
    assert np.mean(moves == target) >= 0.9
    assert np.mean(np.sign(values) == buffer.data.values) >= 0.97


@pytest.mark.parametrize("temperature", [1.0, 0.25])
def test_the_policy_targets_are_trained_on_at_the_target_temperature(monkeypatch, temperature):
    """``--target-temperature T``: each minibatch target is the buffer's raised to 1/T and renormalised, so below 1
    the most visited move gains; at 1 the targets are the buffer's as they are."""
    import tabletop_rl.train.splendor_az as loop

    buffer, target = known_answer(6, seed=4)
    legal = buffer.data.masks[:6].astype(np.float32)
    buffer.data.policies[:6] = 0.5 * buffer.data.policies[:6] + 0.5 * legal / legal.sum(axis=1, keepdims=True)
    soft = {tuple(row): policy.copy() for row, policy in zip(buffer.data.observations[:6], buffer.data.policies[:6])}
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def recorded(net, observations, masks, policies, values):
        seen.append((observations.numpy(), policies.numpy()))
        return losses(net, observations, masks, policies, values)

    monkeypatch.setattr(loop, "losses", recorded)
    net = build_network(observation_size(2), [8], NUM_ACTIONS)
    learn(net, torch.optim.Adam(net.parameters()), buffer,
          Args(train_steps=3, batch_size=4, augment="none", target_temperature=temperature), np.random.default_rng(0))
    for observations, policies in seen:
        for row, policy in zip(observations, policies):
            start = soft[tuple(row)]
            expected = start ** (1 / temperature) / (start ** (1 / temperature)).sum()
            np.testing.assert_allclose(policy, expected, rtol=1e-5, atol=1e-7)
            assert policy.max() >= start.max() and np.isclose(policy.sum(), 1)
    assert len(seen) == 3
    assert tempered(buffer.data.policies[:1], temperature).argmax() == target[0]


def test_augmenting_trains_on_renamings_of_the_buffers_positions(monkeypatch):
    """``--augment colours``: the minibatches hold the buffer's one position under many renamings, the target
    following its colour; ``none`` trains on the position as it is."""
    import tabletop_rl.train.splendor_az as loop

    buffer, _ = known_answer(1, seed=3)
    seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def recorded(net, observations, masks, policies, values):
        seen.append((observations.numpy(), masks.numpy(), policies.numpy()))
        return losses(net, observations, masks, policies, values)

    monkeypatch.setattr(loop, "losses", recorded)
    net = build_network(observation_size(2), [8], NUM_ACTIONS)
    optimizer = torch.optim.Adam(net.parameters())
    banks = {}
    for augment in ("none", "colours"):
        seen.clear()
        learn(net, optimizer, buffer, Args(train_steps=40, augment=augment), np.random.default_rng(0))
        observations, masks, policies = (np.concatenate(parts) for parts in zip(*seen))
        banks[augment] = {tuple(row[:5]) for row in observations}
        assert (policies.argmax(axis=1) == TAKE2_SAME + observations[:, :5].argmax(axis=1)).all()
        assert masks[np.arange(len(masks)), policies.argmax(axis=1)].all()
    assert banks["none"] == {tuple(buffer.data.observations[0, :5])}
    assert len(banks["colours"]) >= 20 and all(sorted(bank) == [0, 1, 2, 3, 4] for bank in banks["colours"])


def test_self_play_searches_with_the_blend_when_asked():
    net = random_net((8,), seed=2)
    plain = play_game(net, 7, SelfPlay(2, 24, 1.5, 0.3, 0.25, 10, 60))
    blended = play_game(net, 7, SelfPlay(2, 24, 1.5, 0.3, 0.25, 10, 60, value_mix=1.0, rollout_depth=2))
    assert not np.array_equal(plain.policies[0], blended.policies[0])  # the same root, other visit targets
    for positions in (plain, blended):
        assert all(np.isclose(p.sum(), 1) and not p[~m].any() for m, p in zip(positions.masks, positions.policies))


def test_the_replay_buffer_keeps_the_newest_positions():
    buffer = ReplayBuffer(5, 3)

    def rows(first: int, n: int) -> Positions:
        v = np.arange(first, first + n)
        return Positions(np.repeat(v[:, None], 3, 1).astype(np.float32), np.ones((n, 72), bool),
                         np.full((n, 72), 1 / 72, np.float32), v % 2, v.astype(np.float32), v.astype(np.float32),
                         no_states(n))

    buffer.add(rows(0, 3))
    buffer.add(rows(3, 4))
    assert buffer.size == 5 and sorted(buffer.data.values.tolist()) == [2, 3, 4, 5, 6]
    buffer.add(rows(10, 7))  # more than fits: the newest 5
    assert sorted(buffer.data.values.tolist()) == [12, 13, 14, 15, 16]


def test_a_worker_process_records_the_same_games():
    net, setup = random_net((8,), seed=1), SelfPlay(2, 6, 1.5, 0.3, 0.25, 10, 80)
    seeds = game_seeds(0, 1, 2)
    here = self_play(net, seeds, setup, None)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        there = self_play(net, seeds, setup, pool)
    for a, b in zip(here, there):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    assert here[0].observations.shape[1] == observation_size(2)


def test_the_command_trains_with_search(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "splendor", "--algo", "az", "--iterations", "1", "--games", "1", "--simulations", "4",
                 "--net", "8", "--init", "none", "--workers", "0", "--max-plies", "60", "--eval-games", "2",
                 "--eval-search-games", "0", "--out", "run", "--no-progress"]) == 0
    assert "az:run/final.pt" in capsys.readouterr().out
    assert main(["train", "splendor", "--algo", "az", "--mix", "greedy=1"]) == 2
    assert "--mix is not a setting of --algo az" in capsys.readouterr().err
    assert main(["train", "splendor", "--simulations", "8"]) == 2
    assert "--simulations is not a setting of --algo ppo" in capsys.readouterr().err


@pytest.mark.parametrize(("changes", "message"), [
    ({"games": 0}, "--games must be positive"),
    ({"workers": -1}, "--workers must be >= 0"),
    ({"noise_fraction": 2.0}, "--noise-fraction"),
    ({"players": 5}, "--players must be 2, 3 or 4"),
    ({"init": "nowhere.pt"}, "--init: no model"),
    ({"eval_search_opponent": "nobody"}, "nobody"),
    ({"value_mix": 1.5}, r"--value-mix must be in \[0, 1\]"),
    ({"rollout_depth": -2}, "--rollout-depth >= 0"),
    ({"augment": "mirror"}, "--augment must be none or colours, got 'mirror'"),
    ({"fast_simulations": 8}, "--fast-simulations must be >= 0 and below --simulations"),
    ({"full_share": 0.0}, r"--full-share in \(0, 1\]"),
    ({"root_value_weight": 1.5}, r"--root-value-weight must be in \[0, 1\]"),
    ({"target_temperature": 0.0}, r"--target-temperature must be in \(0, 10\], got 0.0"),
    ({"root": "uct"}, "--root must be puct or gumbel"),
    ({"value_net": "8,x"}, "--value-net must be comma-separated positive layer sizes"),
    ({"refit_steps": 0}, "--refit-steps must be positive"),
    ({"min_buffer": -1}, "--min-buffer must be >= 0"),
    ({"opponents": "greedy,nobody"}, "nobody"),
    ({"opponents": "greedy", "opponent_share": 0.0}, r"--opponent-share must be in \(0, 1\], got 0.0"),
    ({"min_buffer": 100_001}, "--min-buffer must be at most --buffer"),
])
def test_bad_settings_are_one_line_errors(tmp_path, changes, message):
    with pytest.raises(ValueError, match=message):
        validate_args(tiny(tmp_path, **changes))


def test_an_interrupted_run_prints_the_command_that_resumes_it(tmp_path, monkeypatch, capsys):
    """Ctrl-C after iteration 1's checkpoint: the hint resumes there, and the resumed run plays iteration 2 only."""
    import tabletop_rl.train.splendor_az as loop

    monkeypatch.chdir(tmp_path)
    saved = interrupt_after_saving(monkeypatch, loop, "iter_1.pt")
    command = ["train", "splendor", "--algo", "az", "--iterations", "2", "--games", "1", "--simulations", "4",
               "--net", "8", "--init", "none", "--workers", "0", "--max-plies", "60", "--eval-games", "2",
               "--eval-search-games", "0", "--checkpoint-every", "1", "--out", "run", "--no-progress"]
    assert main(command) == 130
    hint, resume = resume_hint(capsys.readouterr().err)
    assert resume.startswith("tabletop train splendor --algo az ")
    assert resume.endswith("--resume run/checkpoints/iter_1.pt"), hint
    monkeypatch.setattr(loop, "_save", saved)
    assert main(shlex.split(resume)[1:]) == 0
    assert load_checkpoint(tmp_path / "run" / "final.pt")["step"] == 2
    assert json.loads((tmp_path / "run" / "timing.json").read_text())["iterations"] == 1  # only the rest


def test_playout_cap_randomisation_records_only_the_full_searches(monkeypatch):
    """With ``fast_simulations`` a move is searched in full (with root noise) at a ``full_share`` of decisions, and
    only those positions (and forced moves) are recorded; the rest are played from a short search without noise."""
    import tabletop_rl.train.splendor_az as loop

    calls = []

    class Spy(loop.PUCTPolicy):
        def act(self, observation, mask, info):
            calls.append((self.simulations, self.noise_fraction))
            return super().act(observation, mask, info)

    monkeypatch.setattr(loop, "PUCTPolicy", Spy)
    net = random_net((8,), seed=0)
    everything = play_game(net, 5, SelfPlay(2, 16, 1.5, 0.3, 0.25, 4, 200))
    full_only = len(calls)
    assert set(calls) == {(16, 0.25)} and len(everything.values) >= full_only
    calls.clear()
    capped = play_game(net, 5, SelfPlay(2, 16, 1.5, 0.3, 0.25, 4, 200, fast_simulations=4, full_share=0.3))
    full, fast = calls.count((16, 0.25)), calls.count((4, 0.0))
    assert full + fast == len(calls) and full > 0 and fast > full  # about 3 in 10 searched in full
    forced = int((capped.masks.sum(axis=1) == 1).sum())
    assert len(capped.values) == full + forced
    for mask, policy in zip(capped.masks, capped.policies):
        assert np.isclose(policy.sum(), 1) and not policy[~mask].any()
    again = play_game(net, 5, SelfPlay(2, 16, 1.5, 0.3, 0.25, 4, 200, fast_simulations=4, full_share=0.3))
    np.testing.assert_array_equal(capped.policies, again.policies)  # the draws come from the game's seed


def test_a_game_against_an_opponent_records_only_the_searching_seat(monkeypatch):
    """With ``opponents``, a game drawn to be played against one of them has that policy in every other seat: the
    search is asked only at the searching seat's turns, the records are that seat's, and its results score it.
    Which games, which opponent and which seat come from the game's seed."""
    import tabletop_rl.train.splendor_az as loop

    asked, built = [], []

    class Spy(loop.PUCTPolicy):
        def act(self, observation, mask, info):
            asked.append(info.seat)
            return super().act(observation, mask, info)

    real_make = loop.make_policy

    def spy_make(spec, game, seed=None):
        built.append(spec)
        return real_make(spec, game, seed=seed)

    monkeypatch.setattr(loop, "PUCTPolicy", Spy)
    monkeypatch.setattr(loop, "make_policy", spy_make)
    net = random_net((8,), seed=0)
    setup = SelfPlay(2, 8, 1.5, 0.3, 0.25, 4, 200, opponents=("greedy", "random"), opponent_share=1.0)
    searchers = set()
    for seed in range(6):
        asked.clear()
        positions = play_game(net, seed, setup)
        searcher = {int(s) for s in positions.seats}
        assert len(searcher) == 1 and set(asked) <= searcher  # forced moves are recorded without a search
        assert set(positions.results.tolist()) <= {-1.0, 0.0, 1.0}
        searchers |= searcher
        again = play_game(net, seed, setup)
        np.testing.assert_array_equal(positions.observations, again.observations)
    assert searchers == {0, 1} and set(built) == {"greedy", "random"}  # both seats, both opponents, over 6 games
    built.clear()
    everyone = play_game(net, 0, SelfPlay(2, 8, 1.5, 0.3, 0.25, 4, 200, opponents=("greedy",), opponent_share=1e-9))
    assert not built and set(everyone.seats.tolist()) == {0, 1}  # a share this small draws no opponent


def test_root_value_targets_mix_the_searchs_value_with_the_result(monkeypatch):
    """``root_value_weight`` w: a searched position's value target is (1 - w) * result + w * the search's root
    value for the mover; a forced move keeps the result. ``results`` keeps the results themselves."""
    import tabletop_rl.train.splendor_az as loop

    roots = []

    class Spy(loop.PUCTPolicy):
        def act(self, observation, mask, info):
            action = super().act(observation, mask, info)
            roots.append(self.root_value())
            return action

    monkeypatch.setattr(loop, "PUCTPolicy", Spy)
    net = random_net((8,), seed=0)
    positions = play_game(net, 5, SelfPlay(2, 16, 1.5, 0.3, 0.25, 4, 200, root_value_weight=0.25))
    searched = positions.masks.sum(axis=1) > 1
    assert searched.sum() == len(roots) and (~searched).any()
    np.testing.assert_allclose(positions.values[searched],
                               0.75 * positions.results[searched] + 0.25 * np.array(roots), atol=1e-6)
    np.testing.assert_array_equal(positions.values[~searched], positions.results[~searched])
    assert set(positions.results.tolist()) == {-1.0, 1.0}


def test_fresh_games_are_scored_before_the_network_learns_from_them():
    """``fresh_metrics`` on positions whose answers are known: targets on the network's own choice agree fully
    (and the cross-entropy is the network's surprise at it), results of the value's sign are all predicted."""
    import torch

    from tabletop_rl.train.splendor_az import fresh_metrics

    torch.manual_seed(0)
    net = build_network(observation_size(2), [16], NUM_ACTIONS)
    game = play_with(make_policy("random", game="splendor", seed=0), seed=3)
    observations = np.array([game.observe(0)] * 6, np.float32) + np.arange(6, dtype=np.float32)[:, None] / 10
    masks = np.ones((6, NUM_ACTIONS), bool)
    masks[:, 5:] = False
    with torch.no_grad():
        logits = masked_logits(net["pi"](torch.from_numpy(observations)), torch.from_numpy(masks)).numpy()
        value = net["vf"](torch.from_numpy(observations)).squeeze(1).numpy()
    policies = np.zeros((6, NUM_ACTIONS), np.float32)
    policies[np.arange(6), logits.argmax(axis=1)] = 1
    results = np.sign(value).astype(np.float32)
    record = Positions(observations, masks, policies, np.zeros(6, np.int64), results, results, no_states(6))
    metrics = fresh_metrics(net, [record])
    assert metrics["fresh/agreement"] == 1.0 and metrics["fresh/value_sign_accuracy"] == 1.0
    log_probs = logits - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1, keepdims=True)) \
        - logits.max(1, keepdims=True)
    assert metrics["fresh/policy_cross_entropy"] == pytest.approx(-log_probs.max(axis=1).mean(), rel=1e-4)
    assert metrics["fresh/target_entropy"] == pytest.approx(0.0, abs=1e-6)
    clipped = np.clip(value, -1, 1)  # the search reads the value clipped to [-1, 1]
    assert metrics["fresh/value_mse"] == pytest.approx(float(((clipped - results) ** 2).mean()), rel=1e-4)
    flipped = Positions(observations, masks, np.roll(policies, 1, axis=1), record.seats, -results, -results,
                        record.states)
    worse = fresh_metrics(net, [flipped])
    assert worse["fresh/agreement"] == 0.0 and worse["fresh/value_sign_accuracy"] == 0.0


def test_a_replay_buffer_saved_before_results_and_states_were_kept_loads_its_values_as_results(tmp_path):
    buffer = ReplayBuffer(4, 3)
    buffer.add(Positions(np.ones((3, 3), np.float32), np.ones((3, 72), bool), np.full((3, 72), 1 / 72, np.float32),
                         np.zeros(3, np.int64), np.array([1, -1, 1], np.float32), np.zeros(3, np.float32),
                         no_states(3)))
    columns = {name: column for name, column in buffer.data._asdict().items() if name not in ("results", "states")}
    np.savez(tmp_path / "replay.npz", iteration=3, next=buffer.next, size=buffer.size, **columns)
    again = ReplayBuffer(4, 3)
    assert again.load(tmp_path / "replay.npz") == 3
    assert again.size == 3 and not again.data.states.any()  # no states: none to reanalyse
    assert again.data.results[:3].tolist() == again.data.values[:3].tolist() == [1, -1, 1]


def test_self_play_with_the_gumbel_root_teaches_its_improved_policy(monkeypatch):
    """``root="gumbel"``: every searched position's policy target is the search's improved policy (not its visits),
    which puts weight on every legal move, and the moves are drawn with Gumbel noise."""
    import tabletop_rl.train.splendor_az as loop

    targets, noisy = [], []

    class Spy(loop.PUCTPolicy):
        def act(self, observation, mask, info):
            action = super().act(observation, mask, info)
            targets.append(self.policy_target(mask))
            noisy.append(self.gumbel_noise and self.root == "gumbel")
            return action

    monkeypatch.setattr(loop, "PUCTPolicy", Spy)
    positions = play_game(random_net((8,), seed=0), 5, SelfPlay(2, 16, 1.5, 0.3, 0.25, 4, 200, root="gumbel",
                                                                considered=4))
    searched = positions.masks.sum(axis=1) > 1
    assert searched.sum() == len(targets) and all(noisy)
    np.testing.assert_allclose(positions.policies[searched], np.array(targets), atol=1e-6)
    assert all((p[m] > 0).all() for p, m in zip(positions.policies[searched], positions.masks[searched]))


def test_self_play_keeps_each_position_as_its_mover_saw_it():
    """The state kept with a position is the mover's view: it gives back the observation and legal mask the
    search saw, and holds nothing more than the view (hiding it again changes nothing)."""
    positions = play_game(random_net((8,), seed=0), 3, SelfPlay(2, 6, 1.5, 0.3, 0.25, 4, 200))
    assert positions.states.shape == (len(positions.values), STATE_SIZE)
    for observation, mask, seat, row in zip(positions.observations, positions.masks, positions.seats,
                                            positions.states):
        game = SplendorGame.from_state(row)
        assert game.current_player == seat
        np.testing.assert_array_equal(game.observe(int(seat)), observation)
        np.testing.assert_array_equal(game.legal_mask(), mask)
        np.testing.assert_array_equal(game.policy_info(int(seat)).game.state[:-4], row[:-4])  # less the stream


def _buffer_of(records) -> ReplayBuffer:
    buffer = ReplayBuffer(sum(len(r.values) for r in records) + 10, observation_size(2))
    for record in records:
        buffer.add(record)
    return buffer


def test_reanalysis_searches_kept_positions_again_and_replaces_their_targets():
    setup = SelfPlay(2, 12, 1.5, 0.3, 0.25, 4, 200, root_value_weight=0.25)
    records = self_play(random_net((8,), seed=0), game_seeds(0, 1, 2), setup, None)
    buffer = _buffer_of(records)
    old = records[0]._replace(states=no_states(len(records[0].values)))  # a position from before states were kept
    buffer.add(old)
    before = Positions(*(column.copy() for column in buffer.data))
    newer = random_net((8,), seed=9)
    moved = reanalyse(newer, buffer, 40, setup, None, 1, np.random.default_rng(5))

    size = buffer.size
    eligible = np.flatnonzero((before.states[:size].any(axis=1)) & (before.masks[:size].sum(axis=1) > 1))
    draw = np.random.default_rng(5)
    rows = np.sort(draw.choice(eligible, size=40, replace=False))
    policies, roots = search_again(newer, before.states[rows], int(draw.integers(1 << 31, size=1)[0]), setup)
    np.testing.assert_array_equal(buffer.data.policies[rows], policies)
    np.testing.assert_allclose(buffer.data.values[rows], 0.75 * before.results[rows] + 0.25 * roots, atol=1e-6)
    untouched = np.setdiff1d(np.arange(size), rows)
    np.testing.assert_array_equal(buffer.data.policies[untouched], before.policies[untouched])
    np.testing.assert_array_equal(buffer.data.values[untouched], before.values[untouched])
    assert not (policies[~before.masks[rows]]).any() and np.allclose(policies.sum(axis=1), 1)
    assert (policies != before.policies[rows]).any()
    assert moved["reanalyse/positions"] == 40 and moved["reanalyse/policy_change"] > 0

    everything = reanalyse(newer, buffer, 10_000, setup, None, 3, np.random.default_rng(6))
    assert everything["reanalyse/positions"] == len(eligible)  # never a forced move, never one without a state


def test_reanalysis_in_worker_processes_gives_the_same_targets():
    setup = SelfPlay(2, 8, 1.5, 0.3, 0.25, 4, 200, root_value_weight=0.5)
    records = self_play(random_net((8,), seed=0), game_seeds(0, 1, 1), setup, None)
    here, there = _buffer_of(records), _buffer_of(records)
    net = random_net((8,), seed=2)
    reanalyse(net, here, 20, setup, None, 4, np.random.default_rng(1))
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        reanalyse(net, there, 20, setup, pool, 4, np.random.default_rng(1))
    np.testing.assert_array_equal(here.data.policies, there.data.policies)
    np.testing.assert_array_equal(here.data.values, there.data.values)


def test_a_run_with_reanalysis_keeps_states_and_resumes(tmp_path):
    final = train(tiny(tmp_path / "a", reanalyse=30))
    timing = json.loads((tmp_path / "a" / "timing.json").read_text())
    assert timing["reanalyse_seconds"] > 0
    with np.load(tmp_path / "a" / "replay.npz") as saved:
        assert saved["states"][: int(saved["size"])].any(axis=1).all()
    assert load_checkpoint(train(tiny(tmp_path / "b", iterations=3, reanalyse=30, resume=str(final))))["step"] == 3


def test_a_replay_file_with_a_damaged_state_is_refused_before_the_buffer_changes(tmp_path):
    records = self_play(random_net((8,), seed=0), game_seeds(0, 1, 1), SelfPlay(2, 4, 1.5, 0.3, 0.25, 4, 200), None)
    buffer = _buffer_of(records)
    buffer.data.states[3, 5:40] = 999
    buffer.save(tmp_path / "replay.npz", 7)
    again = ReplayBuffer(100, observation_size(2))
    with pytest.raises(ValueError, match=r"replay.npz': position 3: invalid position"):
        again.load(tmp_path / "replay.npz")
    assert again.size == 0
