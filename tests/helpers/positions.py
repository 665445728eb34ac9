"""Hand-written Splendor positions for rule tests: a valid JSON position dict built from the few
facts a test cares about, with every other card and token put where a fresh game would have it.

>>> pos = position(2, tokens={0: {"red": 3}}, bought={0: [7]})
>>> pos["bank"]["red"], pos["players"][0]["bought"]
(1, [7])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.game import SplendorGame

LEVEL_CARDS = {1: range(0, 40), 2: range(40, 70), 3: range(70, 90)}
GEMS_PER_COLOUR = {2: 4, 3: 5, 4: 7}
GOLD_TOKENS = 5

Reserve = int | tuple[int, bool]


def position(num_players: int = 2, *, tokens: dict[int, dict[str, int]] | None = None,
             bought: dict[int, list[int]] | None = None, reserved: dict[int, list[Reserve]] | None = None,
             market: dict[int, list[int | None]] | None = None, decks: dict[int, list[int]] | None = None,
             nobles: list[int] | None = None, player_nobles: dict[int, list[int]] | None = None,
             **fields: Any) -> dict[str, Any]:
    """A valid position: the given placements, the rest of each level's cards filling the market and
    then the deck (ascending id, after any cards ``decks`` puts on top), the bank holding whatever
    tokens no player holds, and the table showing the nobles no player has (first ids by default).

    ``reserved`` entries are a card id (face-up) or ``(card, blind)``; ``fields`` override top-level keys.

    >>> position(3, current_player=1)["current_player"]
    1
    """
    tokens, bought, reserved = tokens or {}, bought or {}, reserved or {}
    market, decks, player_nobles = market or {}, decks or {}, player_nobles or {}
    players = [_player(tokens.get(p, {}), bought.get(p, []), reserved.get(p, []), player_nobles.get(p, []))
               for p in range(num_players)]
    placed = {c for pl in players for c in pl["bought"] + [r["card"] for r in pl["reserved"]]}
    placed |= {c for row in market.values() for c in row if c is not None}
    placed |= {c for deck in decks.values() for c in deck}
    rows, piles = {}, {}
    for level, ids in LEVEL_CARDS.items():
        rest = [c for c in ids if c not in placed]
        row = market.get(level)
        if row is None:
            row = (rest[:4] + [None] * 4)[:4]
            rest = rest[4:]
        rows[str(level)], piles[str(level)] = list(row), decks.get(level, []) + rest
    pos = {
        "num_players": num_players, "current_player": 0, "start_player": 0, "phase": "main",
        "final_round": False, "ply": 0, "passes_in_a_row": 0, "max_plies": 1000,
        "bank": _bank(num_players, players), "market": rows, "decks": piles,
        "nobles": nobles if nobles is not None else _table_nobles(num_players, player_nobles),
        "players": players,
    }
    pos.update(fields)
    return pos


def game(pos: dict[str, Any]) -> SplendorGame:
    """Load a hand-written position, e.g. ``game(position(2)).current_player == 0``."""
    return SplendorGame.from_json(pos)


def cost(card: int) -> dict[str, int]:
    """The printed cost of ``card`` by colour, e.g. ``cost(5)["blue"] == 3``."""
    cards, _ = R.tables()
    return {colour: int(cards[card, R.CARD_COST + c]) for c, colour in enumerate(R.COLOURS)}


def points(card: int) -> int:
    cards, _ = R.tables()
    return int(cards[card, R.CARD_POINTS])


def _player(tokens: dict[str, int], bought: list[int], reserved: list[Reserve], nobles: list[int]) -> dict:
    entries = [{"card": r, "blind": False} if isinstance(r, int) else {"card": r[0], "blind": r[1]}
               for r in reserved]
    return {"tokens": {name: tokens.get(name, 0) for name in R.TOKEN_NAMES},
            "bought": list(bought), "reserved": entries, "nobles": list(nobles)}


def _bank(num_players: int, players: list[dict]) -> dict[str, int]:
    full = {name: GEMS_PER_COLOUR[num_players] for name in R.COLOURS} | {"gold": GOLD_TOKENS}
    return {name: full[name] - sum(pl["tokens"][name] for pl in players) for name in R.TOKEN_NAMES}


def _table_nobles(num_players: int, player_nobles: dict[int, list[int]]) -> list[int]:
    held = {nb for lst in player_nobles.values() for nb in lst}
    free = [nb for nb in range(R.NUM_NOBLES) if nb not in held]
    return free[: num_players + 1 - len(held)]


# --- positions for search tests -------------------------------------------------------------------
def random_game(num_players: int, seed: int, plies: int, blind_rate: float = 0.0) -> SplendorGame:
    """A game after up to ``plies`` random moves; ``blind_rate``: how often a legal blind reserve is preferred."""
    rng = np.random.default_rng(seed)
    g = SplendorGame(num_players, seed=seed)
    for _ in range(plies):
        if g.is_over:
            break
        legal = g.legal_actions()
        blind = [a for a in legal if R.RESERVE_DECK <= a < R.BUY]
        g.step(int(rng.choice(blind if blind and rng.random() < blind_rate else legal)))
    return g


def hidden_variant(g: SplendorGame, rng: np.random.Generator) -> tuple[SplendorGame, bool]:
    """The same position with every card the player to act cannot see dealt differently: the decks
    shuffled, and each other seat's blind reserve swapped with an unseen card of its level. Also
    says whether a blind reserve changed."""
    me = g.current_player
    pos = g.to_dict()
    swapped = False
    for q, player in enumerate(pos["players"]):
        for entry in player["reserved"]:
            deck = pos["decks"][str(R.level_of(entry["card"]) + 1)]
            if q != me and entry["blind"] and deck:
                i = int(rng.integers(len(deck)))
                entry["card"], deck[i] = deck[i], entry["card"]
                swapped = True
    for deck in pos["decks"].values():
        rng.shuffle(deck)
    return SplendorGame.from_json(pos), swapped
