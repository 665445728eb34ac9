"""What one player sees under fog of war (docs/space_conquest.md §9), as a vector for RL and as a
JSON-ready view for people, scripts and LLMs; and the RL action space with its masks.

A player always knows every star's letter and position, its own stars (garrison, RU), its own
fleets, and what it witnessed: the RU of every star one of its fleets reached, and the owner and
ships of a star as they were when it last saw them (an arrival, a combat it fought in, a rebellion at
its star). It never sees enemy fleets in flight, nor anything at a star since it last saw it.

RL action (``MultiDiscrete``, ``ACTION_NVEC``): for each star ``s`` (by letter) a destination
``action[s]`` in 0..15 (``s`` itself = stay) and a share ``action[16 + s]`` in 0..3 sending
``ceil(ships * (share + 1) / 4)`` of its ships. A star that is not yours or has no ships just stays;
the mask (concatenated per dimension, as sb3-contrib's MaskablePPO expects for MultiDiscrete) allows
only "stay"/share 0 there, and every choice at a star of yours with ships.

>>> from tabletop_rl import SpaceConquestGame
>>> g = SpaceConquestGame(seed=2)
>>> obs, mask = encode(g.state, 0)
>>> obs.shape == (OBS_SIZE,), int(mask.sum()) == 16 + 15 + 16 + 3   # only the home star may move
(True, True)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from numba import njit

from tabletop_rl.core.game import SeatView
from tabletop_rl.core.text import as_index
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.actions import event_dict, move_dict, require_bounded

#: A SpaceConquestGame: game.py imports this module to observe itself, so the class is not
#: imported here (the layers stay free of circles, even for type checking).
_Game = Any


__all__ = ["ACTION_NVEC", "MASK_SIZE", "OBS_SIZE", "SHARE_MASK", "action_space", "as_orders", "decode_action",
           "encode", "encode_into", "fog_copy", "observation_box", "player_view", "policy_info", "rl_action",
           "star_view"]

_SHARES = 4
ACTION_NVEC = np.array([R.NUM_STARS] * R.NUM_STARS + [_SHARES] * R.NUM_STARS, np.int64)
MASK_SIZE = int(ACTION_NVEC.sum())
SHARE_MASK = R.NUM_STARS * R.NUM_STARS  # where the share dimensions start in the flat mask

# per-star observation fields (index -> meaning; docs/space_conquest.md has the table)
_STAR_FIELDS = ("x", "y", "mine", "my_ships", "ru_known", "ru", "seen_unknown", "seen_npc", "seen_mine",
               "seen_enemy", "seen_ships", "seen_age", "my_home", "enemy_home_block", "incoming", "incoming_eta")
_GLOBAL_FIELDS = ("turn", "turns_left", "my_ru", "my_ships")
_STAR_OBS = len(_STAR_FIELDS)
OBS_SIZE = R.NUM_STARS * _STAR_OBS + len(_GLOBAL_FIELDS)
_SHIP_SCALE = 20.0  # ship counts are divided by this


def observation_box() -> spaces.Box:
    """The observation's bounds: every field is >= 0 (ship counts are unbounded above)."""
    return spaces.Box(0.0, np.inf, (OBS_SIZE,), np.float32)


class _OrdersSpace(spaces.MultiDiscrete):
    """The RL action space: a ``MultiDiscrete`` whose ``sample`` also takes the flat mask.

    >>> space = action_space(); _ = space.seed(0)
    >>> from tabletop_rl import SpaceConquestGame
    >>> _, mask = encode(SpaceConquestGame(seed=2).state, 0)
    >>> int((space.sample(mask)[:R.NUM_STARS] != np.arange(R.NUM_STARS)).sum()) <= 1
    True
    """

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if isinstance(mask, np.ndarray) and mask.shape == (MASK_SIZE,):
            mask = _split_mask(mask)
        return super().sample(mask=mask, probability=probability)


def _split_mask(flat: np.ndarray) -> tuple[np.ndarray, ...]:
    """The flat mask as gymnasium's tuple of per-dimension masks (views of ``flat`` as int8)."""
    flat = np.asarray(flat, np.int8)
    return (*flat[:SHARE_MASK].reshape(R.NUM_STARS, R.NUM_STARS), *flat[SHARE_MASK:].reshape(R.NUM_STARS, _SHARES))


