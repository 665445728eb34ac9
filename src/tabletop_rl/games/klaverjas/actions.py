"""Klaverjas move names: a card as rank+suit (``10H``), ``trump:C``, ``pass``, ``accept``, ``kraak``, ``rekraak``.

>>> move_name(32), move_id("10H"), move_name(move_id("kraak"))
('trump:C', 19, 'kraak')
"""

from __future__ import annotations

from tabletop_rl.core.text import as_index, quote
from tabletop_rl.games.klaverjas import rules as R

__all__ = ["MOVE_HELP", "move_id", "move_name"]

_WORDS = {"pass": R.PASS, "accept": R.ACCEPT, "kraak": R.KRAAK, "rekraak": R.REKRAAK}
_NAMES = {action: word for word, action in _WORDS.items()}

MOVE_HELP = """\
Move names: a card as rank+suit (7 8 9 10 J Q K A, suits C D H S): 10H, JS, AC.
Trump choice: trump:C / trump:D / trump:H / trump:S, pass, accept (the proposed suit).
Kraken (when on): kraak (a defender doubles the deal), rekraak (a maker redoubles), pass.
Seats N E S W are 0 1 2 3; N-S (0+2) is team 0, E-W (1+3) team 1."""


def move_name(action: int) -> str:
    """The name of action id ``action`` (0..39); ``ValueError`` for any other value.

    >>> move_name(-1)
    Traceback (most recent call last):
    ValueError: action id -1 is out of range 0..39
    """
    action = as_index(action, "action id")
    if not 0 <= action < R.NUM_ACTIONS:
        raise ValueError(f"action id {quote(action)} is out of range 0..{R.NUM_ACTIONS - 1}")
    if action < R.NUM_CARDS:
        return R.card_name(action)
    if action < R.PASS:
        return f"trump:{R.SUITS[action - R.NAME_TRUMP]}"
    return _NAMES[action]


def move_id(name: str) -> int:
    """The action id of a move name; ``ValueError`` listing the forms for anything else."""
    text = name.strip()
    if text.lower() in _WORDS:
        return _WORDS[text.lower()]
    if text.lower().startswith("trump:"):
        return R.NAME_TRUMP + R.suit_id(text[6:].upper())
    try:
        return R.card_id(text)
    except ValueError:
        raise ValueError(f"unknown klaverjas move {quote(name)}; moves are cards (10H, JS), trump:C|D|H|S, "
                         "pass, accept, kraak, rekraak") from None
