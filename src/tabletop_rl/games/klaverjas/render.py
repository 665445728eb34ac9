"""A Klaverjas match as text: the table, the tricks, and the hand of the seat that looks.

>>> from tabletop_rl.games.klaverjas import rules as R
>>> print(render_text(R.new_state(seed=1)).splitlines()[0])
deal 1/1  rules rotterdam  phase bidding  match N-S 0 E-W 0
"""

from __future__ import annotations

import numpy as np

from tabletop_rl.games.klaverjas import rules as R

__all__ = ["render_text"]


def render_text(state: np.ndarray, viewer: int | None = None) -> str:
    """The match as text for ``viewer``: a seat sees its own hand and the others' card counts; ``None``, a
    spectator, sees all four hands. A spectator plays no part (a replay, someone watching the envs), so, as
    Space Conquest's spectator sees the whole map, nothing is kept from them; a seat's view stays its own.

    >>> from tabletop_rl.games.klaverjas import rules as R
    >>> state = R.new_state(seed=1)
    >>> sum(" cards" in line for line in render_text(state).splitlines()), render_text(state, 0).count(" cards")
    (0, 3)
    """
    names = "NESW"
    trump = int(state[R.TRUMP])
    deals, deal = int(state[R.NUM_DEALS_AT]), int(state[R.DEAL_NO]) + 1
    match = f"deal {deal} (to {int(state[R.TARGET])})" if state[R.TARGET] else f"deal {min(deal, deals)}/{deals}"
    lines = [f"{match}  rules {R.RULE_SETS[int(state[R.RULES])]}  phase {R.PHASE_NAMES[int(state[R.PHASE])]}"
             f"  match N-S {int(state[R.MATCH_SCORE])} E-W {int(state[R.MATCH_SCORE + 1])}"]
    if trump >= 0:
        doubled = {2: "  kraak x2", 4: "  rekraak x4"}.get(int(state[R.MULTIPLIER]), "")
        lines.append(f"trump {R.SUITS[trump]}  maker {names[int(state[R.MAKER])]}{doubled}  tricks N-S "
                     f"{int(state[R.TRICKS_WON])} E-W {int(state[R.TRICKS_WON + 1])}  points N-S "
                     f"{int(state[R.CARD_POINTS])}+{int(state[R.ROEM])} E-W "
                     f"{int(state[R.CARD_POINTS + 1])}+{int(state[R.ROEM + 1])}")
        if state[R.DECLARED_STUK] >= 0:
            lines.append(f"stuk declared by {('N-S', 'E-W')[int(state[R.DECLARED_STUK])]}")
    elif int(state[R.PROPOSED]) >= 0:
        lines.append(f"proposed trump {R.SUITS[int(state[R.PROPOSED])]}")
    t = int(state[R.TRICK_NO])
    for trick in range(t + 1):
        leader = int(state[R.LEADER + trick])
        cards = [int(c) for c in state[R.TRICK + 4 * trick:R.TRICK + 4 * trick + 4] if c >= 0]
        if leader >= 0 and cards:
            plays = " ".join(f"{names[(leader + k) % 4]}:{R.card_name(c)}" for k, c in enumerate(cards))
            won = int(state[R.WINNER + trick])
            lines.append(f"trick {trick + 1}: {plays}" + (f"  -> {names[won]}" if won >= 0 else ""))
    for seat in range(4):
        hand = int(state[R.HAND + seat])
        shown = (" ".join(R.card_name(c) for c in R.cards_of(hand)) if viewer in (None, seat)
                 else f"{bin(hand).count('1')} cards")
        marker = "*" if seat == int(state[R.CURRENT]) and state[R.PHASE] != R.OVER else " "
        lines.append(f"{marker}{names[seat]} player_{seat}: {shown}")
    return "\n".join(lines)
