"""The JSON orders form and its validation, as docs/space_conquest.md §9 says.

``{"moves": [{"from": "A", "to": "F", "ships": 3}, ...]}`` (a dict or its JSON text; extra keys in a
move, such as a ``rationale``, are ignored). Stars are named by letter or by star name, in any case.

- Each move is checked alone and skipped when bad: not an object, unknown star, origin not yours,
  origin = destination, ships not a positive integer, more than ``MAX_ORDERS`` moves.
- If the moves that passed those checks send more ships out of one star than it holds (an over-committed
  star; one move asking too many is enough), the whole order set is rejected for the turn: the rule of
  the spec (its §5.6; docs/space_conquest.md §9).
- Orders no reader should follow all the way are rejected whole, in one error, before any move is read:
  text longer than ``MAX_ORDERS_TEXT`` characters, values nested deeper than ``MAX_ORDERS_DEPTH``, or more
  than ``MAX_ORDERS_VALUES`` values in all (``require_bounded``), so no answer costs unbounded time or memory.

>>> from tabletop_rl.games.space_conquest import rules as R
>>> state, _ = R.new_game(seed=3)
>>> home = R.LETTERS[R.home(state, 0)]
>>> check = check_orders(state, 0, {"moves": [{"from": home, "to": "A" if home != "A" else "B", "ships": 3},
...                                             {"from": home, "to": home, "ships": 1}]})
>>> len(check.accepted), check.errors[0]["index"], check.rejected_all
(1, 1, False)
>>> check = check_orders(state, 0, {"moves": [{"from": home, "to": "A" if home != "A" else "B", "ships": 9}]})
>>> check.accepted, check.rejected_all, check.overcommitted == f"{home} has 4 ships, cannot send 9"
([], True, True)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tabletop_rl.core.text import quote
from tabletop_rl.games.space_conquest import rules as R

__all__ = ["MAX_ORDERS_DEPTH", "MAX_ORDERS_TEXT", "MAX_ORDERS_VALUES", "MOVE_HELP", "OrderCheck", "check_orders",
           "describe_orders", "event_dict", "move_dict", "require_bounded", "star_index"]

#: Bounds on one seat's orders, far above what any real set needs (32 moves of a few keys each, a rationale).
MAX_ORDERS_TEXT = 1_000_000  # characters of JSON text
MAX_ORDERS_DEPTH = 16  # levels of objects and lists: {"moves": [{...}]} is three
MAX_ORDERS_VALUES = 10_000  # entries of every object and list together

_BY_NAME = {name.lower(): i for i, name in enumerate(R.STAR_NAMES)}
_BY_NAME.update({letter.lower(): i for i, letter in enumerate(R.LETTERS)})


@dataclass
class OrderCheck:
    """The outcome of validating one player's orders: moves that will execute as
    ``(origin, destination, ships)`` star indices, and errors ``{"index": i or None, "message": ...}``
    (``index`` None: an error about the whole set)."""

    accepted: list[tuple[int, int, int]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    rejected_all: bool = False
    #: why the set is over-committed (``A has 4 ships, cannot send 5 (2 + 3)``), "" when it is not; the
    #: terminal words the consequence itself, since there the set is a draft the player may type again
    overcommitted: str = ""

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"ok", "accepted": [{"from", "to", "ships"}], "errors", "rejected_all"}``."""
        return {"ok": self.ok, "rejected_all": self.rejected_all, "errors": self.errors,
                "accepted": [move_dict(o, d, n) for o, d, n in self.accepted]}


def move_dict(origin: int, dest: int, ships: int) -> dict[str, Any]:
    """``{"from": "A", "to": "F", "ships": 3}`` for star indices."""
    return {"from": R.LETTERS[origin], "to": R.LETTERS[dest], "ships": int(ships)}


def star_index(name: Any) -> int:
    """The star index of a letter or star name (any case); ``ValueError`` naming the bad value.

    >>> star_index("c"), star_index("Deneb")
    (2, 3)
    """
    if isinstance(name, str) and name.strip().lower() in _BY_NAME:
        return _BY_NAME[name.strip().lower()]
    raise ValueError(f"unknown star {quote(name)} (stars are A-{R.LETTERS[-1]})")


def require_bounded(value: Any, what: str = "orders") -> None:
    """``ValueError`` naming ``what`` when ``value`` nests objects and lists deeper than ``MAX_ORDERS_DEPTH`` or
    holds more than ``MAX_ORDERS_VALUES`` entries: walked without recursion, stopping at the first bound passed,
    so the check itself costs at most the bounds.

    >>> require_bounded({"moves": [[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]})
    Traceback (most recent call last):
    ValueError: orders nest deeper than 16 levels
    """
    stack, count = [(value, 1)], 0
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, (Mapping, list, tuple)):
            continue
        if depth > MAX_ORDERS_DEPTH:
            raise ValueError(f"{what} nest deeper than {MAX_ORDERS_DEPTH} levels")
        count += len(item)
        if count > MAX_ORDERS_VALUES:
            raise ValueError(f"{what} hold more than {MAX_ORDERS_VALUES} values")
        stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, Mapping) else item))


