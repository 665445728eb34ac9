"""The JSON orders form and its validation, as docs/space_conquest.md §9 says.

``{"moves": [{"from": "A", "to": "F", "ships": 3}, ...]}`` (a dict or its JSON text; extra keys in a
move, such as a ``rationale``, are ignored). Stars are named by letter or by star name, in any case.

- Each move is checked alone and skipped when bad: not an object, unknown star, origin not yours,
  origin = destination, ships not a positive integer, more ships than the origin holds, more than
  ``MAX_ORDERS`` moves.
- If the moves that passed those checks together send more ships out of one star than it holds (an
  over-committed star), the whole order set is rejected for the turn.

>>> from tabletop_rl.games.space_conquest import rules as R
>>> state, _ = R.new_game(seed=3)
>>> home = R.LETTERS[R.home(state, 0)]
>>> check = check_orders(state, 0, {"moves": [{"from": home, "to": "A" if home != "A" else "B", "ships": 3},
...                                             {"from": home, "to": home, "ships": 1}]})
>>> len(check.accepted), check.errors[0]["index"], check.rejected_all
(1, 1, False)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tabletop_rl.core.game import quote
from tabletop_rl.games.space_conquest import rules as R

__all__ = ["MOVE_HELP", "OrderCheck", "check_orders", "describe_orders", "event_dict", "move_dict", "possible_event",
           "star_index"]

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


def _parse_moves(orders: Any) -> list[Any]:
    """The list of moves in an orders object or its JSON text; ``ValueError`` when the shape is wrong."""
    if isinstance(orders, (str, bytes)):
        try:
            orders = json.loads(orders)
        except json.JSONDecodeError as e:
            raise ValueError(f"orders are not valid JSON: {e.msg} at position {e.pos}") from None
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
    base = R.star_at(origin)
    if state[base + R.S_OWNER] != player:
        raise ValueError(f"origin {R.LETTERS[origin]} is not yours")
    if ships > state[base + R.S_SHIPS]:
        raise ValueError(f"{R.LETTERS[origin]} has {state[base + R.S_SHIPS]} ships, cannot send {ships}")
    return origin, dest, int(ships)


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
    sent: dict[int, int] = {}
    for origin, _, ships in check.accepted:
        sent[origin] = sent.get(origin, 0) + ships
    for origin, total in sent.items():
        held = int(state[R.star_at(origin) + R.S_SHIPS])
        if total > held:
            check.errors.append({"index": None, "message": f"star {R.LETTERS[origin]} is over-committed: moves send "
                                 f"{total} ships, it holds {held}; all orders rejected this turn"})
            check.rejected_all = True
    if check.rejected_all:
        check.accepted = []
    return check


def describe_orders(orders: Any) -> str:
    """Orders in short, for logs and replays: ``A->F 3, B->C 2`` (``no orders`` when empty).

    >>> describe_orders({"moves": [{"from": "A", "to": "F", "ships": 3}]}), describe_orders(None)
    ('A->F 3', 'no orders')
    """
    try:
        moves = _parse_moves({"moves": []} if orders is None else orders)
    except ValueError:
        return f"unreadable orders {str(orders)[:60]!r}"
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


def possible_event(row: list[int]) -> bool:
    """Whether an event-log row holds values ``event_dict`` can read (see rules.py for the columns)."""
    kind, star, player, a, b, c, d, e = (row[k] for k in (R.E_KIND, R.E_STAR, R.E_PLAYER, R.E_A, R.E_B, R.E_C,
                                                           R.E_D, R.E_E))
    if not (0 <= kind < len(R.EVENT_KINDS) and 0 <= star < R.NUM_STARS and player in (R.NOBODY, 0, 1)):
        return False
    if kind in (R.EV_LAUNCH, R.EV_LOST, R.EV_ARRIVE):
        return 0 <= a < R.NUM_STARS and 0 <= b < R.NUM_STARS and c > 0
    if kind == R.EV_COMBAT:
        return min(a, b, c) >= -1 and d in (R.NOBODY, 0, 1) and e >= 0
    return True


MOVE_HELP = """Commands:
  move 3 ships from A to B   send 5 from D to F   attack C with 10 from A
  orders   (your orders so far)    cancel   (drop them)
  pass / done   (end your turn)    status   (map and summary again)
  save FILE     quit               help
Map: 2B = star B with RU 2, ?B = RU unknown; * yours, ! enemy (as last seen)."""
