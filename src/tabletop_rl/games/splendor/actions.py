"""The fixed Splendor action table: id <-> meaning <-> text name (ids and names are public API).

>>> move_name(25), move_id("buy:2.1")
('take2:white', 50)
"""

from __future__ import annotations

from tabletop_rl.core.game import as_index, quote
from tabletop_rl.games.splendor import rules as R

__all__ = ["ACTION_NAMES", "MOVE_HELP", "NUM_ACTIONS", "as_action", "kind", "move_id", "move_name"]

NUM_ACTIONS = R.NUM_ACTIONS


def _build_names() -> tuple[str, ...]:
    c = R.COLOURS
    names = [f"take:{c[a]},{c[b]},{c[d]}" for a, b, d in R.TRIPLES]
    names += [f"take:{c[a]},{c[b]}" for a, b in R.PAIRS]
    names += [f"take:{x}" for x in c]
    names += [f"take2:{x}" for x in c]
    slots = [f"{lv}.{s}" for lv in (1, 2, 3) for s in range(R.SLOTS_PER_LEVEL)]
    names += [f"reserve:{s}" for s in slots]
    names += [f"reserve_deck:{lv}" for lv in (1, 2, 3)]
    names += [f"buy:{s}" for s in slots]
    names += [f"buy_reserved:{i}" for i in range(R.MAX_RESERVED)]
    names += [f"noble:{i}" for i in range(R.MAX_TABLE_NOBLES)]
    names += [f"return:{x}" for x in R.TOKEN_NAMES]
    names.append("pass")
    assert len(names) == NUM_ACTIONS
    return tuple(names)


ACTION_NAMES: tuple[str, ...] = _build_names()
_IDS = {name: i for i, name in enumerate(ACTION_NAMES)}


def move_name(action: int) -> str:
    """Text name of an action id, e.g. ``move_name(71) == "pass"``."""
    a = as_index(action, "action id")
    if not 0 <= a < NUM_ACTIONS:
        raise ValueError(f"action id {quote(a)} is out of range 0..{NUM_ACTIONS - 1}")
    return ACTION_NAMES[a]


def move_id(name: str) -> int:
    """Action id of a text name (case and spaces ignored), e.g. ``move_id("take2:red") == 28``."""
    key = name.strip().lower().replace(" ", "") if isinstance(name, str) else None
    if key not in _IDS:
        raise ValueError(f"unknown action name {quote(name)} (examples: 'take:white,blue,green', 'buy:2.1', 'pass')")
    return _IDS[key]


def as_action(action: int | str) -> int:
    """Accept an id (int or numpy integer) or a name; return the id or raise ``ValueError``."""
    if isinstance(action, str):
        return move_id(action)
    move_name(action)
    return as_index(action)


def kind(action: int) -> str:
    """The action's family: take3, take2_diff, take1, take2_same, reserve, reserve_deck, buy,
    buy_reserved, noble, return or pass."""
    bounds = (
        (R.TAKE2_DIFF, "take3"), (R.TAKE1, "take2_diff"), (R.TAKE2_SAME, "take1"), (R.RESERVE, "take2_same"),
        (R.RESERVE_DECK, "reserve"), (R.BUY, "reserve_deck"), (R.BUY_RESERVED, "buy"),
        (R.CHOOSE_NOBLE, "buy_reserved"), (R.RETURN_TOKEN, "noble"), (R.PASS, "return"), (R.NUM_ACTIONS, "pass"),
    )
    if 0 <= action:
        for end, label in bounds:
            if action < end:
                return label
    raise ValueError(f"action id {quote(action)} is out of range 0..{NUM_ACTIONS - 1}")


MOVE_HELP = """\
Move names (colours: white blue green red black, gold only to return):
  take:white,blue,green   three different colours     take2:red        two of one colour (bank has 4+)
  take:white,blue         two colours (only 2 left)   take:white       one colour (only 1 left)
  reserve:2.1             reserve market card level 2, slot 1 (slots 0-3)   reserve_deck:3   top of a deck
  buy:1.3                 buy market card level 1, slot 3                   buy_reserved:0   your reserve 0
  return:gold             return a token when holding more than 10          noble:1          choose a noble
  pass                    only when nothing else is legal
Cards read [#id Colour points | cost]; colour letters: w b g r k(black) y(gold)."""
