"""A plain-Python Splendor reference, written from the rules in docs/splendor.md, to check the numba core against.

It works on JSON position dicts (docs/splendor.md) and never touches the core's state row, so the two
implementations share only the card data and the action table's order.

>>> from tabletop_rl import SplendorGame
>>> pos = SplendorGame(2, seed=1).to_dict()
>>> step(pos, legal_mask(pos).index(True))["ply"]
1
"""

from __future__ import annotations

import copy
import csv
from importlib import resources
from itertools import combinations
from typing import Any

COLOURS = ("white", "blue", "green", "red", "black")
TOKENS = COLOURS + ("gold",)
LEVELS = ("1", "2", "3")
TOKEN_LIMIT = 10
WIN_POINTS = 15
NOBLE_POINTS = 3
MAX_RESERVED = 3
SLOTS = 4
GEMS_PER_COLOUR = {2: 4, 3: 5, 4: 7}
GOLD_TOKENS = 5
NUM_ACTIONS = 72

Position = dict[str, Any]


def _read_csv(name: str) -> list[dict[str, str]]:
    with resources.files("tabletop_rl").joinpath("data", name).open(newline="") as f:
        return list(csv.DictReader(f))


# Card id = 0-based data row; each card: level (1..3), bonus colour, points, cost by colour.
CARDS: list[dict[str, Any]] = [
    {"level": int(r["level"]), "bonus": r["bonus"], "points": int(r["points"]),
     "cost": {c: int(r[c]) for c in COLOURS}}
    for r in _read_csv("cards.csv")
]
NOBLES: list[dict[str, int]] = [{c: int(r[c]) for c in COLOURS} for r in _read_csv("nobles.csv")]


def _action_table() -> list[tuple[str, Any]]:
    """(family, argument) per action id, in the published order of the action table."""
    table: list[tuple[str, Any]] = [("take", t) for t in combinations(COLOURS, 3)]
    table += [("take", t) for t in combinations(COLOURS, 2)]
    table += [("take", (c,)) for c in COLOURS]
    table += [("take2", c) for c in COLOURS]
    slots = [(lv, s) for lv in LEVELS for s in range(SLOTS)]
    table += [("reserve", x) for x in slots]
    table += [("reserve_deck", lv) for lv in LEVELS]
    table += [("buy", x) for x in slots]
    table += [("buy_reserved", i) for i in range(MAX_RESERVED)]
    table += [("noble", i) for i in range(5)]
    table += [("return", c) for c in TOKENS]
    table.append(("pass", None))
    assert len(table) == NUM_ACTIONS
    return table


ACTIONS = _action_table()


# --- derived facts ----------------------------------------------------------------------------
def bonuses(player: dict) -> dict[str, int]:
    """Bonus per colour from the player's bought cards."""
    out = dict.fromkeys(COLOURS, 0)
    for card in player["bought"]:
        out[CARDS[card]["bonus"]] += 1
    return out


def points(player: dict) -> int:
    """Prestige: bought-card points plus 3 per noble, e.g. ``points(pos["players"][0])``."""
    return sum(CARDS[c]["points"] for c in player["bought"]) + NOBLE_POINTS * len(player["nobles"])


def _held(player: dict) -> int:
    return sum(player["tokens"].values())


def _gold_needed(player: dict, card: int) -> int:
    """Gold the player must spend to buy ``card`` (coloured tokens cover what they can)."""
    bonus = bonuses(player)
    return sum(max(0, CARDS[card]["cost"][c] - bonus[c] - player["tokens"][c]) for c in COLOURS)


def _affordable(player: dict, card: int) -> bool:
    return _gold_needed(player, card) <= player["tokens"]["gold"]


def _qualifying_nobles(pos: Position, player: dict) -> list[int]:
    """Indices into the table's noble list that the player's bonuses meet."""
    bonus = bonuses(player)
    return [i for i, nb in enumerate(pos["nobles"]) if all(bonus[c] >= NOBLES[nb][c] for c in COLOURS)]


def is_over(pos: Position) -> bool:
    """True when the game has ended, by the rules or by reaching the ply cap."""
    return _ended_by_rules(pos) or is_truncated(pos)


def _ended_by_rules(pos: Position) -> bool:
    if pos["phase"] != "main":
        return False
    back_at_start = pos["final_round"] and pos["current_player"] == pos["start_player"]
    return back_at_start or pos["passes_in_a_row"] >= pos["num_players"]


def is_truncated(pos: Position) -> bool:
    cap = pos["max_plies"]
    return not _ended_by_rules(pos) and cap is not None and pos["ply"] >= cap


def winners(pos: Position) -> list[int]:
    """Seats sharing the win (most points, then fewest bought cards); ``[]`` unless ended by the rules."""
    if not _ended_by_rules(pos):
        return []
    ranks = [(points(pl), -len(pl["bought"])) for pl in pos["players"]]
    best = max(ranks)
    return [p for p, r in enumerate(ranks) if r == best]


