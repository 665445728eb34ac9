"""Splendor as a TextArena env (envs/textarena.py): full games through TextArena's own loop, invalid moves,
sub-steps, forfeits, and the TextArena fault the env steers around."""

from __future__ import annotations

import random
import re

import pytest

from extra_skips import needs

ta = needs("textarena")
import tabletop_rl.envs.textarena  # noqa: E402,F401  (registers Splendor-v0)

pytestmark = pytest.mark.textarena
LEGAL = re.compile(r"Legal moves: (.*)$", re.MULTILINE)


def legal_moves(observation: str) -> list[str]:
    """The bracketed legal moves of the latest board in ``observation``."""
    return LEGAL.findall(observation)[-1].split()


def play(env, seed: int, first_reply: str | None = None):
    """A full game of scripted players that pick a random listed move; ``first_reply`` is sent first."""
    rng = random.Random(seed)
    players, sizes, done = [], [], False
    while not done:
        player_id, observation = env.get_observation()
        players.append(player_id)
        sizes.append(len(observation))
        reply = first_reply if first_reply is not None else f"I choose {rng.choice(legal_moves(observation))}"
        first_reply = None
        done, _ = env.step(reply)
    return players, sizes, env.close()


def test_a_full_game_through_textarena_with_an_invalid_move():
    env = ta.make("Splendor-v0")
    env.reset(num_players=2, seed=11)
    assert env.get_observation()[0] == 0
    env.step("[take2:gold]")  # refused: re-prompted with our reason, same player
    player_id, observation = env.get_observation()
    assert player_id == 0
    assert "attempted an invalid move. Reason: unknown action name 'take2:gold'" in observation
    assert "gold is never taken" in observation or "not a colour" in observation
    players, sizes, (rewards, _) = play(env, seed=1)
    game = env.game  # TextArena's wrappers pass attributes through
    assert game.is_over and rewards == dict(enumerate(game.end_rewards()))
    assert any(a == b for a, b in zip(players, players[1:]))  # returns or a noble: the same player again
    assert max(sizes) < 2 * min(sizes)  # the board each turn, not a growing log


def test_the_bracket_form_and_the_reason_come_back():
    env = ta.make("Splendor-v0")
    env.reset(num_players=3, seed=2)
    env.step("no brackets here, but [take:r,g,b] and later [take:w,b,g]")  # the last bracketed move counts
    player_id, observation = env.get_observation()
    assert player_id == 1 and "Player 0: take:white,blue,green" in observation


def test_running_out_of_the_allowance_loses():
    env = ta.make("Splendor-v0")
    env.reset(num_players=3, seed=5)
    env.step("[pass]")
    assert env.get_observation()[0] == 0
    done, _ = env.step("[pass]")
    rewards, _ = env.close()
    assert done and rewards == {0: -1.0, 1: 0.5, 2: 0.5}


def test_textarenas_two_player_state_still_fails_on_set_winners():
    """Why the env keeps FFAMultiPlayerState for two players as well; if this fails, TextArena fixed it."""
    state = ta.TwoPlayerState(num_players=2)
    state.reset()
    with pytest.raises(AttributeError):
        state.set_winners([0], "a win")