def _parse_moves(orders: Any) -> list[Any]:
    """The list of moves in an orders object or its JSON text; ``ValueError`` when the shape is wrong or the
    orders pass a bound (module doc)."""
    if isinstance(orders, (str, bytes)):
        if len(orders) > MAX_ORDERS_TEXT:
            raise ValueError(f"orders text is {len(orders)} characters, more than {MAX_ORDERS_TEXT}")
        try:
            orders = json.loads(orders)
        except RecursionError:  # deeper than the bound in any case
            raise ValueError(f"orders nest deeper than {MAX_ORDERS_DEPTH} levels") from None
        except json.JSONDecodeError as e:
            raise ValueError(f"orders are not valid JSON: {e.msg} at position {e.pos}") from None
    require_bounded(orders)
    if isinstance(orders, dict) and isinstance(orders.get("moves"), list):
        return orders["moves"]
    raise ValueError('orders must be an object {"moves": [{"from": "A", "to": "F", "ships": 3}, ...]}')


def _check_move(state: np.ndarray, player: int, move: Any) -> tuple[int, int, int]:
    """One move as star indices and ships, or ``ValueError`` with the reason it is skipped."""
    if not isinstance(move, dict) or not {"from", "to", "ships"} <= set(move):
        raise ValueError('a move is an object with "from", "to" and "ships"')
    origin, dest = star_index(move["from"]), star_index(move["to"])
    ships = move["ships"]
    if isinstance(ships, bool) or not isinstance(ships, (int, np.integer)) or ships <= 0:
        raise ValueError(f"ships must be a positive integer, got {quote(ships)}")
    if origin == dest:
        raise ValueError(f"origin and destination are both {R.LETTERS[origin]}")
    if state[R.star_at(origin) + R.S_OWNER] != player:
        raise ValueError(f"origin {R.LETTERS[origin]} is not yours")
    return origin, dest, int(ships)  # too many ships is over-commitment: the whole set goes (_over_commitment)


def check_orders(state: np.ndarray, player: int, orders: Any) -> OrderCheck:
    """Validate ``orders`` for seat ``player`` against the position in ``state`` (see the module doc)."""
    check = OrderCheck()
    try:
        moves = _parse_moves(orders)
    except ValueError as e:
        check.errors.append({"index": None, "message": str(e)})
        check.rejected_all = True
        return check
    for i, move in enumerate(moves):
        if len(check.accepted) == R.MAX_ORDERS:
            check.errors.append({"index": i, "message": f"more than {R.MAX_ORDERS} moves in one turn"})
            continue
        try:
            check.accepted.append(_check_move(state, player, move))
        except ValueError as e:
            check.errors.append({"index": i, "message": str(e)})
    check.overcommitted = _over_commitment(state, check.accepted)
    if check.overcommitted:
        check.errors.append({"index": None,
                             "message": f"{check.overcommitted}: over-committed, all orders rejected this turn"})
        check.rejected_all = True
        check.accepted = []
    return check


def _over_commitment(state: np.ndarray, moves: list[tuple[int, int, int]]) -> str:
    """Why ``moves`` send more ships out of some star than it holds (the first such star, in the order the
    moves name them), or "" when no star is over-committed."""
    sent: dict[int, list[int]] = {}
    for origin, _, ships in moves:
        sent.setdefault(origin, []).append(ships)
    for origin, parts in sent.items():
        held, total = int(state[R.star_at(origin) + R.S_SHIPS]), sum(parts)
        if total > held:
            terms = f" ({' + '.join(map(str, parts))})" if len(parts) > 1 else ""
            return f"{R.LETTERS[origin]} has {held} ships, cannot send {total}{terms}"
    return ""


def describe_orders(orders: Any) -> str:
    """Orders in short, for logs and replays: ``A->F 3, B->C 2`` (``no orders`` when empty).

    >>> describe_orders({"moves": [{"from": "A", "to": "F", "ships": 3}]}), describe_orders(None)
    ('A->F 3', 'no orders')
    """
    try:
        moves = _parse_moves({"moves": []} if orders is None else orders)
    except ValueError:
        return f"unreadable orders {quote(orders, 60)}"
    return ", ".join(f"{m.get('from')}->{m.get('to')} {m.get('ships')}" if isinstance(m, dict) else repr(m)
                     for m in moves) or "no orders"


def event_dict(row: np.ndarray) -> dict[str, Any]:
    """One event-log row as a dict (stars as letters, seats as ints, None for 'nobody'/'absent')."""
    kind = R.EVENT_KINDS[int(row[R.E_KIND])]
    out: dict[str, Any] = {"kind": kind, "turn": int(row[R.E_TURN]), "star": R.LETTERS[int(row[R.E_STAR])]}
    a, b, c, d, e = (int(v) for v in row[R.E_A:R.E_E + 1])
    player = int(row[R.E_PLAYER])
    if kind in ("launch", "lost", "arrive"):
        out.update(player=player, **move_dict(a, b, c), distance=d)
    elif kind == "combat":
        out.update(owner_before=None if player == R.NOBODY else player,
                   forces=[None if f < 0 else f for f in (a, b)], npc=None if c < 0 else c,
                   owner_after=None if d == R.NOBODY else d, ships_after=e)
    elif kind == "rebellion":
        out.update(player=player, garrison=a, rebels=b, ships_after=c)
    else:
        out.update(player=player, ships=a)
    return out


MOVE_HELP = """Commands:
  move 3 ships from A to B   send 5 from D to F   attack C with 10 from A
  orders   (your orders so far)    cancel   (drop them)
  pass / done   (end your turn)    status   (map and summary again)
  save FILE     quit               help
Map: 2B = star B with RU 2, ?B = RU unknown; * yours, ! enemy (as last seen)."""
