"""A save whose state does not follow from its seed and moves is refused.

Loading replays the save's seed and history from the start and compares the result with the stored state and
event log; the first difference is named in one line. The fuzz test edits one field of a real save at a time:
each edited save is either refused with a one-line ``ValueError`` or loads as exactly the game its own replay
gives, never a contradiction and never a traceback.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest

from tabletop_rl.agents import make_policy
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.baselines import policy_orders
from tabletop_rl.games.space_conquest.game import SpaceConquestGame

PREFIX = "save does not follow from its seed and moves: "


def real_save(seed: int = 5, turns: int = 9) -> dict[str, Any]:
    """A save of a game in play with fleets in flight and a non-empty event log (heuristic against random)."""
    game = SpaceConquestGame(seed=seed)
    players = [make_policy("heuristic", game="space_conquest"), make_policy("random", game="space_conquest", seed=1)]
    for _ in range(turns):
        game.step(*(policy_orders(players[p], game, p) for p in range(2)))
    assert not game.is_over and game.fleets() and game.events()
    return json.loads(game.to_json())


def one_line(error: ValueError) -> str:
    text = str(error)
    assert "\n" not in text and 0 < len(text) < 300, text[:500]
    return text


def load_or_message(data: Any) -> SpaceConquestGame | str:
    try:
        return SpaceConquestGame.from_dict(data)
    except ValueError as e:
        return one_line(e)


# --- the first difference is named --------------------------------------------------------------------------
def test_the_save_as_written_loads_and_equals_the_game():
    data = real_save()
    game = SpaceConquestGame.from_dict(copy.deepcopy(data))
    assert json.loads(game.to_json()) == data


def test_a_save_from_before_seeds_were_folded_to_63_bits_keeps_its_map():
    # a game made without a seed once drew all 64 bits; a new game folds 2**63 + 5 to 5, its save must not
    seed = 2**63 + 5
    state, log = R.new_game(seed)
    used = R.fleet_at(int(state[R.NUM_FLEETS_AT]))
    old = {"format": "space_conquest/1", "seed": seed, "max_turns": R.DEFAULT_MAX_TURNS, "loss_model": "flat",
           "history": [], "errors": [[], []], "state": [int(v) for v in state[:used]],
           "log": [[int(v) for v in row] for row in log[1:log[0, 0] + 1]]}
    game = SpaceConquestGame.from_dict(old)
    assert game.seed == seed and np.array_equal(game.state, state)
    assert not np.array_equal(game.state, SpaceConquestGame(seed).state)
    game.step({"moves": [{"from": game.home_letter(0), "to": game.home_letter(1), "ships": 1}]}, None)
    assert game.clone() == game and list(game.replay())[-1] == game
    assert SpaceConquestGame.from_json(game.to_json()) == game


def test_an_edited_garrison_names_the_star_and_both_values():
    data = real_save()
    at = R.star_at(3) + R.S_SHIPS
    true = data["state"][at]
    data["state"][at] = true + 2
    assert load_or_message(data) == f"{PREFIX}stars[3].ships is {true + 2}, replay gives {true}"


@pytest.mark.parametrize("at, name", [
    (R.TURN, "turn"),
    (R.RNG, "rng"),
    (R.know_at(1, 4) + R.K_SHIPS, "knowledge[1][4].ships"),
    (R.TALLY + 1 * R.T_SIZE + R.T_CAPTURES, "tally[1].captures"),
    (R.fleet_at(0) + R.F_LEFT, "fleets[0].turns_left"),
])
def test_every_part_of_the_row_has_a_name(at, name):
    data = real_save()
    data["state"][at] += 1
    message = load_or_message(data)
    assert isinstance(message, str) and message.startswith(f"{PREFIX}{name} is ")


def test_an_edited_history_move_is_refused_not_left_to_crash_the_replay():
    data = real_save()
    turn = next(t for t, seats in enumerate(data["history"]) if seats[0])
    data["history"][turn][0][0][2] = 99  # more ships than the star had
    message = load_or_message(data)
    assert isinstance(message, str) and message.startswith(f"{PREFIX}turn {turn + 1}, player 0")


def test_a_history_longer_than_the_game_is_refused():
    data = real_save()
    data["history"].append([[], []])
    message = load_or_message(data)
    assert isinstance(message, str) and message.startswith(PREFIX)


def test_an_edited_event_is_refused():
    data = real_save()
    data["log"][0][R.E_E] += 1
    message = load_or_message(data)
    assert isinstance(message, str) and message.startswith(f"{PREFIX}log[0]")


# --- fuzz: one edited field at a time -------------------------------------------------------------------------
def leaves(node: Any, path: tuple = ()) -> list[tuple]:
    """Every path to a value (container or not) inside ``node``, the root excluded."""
    found = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, child in items:
        found.append(path + (key,))
        found.extend(leaves(child, path + (key,)))
    return found


def edited(value: Any, rng: np.random.Generator) -> Any:
    """A plausible wrong value: small integer steps mostly, sometimes another type."""
    roll = rng.integers(12)
    if isinstance(value, bool) or roll == 0:
        return [None, "A", 1.5, True, [], {}, -1, 2**63][rng.integers(8)]
    if isinstance(value, int):
        return value + int(rng.choice([-3, -2, -1, 1, 2, 3, 7])) if roll < 9 else int(rng.integers(-2, 20))
    if isinstance(value, str):
        return [*R.LETTERS, "Z", "altair", "nlogn", "flat", ""][rng.integers(21)]
    if isinstance(value, list):
        if value and roll < 4:
            return value[:-1]
        if value and roll < 8:
            return value + [copy.deepcopy(value[rng.integers(len(value))])]
        return list(reversed(value))
    return None


def mutate(data: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """A deep copy of ``data`` with one field edited; fields are drawn per top-level key first, so the short
    keys (seed, settings, errors) are edited about as often as the long state row."""
    data = copy.deepcopy(data)
    key = list(data)[rng.integers(len(data))]
    paths = [(key,)] + leaves(data[key], (key,))
    path = paths[rng.integers(len(paths))]
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = edited(parent[path[-1]], rng)
    return data


@pytest.mark.parametrize("seed", [5, 12])
def test_an_edited_save_is_refused_in_one_line_or_is_what_its_replay_gives(seed):
    data = real_save(seed)
    rng = np.random.default_rng(seed)
    refused = 0
    for _ in range(750):
        loaded = load_or_message(mutate(data, rng))
        if isinstance(loaded, str):
            refused += 1
            continue
        *_, replayed = loaded.replay()  # never raises: the history replays
        assert np.array_equal(replayed.state, loaded.state)
        assert replayed.events() == loaded.events()
    assert refused > 500  # most edits contradict the seed and moves