def action_space() -> _OrdersSpace:
    return _OrdersSpace(ACTION_NVEC)


def encode(state: np.ndarray, player: int) -> tuple[np.ndarray, np.ndarray]:
    """Fresh ``(float32[OBS_SIZE] observation, int8[MASK_SIZE] action mask)`` for ``player``."""
    obs = np.zeros(OBS_SIZE, np.float32)
    mask = np.zeros(MASK_SIZE, np.int8)
    encode_into(state, player, obs, mask)
    return obs, mask


@njit(cache=True)
def _in_enemy_block(state, player, s):
    """Whether star ``s`` lies in the 4 x 4 corner block opposite ``player``'s home (where the enemy
    home must be): public geometry, not a leak."""
    hx = state[R.star_at(R.home(state, player)) + R.S_X]
    x = state[R.star_at(s) + R.S_X]
    y = state[R.star_at(s) + R.S_Y]
    if hx < R.HOME_BLOCK:  # my home is in the (0, 0) block
        return x >= R.WIDTH - R.HOME_BLOCK and y >= R.HEIGHT - R.HOME_BLOCK
    return x < R.HOME_BLOCK and y < R.HOME_BLOCK


@njit(cache=True)
def encode_into(state, player, obs, mask):
    """Write ``player``'s observation and action mask (see the module doc) into ``obs`` and ``mask``."""
    obs[:] = 0.0
    mask[:] = 0
    turn = state[R.TURN]
    my_ru = 0
    for s in range(R.NUM_STARS):
        b = R.star_at(s)
        k = R.know_at(player, s)
        o = s * _STAR_OBS
        obs[o + 0] = state[b + R.S_X] / (R.WIDTH - 1)
        obs[o + 1] = state[b + R.S_Y] / (R.HEIGHT - 1)
        mine = state[b + R.S_OWNER] == player
        ships = state[b + R.S_SHIPS]
        if mine:
            obs[o + 2] = 1.0
            obs[o + 3] = ships / _SHIP_SCALE
            my_ru += state[b + R.S_RU]
        if state[k + R.K_VISITED] == 1:
            obs[o + 4] = 1.0
            obs[o + 5] = state[b + R.S_RU] / R.HOME_RU
        seen = state[k + R.K_OWNER]
        if seen == R.UNKNOWN:
            obs[o + 6] = 1.0
        elif seen == R.NOBODY:
            obs[o + 7] = 1.0
        elif seen == player:
            obs[o + 8] = 1.0
        else:
            obs[o + 9] = 1.0
        if seen != R.UNKNOWN:
            obs[o + 10] = state[k + R.K_SHIPS] / _SHIP_SCALE
            obs[o + 11] = (turn - state[k + R.K_TURN]) / R.DEFAULT_MAX_TURNS
        obs[o + 12] = 1.0 if state[b + R.S_HOME] == player else 0.0
        obs[o + 13] = 1.0 if _in_enemy_block(state, player, s) else 0.0
        # the stay choices are always allowed; every choice at a star of mine with ships
        mask[s * R.NUM_STARS + s] = 1
        mask[SHARE_MASK + s * _SHARES] = 1
        if mine and ships > 0:
            mask[s * R.NUM_STARS:(s + 1) * R.NUM_STARS] = 1
            mask[SHARE_MASK + s * _SHARES:SHARE_MASK + (s + 1) * _SHARES] = 1
    for i in range(state[R.NUM_FLEETS_AT]):
        f = R.fleet_at(i)
        if state[f + R.F_OWNER] != player:
            continue
        o = state[f + R.F_DEST] * _STAR_OBS
        obs[o + 14] += state[f + R.F_SHIPS] / _SHIP_SCALE
        eta = state[f + R.F_LEFT] / 11.0
        if obs[o + 15] == 0.0 or eta < obs[o + 15]:
            obs[o + 15] = eta
    g = R.NUM_STARS * _STAR_OBS
    obs[g + 0] = turn / R.DEFAULT_MAX_TURNS
    obs[g + 1] = (state[R.MAX_TURNS_AT] - turn) / R.DEFAULT_MAX_TURNS
    obs[g + 2] = my_ru / 10.0
    obs[g + 3] = R.total_ships(state, player) / _SHIP_SCALE


