"""Splendor's JSON positions: a state row <-> the documented JSON shape (docs/splendor.md), with validation.
The move names a person types are read by ``actions.move_id``.

>>> from tabletop_rl.games.splendor.rules import new_states, reset_state
>>> s = new_states(1)[0]; reset_state(s, 7, 2, 1000)
>>> bool((position_from_json(position_to_dict(s)) == s)[:-4].all())  # all but the playout RNG words
True
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from tabletop_rl.core.text import quote
from tabletop_rl.games.splendor import rules as R

__all__ = ["bought_cards", "deck_cards", "market_row", "player_nobles", "position_from_json", "position_to_dict",
           "reserved_cards", "table_nobles"]

_TOP_KEYS = ("num_players", "current_player", "start_player", "phase", "final_round", "ply",
             "passes_in_a_row", "max_plies", "bank", "market", "decks", "nobles", "players")
_PLAYER_KEYS = ("tokens", "bought", "reserved", "nobles")
_LEVELS = ("1", "2", "3")


def _tokens_to_dict(values) -> dict[str, int]:
    return {name: int(v) for name, v in zip(R.TOKEN_NAMES, values)}


def bought_cards(state: np.ndarray, p: int) -> list[int]:
    """Ids of the cards player ``p`` has bought, ascending."""
    words = state[R.BOUGHT_BITS + p * R.BOUGHT_WORDS: R.BOUGHT_BITS + (p + 1) * R.BOUGHT_WORDS]
    return [c for c in range(R.NUM_CARDS) if (int(words[c // R.BITS_PER_WORD]) >> (c % R.BITS_PER_WORD)) & 1]


def player_nobles(state: np.ndarray, p: int) -> list[int]:
    bits = int(state[R.player_base(p) + R.P_NOBLES])
    return [i for i in range(R.NUM_NOBLES) if (bits >> i) & 1]


def reserved_cards(state: np.ndarray, p: int) -> list[tuple[int, bool]]:
    """``(card, blind)`` for each of player ``p``'s reserved cards, in reserve order."""
    b = R.player_base(p)
    blind = int(state[b + R.P_BLIND])
    return [(int(state[b + R.P_RESERVED + i]), bool((blind >> i) & 1)) for i in range(int(state[b + R.P_NRESERVED]))]


def deck_cards(state: np.ndarray, level: int) -> list[int]:
    """Cards left in the deck of ``level`` (1..3), top first."""
    lv = level - 1
    start = R.DECK + R.LEVEL_START[lv]
    return [int(c) for c in state[start + int(state[R.DECK_DRAWN + lv]): start + R.LEVEL_SIZE[lv]]]


def table_nobles(state: np.ndarray) -> list[int]:
    return [int(x) for x in state[R.TABLE_NOBLES: R.TABLE_NOBLES + R.MAX_TABLE_NOBLES] if x >= 0]


def market_row(state: np.ndarray, level: int) -> list[int | None]:
    at = R.MARKET + (level - 1) * R.SLOTS_PER_LEVEL
    return [int(c) if c >= 0 else None for c in state[at: at + R.SLOTS_PER_LEVEL]]


def position_to_dict(state: np.ndarray) -> dict[str, Any]:
    """The JSON-ready dict of a position (decks top first; points and bonuses are derived, not stored)."""
    n = int(state[R.NUM_PLAYERS_AT])
    cap = R.get_wide(state, R.MAX_PLIES_AT)
    players = []
    for p in range(n):
        b = R.player_base(p)
        players.append({
            "tokens": _tokens_to_dict(state[b + R.P_TOKENS: b + R.P_TOKENS + 6]),
            "bought": bought_cards(state, p),
            "reserved": [{"card": c, "blind": bl} for c, bl in reserved_cards(state, p)],
            "nobles": player_nobles(state, p),
        })
    return {
        "num_players": n,
        "current_player": int(state[R.CURRENT]),
        "start_player": int(state[R.START]),
        "phase": R.PHASE_NAMES[int(state[R.PHASE])],
        "final_round": bool(state[R.FINAL_ROUND]),
        "ply": int(R.get_wide(state, R.PLY)),
        "passes_in_a_row": int(state[R.PASSES]),
        "max_plies": None if cap < 0 else int(cap),
        "bank": _tokens_to_dict(state[R.BANK: R.BANK + 6]),
        "market": {lv: market_row(state, int(lv)) for lv in _LEVELS},
        "decks": {lv: deck_cards(state, int(lv)) for lv in _LEVELS},
        "nobles": table_nobles(state),
        "players": players,
    }