# --- legality ---------------------------------------------------------------------------------
def _main_legal(pos: Position, player: dict, family: str, arg: Any) -> bool:
    bank = pos["bank"]
    if family == "take":
        in_stock = sum(1 for c in COLOURS if bank[c] > 0)
        return len(arg) == min(3, in_stock) and all(bank[c] > 0 for c in arg)
    if family == "take2":
        return bank[arg] >= 4
    can_reserve = len(player["reserved"]) < MAX_RESERVED
    if family == "reserve":
        return can_reserve and pos["market"][arg[0]][arg[1]] is not None
    if family == "reserve_deck":
        return can_reserve and len(pos["decks"][arg]) > 0
    if family == "buy":
        card = pos["market"][arg[0]][arg[1]]
        return card is not None and _affordable(player, card)
    if family == "buy_reserved":
        return arg < len(player["reserved"]) and _affordable(player, player["reserved"][arg]["card"])
    return False


def legal_mask(pos: Position) -> list[bool]:
    """72 booleans over the action table for the player to act; all False once the game is over."""
    mask = [False] * NUM_ACTIONS
    if is_over(pos):
        return mask
    player = pos["players"][pos["current_player"]]
    for a, (family, arg) in enumerate(ACTIONS):
        if pos["phase"] == "return":
            mask[a] = family == "return" and player["tokens"][arg] > 0
        elif pos["phase"] == "noble":
            mask[a] = family == "noble" and arg in _qualifying_nobles(pos, player)
        else:
            mask[a] = _main_legal(pos, player, family, arg)
    if pos["phase"] == "main" and not any(mask):
        mask[-1] = True
    return mask


# --- effects ----------------------------------------------------------------------------------
def _move_token(src: dict, dst: dict, colour: str, count: int = 1) -> None:
    src[colour] -= count
    dst[colour] += count


def _take_from_market(pos: Position, level: str, slot: int) -> int:
    """Remove a face-up card and refill its slot at once from the same level's deck (None if empty)."""
    card = pos["market"][level][slot]
    deck = pos["decks"][level]
    pos["market"][level][slot] = deck.pop(0) if deck else None
    return card


def _reserve(pos: Position, player: dict, card: int, blind: bool) -> None:
    player["reserved"].append({"card": card, "blind": blind})
    if pos["bank"]["gold"] > 0:
        _move_token(pos["bank"], player["tokens"], "gold")


def _buy(pos: Position, player: dict, card: int) -> None:
    """Pay coloured tokens first and gold for the shortfall; spent tokens go back to the bank."""
    bonus = bonuses(player)
    for c in COLOURS:
        need = max(0, CARDS[card]["cost"][c] - bonus[c])
        coloured = min(need, player["tokens"][c])
        _move_token(player["tokens"], pos["bank"], c, coloured)
        _move_token(player["tokens"], pos["bank"], "gold", need - coloured)
    player["bought"] = sorted(player["bought"] + [card])


def _apply_main(pos: Position, player: dict, family: str, arg: Any) -> None:
    if family == "take":
        for c in arg:
            _move_token(pos["bank"], player["tokens"], c)
    elif family == "take2":
        _move_token(pos["bank"], player["tokens"], arg, 2)
    elif family == "reserve":
        _reserve(pos, player, _take_from_market(pos, *arg), blind=False)
    elif family == "reserve_deck":
        _reserve(pos, player, pos["decks"][arg].pop(0), blind=True)
    elif family == "buy":
        _buy(pos, player, _take_from_market(pos, *arg))
    elif family == "buy_reserved":
        _buy(pos, player, player["reserved"].pop(arg)["card"])


def _take_noble(pos: Position, player: dict, index: int) -> None:
    player["nobles"] = sorted(player["nobles"] + [pos["nobles"].pop(index)])


def _end_turn(pos: Position) -> None:
    if any(points(pl) >= WIN_POINTS for pl in pos["players"]):
        pos["final_round"] = True
    pos["phase"] = "main"
    pos["current_player"] = (pos["current_player"] + 1) % pos["num_players"]


def _after_action(pos: Position, player: dict) -> None:
    """End-of-turn steps: token limit, then the noble visit, then hand the turn on."""
    if _held(player) > TOKEN_LIMIT:
        pos["phase"] = "return"
        return
    qualifying = _qualifying_nobles(pos, player)
    if len(qualifying) >= 2:
        pos["phase"] = "noble"
        return
    if qualifying:
        _take_noble(pos, player, qualifying[0])
    _end_turn(pos)


def step(pos: Position, action: int) -> Position:
    """The position after ``action`` (which must be legal); ``pos`` is left untouched."""
    if not legal_mask(pos)[action]:
        raise ValueError(f"reference: action {action} is not legal here")
    pos = copy.deepcopy(pos)
    player = pos["players"][pos["current_player"]]
    family, arg = ACTIONS[action]
    pos["ply"] += 1
    if family == "return":
        _move_token(player["tokens"], pos["bank"], arg)
        _after_action(pos, player)
    elif family == "noble":
        _take_noble(pos, player, arg)
        _end_turn(pos)
    else:
        pos["passes_in_a_row"] = pos["passes_in_a_row"] + 1 if family == "pass" else 0
        _apply_main(pos, player, family, arg)
        _after_action(pos, player)
    return pos