@njit(cache=True)
def decode_action(state, player, action, orders, counts):
    """Turn an RL action (see the module doc) into ``player``'s orders; choices at stars that are not
    the player's or have no ships mean "stay"."""
    n = 0
    for s in range(R.NUM_STARS):
        b = R.star_at(s)
        dest = action[s]
        ships = state[b + R.S_SHIPS]
        if dest == s or dest < 0 or dest >= R.NUM_STARS or state[b + R.S_OWNER] != player or ships <= 0:
            continue
        share = min(max(action[R.NUM_STARS + s], 0), _SHARES - 1)
        orders[player, n, 0] = s
        orders[player, n, 1] = dest
        orders[player, n, 2] = (ships * (share + 1) + _SHARES - 1) // _SHARES
        n += 1
    counts[player] = n


# --- the JSON-ready view ------------------------------------------------------------------
def _owner_word(owner: int, player: int) -> str:
    """``"you"``, ``"enemy"``, ``"npc"`` (NPC or unowned) or ``"unknown"`` (never seen)."""
    if owner == R.UNKNOWN:
        return "unknown"
    if owner == R.NOBODY:
        return "npc"
    return "you" if owner == player else "enemy"


def star_view(game: _Game, player: int, s: int) -> dict[str, Any]:
    """Star ``s`` as ``player`` knows it: live for its own stars, last seen for the others."""
    state = game.state
    b, k = R.star_at(s), R.know_at(player, s)
    mine = state[b + R.S_OWNER] == player
    seen_owner = int(state[k + R.K_OWNER])
    seen_ships = None if seen_owner == R.UNKNOWN else int(state[k + R.K_SHIPS])
    view = {"letter": R.LETTERS[s], "name": R.STAR_NAMES[s], "x": int(state[b + R.S_X]), "y": int(state[b + R.S_Y]),
            "ru": int(state[b + R.S_RU]) if state[k + R.K_VISITED] else None,
            "owner": "you" if mine else _owner_word(seen_owner, player),
            "ships": int(state[b + R.S_SHIPS]) if mine else seen_ships,
            "seen_turn": game.turn if mine else (None if seen_owner == R.UNKNOWN else int(state[k + R.K_TURN])),
            "is_your_home": bool(state[b + R.S_HOME] == player),
            "enemy_home_candidate": bool(_in_enemy_block(state, player, s))}
    return view


def _own_fleets(game: _Game, player: int) -> list[dict[str, Any]]:
    """``player``'s fleets in hyperspace: from, to, ships, turns_left."""
    return [{k: f[k] for k in ("from", "to", "ships", "turns_left")} for f in game.fleets() if f["owner"] == player]


def _witnessed(row: np.ndarray, player: int) -> bool:
    """Whether ``player`` saw an event-log row: its own launches, losses, arrivals, rebellions and
    production, and the combats it fought in."""
    if row[R.E_KIND] == R.EV_COMBAT:
        return bool(row[R.E_A + player] >= 0)
    return bool(row[R.E_PLAYER] == player)


def _visible_events(game: _Game, player: int) -> list[dict[str, Any]]:
    """The last turn's events that ``player`` witnessed (see ``_witnessed``)."""
    return [event_dict(row) for row in game.log[1:game.log[0, 0] + 1] if _witnessed(row, player)]


def player_view(game: _Game, player: int) -> dict[str, Any]:
    """Everything ``player`` may know, JSON-ready: the turn, stars, own fleets, last turn's events
    and order errors, and the rules constants.

    >>> from tabletop_rl import SpaceConquestGame
    >>> v = player_view(SpaceConquestGame(seed=1), 0)
    >>> v["turn"], len(v["stars"]), sum(s["ru"] is not None for s in v["stars"])
    (1, 16, 1)
    """
    return {"turn": game.turn, "max_turns": game.max_turns, "you": player, "grid": [R.WIDTH, R.HEIGHT],
            "over": game.is_over, "winner": None if game.winner is None else _owner_word(game.winner, player),
            "stars": [star_view(game, player, s) for s in range(R.NUM_STARS)],
            "fleets": _own_fleets(game, player), "events": _visible_events(game, player),
            "errors": game.errors[player], "hyperspace": game.tally(player),
            "rules": _rules_summary(game)}