def _position_to_json(state: np.ndarray) -> str:
    return json.dumps(position_to_dict(state), separators=(",", ":"))


# --- loading -------------------------------------------------------------------------
def _fail(field: str, why: str) -> None:
    raise ValueError(f"invalid position: {field}: {why}")


def _int(value: Any, field: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(field, f"expected an integer, got {quote(value)}")
    if not lo <= value <= hi:
        _fail(field, f"{quote(value)} is outside {lo}..{hi}")
    return value


def _keys(d: Any, allowed: tuple[str, ...], field: str, required: bool = True) -> dict:
    if not isinstance(d, dict):
        _fail(field, f"expected an object, got {type(d).__name__}")
    unknown = [k for k in d if k not in allowed]
    if unknown:
        _fail(field, f"unknown key {quote(unknown[0])} (known: {', '.join(allowed)})")
    missing = [k for k in allowed if k not in d]
    if required and missing:
        _fail(field, f"missing key {quote(missing[0])}")
    return d


def _tokens(d: Any, field: str) -> list[int]:
    _keys(d, R.TOKEN_NAMES, field)
    return [_int(d[c], f"{field}.{c}", 0, 99) for c in R.TOKEN_NAMES]


def _card_list(value: Any, field: str) -> list[int]:
    if not isinstance(value, list):
        _fail(field, "expected a list of card ids")
    return [_int(c, f"{field}[{i}]", 0, R.NUM_CARDS - 1) for i, c in enumerate(value)]


def _position_from_dict(pos: Any) -> np.ndarray:
    """Build and validate a state row from a position dict; ``ValueError`` names the bad field."""
    _keys(pos, _TOP_KEYS, "position")
    n = _int(pos["num_players"], "num_players", 2, R.MAX_PLAYERS)
    state = np.zeros(R.STATE_SIZE, R.STATE_DTYPE)
    state[R.NUM_PLAYERS_AT] = n
    state[R.CURRENT] = _int(pos["current_player"], "current_player", 0, n - 1)
    state[R.START] = _int(pos["start_player"], "start_player", 0, n - 1)
    if pos["phase"] not in R.PHASE_NAMES:
        _fail("phase", f"{quote(pos['phase'])} is not one of {', '.join(R.PHASE_NAMES)}")
    state[R.PHASE] = R.PHASE_NAMES.index(pos["phase"])
    if not isinstance(pos["final_round"], bool):
        _fail("final_round", "expected true or false")
    state[R.FINAL_ROUND] = pos["final_round"]
    state[R.PASSES] = _int(pos["passes_in_a_row"], "passes_in_a_row", 0, n)
    cap = pos["max_plies"]
    cap = -1 if cap is None else _int(cap, "max_plies", 1, R.MAX_PLY_VALUE)
    R.set_wide(state, R.MAX_PLIES_AT, cap)
    ply = _int(pos["ply"], "ply", 0, R.MAX_PLY_VALUE)
    R.set_wide(state, R.PLY, ply)
    state[R.BANK: R.BANK + 6] = _tokens(pos["bank"], "bank")

    where: dict[int, str] = {}

    def place(card: int, field: str) -> None:
        if card in where:
            _fail(field, f"card {card} is also in {where[card]}")
        where[card] = field

    cards, nobles = R.tables()
    _keys(pos["market"], _LEVELS, "market")
    _keys(pos["decks"], _LEVELS, "decks")
    for lv in range(3):
        row = pos["market"][_LEVELS[lv]]
        if not isinstance(row, list) or len(row) != R.SLOTS_PER_LEVEL:
            _fail(f"market.{lv + 1}", "expected a list of 4 card ids or null")
        deck = _card_list(pos["decks"][_LEVELS[lv]], f"decks.{lv + 1}")
        if len(deck) > R.LEVEL_SIZE[lv]:
            _fail(f"decks.{lv + 1}", "too many cards")
        for s, card in enumerate(row):
            field = f"market.{lv + 1}[{s}]"
            if card is None:
                if deck:
                    _fail(field, f"empty slot while the level {lv + 1} deck still has cards")
                state[R.MARKET + lv * 4 + s] = -1
                continue
            _int(card, field, 0, R.NUM_CARDS - 1)
            if R.level_of(card) != lv:
                _fail(field, f"card {card} is not a level {lv + 1} card")
            place(card, field)
            state[R.MARKET + lv * 4 + s] = card
        start = R.DECK + R.LEVEL_START[lv]
        drawn = R.LEVEL_SIZE[lv] - len(deck)
        state[start: start + drawn] = -1
        for i, card in enumerate(deck):
            field = f"decks.{lv + 1}[{i}]"
            if R.level_of(card) != lv:
                _fail(field, f"card {card} is not a level {lv + 1} card")
            place(card, field)
            state[start + drawn + i] = card
        state[R.DECK_DRAWN + lv] = drawn

    table = pos["nobles"]
    if not isinstance(table, list) or len(table) > R.MAX_TABLE_NOBLES:
        _fail("nobles", "expected a list of at most 5 noble ids")
    noble_at: dict[int, str] = {}

    def place_noble(nb: Any, field: str) -> int:
        nb = _int(nb, field, 0, R.NUM_NOBLES - 1)
        if nb in noble_at:
            _fail(field, f"noble {nb} is also in {noble_at[nb]}")
        noble_at[nb] = field
        return nb

    state[R.TABLE_NOBLES: R.TABLE_NOBLES + R.MAX_TABLE_NOBLES] = -1
    for i, nb in enumerate(table):
        state[R.TABLE_NOBLES + i] = place_noble(nb, f"nobles[{i}]")

    players = pos["players"]
    if not isinstance(players, list) or len(players) != n:
        _fail("players", f"expected a list of {n} players")
    for p in range(R.MAX_PLAYERS):
        state[R.player_base(p) + R.P_RESERVED: R.player_base(p) + R.P_RESERVED + 3] = -1
    for p, pl in enumerate(players):
        f = f"players[{p}]"
        _keys(pl, _PLAYER_KEYS, f)
        b = R.player_base(p)
        state[b + R.P_TOKENS: b + R.P_TOKENS + 6] = _tokens(pl["tokens"], f"{f}.tokens")
        for i, card in enumerate(_card_list(pl["bought"], f"{f}.bought")):
            place(card, f"{f}.bought[{i}]")
            state[b + R.P_BONUS + cards[card, R.CARD_BONUS]] += 1
            state[b + R.P_POINTS] += cards[card, R.CARD_POINTS]
            state[b + R.P_BOUGHT] += 1
            state[R.BOUGHT_BITS + p * R.BOUGHT_WORDS + card // R.BITS_PER_WORD] |= 1 << (card % R.BITS_PER_WORD)
        res = pl["reserved"]
        if not isinstance(res, list) or len(res) > R.MAX_RESERVED:
            _fail(f"{f}.reserved", "expected a list of at most 3 reserved cards")
        for i, entry in enumerate(res):
            rf = f"{f}.reserved[{i}]"
            _keys(entry, ("card", "blind"), rf)
            card = _int(entry["card"], f"{rf}.card", 0, R.NUM_CARDS - 1)
            if not isinstance(entry["blind"], bool):
                _fail(f"{rf}.blind", "expected true or false")
            place(card, rf)
            state[b + R.P_RESERVED + i] = card
            if entry["blind"]:
                state[b + R.P_BLIND] |= 1 << i
        state[b + R.P_NRESERVED] = len(res)
        if not isinstance(pl["nobles"], list):
            _fail(f"{f}.nobles", "expected a list of noble ids")
        for i, nb in enumerate(pl["nobles"]):
            nb = place_noble(nb, f"{f}.nobles[{i}]")
            state[b + R.P_NOBLES] |= 1 << nb
            state[b + R.P_POINTS] += R.NOBLE_POINTS

    _check_totals(state, n, where, noble_at)
    _check_phase(state, n, nobles)
    state[R.STATUS] = _status_of(state)
    R.seed_rng(state, 0)
    return state


def _check_totals(state: np.ndarray, n: int, where: dict, noble_at: dict) -> None:
    if len(where) != R.NUM_CARDS:
        missing = min(set(range(R.NUM_CARDS)) - set(where))
        _fail("cards", f"card {missing} is nowhere (each of the 90 cards must be in a deck, the market, "
                       "a reserve or a player's bought cards)")
    if len(noble_at) != n + 1:
        _fail("nobles", f"{len(noble_at)} nobles on the table and with players; a {n}-player game has {n + 1}")
    for c, name in enumerate(R.TOKEN_NAMES):
        total = int(state[R.BANK + c]) + sum(int(state[R.player_base(p) + c]) for p in range(n))
        expected = R.GOLD_TOKENS if c == R.GOLD else R.GEMS_PER_COLOUR[n]
        if total != expected:
            _fail(f"bank.{name}", f"bank and players hold {total} {name}, a {n}-player game has {expected}")


def _check_phase(state: np.ndarray, n: int, nobles: np.ndarray) -> None:
    p = int(state[R.CURRENT])
    held = int(R.tokens_held(state, p))
    phase = int(state[R.PHASE])
    if phase == R.RETURN and held <= R.TOKEN_LIMIT:
        _fail("phase", f"'return' but player {p} holds {held} tokens (10 or fewer)")
    if phase != R.RETURN and held > R.TOKEN_LIMIT:
        _fail("phase", f"player {p} holds {held} tokens, so the phase must be 'return'")
    qualifying = sum(1 for nb in table_nobles(state) if R.noble_qualifies(state, p, nb, nobles))
    if phase == R.NOBLE and qualifying < 2:
        _fail("phase", f"'noble' but player {p} qualifies for {qualifying} noble(s) on the table (needs 2+)")
    high = [q for q in range(n) if state[R.player_base(q) + R.P_POINTS] >= R.WIN_POINTS]
    if phase == R.MAIN and high and not state[R.FINAL_ROUND]:
        _fail("final_round", f"player {high[0]} has 15+ points, so the final round has begun")
    if state[R.FINAL_ROUND] and not high:
        _fail("final_round", "true but no player has 15 points")
    if state[R.FINAL_ROUND] and phase != R.MAIN and state[R.CURRENT] == state[R.START]:
        _fail("phase", "the final round is over once play is back at start_player, so the phase must be 'main'")
    for q in range(n):
        if q != p and R.tokens_held(state, q) > R.TOKEN_LIMIT:
            _fail(f"players[{q}].tokens", f"{int(R.tokens_held(state, q))} tokens; only the player to act "
                                          "may hold more than 10")
        for nb in player_nobles(state, q):
            if not R.noble_qualifies(state, q, nb, nobles):
                _fail(f"players[{q}].nobles", f"noble {nb} needs bonuses player {q} does not have")


def _status_of(state: np.ndarray) -> int:
    """PLAYING, OVER or TRUNCATED, derived from the position alone."""
    n = int(state[R.NUM_PLAYERS_AT])
    main = state[R.PHASE] == R.MAIN
    if main and ((state[R.FINAL_ROUND] and state[R.CURRENT] == state[R.START]) or state[R.PASSES] >= n):
        return R.OVER
    cap = R.get_wide(state, R.MAX_PLIES_AT)
    if cap >= 0 and R.get_wide(state, R.PLY) >= cap:
        return R.TRUNCATED
    return R.PLAYING


def position_from_json(text_or_dict: str | bytes | dict) -> np.ndarray:
    if isinstance(text_or_dict, dict):
        pos: Any = text_or_dict
    else:
        try:
            pos = json.loads(text_or_dict)
        except RecursionError:
            raise ValueError("invalid position: JSON nested too deeply") from None
        except (TypeError, json.JSONDecodeError) as e:
            raise ValueError(f"invalid position: not valid JSON ({quote(str(e))})") from None
    try:
        return _position_from_dict(pos)
    except RecursionError:
        raise ValueError("invalid position: nested too deeply") from None
