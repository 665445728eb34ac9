"""Differential test: the numba core and the plain-Python reference (tests/helpers/reference_splendor.py) agree on
legal masks, resulting positions, scores, the end of the game and the winners, step by step, over random
games for 2, 3 and 4 players.

Random play is steered by a few weightings of the action families so that rare corners (empty decks, a bank
without gems, passes, noble choices, the final round, the ply cap) are reached, and each test checks that
its games did reach the corners it is meant to cover.
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

import reference_splendor as ref
from tabletop_rl.games.splendor.actions import move_name
from tabletop_rl.games.splendor.game import SplendorGame

FAMILY_IDS = {
    "take": range(0, 25), "take2": range(25, 30), "reserve": range(30, 42), "reserve_deck": range(42, 45),
    "buy": range(45, 57), "buy_reserved": range(57, 60),
}


def _weights(**family_weight: float) -> np.ndarray:
    """Action weights for random play: 1 for every action unless its family is given a weight."""
    w = np.ones(ref.NUM_ACTIONS)
    for family, weight in family_weight.items():
        w[FAMILY_IDS[family]] = weight
    return w


POLICIES = {
    "uniform": _weights(),
    # buys and reserves often, so decks run down and nobles and the final round come early
    "buyer": _weights(reserve=4, reserve_deck=4, buy=30, buy_reserved=30),
    # takes tokens often, so the bank runs dry, tokens go back and players get stuck and pass
    "hoarder": _weights(take=5, take2=5),
    # reserves blind from the level-3 deck and buys reserves, so that deck runs out
    "deep_reserver": _weights(take2=5, buy_reserved=1000),
}
POLICIES["deep_reserver"][44] = 500  # reserve_deck:3


def _situations(pos: dict) -> set[str]:
    """Names for the rare corners a position is in (used to prove the games cover them)."""
    seen = {f"phase:{pos['phase']}"}
    seen |= {f"empty_deck:{lv}" for lv in ref.LEVELS if not pos["decks"][lv]}
    if not any(pos["bank"][c] for c in ref.COLOURS):
        seen.add("bank:no_gems")
    if pos["bank"]["gold"] == 0:
        seen.add("bank:no_gold")
    if pos["final_round"]:
        seen.add("final_round")
    return seen


def _diff_message(before: dict, action: int, expected: dict, got: dict) -> str:
    fields = [k for k in expected if expected[k] != got.get(k)]
    lines = [f"core and reference disagree after {move_name(action)} (id {action}) at ply {before['ply']}",
             f"position before: {json.dumps(before)}"]
    lines += [f"  {k}: reference {json.dumps(expected[k])} core {json.dumps(got.get(k))}" for k in fields]
    return "\n".join(lines)


def _check_same_view(game: SplendorGame, pos: dict) -> None:
    """The core's mask and verdicts on a position equal the reference's."""
    expected_mask = ref.legal_mask(pos)
    got_mask = game.legal_mask().tolist()
    wrong = [f"{move_name(a)} (reference says {'legal' if expected_mask[a] else 'illegal'})"
             for a in range(ref.NUM_ACTIONS) if expected_mask[a] != got_mask[a]]
    assert not wrong, f"masks differ on {wrong} in position {json.dumps(pos)}"
    assert game.scores == [ref.points(pl) for pl in pos["players"]], json.dumps(pos)
    assert (game.is_over, game.is_truncated) == (ref.is_over(pos), ref.is_truncated(pos)), json.dumps(pos)
    assert game.winners == ref.winners(pos), json.dumps(pos)


def compare_game(num_players: int, seed: int, policy: str, max_plies: int | None = 1000) -> set[str]:
    """Play one random game in both implementations, asserting agreement at every ply.

    >>> "phase:main" in compare_game(2, seed=3, policy="uniform")
    True

    Returns the rare corners the game passed through (see ``_situations``) plus how it ended.
    """
    rng = np.random.default_rng(seed)
    weights = POLICIES[policy]
    game = SplendorGame(num_players, seed=seed, max_plies=max_plies)
    pos = game.to_dict()
    seen: set[str] = set()
    while True:
        _check_same_view(game, pos)
        if game.is_over:
            break
        seen |= _situations(pos)
        p = weights * game.legal_mask()
        action = int(rng.choice(ref.NUM_ACTIONS, p=p / p.sum()))
        seen.add("pass" if action == ref.NUM_ACTIONS - 1 else "action")
        expected = ref.step(pos, action)
        game.step(action)
        got = game.to_dict()
        assert got == expected, _diff_message(pos, action, expected, got)
        pos = got
    seen.add("end:truncated" if game.is_truncated else "end:rules")
    if len(game.winners) > 1:
        seen.add("end:shared_win")
    return seen


def _compare_many(num_players: int, games: int, first_seed: int = 0) -> Counter:
    """Games seeded first_seed.., cycling through the policies; counts of games per corner reached."""
    names = list(POLICIES)
    counts: Counter = Counter()
    for i in range(games):
        counts.update(compare_game(num_players, first_seed + i, names[i % len(names)]))
    return counts


# Corners every batch of games for a player count must reach (measured reach is far above 1 game).
MUST_REACH = {"phase:return", "phase:noble", "final_round", "end:rules", "empty_deck:1", "bank:no_gold",
              "bank:no_gems", "pass"}
MUST_REACH_BY_COUNT = {2: MUST_REACH - {"phase:noble", "empty_deck:1", "pass"}, 3: MUST_REACH,
                       4: MUST_REACH | {"empty_deck:3"}}


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_core_matches_reference(num_players: int) -> None:
    counts = _compare_many(num_players, games=80)
    missing = MUST_REACH_BY_COUNT[num_players] - set(counts)
    assert not missing, f"no game reached {sorted(missing)}; reached: {dict(counts)}"


def test_core_matches_reference_under_a_small_ply_cap() -> None:
    """Caps of 1..80 plies end games in any phase; the core must truncate exactly where the reference does."""
    rng = np.random.default_rng(2024)
    counts: Counter = Counter()
    for seed in range(60):
        num_players = 2 + seed % 3
        cap = int(rng.integers(1, 81))
        counts.update(compare_game(num_players, 10_000 + seed, list(POLICIES)[seed % 4], max_plies=cap))
    assert counts["end:truncated"] >= 30, dict(counts)
    assert counts["phase:return"] > 0, dict(counts)


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_core_matches_reference_over_thousands_of_games(num_players: int) -> None:
    counts = _compare_many(num_players, games=2000, first_seed=100_000)
    missing = MUST_REACH_BY_COUNT[num_players] - set(counts)
    assert not missing, f"no game reached {sorted(missing)}; reached: {dict(counts)}"
