"""The numpy MLP and its teacher data: it learns a learnable labelling, survives a save/load round trip,
rejects bad files; features see only the seat's view and do not depend on how the plain suits are
named; teacher shards are legal, deterministic and resumable; the training command runs end to end."""

from __future__ import annotations

import shlex

import numpy as np
import pytest

from tabletop_rl.games.klaverjas import model as M
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.train import klaverjas_model as TM
from tabletop_rl.train import klaverjas_teacher as T


def random_positions(count: int, seed: int) -> list[np.ndarray]:
    """Positions (seat views) with a choice (two or more legal cards) from random play, trump at random."""
    rng = np.random.default_rng(seed)
    views = []
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    while len(views) < count:
        state = R.new_state(seed=int(rng.integers(1 << 40)), rules=R.RULE_SETS[len(views) % 2])
        R.apply_action(state, R.NAME_TRUMP + int(rng.integers(4)))
        while int(state[R.PHASE]) != R.OVER:
            if R.legal_mask(state, mask) > 1:
                views.append(R.seat_view(state, int(state[R.CURRENT])))
            R.apply_action(state, int(rng.choice(np.flatnonzero(mask))))
    return views[:count]


def rule_labelled(count: int, seed: int) -> TM.Examples:
    """Random positions valued 'the higher the canonical card, the better' (a rule the scorer can learn from
    its card inputs, once the suits are canonical)."""
    views = random_positions(count, seed)
    values = np.full((count, 32), np.nan, np.float32)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    for i, view in enumerate(views):
        R.legal_mask(view, mask)
        order = M.suit_order(view)
        for c in np.flatnonzero(mask[:32]):
            values[i, c] = M.canonical(int(c), order)
    return TM.examples(np.array(views), values, temperature=0)


def test_training_learns_a_learnable_rule_and_round_trips(tmp_path):
    ex = rule_labelled(1500, seed=0)
    fit, test = ex.subset(np.arange(1500) < 1200), ex.subset(np.arange(1500) >= 1200)
    model = TM.train(fit, hidden=(32, 32), epochs=15, lr=0.003, batch=64, seed=1)
    untrained = M.MLP.initialised([M.FEATURES, 32, 32, 1], seed=1)
    assert TM.agreement(model, test) > 0.9
    assert TM.agreement(model, test, ties=False) == TM.agreement(model, test)  # distinct values: no ties
    assert TM.agreement(untrained, test) < 0.6
    path = tmp_path / "model.txt"
    M.save(model, path)
    header = path.read_text().splitlines()[:6]
    assert header[0] == f"format: {M.FORMAT}" and header[2] == f"input_size: {M.FEATURES}"
    loaded = M.load(path)
    assert np.array_equal(TM.predict(loaded, test), TM.predict(model, test))
    assert loaded.meta["epochs"] == 15 and loaded.meta["hidden"] == [32, 32]


def test_card_scores_are_the_training_scores():
    """The service's per-position scoring (``card_scores``) ranks cards as the batched training forward does."""
    ex = rule_labelled(30, seed=2)
    model = M.MLP.initialised([M.FEATURES, 16, 1], seed=4)
    views = random_positions(30, seed=2)
    chosen = TM.predict(model, ex)
    for i, view in enumerate(views):
        mask = np.zeros(R.NUM_ACTIONS, np.bool_)
        R.legal_mask(view, mask)
        legal = [int(c) for c in np.flatnonzero(mask[:32])]
        scores = model.card_scores(view, legal)
        assert legal.index(max(scores, key=scores.get)) == chosen[i] - ex.starts[i]


def test_a_corrupt_model_file_is_a_clear_error(tmp_path):
    path = tmp_path / "model.txt"
    path.write_text("format: something else\n")
    with pytest.raises(ValueError, match="cannot load model .*model.txt"):
        M.load(path)


