"""The numpy MLP: it learns a learnable labelling, survives a save/load round trip, rejects bad files,
and the teacher pipeline produces consistent examples."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl.klaverjas import model as M
from tabletop_rl.klaverjas import rules as R


def rule_labelled(count: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions from random play, labelled 'highest legal canonical card' (a rule a small MLP can learn)."""
    rng = np.random.default_rng(seed)
    xs, ys, legals = [], [], []
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    while len(xs) < count:
        state = R.new_state(seed=int(rng.integers(1 << 40)))
        R.apply_action(state, R.NAME_TRUMP + int(rng.integers(4)))
        while int(state[R.PHASE]) != R.OVER:
            R.legal_mask(state, mask)
            order = M.suit_order(int(state[R.TRUMP]))
            legal = np.zeros(32, bool)
            legal[[M.canonical(int(c), order) for c in np.flatnonzero(mask)]] = True
            xs.append(M.features(state))
            ys.append(int(np.flatnonzero(legal).max()))
            legals.append(legal)
            R.apply_action(state, int(rng.choice(np.flatnonzero(mask))))
    return np.array(xs), np.array(ys), np.array(legals)


def test_training_learns_a_learnable_rule_and_round_trips(tmp_path):
    x, y, legal = rule_labelled(1500, seed=0)
    model = M.train(x[:1200], y[:1200], legal[:1200], hidden=32, epochs=15, seed=1)
    untrained = M.MLP.initialised([M.FEATURES, 32, 32, 32], seed=1)
    trained_agreement = (M.predict(model, x[1200:], legal[1200:]) == y[1200:]).mean()
    untrained_agreement = (M.predict(untrained, x[1200:], legal[1200:]) == y[1200:]).mean()
    assert trained_agreement > 0.9 > untrained_agreement
    path = tmp_path / "model.txt"
    M.save(model, path)
    header = path.read_text().splitlines()[:6]
    assert header[0] == f"format: {M.FORMAT}" and header[2] == f"input_size: {M.FEATURES}"
    loaded = M.load(path)
    assert np.array_equal(M.predict(loaded, x[1200:], legal[1200:]), M.predict(model, x[1200:], legal[1200:]))
    assert loaded.meta["epochs"] == 15


def test_a_corrupt_model_file_is_a_clear_error(tmp_path):
    path = tmp_path / "model.txt"
    path.write_text("format: something else\n")
    with pytest.raises(ValueError, match="cannot load model .*model.txt"):
        M.load(path)


def test_features_hide_other_hands_and_follow_trump_canonicalisation():
    state = R.new_state(seed=3)
    R.apply_action(state, R.NAME_TRUMP + 2)
    swapped = state.copy()
    swapped[R.HAND + 1], swapped[R.HAND + 3] = state[R.HAND + 3], state[R.HAND + 1]
    assert np.array_equal(M.features(state), M.features(swapped))
    seat_hand = R.cards_of(int(state[R.HAND]))
    trumps = [c for c in seat_hand if c >> 3 == 2]
    assert M.features(state)[:8].sum() == len(trumps)  # trump (H) is canonical suit 0


def test_teacher_examples_are_legal_labels():
    x, y, legal = M.teacher_examples(deals=1, samples=1, seed=5)
    assert len(x) == len(y) == len(legal) > 0
    assert legal[np.arange(len(y)), y].all()
