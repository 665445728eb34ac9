"""Observation encoding: one float32 vector per player, from that player's seat, hidden cards removed.

Seats are relative: ``player[0]`` is the observer, ``player[1]`` the next seat in turn order, and so on.
An opponent's blind-reserved card appears only in their ``hidden_reserved`` count; deck order never appears.

>>> from tabletop_rl import SplendorGame
>>> g = SplendorGame(2, seed=1)
>>> obs = observe(g.state, 0)
>>> obs.shape == (observation_size(2),), obs[observation_layout(2)["bank"]].tolist()
(True, [4.0, 4.0, 4.0, 4.0, 4.0, 5.0])
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import cache

import numpy as np
from gymnasium import spaces
from numba import njit

from tabletop_rl.core.kernels import copy_into, popcount
from tabletop_rl.games.splendor import rules as R

__all__ = ["COLOUR_PERMUTATIONS", "OBSERVATION_VERSION", "colour_gathers", "encode_into", "observation_box",
           "observation_layout", "observation_size", "observe", "permute_colours", "step_observe",
           "step_vs_random_observe"]

OBSERVATION_VERSION = 1
_CARD_FEATURES = 13  # present, level, bonus one-hot (5), points, cost (5)
_NOBLE_FEATURES = 6  # present, requirement (5)
_PLY_SCALE = 1000.0  # ply is given as ply / max_plies, or ply / _PLY_SCALE when there is no cap


@cache
def observation_layout(num_players: int = 2) -> dict[str, slice]:
    """Field name -> slice of the observation vector, in order (see docs/observations.md).

    >>> observation_layout(2)["player[1].points"]
    slice(72, 73, None)
    """
    fields: list[tuple[str, int]] = [("bank", 6)]
    for k in range(num_players):
        fields += [(f"player[{k}].{name}", size) for name, size in (
            ("tokens", 6), ("bonuses", 5), ("points", 1), ("cards_bought", 1), ("nobles_taken", 1),
            ("reserved_count", 1), ("hidden_reserved", 1),
        )]
        fields += [(f"player[{k}].reserved[{i}]", _CARD_FEATURES) for i in range(R.MAX_RESERVED)]
    fields += [(f"market[{lv}.{s}]", _CARD_FEATURES) for lv in (1, 2, 3) for s in range(R.SLOTS_PER_LEVEL)]
    fields += [(f"noble[{i}]", _NOBLE_FEATURES) for i in range(R.MAX_TABLE_NOBLES)]
    fields += [("deck_sizes", 3), ("phase", 3), ("final_round", 1), ("ply", 1), ("start_player", num_players)]
    layout, at = {}, 0
    for name, size in fields:
        layout[name] = slice(at, at + size)
        at += size
    return layout


@cache
def observation_size(num_players: int = 2) -> int:
    return list(observation_layout(num_players).values())[-1].stop


def _field_kind(name: str) -> str:
    """A layout name without its seat and index: ``"player[0].reserved[1]"`` -> ``"reserved"``, ``"market[1.0]"``
    -> ``"market"``."""
    return name.rsplit("].", 1)[-1].split("[")[0]


@njit(cache=True, inline="always")
def _card(out, at, card, cards):
    if card < 0:
        return
    out[at] = 1.0
    out[at + 1] = cards[card, R.CARD_LEVEL]
    out[at + 2 + cards[card, R.CARD_BONUS]] = 1.0
    out[at + 7] = cards[card, R.CARD_POINTS]
    for c in range(5):
        out[at + 8 + c] = cards[card, R.CARD_COST + c]


@njit(cache=True)
def encode_into(state, viewer, cards, nobles, out):
    """Write ``viewer``'s observation of ``state`` into ``out`` (float32, zero-filled here)."""
    out[:] = 0.0
    n = state[R.NUM_PLAYERS_AT]
    for c in range(6):
        out[c] = state[R.BANK + c]
    at = 6
    p = viewer  # the seats in turn order from the viewer's; stepped, not taken modulo n (a division, 9% of a call)
    for k in range(n):
        b = R.player_base(p)
        for c in range(11):  # tokens then bonuses
            out[at + c] = state[b + R.P_TOKENS + c]
        out[at + 11] = state[b + R.P_POINTS]
        out[at + 12] = state[b + R.P_BOUGHT]
        out[at + 13] = popcount(np.uint64(state[b + R.P_NOBLES]))  # nobles taken
        out[at + 14] = state[b + R.P_NRESERVED]
        at += 16
        hidden = 0
        for i in range(state[b + R.P_NRESERVED]):
            if k > 0 and (state[b + R.P_BLIND] >> i) & 1:
                hidden += 1
            else:
                _card(out, at + i * _CARD_FEATURES, state[b + R.P_RESERVED + i], cards)
        out[at - 1] = hidden
        at += R.MAX_RESERVED * _CARD_FEATURES
        p = p + 1 if p + 1 < n else 0
    for s in range(12):
        _card(out, at, state[R.MARKET + s], cards)
        at += _CARD_FEATURES
    for i in range(R.MAX_TABLE_NOBLES):
        noble = state[R.TABLE_NOBLES + i]
        if noble >= 0:
            out[at] = 1.0
            for c in range(5):
                out[at + 1 + c] = nobles[noble, c]
        at += _NOBLE_FEATURES
    for lv in range(3):
        out[at + lv] = R.LEVEL_SIZE[lv] - state[R.DECK_DRAWN + lv]
    out[at + 3 + state[R.PHASE]] = 1.0
    out[at + 6] = state[R.FINAL_ROUND]
    cap = R.get_wide(state, R.MAX_PLIES_AT)
    out[at + 7] = R.get_wide(state, R.PLY) / (cap if cap > 0 else _PLY_SCALE)
    start = state[R.START] - viewer  # the start player's seat relative to the viewer's
    out[at + 8 + (start + n if start < 0 else start)] = 1.0