def _rules_summary(game: _Game) -> dict[str, Any]:
    """The constants a player plans with; ``route_loss[d - 1]`` is the chance of losing a fleet sent ``d`` turns
    under the game's loss model (the flat model's per-turn 2 % is also ``loss_per_turn``; ``None`` otherwise)."""
    model = R.LOSS_MODELS.index(game.loss_model)
    return {"loss_model": game.loss_model, "loss_per_turn": R.FLAT_LOSS if model == R.FLAT else None,
            "route_loss": [round(R.route_risk(model, d), 4) for d in range(1, max(R.WIDTH, R.HEIGHT))],
            "home_production": R.HOME_RU}


def fog_copy(game: _Game, player: int) -> _Game:
    """A copy of ``game`` that holds only what ``player`` knows: what a policy gets to read.

    Its own stars and fleets are live; every other star shows its last-seen owner and ships and, if
    visited, its RU (else RU 0); the other seat's fleets, knowledge, totals, home, order errors and
    unwitnessed events, the orders history, the seed and the random generator are gone. Observations,
    ``player_view``, the LLM tools and the map of ``player`` read the same from the copy as from the
    game, and two games that differ only in what ``player`` has not seen give identical copies. The
    copy is for reading, not for playing on.

    >>> from tabletop_rl import SpaceConquestGame
    >>> g = SpaceConquestGame(seed=3)
    >>> player_view(fog_copy(g, 0), 0) == player_view(g, 0), fog_copy(g, 0).home(1)
    (True, -1)
    """
    copy = type(game)(0, game.max_turns, game.loss_model)
    copy.seed = 0
    state, known = copy.state, game.state
    state[:] = 0
    for field in (R.TURN, R.STATUS, R.WINNER, R.MAX_TURNS_AT, R.LOSS_MODEL, R.END_REASON):
        state[field] = known[field]
    state[R.HOMES:R.HOMES + R.NUM_PLAYERS] = R.NOBODY
    state[R.HOMES + player] = known[R.HOMES + player]
    for s in range(R.NUM_STARS):
        _copy_star_as_known(known, state, player, s)
    mine = slice(R.know_at(player, 0), R.know_at(player, R.NUM_STARS))
    state[mine] = known[mine]
    tally = slice(R.TALLY + player * R.T_SIZE, R.TALLY + (player + 1) * R.T_SIZE)
    state[tally] = known[tally]
    fleets = [i for i in range(int(known[R.NUM_FLEETS_AT])) if known[R.fleet_at(i) + R.F_OWNER] == player]
    for j, i in enumerate(fleets):
        state[R.fleet_at(j):R.fleet_at(j + 1)] = known[R.fleet_at(i):R.fleet_at(i + 1)]
    state[R.NUM_FLEETS_AT] = len(fleets)
    rows = [row for row in game.log[1:game.log[0, 0] + 1] if _witnessed(row, player)]
    copy.log[0, 0] = len(rows)
    if rows:
        copy.log[1:len(rows) + 1] = rows
    copy.errors = [game.errors[p] if p == player else [] for p in range(R.NUM_PLAYERS)]
    return copy


def _copy_star_as_known(known: np.ndarray, state: np.ndarray, player: int, s: int) -> None:
    b, k = R.star_at(s), R.know_at(player, s)
    state[b + R.S_X], state[b + R.S_Y] = known[b + R.S_X], known[b + R.S_Y]
    state[b + R.S_HOME] = known[b + R.S_HOME] if known[b + R.S_HOME] == player else -1
    if known[b + R.S_OWNER] == player:
        state[b + R.S_RU:b + R.S_SHIPS + 1] = known[b + R.S_RU:b + R.S_SHIPS + 1]
        return
    seen = known[k + R.K_OWNER]
    state[b + R.S_RU] = known[b + R.S_RU] if known[k + R.K_VISITED] else 0
    state[b + R.S_OWNER] = seen if seen == 1 - player else R.NOBODY
    state[b + R.S_SHIPS] = known[k + R.K_SHIPS] if seen != R.UNKNOWN else 0