def test_features_hide_other_hands():
    for view in random_positions(40, seed=3)[::5]:
        seat = int(view[R.CURRENT])
        state = view.copy()
        others = [s for s in range(4) if s != seat]
        hidden = R.ALL_CARDS & ~int(view[R.HAND + seat]) & ~M.played_before(view)
        t = int(view[R.TRICK_NO])
        hidden &= ~R.hand_of([int(c) for c in view[R.TRICK + 4 * t:R.TRICK + 4 * t + int(view[R.IN_TRICK])]])
        state[R.HAND + others[0]] = hidden  # any split of the hidden cards: the features do not read it
        assert np.array_equal(inputs(state), inputs(view))


def inputs(state: np.ndarray) -> np.ndarray:
    """The position inputs followed by every legal card's inputs in canonical card order, flattened."""
    view = M.View.of(state)
    cards = sorted(view.legal, key=lambda c: M.canonical(c, view.order))
    return np.concatenate([M.features(view), M.card_features(view, cards).ravel()])


def relabel(state: np.ndarray, perm: list[int]) -> np.ndarray:
    """``state`` with suit s renamed perm[s] everywhere (hands, tricks, trump)."""
    moved = state.copy()
    card = lambda c: perm[c >> 3] * 8 + (c & 7)  # noqa: E731
    moved[R.HAND:R.HAND + 4] = [R.hand_of([card(c) for c in R.cards_of(int(h))]) for h in state[R.HAND:R.HAND + 4]]
    moved[R.TRICK:R.TRICK + 32] = [card(int(c)) if c >= 0 else -1 for c in state[R.TRICK:R.TRICK + 32]]
    moved[R.TRUMP] = perm[int(state[R.TRUMP])]
    return moved


def test_features_do_not_depend_on_suit_names():
    """Renaming the suits (trump included) leaves the input unchanged wherever the plain suits can be told
    apart by what the seat holds and has seen (ties keep C D H S order, a true symmetry but for voids)."""
    checked = 0
    for view in random_positions(60, seed=4):
        order = M.suit_order(view)
        for perm in ([1, 2, 3, 0], [3, 0, 2, 1]):
            moved = relabel(view, perm)
            assert sorted(order) == [0, 1, 2, 3]
            keys = {tuple((int(h) >> (8 * s)) & 0xFF for h in (view[R.HAND + view[R.CURRENT]], M.played_before(view)))
                    for s in range(4) if s != view[R.TRUMP]}
            if len(keys) == 3:
                assert np.array_equal(inputs(moved), inputs(view))
                checked += 1
    assert checked > 40


def test_teacher_shards_are_legal_deterministic_and_resumable(tmp_path):
    T.write_shards(tmp_path / "a", deals=2, shard_deals=1, samples=(1,) * 8, log=lambda m: None)
    first = (tmp_path / "a" / "shard_00000.npz").stat().st_mtime_ns
    T.write_shards(tmp_path / "a", deals=3, shard_deals=1, samples=(1,) * 8, log=lambda m: None)
    assert (tmp_path / "a" / "shard_00000.npz").stat().st_mtime_ns == first  # kept, not redone
    T.write_shards(tmp_path / "b", deals=3, shard_deals=1, samples=(1,) * 8, log=lambda m: None)
    a, b = T.load_shards(tmp_path / "a"), T.load_shards(tmp_path / "b")
    for key in a:
        assert np.array_equal(a[key], b[key], equal_nan=key == "values")
    assert sorted(set(a["deal"].tolist())) == [0, 1, 2]
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    for view, row in zip(a["views"], a["values"]):
        seat = int(view[R.CURRENT])
        assert [int(view[R.HAND + s]) != 0 for s in range(4)] == [s == seat for s in range(4)]  # only its hand
        R.legal_mask(view, mask)
        assert np.flatnonzero(~np.isnan(row[0])).tolist() == np.flatnonzero(mask[:32]).tolist()
    assert a["values"].shape[1:] == (1, 32)
    ex = TM.examples(a["views"], T.mean_values(a["views"], a["values"], "score"), temperature=4)
    sums = np.add.reduceat(ex.target, ex.starts[:-1])
    assert np.allclose(sums, 1) and np.add.reduceat(ex.best, ex.starts[:-1]).min() >= 1