@njit(cache=True, inline="always")
def _seat_view(state, seat, cards, nobles, mask, obs, seat_mask):
    """``seat``'s observation into ``obs`` and its legal moves (``mask`` if it is to act, else none) into
    ``seat_mask``."""
    encode_into(state, seat, cards, nobles, obs)
    if state[R.CURRENT] == seat:  # one copy or one fill, not a select per entry
        copy_into(seat_mask, mask)
    else:
        seat_mask[:] = 0


@njit(cache=True)
def step_observe(state, action, cards, nobles, mask, obs, seat_mask):
    """One compiled call for a Python-facing step: ``checked_step`` (``mask`` is the legal mask of the player to
    act, refreshed), then the next player's observation into ``obs`` and legal moves into ``seat_mask``.

    Returns False, with nothing changed or written, when ``action`` is illegal.
    """
    if not R.checked_step(state, action, cards, nobles, mask):
        return False
    _seat_view(state, state[R.CURRENT], cards, nobles, mask, obs, seat_mask)
    return True


@njit(cache=True)
def step_vs_random_observe(state, action, seat, cards, nobles, mask, obs, seat_mask):
    """``step_observe`` against random opponents: ``action``, then uniformly random moves for the other seats
    until ``seat`` is to act or the game ends, then ``seat``'s observation and legal moves. A kernel of its own
    rather than a branch of ``step_observe``, so the AEC env's first step compiles no random play."""
    if not R.step_vs_random(state, action, seat, cards, nobles, mask):
        return False
    _seat_view(state, seat, cards, nobles, mask, obs, seat_mask)
    return True


def observe(state: np.ndarray, viewer: int) -> np.ndarray:
    """A fresh float32 observation of ``state`` from seat ``viewer``."""
    cards, nobles = R.tables()
    out = np.empty(observation_size(int(state[R.NUM_PLAYERS_AT])), np.float32)
    encode_into(state, viewer, cards, nobles, out)
    return out


@cache
def _observation_high(num_players: int) -> np.ndarray:
    cards, nobles = R.tables()
    gems = [R.GEMS_PER_COLOUR[num_players]] * 5 + [R.GOLD_TOKENS]
    card = [1, 3, 1, 1, 1, 1, 1, cards[:, R.CARD_POINTS].max(), *cards[:, R.CARD_COST:].max(axis=0)]
    table_nobles = num_players + 1
    highs = {
        "bank": gems, "tokens": gems,
        "bonuses": np.bincount(cards[:, R.CARD_BONUS], minlength=5),
        "points": [cards[:, R.CARD_POINTS].sum() + R.NOBLE_POINTS * table_nobles],
        "cards_bought": [R.NUM_CARDS], "nobles_taken": [table_nobles],
        "reserved_count": [R.MAX_RESERVED], "hidden_reserved": [R.MAX_RESERVED],
        "reserved": card, "market": card, "noble": [1, *nobles.max(axis=0)],
        "deck_sizes": R.LEVEL_SIZE, "phase": [1, 1, 1], "final_round": [1],
        # ply / max_plies is at most 1; with no cap the encoder divides by _PLY_SCALE instead
        "ply": [R.MAX_PLY_VALUE / _PLY_SCALE], "start_player": [1] * num_players,
    }
    parts = [np.asarray(highs[_field_kind(name)], np.float32) for name in observation_layout(num_players)]
    high = np.concatenate(parts)
    assert high.shape == (observation_size(num_players),), "bounds table out of step with observe.py"
    return high


def observation_box(num_players: int = 2) -> spaces.Box:
    """A fresh ``Box`` (float32) for one observation vector, with a true upper bound for every field.

    >>> observation_box(2).shape
    (312,)
    """
    high = _observation_high(num_players)
    return spaces.Box(np.zeros_like(high), high.copy(), dtype=np.float32)