def _field_name(i: int) -> str:
    """What ``action[i]`` of an RL action chooses: ``the destination of star C``, ``the share of star C``."""
    return f"the {'destination' if i < R.NUM_STARS else 'share'} of star {R.LETTERS[i % R.NUM_STARS]}"


def rl_action(player: int, action: Any) -> np.ndarray:
    """``player``'s answer as an int64 RL action vector; a one-line ``ValueError`` when it is not one: another
    shape, not integers, or a field outside ``0..ACTION_NVEC - 1`` (named, since ``decode_action`` would read a
    share of 9 as 3 and a destination of 16 as "stay").

    >>> rl_action(0, [0] * 16 + [9] + [0] * 15)
    Traceback (most recent call last):
    ValueError: player 0's RL action: action[16], the share of star A, is 9, outside 0..3
    """
    try:
        vector = np.asarray(action)
        shape = str(vector.shape)
    except (ValueError, TypeError, RecursionError):  # a ragged list, or one nested too deeply
        vector, shape = np.empty(0, object), "(ragged)"
    if vector.shape != (ACTION_NVEC.size,) or vector.dtype.kind not in "iu":
        raise ValueError(f"player {player} answered {type(action).__name__} {shape}: neither JSON orders "
                         f"nor an RL action of {ACTION_NVEC.size} integers (MultiDiscrete)")
    outside = np.flatnonzero((vector < 0) | (vector >= ACTION_NVEC))
    if outside.size:
        i = int(outside[0])
        raise ValueError(f"player {player}'s RL action: action[{i}], {_field_name(i)}, is {int(vector[i])}, "
                         f"outside 0..{ACTION_NVEC[i] - 1}")
    return vector.astype(np.int64, copy=False)


def _moves_from_action(game: _Game, player: int, vector: np.ndarray) -> dict[str, Any]:
    """The JSON orders an RL action vector (``rl_action``) stands for (useful for logs and for people)."""
    orders = np.zeros((R.NUM_PLAYERS, R.MAX_ORDERS, 3), np.int64)
    counts = np.zeros(R.NUM_PLAYERS, np.int64)
    decode_action(game.state, player, vector, orders, counts)
    return {"moves": [move_dict(*orders[player, j]) for j in range(counts[player])]}


def policy_info(game: _Game, player: int) -> SeatView:
    """The ``info`` of ``player``'s policy: its ``SeatView``, whose game is the match as that player knows it
    (``fog_copy``), so no policy can read what its player has not seen."""
    seat = as_index(player, "seat", stop=R.NUM_PLAYERS)
    return SeatView(seat, seat, fog_copy(game, seat))


def as_orders(game: _Game, player: int, action: Any) -> dict[str, Any] | str:
    """A policy's answer as JSON-ready orders for ``game.step``: an RL action vector is decoded for
    ``player``; an orders object is copied through JSON and orders text is kept as it is, so a record
    of either replays the same. Orders that break the rules are left for ``check_orders`` to skip and
    report; ``ValueError`` only for an answer that is none of these forms (``rl_action``).

    >>> from tabletop_rl import SpaceConquestGame
    >>> as_orders(SpaceConquestGame(seed=1), 0, {"moves": []})
    {'moves': []}
    """
    if isinstance(action, (str, bytes)):
        return action.decode("utf-8", "replace") if isinstance(action, bytes) else action
    if isinstance(action, Mapping):
        require_bounded(action, f"player {player}'s orders")  # before json, which recurses into every value
        try:
            return json.loads(json.dumps(action))
        except (TypeError, ValueError) as e:
            raise ValueError(f"player {player}'s orders are not JSON data: {e}") from None
    return _moves_from_action(game, player, rl_action(player, action))
