"""Splendor for LLM players: the fixed system prompt, the position from a player's seat as JSON, the
numbered legal moves, and reading a reply's ``action`` (a move id, a move name, or the structured form).

Only what the seat can see goes into a prompt: the deck order and opponents' blind-reserved cards never
do (an opponent's blind reserve shows as its level only).

>>> from tabletop_rl import SplendorGame
>>> g = SplendorGame(2, seed=3)
>>> PROMPT.parse_action({"type": "TAKE_3_DIFF", "tokens": {"red": 1, "white": 1, "blue": 1}}, g, 0,
...                     g.legal_actions()).action == g.move_id("take:white,blue,red")
True
>>> "0: take:white,blue,green" in PROMPT.user_message(g, 0, g.legal_actions(), legal_list=True)
True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from tabletop_rl.agents.llm.policy import FINAL_ANSWER, PlannedMove, ReplyError
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.actions import ACTION_NAMES, NUM_ACTIONS, kind, move_id
from tabletop_rl.games.splendor.game import SplendorGame

__all__ = ["PROMPT", "SYSTEM_PROMPT", "seat_view"]

SYSTEM_PROMPT = f"""You are a player in a game of Splendor (base game). Win by having the most prestige points when \
the game ends.

RULES (as this game engine implements them)
- Tokens: gems in five colours (white, blue, green, red, black) and gold, which is wild. The bank starts with 4 \
gems of each colour for 2 players, 5 for 3, 7 for 4, and always 5 gold.
- Cards: 90 development cards in three levels. A card has a bonus colour, 0-5 points and a cost in gems. Each card \
you buy is a permanent bonus of its colour: every later purchase costs 1 gem less of that colour (never below 0). \
Four cards of each level lie face up in the market; a card taken from it is replaced at once from that level's \
deck. The order of the decks is secret.
- Nobles are worth 3 points each. A noble visits a player whose bonuses (from bought cards only, never tokens) \
meet its requirement.
- On your turn do exactly one of:
  1. take 3 gems of different colours (when fewer than 3 colours are left in the bank, take one of each colour left);
  2. take 2 gems of one colour, only if the bank holds at least 4 of that colour;
  3. reserve a face-up card, or the top card of a level's deck unseen by the others, and receive 1 gold if the bank \
has any; you may hold at most 3 reserved cards, and only you can buy them;
  4. buy a face-up card or one of your reserved cards. For each colour you pay the cost minus your bonus of that \
colour, with gems of that colour first and gold for any shortfall. Spent tokens go back to the bank.
  Pass is offered only when none of these is possible.
- End of turn: if you hold more than 10 tokens (gold included), you return tokens one at a time, of your choice, \
until you hold 10. Then, if your bonuses meet one or more nobles on the board, one visits you (you choose which \
when several qualify).
- End of game: once a player has 15 or more points at the end of a turn, the round is finished so that every \
player has had the same number of turns. Most points wins; a tie goes to the player who bought fewer cards; a \
remaining tie is shared.

