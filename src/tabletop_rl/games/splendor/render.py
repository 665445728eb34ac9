"""A Splendor position as a coloured text board (``render_ansi``); ``picture.render_rgb`` draws it as an image.

Both show what one viewer may see: ``viewer=None`` is a spectator, who sees every blind-reserved card
face down (its level is public); ``viewer=p`` also sees seat ``p``'s own blind reserves. Deck order
is never shown, only deck sizes.

Colour letters in the text board: w white, b blue, g green, r red, k black, y gold; a card reads
``[#41 G 2p | w3 b2 r2]`` (id, bonus colour, points, cost). Each market card is labelled with the
``level.slot`` that the move names use (``1.0`` is ``buy:1.0``, slots count from 0 like the names), each
reserved card with its ``buy_reserved`` index, each table noble with its ``noble`` index.
The board fits 80 columns: a row wider than that (a level's four cards, five nobles, three reserves) goes on
under itself. ``move_text`` writes a move's name with the card it buys or reserves, as the board draws it.
``board_view`` gives the same board as JSON-ready data, for the web viewer (``tabletop web``).

>>> from tabletop_rl import SplendorGame
>>> g = SplendorGame(seed=3)
>>> print(render_ansi(g, color=False).splitlines()[1])
Bank     w4 b4 g4 r4 k4 y5
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.actions import LETTERS, as_action, kind, move_name

#: A SplendorGame: game.py imports this module to draw itself, so the class is not
#: imported here (the layers stay free of circles, even for type checking).
_Game = Any


__all__ = ["LETTERS", "board_view", "move_text", "render_ansi"]



# --- shared: what a viewer may see ----------------------------------------------------------
def _check_viewer(game: _Game, viewer: int | None) -> None:
    if viewer is None:
        return
    if isinstance(viewer, bool) or not isinstance(viewer, (int, np.integer)) \
            or not 0 <= viewer < game.num_players:
        raise ValueError(f"viewer must be None (spectator) or a seat in 0..{game.num_players - 1}, got {viewer!r}")


def _visible_reserves(game: _Game, p: int, viewer: int | None) -> list[tuple[int, int | None]]:
    """``(level, card)`` for each reserve of seat ``p``; ``card`` is None where ``viewer`` may not see it."""
    cards, _ = R.tables()
    return [(int(cards[c, R.CARD_LEVEL]), None if blind and viewer != p else c)
            for c, blind in game.player(p)["reserved"]]


def _status(game: _Game) -> str:
    if game.is_truncated:
        return "truncated at the ply cap"
    if game.is_over:
        return "game over, winners: " + ", ".join(f"P{w}" for w in game.winners)
    return f"P{game.current_player} to act ({game.phase})"


# --- ansi ----------------------------------------------------------------------------------
_ANSI_CODES = ("97", "94", "92", "91", "90", "93")  # per token colour; black as grey to show on dark terminals
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
#: The text board's width: a standard terminal's 80 columns.
_BOARD_COLUMNS = 80


def render_ansi(game: _Game, viewer: int | None = None, color: bool = True) -> str:
    """The position as a compact text board, with ANSI colours unless ``color=False``.

    >>> from tabletop_rl import SplendorGame
    >>> print(render_ansi(SplendorGame(seed=3), color=False).splitlines()[0])
    Splendor  ply 0  P0 to act (main)  view: spectator
    """
    _check_viewer(game, viewer)
    paint = _painter(color)
    view = "spectator" if viewer is None else f"P{viewer}"
    final = ["FINAL ROUND"] if game.state[R.FINAL_ROUND] and not game.is_over else []
    lines = [*_fitted("Splendor  ", [f"ply {game.ply}", paint(_status(game), "1"), *final, f"view: {view}"]),
             "Bank     " + _token_counts(list(game.bank.values()), paint),
             *_fitted("Nobles   ", [f"{i} {_noble_text(nb, paint)}" for i, nb in enumerate(game.table_nobles)])]
    for level in (3, 2, 1):
        row = [f"{level}.{slot} " + (_card_text(c, paint) if c is not None else "[ empty ]")
               for slot, c in enumerate(game.market(level))]
        lines += _fitted(f"Level {level}  deck {game.deck_sizes[level - 1]:2d}  ", _aligned(row), sep=" ")
    lines += [line for p in range(game.num_players) for line in _player_lines(game, p, viewer, paint)]
    return "\n".join(lines)


def _painter(color: bool):
    if not color:
        return lambda text, code: text
    return lambda text, code: f"\x1b[{code}m{text}\x1b[0m"


def _visible(text: str) -> int:
    """Columns ``text`` takes on a terminal (its colour codes take none)."""
    return len(_ANSI_RE.sub("", text))


def _aligned(cells: list[str], width: int = 28) -> list[str]:
    """Cells padded to a common visible width (the widest card and its label), so market columns line up."""
    return [cell + " " * max(0, width - _visible(cell)) for cell in cells]


def _fitted(head: str, cells: list[str], sep: str = "  ", width: int = _BOARD_COLUMNS) -> list[str]:
    """``head`` then ``cells`` joined by ``sep``, wrapped before ``width`` columns onto lines indented under the
    first cell, so the board fits a standard terminal.

    >>> _fitted("Row  ", ["a" * 40, "b" * 40])
    ['Row  aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '     bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb']
    """
    lines: list[str] = []
    line, fresh = head, True
    for cell in cells:
        if not fresh and _visible(line + sep + cell.rstrip()) > width:
            lines.append(line.rstrip())
            line, fresh = " " * _visible(head), True
        line += cell if fresh else sep + cell
        fresh = False
    return [*lines, line.rstrip()]


def _token_counts(counts: list[int], paint, skip_zero: bool = False) -> str:
    return " ".join(paint(f"{LETTERS[c]}{n}", _ANSI_CODES[c]) for c, n in enumerate(counts)
                    if n or not skip_zero)


def _card_text(card: int, paint) -> str:
    cards, _ = R.tables()
    bonus = int(cards[card, R.CARD_BONUS])
    cost = _token_counts(cards[card, R.CARD_COST:R.CARD_COST + 5].tolist(), paint, skip_zero=True)
    colour = paint(LETTERS[bonus].upper(), _ANSI_CODES[bonus])
    return f"[#{card} {colour} {cards[card, R.CARD_POINTS]}p | {cost}]"


def _noble_text(noble: int, paint) -> str:
    _, nobles = R.tables()
    return f"[N{noble} {R.NOBLE_POINTS}p | {_token_counts(nobles[noble].tolist(), paint, skip_zero=True)}]"


def _player_lines(game: _Game, p: int, viewer: int | None, paint) -> list[str]:
    me = game.player(p)
    mark = paint(">", "1") if p == game.current_player and not game.is_over else " "
    tokens = list(me["tokens"].values())
    nobles = " ".join(f"N{nb}" for nb in me["nobles"]) or "-"
    reserves = [f"{i} " + (_card_text(card, paint) if card is not None else f"[hidden L{level}]")
                for i, (level, card) in enumerate(_visible_reserves(game, p, viewer))]
    return [*_fitted(f"{mark} P{p}  {me['points']:2d}p  ",
                     [f"tokens {_token_counts(tokens, paint)} ({sum(tokens)})",
                      f"bonuses {_token_counts(list(me['bonuses'].values()), paint)}",
                      f"cards {len(me['bought'])}", f"nobles {nobles}"]),
            *_fitted("       reserved ", reserves or ["-"], sep=" ")]


# --- moves ---------------------------------------------------------------------------------
def move_text(game: _Game, move: int | str) -> str:
    """``move``'s canonical name, followed by the card (or noble) it names in ``game`` (the position before the
    move), drawn as the board draws it, so a person need not look up ``buy:2.1``. Only what the move itself
    makes public is shown: a market card, a noble, or the mover's own reserve as it is bought.

    >>> from tabletop_rl import SplendorGame
    >>> move_text(SplendorGame(seed=3), "buy:1.3")
    'buy:1.3 [#6 W 0p | w3 b1 k1]'
    """
    action = as_action(move)
    name, family = move_name(action), kind(action)
    arg = name.partition(":")[2]
    plain = _painter(False)
    if family in ("reserve", "buy"):
        level, slot = (int(x) for x in arg.split("."))
        card = game.market(level)[slot]
    elif family == "buy_reserved":
        reserved = game.player(game.current_player)["reserved"]
        card = reserved[int(arg)][0] if int(arg) < len(reserved) else None
    elif family == "noble" and int(arg) < len(game.table_nobles):
        return f"{name} {_noble_text(game.table_nobles[int(arg)], plain)}"
    else:
        card = None
    return name if card is None else f"{name} {_card_text(card, plain)}"


# --- JSON board ----------------------------------------------------------------------------
def board_view(game: _Game, viewer: int | None = None) -> dict[str, Any]:
    """The board ``viewer`` sees (what ``render_ansi`` draws) as JSON-ready data: bank, nobles, market by
    level with deck sizes, and each player's tokens, bonuses, points, cards and reserves. A reserve the
    viewer may not see is ``{"level": L, "hidden": true}``; deck order is never in it.

    >>> from tabletop_rl import SplendorGame
    >>> view = board_view(SplendorGame(seed=3))
    >>> view["market"][2]["cards"][3]
    {'id': 6, 'level': 1, 'bonus': 'white', 'points': 0, 'cost': {'white': 3, 'blue': 1, 'black': 1}}
    """
    _check_viewer(game, viewer)
    _, nobles = R.tables()
    return {
        "game": "splendor", "viewer": viewer, "ply": game.ply, "status": _status(game), "phase": game.phase,
        "to_act": None if game.is_over else game.current_player, "final_round": bool(game.state[R.FINAL_ROUND]),
        "bank": game.bank,
        "nobles": [{"id": nb, "points": R.NOBLE_POINTS, "needs": _colour_counts(nobles[nb])}
                   for nb in game.table_nobles],
        "market": [{"level": level, "deck": game.deck_sizes[level - 1],
                    "cards": [None if c is None else _card_view(c) for c in game.market(level)]}
                   for level in (3, 2, 1)],
        "players": [_player_view(game, p, viewer) for p in range(game.num_players)],
    }


def _colour_counts(values: Any) -> dict[str, int]:
    """The non-zero counts of the five colours, by name."""
    return {colour: int(n) for colour, n in zip(R.COLOURS, values) if n}


def _card_view(card: int) -> dict[str, Any]:
    cards, _ = R.tables()
    row = cards[card]
    return {"id": card, "level": int(row[R.CARD_LEVEL]), "bonus": R.COLOURS[int(row[R.CARD_BONUS])],
            "points": int(row[R.CARD_POINTS]), "cost": _colour_counts(row[R.CARD_COST:R.CARD_COST + 5])}


def _player_view(game: _Game, p: int, viewer: int | None) -> dict[str, Any]:
    me = game.player(p)
    return {"seat": p, "points": me["points"], "tokens": me["tokens"], "bonuses": me["bonuses"],
            "cards": len(me["bought"]), "nobles": me["nobles"],
            "reserved": [{"level": level, "hidden": True} if card is None else _card_view(card)
                         for level, card in _visible_reserves(game, p, viewer)]}