def test_bad_teacher_samples_are_named(tmp_path):
    with pytest.raises(ValueError, match="samples must give 8"):
        T.write_shards(tmp_path, deals=1, samples=(1, 2))


def test_training_command_end_to_end(tmp_path, capsys):
    out = tmp_path / "model.txt"
    assert TM.train_model_main(["--data", str(tmp_path / "data"), "--deals", "4", "--shard-deals", "2",
                               "--samples", "1,1,1,1,1,1,1,1", "--hidden", "16", "--epochs", "2",
                               "--holdout", "0.5", "--dagger-deals", "1", "--out", str(out)]) == 0
    model = M.load(out)
    assert model.meta["deals"] == 4 and model.meta["hidden"] == [16] and 0 <= model.meta["holdout_agreement"] <= 1
    assert model.meta["dagger_deals"] == 1 and len(T.load_shards(tmp_path / "data" / "dagger")["deal"]) > 0
    assert "held-out positions" in capsys.readouterr().out


def test_an_interrupted_command_prints_the_command_that_goes_on_after_the_finished_shards(tmp_path, monkeypatch,
                                                                                           capsys):
    played = T._play_labelled_deal
    deals: list[int] = []

    def interrupt_the_third(seed, *args):
        if len(deals) == 2:
            raise KeyboardInterrupt
        deals.append(seed)
        return played(seed, *args)

    monkeypatch.setattr(T, "_play_labelled_deal", interrupt_the_third)
    argv = ["--data", str(tmp_path / "data"), "--deals", "4", "--shard-deals", "2", "--samples", "1,1,1,1,1,1,1,1",
            "--hidden", "16", "--epochs", "1", "--holdout", "0.5", "--out", str(tmp_path / "model.txt")]
    assert TM.train_model_main(argv) == 130
    hint = capsys.readouterr().err.strip().splitlines()[-1]
    command = hint.partition("go on with: ")[2]
    assert command == "tabletop train klaverjas-model " + shlex.join(argv), hint
    monkeypatch.setattr(T, "_play_labelled_deal", lambda seed, *args: deals.append(seed) or played(seed, *args))
    assert TM.train_model_main(shlex.split(command)[3:]) == 0
    assert len(deals) == 4 and len(set(deals)) == 4, "the finished shard's deals are not played again"
    assert (tmp_path / "model.txt").is_file()


def test_the_command_shows_deals_and_epochs_done_with_the_time_left_on_one_short_line(tmp_path, capsys):
    """The teacher's deals take most of the command's time: its progress line counts them (resumed shards
    included) and says how long is left, and the fit counts its epochs; no line is wider than 79 columns."""
    data = tmp_path / "data"
    T.write_shards(data, deals=2, shard_deals=2, samples=(1,) * 8)  # a shard from an earlier, interrupted run
    capsys.readouterr()
    assert TM.train_model_main(["--data", str(data), "--deals", "8", "--shard-deals", "2",
                               "--samples", "1,1,1,1,1,1,1,1", "--hidden", "16", "--epochs", "3",
                               "--holdout", "0.5", "--out", str(tmp_path / "model.txt")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" [")[0] for line in err if line.startswith("deals ")] == ["deals 2/8", "deals 4/8",
                                                                                   "deals 6/8", "deals 8/8"]
    # the first new shard carries the start-up; the time left is measured from the next
    assert any(line.startswith("deals 6/8") and "left" in line for line in err)
    assert [line.split(" [")[0] for line in err if line.startswith("epochs ")][-1] == "epochs 3/3"
    assert max(len(line) for line in err) <= 79