# --- renaming the colours ----------------------------------------------------------------------------
#: Every renaming of the five gem colours, the identity first: renaming ``i`` turns colour ``c`` into colour
#: ``COLOUR_PERMUTATIONS[i, c]`` (gold stays gold).
COLOUR_PERMUTATIONS = np.array(list(itertools.permutations(range(5))), np.int64)


def _colour_runs(num_players: int) -> list[int]:
    """Where each run of five per-colour values (white .. black) starts in the observation."""
    starts = []
    for name, where in observation_layout(num_players).items():
        kind = _field_kind(name)
        if kind in ("bank", "tokens", "bonuses"):
            starts.append(where.start)
        elif kind in ("reserved", "market"):  # a card block: the bonus one-hot, then the costs
            starts += [where.start + 2, where.start + 8]
        elif kind == "noble":  # a noble block: present, then the requirement
            starts.append(where.start + 1)
    return starts


def _renamed_action(action: int, perm: np.ndarray) -> int:
    """The move of the renamed position that does what ``action`` did: the same take, take2 or return in the
    renamed colours; moves that name a place (a market slot, a reserve, a noble) or gold stay."""
    for base, sets in ((R.TAKE3, R.TRIPLE_BITS), (R.TAKE2_DIFF, R.PAIR_BITS)):
        if base <= action < base + len(sets):
            renamed = sum(1 << int(perm[c]) for c in range(5) if sets[action - base] >> c & 1)
            return base + list(sets).index(renamed)
    for base in (R.TAKE1, R.TAKE2_SAME, R.RETURN_TOKEN):
        if base <= action < base + 5:
            return base + int(perm[action - base])
    return action


def colour_gathers(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per renaming, the indices that gather a renamed observation (``[120, size]``) and a renamed action row
    (``[120, 72]``) from the original, for observations of ``size`` values (any player count's); another size is
    a one-line ``ValueError``."""
    players = next((n for n in range(2, R.MAX_PLAYERS + 1) if observation_size(n) == size), None)
    if players is None:
        raise ValueError(f"observations of {size} values are not Splendor's (312, 368 or 424)")
    return _colour_gathers(players)


@cache
def _colour_gathers(num_players: int) -> tuple[np.ndarray, np.ndarray]:
    size = observation_size(num_players)
    runs = np.array(_colour_runs(num_players))
    observations = np.tile(np.arange(size), (len(COLOUR_PERMUTATIONS), 1))
    actions = np.tile(np.arange(R.NUM_ACTIONS), (len(COLOUR_PERMUTATIONS), 1))
    for i, perm in enumerate(COLOUR_PERMUTATIONS):
        observations[i, (runs[:, None] + perm).ravel()] = (runs[:, None] + np.arange(5)).ravel()
        for action in range(R.NUM_ACTIONS):
            actions[i, _renamed_action(action, perm)] = action
    observations.setflags(write=False)
    actions.setflags(write=False)
    return observations, actions


def permute_colours(observations: np.ndarray, masks: np.ndarray, policies: np.ndarray,
                    perms: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions with their colours renamed: row ``i`` of each array by ``COLOUR_PERMUTATIONS[perms[i]]``.

    ``observations`` is ``[n, observation size]`` (any player count), ``masks`` and ``policies`` are ``[n, 72]``
    rows over the moves (a legal mask, a policy target). The result is what the renamed position gives: its
    observation, its legal mask, and the same policy over its moves, where a take, take2 or return of a colour
    becomes the one of the renamed colour. The observation describes cards by their features (bonus, points,
    costs), not by id, so a renamed position is encoded exactly even where no real card has a renamed card's
    costs (docs/training.md, "Colour symmetry").

    >>> from tabletop_rl import SplendorGame
    >>> g = SplendorGame(2, seed=1)
    >>> g.step(25)  # take2:white
    >>> g.observe(1)[:6].tolist()  # the bank
    [2.0, 4.0, 4.0, 4.0, 4.0, 5.0]
    >>> target = np.eye(72, dtype=np.float32)[None, 25]  # a policy target: take2:white
    >>> obs, mask, policy = permute_colours(g.observe(1)[None], g.legal_mask()[None], target, [24])
    >>> COLOUR_PERMUTATIONS[24].tolist(), obs[0, :6].tolist(), int(policy.argmax())  # white, blue swapped: take2:blue
    ([1, 0, 2, 3, 4], [4.0, 2.0, 4.0, 4.0, 4.0, 5.0], 26)
    """
    observation_from, action_from = colour_gathers(observations.shape[1])
    rows = np.asarray(perms)
    return (np.take_along_axis(observations, observation_from[rows], axis=1),
            np.take_along_axis(masks, action_from[rows], axis=1),
            np.take_along_axis(policies, action_from[rows], axis=1))
