"""A Klaverjas match as text (``render_text``) or as JSON-ready data (``board_view``, for ``tabletop web``): the
table, the tricks, and the hand of the seat that looks.

>>> from tabletop_rl.games.klaverjas import rules as R
>>> print(render_text(R.new_state(seed=1)).splitlines()[0])
deal 1/1  rules rotterdam  phase bidding  match N-S 0 E-W 0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tabletop_rl.games.klaverjas import rules as R

#: A KlaverjasGame: game.py imports this module to draw itself, so the class is not
#: imported here (the layers stay free of circles, even for type checking).
_Game = Any

__all__ = ["board_view", "render_text", "viewer_seat"]

_NAMES = "NESW"
_TEAMS = ("N-S", "E-W")


def render_text(state: np.ndarray, viewer: int | None = None) -> str:
    """The match as text for ``viewer``: a seat sees its own hand and the others' card counts; ``None``, a
    spectator, sees all four hands. A spectator plays no part (a replay, someone watching the envs), so, as
    Space Conquest's spectator sees the whole map, nothing is kept from them; a seat's view stays its own.

    >>> from tabletop_rl.games.klaverjas import rules as R
    >>> state = R.new_state(seed=1)
    >>> sum(" cards" in line for line in render_text(state).splitlines()), render_text(state, 0).count(" cards")
    (0, 3)
    """
    names = _NAMES
    trump = int(state[R.TRUMP])
    phase = R.PHASE_NAMES[int(state[R.PHASE])]
    lines = [f"{_deal_text(state)}  rules {R.RULE_SETS[int(state[R.RULE_SET])]}  phase {phase}"
             f"  match N-S {int(state[R.MATCH_SCORE])} E-W {int(state[R.MATCH_SCORE + 1])}"]
    if trump >= 0:
        doubled = {2: "  kraak x2", 4: "  rekraak x4"}.get(int(state[R.MULTIPLIER]), "")
        lines.append(f"trump {R.SUITS[trump]}  maker {names[int(state[R.MAKER])]}{doubled}  tricks N-S "
                     f"{int(state[R.TRICKS_WON])} E-W {int(state[R.TRICKS_WON + 1])}  points N-S "
                     f"{int(state[R.CARD_POINTS])}+{int(state[R.ROEM])} E-W "
                     f"{int(state[R.CARD_POINTS + 1])}+{int(state[R.ROEM + 1])}")
        if state[R.DECLARED_STUK] >= 0:
            lines.append(f"stuk declared by {_TEAMS[int(state[R.DECLARED_STUK])]}")
    elif int(state[R.PROPOSED]) >= 0:
        lines.append(f"proposed trump {R.SUITS[int(state[R.PROPOSED])]}")
    for trick, leader, cards, won in _tricks(state):
        plays = " ".join(f"{names[(leader + k) % 4]}:{R.card_name(c)}" for k, c in enumerate(cards))
        lines.append(f"trick {trick + 1}: {plays}" + (f"  -> {names[won]}" if won >= 0 else ""))
    for seat in range(4):
        hand = int(state[R.HAND + seat])
        shown = (" ".join(R.card_name(c) for c in R.cards_of(hand)) if viewer in (None, seat)
                 else f"{bin(hand).count('1')} cards")
        marker = "*" if seat == _to_act(state) else " "
        lines.append(f"{marker}{names[seat]} player_{seat}: {shown}")
    return "\n".join(lines)


def _deal_text(state: np.ndarray) -> str:
    """Which deal of the match is on: ``deal 2/4``, or ``deal 3 (to 1500)`` in a match to a target score."""
    deals, deal = int(state[R.NUM_DEALS_AT]), int(state[R.DEAL_NO]) + 1
    return f"deal {deal} (to {int(state[R.TARGET])})" if state[R.TARGET] else f"deal {min(deal, deals)}/{deals}"


def _to_act(state: np.ndarray) -> int | None:
    """The seat to act, None once the match is over."""
    return None if state[R.PHASE] == R.OVER else int(state[R.CURRENT])


def _tricks(state: np.ndarray) -> list[tuple[int, int, list[int], int]]:
    """``(trick, leading seat, cards in play order, winning seat or -1)`` for each trick of the deal with a card."""
    out = []
    for trick in range(int(state[R.TRICK_NO]) + 1):
        leader = int(state[R.LEADER + trick])
        cards = [int(c) for c in state[R.TRICK + 4 * trick:R.TRICK + 4 * trick + 4] if c >= 0]
        if leader >= 0 and cards:
            out.append((trick, leader, cards, int(state[R.WINNER + trick])))
    return out


def viewer_seat(state: np.ndarray, player: int) -> int:
    """The seat whose hand player (partnership) ``player`` is shown: its seat to act, else its first seat.

    >>> viewer_seat(R.new_state(seed=1), 1)
    1
    """
    current = int(state[R.CURRENT])
    return current if current % 2 == player else player


def board_view(game: _Game, viewer: int | None = None) -> dict[str, Any]:
    """The table as ``render_text`` shows it to player (partnership) ``viewer``, as JSON-ready data: the hand of
    that player's seat to act (else its first seat) and the other hands as card counts (``cards`` None); a
    spectator (``None``) sees all four hands. Seats are named N E S W.

    >>> from tabletop_rl.games.klaverjas.game import KlaverjasGame
    >>> [hand["cards"] is None for hand in board_view(KlaverjasGame.new(seed=1, num_players=2), 0)["hands"]]
    [False, True, True, True]
    """
    state = game.state
    seat = None if viewer is None else viewer_seat(state, viewer)
    trump = int(state[R.TRUMP])
    return {
        "game": "klaverjas", "viewer": viewer, "viewer_seat": seat, "deal": _deal_text(state),
        "rules": R.RULE_SETS[int(state[R.RULE_SET])], "phase": R.PHASE_NAMES[int(state[R.PHASE])],
        "to_act": _to_act(state), "match": [int(state[R.MATCH_SCORE]), int(state[R.MATCH_SCORE + 1])],
        "trump": R.SUITS[trump] if trump >= 0 else None,
        "maker": int(state[R.MAKER]) if trump >= 0 else None,
        "multiplier": int(state[R.MULTIPLIER]),
        "proposed": R.SUITS[int(state[R.PROPOSED])] if trump < 0 and state[R.PROPOSED] >= 0 else None,
        "tricks_won": [int(state[R.TRICKS_WON]), int(state[R.TRICKS_WON + 1])],
        "points": [[int(state[R.CARD_POINTS + t]), int(state[R.ROEM + t])] for t in (0, 1)],
        "tricks": [{"number": trick + 1, "leader": leader, "winner": won if won >= 0 else None,
                    "plays": [{"seat": (leader + k) % 4, "card": R.card_name(c)} for k, c in enumerate(cards)]}
                   for trick, leader, cards, won in _tricks(state)],
        "hands": [_hand_view(state, s, seat) for s in range(4)],
    }


def _hand_view(state: np.ndarray, seat: int, viewer: int | None) -> dict[str, Any]:
    cards = R.cards_of(int(state[R.HAND + seat]))
    return {"seat": seat, "name": _NAMES[seat], "team": _TEAMS[seat % 2], "count": len(cards),
            "cards": [R.card_name(c) for c in cards] if viewer in (None, seat) else None}