MOVE NAMES
take:white,blue,green (colours in the order white, blue, green, red, black; also take:red,black or take:green \
when fewer colours are left) | take2:red | reserve:2.3 (market level.slot, slots 0-3) | reserve_deck:1 | \
buy:3.0 | buy_reserved:0 (index in your reserved list) | noble:1 (index in the board's noble list) | \
return:gold | pass

THE POSITION is JSON from your seat. "you" and each of "opponents": score, gems (tokens held), bonuses, \
cardsBought, nobles (ids), reserved cards (for opponents only the cards reserved face up; reservedCount counts \
all, and hiddenReservedLevels gives the levels of the ones reserved unseen). "board": tokens (the bank), nobles \
(id, points, requires), market (by level, slots 0-3, null = empty), deckSizes. A card is {{"id", "level", \
"colour" (its bonus), "points", "cost"}}; colours missing from a cost are 0.

REPLY with one JSON object and nothing else: {{"reasoning": "<brief: a few sentences>", "action": <move>}}
The move may be the number of a legal move from the list, a move name such as "buy:2.1", or a structured move:
{{"type": "TAKE_3_DIFF", "tokens": {{"white": 1, "blue": 1, "red": 1}}}} | {{"type": "TAKE_2_SAME", "tokens": \
{{"red": 2}}}} | {{"type": "RESERVE", "cardId": 41}} | {{"type": "RESERVE", "reserveDeckLevel": "LEVEL_2"}} | \
{{"type": "PURCHASE", "cardId": 12}} | {{"type": "CHOOSE_NOBLE", "nobleId": 3}} | {{"type": "RETURN_TOKENS", \
"tokens": {{"gold": 1}}}} | {{"type": "PASS"}}
A structured move may add "tokensToReturn": {{"red": 1}}, the tokens to give back if the move leaves you with \
more than 10; they are returned without asking you again.
If you cannot reply in JSON, write your reasoning and end with the line: {FINAL_ANSWER} <move number or name>
"""

_LEVEL_NAMES = {"LEVEL_1": 1, "LEVEL_2": 2, "LEVEL_3": 3, "1": 1, "2": 2, "3": 3}


# --- the position from a seat ------------------------------------------------------------------
def _counts(values: Sequence[int], names: Sequence[str], skip_zero: bool = False) -> dict[str, int]:
    return {name: int(v) for name, v in zip(names, values) if v or not skip_zero}


def _card_view(card: int) -> dict[str, Any]:
    """A card as prompts show it, e.g. ``_card_view(0)["cost"] == {"red": 2, "black": 1}``."""
    cards, _ = R.tables()
    row = cards[card]
    return {"id": card, "level": int(row[R.CARD_LEVEL]), "colour": R.COLOURS[row[R.CARD_BONUS]],
            "points": int(row[R.CARD_POINTS]),
            "cost": _counts(row[R.CARD_COST:R.CARD_COST + 5], R.COLOURS, skip_zero=True)}


def _noble_view(noble: int) -> dict[str, Any]:
    _, nobles = R.tables()
    return {"id": noble, "points": R.NOBLE_POINTS, "requires": _counts(nobles[noble], R.COLOURS, skip_zero=True)}


def _player_view(game: SplendorGame, p: int, own: bool) -> dict[str, Any]:
    me = game.player(p)
    view = {"seat": p, "score": me["points"], "gems": me["tokens"], "bonuses": me["bonuses"],
            "cardsBought": len(me["bought"]), "nobles": me["nobles"]}
    shown = [card for card, blind in me["reserved"] if own or not blind]
    view["reserved"] = [_card_view(card) for card in shown]
    if not own:
        view["reservedCount"] = len(me["reserved"])
        view["hiddenReservedLevels"] = [R.level_of(card) + 1 for card, blind in me["reserved"] if blind]
    return view


def seat_view(game: SplendorGame, seat: int) -> dict[str, Any]:
    """Everything ``seat`` may know about the position, as a JSON-ready dict (opponents in turn order)."""
    n = game.num_players
    return {
        "ply": game.ply,
        "phase": game.phase,
        "finalRound": bool(game.state[R.FINAL_ROUND]),
        "you": _player_view(game, seat, own=True),
        "opponents": [_player_view(game, (seat + k) % n, own=False) for k in range(1, n)],
        "board": {
            "tokens": game.bank,
            "nobles": [_noble_view(nb) for nb in game.table_nobles],
            "market": {f"level{lv}": [None if c is None else _card_view(c) for c in game.market(lv)]
                       for lv in (1, 2, 3)},
            "deckSizes": {f"level{lv}": size for lv, size in zip((1, 2, 3), game.deck_sizes)},
        },
    }


# --- the legal moves ------------------------------------------------------------------------------
def _card_words(card: int) -> str:
    view = _card_view(card)
    return f"card {card} (level {view['level']}, {view['colour']}, {view['points']} points)"


def _gold_words(game: SplendorGame) -> str:
    return " and take 1 gold" if game.bank["gold"] > 0 else " (no gold left to take)"


def _describe_move(game: SplendorGame, seat: int, action: int) -> str:
    """What a move does, in words, for the legal-move list (only what ``seat`` can see)."""
    name, k = ACTION_NAMES[action], kind(action)
    arg = name.partition(":")[2]
    if k in ("take3", "take2_diff", "take1"):
        return "take 1 each of " + ", ".join(arg.split(","))
    if k == "take2_same":
        return f"take 2 {arg}"
    if k in ("reserve", "buy"):
        level, slot = (int(x) for x in arg.split("."))
        verb = "reserve" if k == "reserve" else "buy"
        card = game.market(level)[slot]
        if card is None:  # a legal move never names an empty slot
            raise ValueError(f"{name}: market slot {level}.{slot} is empty")
        words = f"{verb} {_card_words(card)}"
        return words + (_gold_words(game) if k == "reserve" else "")
    if k == "reserve_deck":
        return f"reserve the top card of the level {arg} deck unseen" + _gold_words(game)
    if k == "buy_reserved":
        return f"buy your reserved {_card_words(game.player(seat)['reserved'][int(arg)][0])}"
    if k == "noble":
        return f"noble {game.table_nobles[int(arg)]} visits you (3 points)"
    if k == "return":
        return f"return 1 {arg}"
    return "pass (no other move is possible)"


def _legal_move_lines(game: SplendorGame, seat: int, legal: Sequence[int]) -> str:
    return "\n".join(f"{a}: {ACTION_NAMES[a]}  ({_describe_move(game, seat, a)})" for a in legal)


# --- reading the action ------------------------------------------------------------------------------
def _colour(name: Any, field: str, allow_gold: bool) -> str:
    colours = R.TOKEN_NAMES if allow_gold else R.COLOURS
    key = name.strip().lower() if isinstance(name, str) else name
    if key not in colours:
        raise ReplyError("parse", f"{field}: {name!r} is not one of {', '.join(colours)}")
    return key


def _token_counts(value: Any, field: str, allow_gold: bool) -> dict[str, int]:
    """``{"red": 1, ...}`` (or a list of colours, one token each) as counts in colour order, zeros dropped.

    >>> _token_counts(["blue", "white"], "tokens", allow_gold=False)
    {'white': 1, 'blue': 1}
    """
    if isinstance(value, list):
        pairs = [(name, 1) for name in value]
    elif isinstance(value, dict):
        pairs = list(value.items())
    else:
        raise ReplyError("parse", f"{field} must be an object such as {{\"red\": 1}}, got {value!r}")
    counts: dict[str, int] = {}
    for name, count in pairs:
        colour = _colour(name, field, allow_gold)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ReplyError("parse", f"{field}.{colour} must be a whole number >= 0, got {count!r}")
        counts[colour] = counts.get(colour, 0) + count
    return {c: counts[c] for c in R.TOKEN_NAMES if counts.get(c)}


def _card_id(value: dict, field: str = "cardId") -> int:
    card = value.get(field)
    if isinstance(card, str) and card.strip().isdigit():
        card = int(card)
    if isinstance(card, bool) or not isinstance(card, int):
        raise ReplyError("parse", f"{field} must be a card id (a whole number), got {card!r}")
    return card


def _market_slot(game: SplendorGame, card: int) -> str | None:
    for level in (1, 2, 3):
        row = game.market(level)
        if card in row:
            return f"{level}.{row.index(card)}"
    return None


def _take_different(value: dict, game: SplendorGame, seat: int) -> str:
    counts = _token_counts(value.get("tokens"), "tokens", allow_gold=False)
    if not counts or any(n != 1 for n in counts.values()):
        raise ReplyError("parse", f"TAKE_3_DIFF takes 1 token each of up to 3 different colours, got {counts}")
    return "take:" + ",".join(counts)


def _take_same(value: dict, game: SplendorGame, seat: int) -> str:
    counts = _token_counts(value.get("tokens"), "tokens", allow_gold=False)
    if len(counts) != 1 or next(iter(counts.values())) != 2:
        raise ReplyError("parse", f"TAKE_2_SAME takes 2 tokens of one colour, got {counts}")
    return "take2:" + next(iter(counts))


def _reserve(value: dict, game: SplendorGame, seat: int) -> str:
    if value.get("cardId") is None:
        level = _LEVEL_NAMES.get(str(value.get("reserveDeckLevel")).strip().upper())
        if level is None:
            raise ReplyError("parse", "RESERVE needs cardId (a market card) or reserveDeckLevel "
                                      f"(LEVEL_1, LEVEL_2 or LEVEL_3), got {value.get('reserveDeckLevel')!r}")
        return f"reserve_deck:{level}"
    card = _card_id(value)
    slot = _market_slot(game, card)
    if slot is None:
        raise ReplyError("illegal", f"card {card} is not in the market (to reserve from a deck give reserveDeckLevel)")
    return f"reserve:{slot}"


def _purchase(value: dict, game: SplendorGame, seat: int) -> str:
    card = _card_id(value)
    slot = _market_slot(game, card)
    if slot is not None:
        return f"buy:{slot}"
    reserved = [c for c, _ in game.player(seat)["reserved"]]
    if card in reserved:
        return f"buy_reserved:{reserved.index(card)}"
    raise ReplyError("illegal", f"card {card} is neither in the market nor among your reserved cards")


def _choose_noble(value: dict, game: SplendorGame, seat: int) -> str:
    noble = _card_id(value, "nobleId")
    if noble not in game.table_nobles:
        raise ReplyError("illegal", f"noble {noble} is not on the board (nobles there: {game.table_nobles})")
    return f"noble:{game.table_nobles.index(noble)}"


def _pass(value: dict, game: SplendorGame, seat: int) -> str:
    return "pass"


_STRUCTURED: dict[str, Callable[[dict, SplendorGame, int], str]] = {
    "TAKE_3_DIFF": _take_different, "TAKE_2_SAME": _take_same, "RESERVE": _reserve, "PURCHASE": _purchase,
    "CHOOSE_NOBLE": _choose_noble, "PASS": _pass,
}


def _returns(value: Any, field: str) -> list[int]:
    """Return actions for ``{"red": 2, "gold": 1}``: one per token, in colour order, gold last."""
    counts = _token_counts(value, field, allow_gold=True)
    return [move_id(f"return:{colour}") for colour, n in counts.items() for _ in range(n)]


class _SplendorPrompt:
    """Splendor's ``GamePrompt`` (see ``tabletop_rl.agents.llm.policy``)."""

    game = "splendor"
    system_prompt = SYSTEM_PROMPT

    def user_message(self, game: SplendorGame, seat: int, legal: Sequence[int], legal_list: bool) -> str:
        """The position from ``seat`` (main phase) or a short question (token return, noble choice)."""
        if game.phase == "return":
            me = game.player(seat)
            held = sum(me["tokens"].values())
            head = (f"You are seat {seat} and hold {held} tokens {json.dumps(me['tokens'])}; the limit is 10, so "
                    f"return one token now ({held - R.TOKEN_LIMIT} to return in all). Your bonuses: "
                    f"{json.dumps(me['bonuses'])}.")
            return f"{head}\nLegal moves:\n{_legal_move_lines(game, seat, legal)}"
        if game.phase == "noble":
            head = f"You are seat {seat} and several nobles would visit you; choose one."
            return f"{head}\nLegal moves:\n{_legal_move_lines(game, seat, legal)}"
        position = json.dumps(seat_view(game, seat), separators=(",", ":"))
        text = f"You are seat {seat}. The position:\n{position}\n"
        if legal_list:
            return text + f"Legal moves (reply with the number):\n{_legal_move_lines(game, seat, legal)}"
        return text + "Choose a legal move; give it as a move name or a structured move."

    def action_schema(self, legal: Sequence[int], legal_list: bool) -> dict[str, Any]:
        """The JSON schema of ``action``: one of the legal ids, or (no list) an id, a name or a structured move."""
        if legal_list:
            return {"type": "integer", "enum": [int(a) for a in legal]}
        return {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "object"}]}

    def parse_action(self, value: Any, game: SplendorGame, seat: int, legal: Sequence[int]) -> PlannedMove:
        """The move a reply's ``action`` names; ``ReplyError`` when it is not understood or not legal now."""
        plan: list[int] = []
        if isinstance(value, dict):
            action, plan = self._structured(value, game, seat)
        else:
            action = _move_id(value)
        if action not in legal:
            raise ReplyError("illegal", game.explain_illegal(action) + " (it is not among the legal moves)")
        return PlannedMove(action, tuple(plan))

    @staticmethod
    def _structured(value: dict, game: SplendorGame, seat: int) -> tuple[int, list[int]]:
        move_type = str(value.get("type", "")).strip().upper()
        plan = _returns(value["tokensToReturn"], "tokensToReturn") if value.get("tokensToReturn") else []
        if move_type == "RETURN_TOKENS":
            returns = _returns(value.get("tokens"), "tokens")
            if not returns:
                raise ReplyError("parse", "RETURN_TOKENS needs tokens such as {\"red\": 1}")
            return returns[0], returns[1:]
        if move_type not in _STRUCTURED:
            raise ReplyError("parse", f"unknown move type {value.get('type')!r} (known: "
                                      f"{', '.join([*_STRUCTURED, 'RETURN_TOKENS'])})")
        return move_id(_STRUCTURED[move_type](value, game, seat)), plan

    @staticmethod
    def move_name(action: int) -> str:
        return ACTION_NAMES[action]


def _move_id(value: Any) -> int:
    """A move id from a number, a numeric string or a move name; ``ReplyError`` otherwise."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < NUM_ACTIONS:
            raise ReplyError("illegal", f"{value} is not a move number (they run 0..{NUM_ACTIONS - 1})")
        return value
    if isinstance(value, str):
        try:
            return move_id(value.strip().strip('"\'').rstrip("."))
        except ValueError as e:
            raise ReplyError("parse", str(e)) from None
    raise ReplyError("parse", f"action must be a move number, a move name or a structured move, got {value!r}")


PROMPT = _SplendorPrompt()
