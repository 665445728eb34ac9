"""The fixed Splendor action table: id <-> meaning <-> text name (ids and names are public API), and the move
text a person types: the canonical names, plus takes and returns in any colour order and in the board's letters.

>>> move_name(25), move_id("buy:2.1"), move_id("take:R,g,blue") == move_id("take:blue,green,red") == 6
('take2:white', 50, True)
"""

from __future__ import annotations

from tabletop_rl.core.text import as_index, quote
from tabletop_rl.games.splendor import rules as R

__all__ = ["ACTION_NAMES", "LETTERS", "MOVE_HELP", "NUM_ACTIONS", "TYPING_HELP", "as_action", "kind", "move_id",
           "move_name"]

NUM_ACTIONS = R.NUM_ACTIONS
LETTERS = ("w", "b", "g", "r", "k", "y")  # the board's token letters; black is k so it never reads as blue


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


def _canonical_id(name: str) -> int:
    """Action id of a canonical name (case and spaces ignored), e.g. ``_canonical_id("take2:red") == 28``."""
    key = name.strip().lower().replace(" ", "") if isinstance(name, str) else None
    if key not in _IDS:
        raise ValueError(f"unknown action name {quote(name)} (examples: 'take:white,blue,green', 'buy:2.1', 'pass')")
    return _IDS[key]


# --- move text a person types ----------------------------------------------------------------
#: A token as a person may name it: its full name or the letter the board draws (k is black, y gold).
_TOKEN_WORDS = {**{name: i for i, name in enumerate(R.TOKEN_NAMES)}, **{c: i for i, c in enumerate(LETTERS)}}
_COLOUR_HINT = "colours: white blue green red black, or the board's letters w b g r k"
_TOKEN_HINT = "tokens: white blue green red black gold, or the board's letters w b g r k y"
_EXAMPLES = "examples: take:red,green,blue or take:r,g,b, take2:red, buy:2.1, reserve:1.0, pass"
#: How the moves that name a place are written, for a name whose family is right but whose place is not.
_FORMS = {
    "buy": "buy:<level>.<slot>, level 1-3 and slot 0-3 as the board labels the market, e.g. buy:2.0",
    "reserve": "reserve:<level>.<slot>, level 1-3 and slot 0-3 as the board labels the market, e.g. reserve:1.3",
    "reserve_deck": "reserve_deck:<level>, level 1-3",
    "buy_reserved": f"buy_reserved:<0-{R.MAX_RESERVED - 1}>, a reserve as the board numbers it",
    "noble": f"noble:<0-{R.MAX_TABLE_NOBLES - 1}>, a table noble as the board numbers it",
}
#: What ``move_id`` reads beyond the canonical names, for the help a person sees.
TYPING_HELP = ("Takes and returns read the colours in any order, as names or the board's letters (any case):\n"
               "  take:r,g,b = take:blue,green,red   take2:k = take2:black   return:y = return:gold\n"
               "Market slots are labelled on the board as the moves name them: 1.0 is buy:1.0 / reserve:1.0.")


def move_id(text: str) -> int:
    """Action id of a move as typed: a canonical name (``move_name``), or a take, take2 or return whose
    colours come in any order and may be the board's letters; ``ValueError`` saying what a move looks like.

    The canonical names (``move_name``) stay the one written form; this only widens what is read.

    >>> move_id("take2:K"), move_id("return: y"), move_id("take:g,w")
    (29, 70, 11)
    """
    try:
        return _canonical_id(text)
    except ValueError:
        if not isinstance(text, str):  # callers outside the type checker: the table's own message fits
            raise
    family, _, arg = text.strip().lower().replace(" ", "").partition(":")
    if family == "take":
        return _canonical_id("take:" + ",".join(R.COLOURS[c] for c in _colours(text, arg, most=3)))
    if family in ("take2", "return"):
        (colour,) = _colours(text, arg, most=1, gold=family == "return")
        return _canonical_id(f"{family}:{R.TOKEN_NAMES[colour]}")
    raise ValueError(f"unknown action name {quote(text)} ({_FORMS.get(family, _EXAMPLES)})")


def _colours(text: str, arg: str, most: int, gold: bool = False) -> list[int]:
    """The distinct colour indices ``arg`` names (1 to ``most`` of them), sorted, as the canonical name lists
    them; ``ValueError`` naming the first problem, so a person learns the form rather than a bare "unknown"."""
    words = arg.split(",") if arg else []
    hint = _TOKEN_HINT if gold else _COLOUR_HINT
    bad = next((w for w in words if w not in _TOKEN_WORDS), None)
    if bad is not None:
        raise ValueError(f"unknown action name {quote(text)}: {quote(bad)} is not a colour ({hint})")
    colours = [_TOKEN_WORDS[w] for w in words]
    if R.GOLD in colours and not gold:
        raise ValueError(f"unknown action name {quote(text)}: gold is never taken, reserving a card gives it")
    if len(set(colours)) != len(colours):
        raise ValueError(f"unknown action name {quote(text)}: a colour is named twice "
                         "(two of one colour is take2:<colour>)")
    if not 1 <= len(colours) <= most:
        wanted = "one colour" if most == 1 else f"1 to {most} different colours"
        raise ValueError(f"unknown action name {quote(text)}: name {wanted} ({hint})")
    return sorted(colours)


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
