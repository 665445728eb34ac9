"""Nim, a game the package does not ship: the worked example of docs/architecture.md, "How to add a game".

Three heaps of 1 to 7 counters are dealt from the seed; a move takes one or more counters from one heap, and
whoever takes the last counter wins. The package holds ``rules`` (pure functions over one row), ``game``
(``NimGame``, the ``Game`` contract through ``TurnBased``) and ``policies`` (registers ``perfect``). This file
is its record, which a test registers in a copy of the registry (tests/games/test_a_new_game.py).
"""

from tabletop_rl.games.registry import GameEntry

__all__ = ["ENTRY"]

ENTRY = GameEntry(
    name="nim",
    game_class=f"{__name__}.game:NimGame",
    players=("random", "perfect"),
    policies=f"{__name__}.policies",
    terminal=True,
)
