"""Splendor as an OpenSpiel game (envs/openspiel.py): OpenSpiel's own checks, the chance nodes, what each seat's
strings and tensors hold, and the resampler ISMCTS uses."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from extra_skips import needs

pyspiel = needs("pyspiel")
from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

from tabletop_rl.envs.openspiel import GAME_NAME, NOBLE_OUTCOME  # noqa: E402

pytestmark = pytest.mark.openspiel
RESERVE_DECK_1 = 42  # reserve_deck:1
RESERVE_1_0, TAKE_WBG = 30, 0  # reserve:1.0, take:white,blue,green


def deal(num_players: int = 2):
    """A state just after the deal, every chance outcome the lowest one offered."""
    state = pyspiel.load_game(GAME_NAME, {"players": num_players}).new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    return state


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_random_sim_test_passes(num_players):
    pyspiel.random_sim_test(pyspiel.load_game(GAME_NAME, {"players": num_players}), num_sims=2, serialize=True,
                            verbose=False)


def test_bad_parameters_get_one_line():
    with pytest.raises(Exception, match="players must be 2, 3 or 4, got 5"):
        pyspiel.load_game(GAME_NAME, {"players": 5})


def test_the_deal_and_each_draw_are_uniform_chance_nodes():
    state = pyspiel.load_game(GAME_NAME).new_initial_state()
    outcomes = state.chance_outcomes()
    assert [a for a, _ in outcomes] == list(range(NOBLE_OUTCOME, NOBLE_OUTCOME + 10))
    assert sum(p for _, p in outcomes) == pytest.approx(1.0)
    state = deal()
    assert len(state.history()) == 3 + 12 and state.current_player() == 0
    state.apply_action(state.legal_actions()[0] if RESERVE_DECK_1 not in state.legal_actions() else RESERVE_DECK_1)
    assert state.is_chance_node()  # the card drawn is decided now, never by a stored deck order
    assert [a for a, _ in state.chance_outcomes()] == list(range(4, 40))  # the level-1 cards not dealt


def blind_reserve(card: int):
    """Seat 0 reserves blind from the level-1 deck and gets ``card``."""
    state = deal()
    state.apply_action(RESERVE_DECK_1)
    state.apply_action(card)
    return state


def test_a_blind_reserve_reaches_only_its_owner():
    a, b = blind_reserve(10), blind_reserve(20)
    assert a.information_state_string(1) == b.information_state_string(1)
    assert a.observation_string(1) == b.observation_string(1)
    assert np.array_equal(a.observation_tensor(1), b.observation_tensor(1))
    assert a.information_state_string(0) != b.information_state_string(0)
    assert a.observation_string(0) != b.observation_string(0)
    assert "seat 0 draws a level-1 card into the reserve" in a.information_state_string(1)


def test_the_observer_gives_our_observation_and_the_seat_view():
    state = deal(3)
    game = state.splendor
    assert np.array_equal(state.observation_tensor(2), game.observe(2))
    assert state.observation_string(2) == game.render(viewer=2)


def test_resampling_keeps_the_information_state_and_a_true_history():
    state = blind_reserve(10)
    state.apply_action(state.legal_actions()[0])  # seat 1 to act: seat 0's reserve is hidden from it
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    seen = set()
    for _ in range(20):
        other = state.resample_from_infostate(1, sampler)
        assert other.information_state_string(1) == state.information_state_string(1)
        changed = [i for i, (x, y) in enumerate(zip(state.history(), other.history())) if x != y]
        assert changed in ([], [16])  # only the blind draw differs
        seen.add(other.history()[16])
    assert len(seen) > 1


def test_ismcts_plays_with_our_resampler():
    state = blind_reserve(10)
    game = state.get_game()
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)), 2.0, 20,
                           random_state=np.random.RandomState(0))
    assert bot.step(state) in state.legal_actions()


def test_returns_per_seat_at_the_end():
    state = pyspiel.load_game(GAME_NAME, {"players": 3}).new_initial_state()
    rng = np.random.default_rng(3)
    while not state.is_terminal():
        choices = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        state.apply_action(int(rng.choice(choices)))
    assert state.returns() == state.splendor.end_rewards()
    assert sum(state.returns()) == pytest.approx(0.0) and len(state.returns()) == 3


def seen(state) -> tuple:
    """Everything a caller reads of ``state``: history, serialization, the node, each seat's strings and tensor."""
    seats = range(state.num_players())
    return (state.history(), state.serialize(), state.current_player(), str(state),
            [state.information_state_string(p) for p in seats], [state.observation_string(p) for p in seats],
            [list(state.observation_tensor(p)) for p in seats])


def refuses_unchanged(state, action) -> ValueError:
    """The one-line ``ValueError`` ``state.apply_action(action)`` raises, having checked that nothing changed."""
    before = seen(state)
    with pytest.raises(ValueError) as err:
        state.apply_action(action)
    assert "\n" not in str(err.value) and len(str(err.value)) < 300
    assert seen(state) == before
    return err.value


def test_a_chance_node_refuses_an_outcome_it_does_not_offer():
    state = pyspiel.load_game(GAME_NAME).new_initial_state()
    assert "not among the 10 outcomes" in str(refuses_unchanged(state, 10**9))
    refuses_unchanged(state, 5)  # a card while the nobles are dealt
    state = deal()
    state.apply_action(RESERVE_DECK_1)
    refuses_unchanged(state, 0)  # a level-1 card already on the market
    refuses_unchanged(state, 50)  # a level-2 card for a level-1 draw


def test_a_negative_id_is_refused_not_read_from_the_end():
    state = deal()
    assert {RESERVE_1_0, TAKE_WBG} <= set(state.legal_actions())
    for action in (RESERVE_1_0 - 72, TAKE_WBG - 72, -1):
        assert "out of range 0..71" in str(refuses_unchanged(state, action))


def test_ids_past_the_table_and_non_integers_get_one_line():
    state = deal()
    for action in (72, 2**63, 2**70, -(2**63)):
        assert "out of range 0..71" in str(refuses_unchanged(state, action))
    for action in (1.5, np.float64(3.0), True, "3", None, np.array([3])):
        assert "must be an integer" in str(refuses_unchanged(state, action))
    state.apply_action(np.int64(TAKE_WBG))  # numpy integers are integers
    assert state.history()[-1] == TAKE_WBG


def test_action_to_string_refuses_ids_out_of_range():
    state = deal()
    assert state.action_to_string(0, 71) == "pass"
    for action in (-1, 72):
        with pytest.raises(ValueError, match="out of range"):
            state.action_to_string(0, action)
    with pytest.raises(ValueError, match="out of range"):
        state.action_to_string(pyspiel.PlayerId.CHANCE, -1)


#: Integer ids around both ranges (72 moves, 100 outcomes) and far past them; and values that are no integer.
AROUND = [*range(-NOBLE_OUTCOME - 12, NOBLE_OUTCOME + 22), 10**9, 2**31, 2**62, 2**63 - 1, 2**63, 2**64, -(2**63),
          -(2**64)]
NOT_INTEGERS = [1.5, 3.0, np.float64(3.0), True, np.bool_(False), "3", None, np.array([3]), [3]]


def random_position(num_players: int, max_plies: int, seed: int, steps: int):
    """A state after ``steps`` random legal actions and chance outcomes (fewer when the game ends first)."""
    state = pyspiel.load_game(GAME_NAME, {"players": num_players, "max_plies": max_plies}).new_initial_state()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if state.is_terminal():
            break
        choices = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        state.apply_action(int(rng.choice(choices)))
    return state


@settings(max_examples=8, deadline=None)
@given(st.sampled_from([2, 3, 4]), st.sampled_from([30, 1000]), st.integers(0, 2**31 - 1), st.integers(0, 150))
@example(2, 1000, 0, 0)  # the first chance node
@example(2, 1000, 0, 15)  # the first player's node
@example(2, 30, 0, 150)  # the end
def test_apply_action_plays_a_legal_action_or_refuses_it_unchanged(num_players, max_plies, seed, steps):
    state = random_position(num_players, max_plies, seed, steps)
    playable = set() if state.is_terminal() else \
        {a for a, _ in state.chance_outcomes()} if state.is_chance_node() else set(state.legal_actions())
    before = seen(state)
    for action in [*AROUND, *NOT_INTEGERS]:
        trial = state.clone()
        is_playable = type(action) is int and action in playable
        try:
            trial.apply_action(action)
        except ValueError as e:
            assert not is_playable and "\n" not in str(e), (action, str(e))
            assert seen(trial) == before, action
        else:
            assert is_playable and trial.history() == [*before[0], action], action
