"""Splendor for LLM players: the fixed system prompt, the position as the text board the seat sees, the
numbered legal moves, and reading a reply's ``action`` (a move id, a move name, or the structured form; with
the tokens to return after it where the move leaves more than ten).

Only what the seat can see goes into a prompt: the board is ``render_ansi`` for that seat, so the deck order
and opponents' blind-reserved cards never do (an opponent's blind reserve shows as its level only).

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
from tabletop_rl.games.splendor.actions import ACTION_NAMES, LETTERS, NUM_ACTIONS, move_id
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.render import render_ansi

__all__ = ["PROMPT", "SYSTEM_PROMPT"]

#: No move brings more than three tokens, so none leaves more than three to return.
_MOST_RETURNED = 3

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

THE BOARD from your seat (">" marks the player to act). Letters: \
{", ".join(f"{letter} {name}" for letter, name in zip(LETTERS, R.TOKEN_NAMES))}; "r2 k1" is 2 red, 1 black. \
Card [#41 G 2p | w3 b2 r2]: id 41, green bonus, 2 points, costs 3 white, 2 blue, 2 red. Noble [N4 3p | r4 k4]: \
needs 4 red and 4 black bonuses. The labels before cards and nobles (market 1.0, reserved 0, noble 2) are what \
move names use. Another player's card reserved unseen shows as [hidden L2] (its level).

MOVE NAMES
take:white,blue,green (colours in the order white, blue, green, red, black; also take:red,black or take:green \
when fewer colours are left) | take2:red | reserve:2.3 (market level.slot, slots 0-3) | reserve_deck:1 | \
buy:3.0 | buy_reserved:0 (index in your reserved list) | noble:1 (index in the board's noble list) | \
return:gold | pass

REPLY with one JSON object and nothing else: {{"reasoning": "<brief: a few sentences>", "action": <move>}}
The move may be the number of a legal move from the list, a move name such as "buy:2.1", or a structured move:
{{"type": "TAKE_3_DIFF", "tokens": {{"white": 1, "blue": 1, "red": 1}}}} | {{"type": "TAKE_2_SAME", "tokens": \
{{"red": 2}}}} | {{"type": "RESERVE", "cardId": 41}} | {{"type": "RESERVE", "reserveDeckLevel": "LEVEL_2"}} | \
{{"type": "PURCHASE", "cardId": 12}} | {{"type": "CHOOSE_NOBLE", "nobleId": 3}} | {{"type": "RETURN_TOKENS", \
"tokens": {{"gold": 1}}}} | {{"type": "PASS"}}
A move that leaves you over 10 tokens (marked "(then return N)" in the list) takes the tokens to return with it: \
{{"move": <number or name>, "tokensToReturn": ["red", "gold"]}}, or "tokensToReturn" in a structured move.
If you cannot reply in JSON, write your reasoning and end with the line: {FINAL_ANSWER} <move number or name>
"""

_LEVEL_NAMES = {"LEVEL_1": 1, "LEVEL_2": 2, "LEVEL_3": 3, "1": 1, "2": 2, "3": 3}
#: A colour by its name or by the board's letter for it.
_COLOUR_WORDS = {**{name: name for name in R.TOKEN_NAMES}, **dict(zip(LETTERS, R.TOKEN_NAMES))}


# --- the legal moves ------------------------------------------------------------------------------
def _past_ten(game: SplendorGame, seat: int, legal: Sequence[int]) -> dict[int, SplendorGame]:
    """The legal moves that leave ``seat`` more than ten tokens, each with the position after it (a copy)."""
    if R.tokens_held(game.state, seat) + _MOST_RETURNED <= R.TOKEN_LIMIT:
        return {}  # no move can pass ten: spare playing each
    found = {}
    for a in legal:
        after = game.clone()
        after.step(int(a))
        if after.phase == "return" and after.current_player == seat:
            found[int(a)] = after
    return found


def _due(after: SplendorGame, seat: int) -> int:
    """The tokens ``seat`` must return in ``after``, a position that ``_past_ten`` found."""
    return int(R.tokens_held(after.state, seat)) - R.TOKEN_LIMIT


def _legal_move_lines(game: SplendorGame, seat: int, legal: Sequence[int]) -> str:
    """``id: name`` per legal move (the board shows what each names), marked where returns follow it."""
    past = _past_ten(game, seat, legal)
    return "\n".join(f"{a}: {ACTION_NAMES[a]}" + (f" (then return {_due(past[a], seat)})" if a in past else "")
                     for a in legal)


# --- reading the action ------------------------------------------------------------------------------
def _colour(name: Any, field: str, allow_gold: bool) -> str:
    colours = R.TOKEN_NAMES if allow_gold else R.COLOURS
    key = _COLOUR_WORDS.get(name.strip().lower(), "") if isinstance(name, str) else ""
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
        raise ReplyError("parse", f"{field} must be a list of colours or an object such as {{\"red\": 1}}, "
                                  f"got {value!r}")
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
    """Return actions for ``["red", "gold"]`` or ``{"red": 2, "gold": 1}``: one per token, in colour order (the
    order never changes which are legal), gold last; ``ReplyError`` past ``_MOST_RETURNED``, before any is made."""
    too_long = isinstance(value, list) and len(value) > _MOST_RETURNED  # refused unread
    counts = {} if too_long else _token_counts(value, field, allow_gold=True)
    total = len(value) if isinstance(value, list) else sum(counts.values())
    if total > _MOST_RETURNED:
        raise ReplyError("parse", f"{field}: at most {_MOST_RETURNED} tokens are returned after one move, got {total}")
    return [move_id(f"return:{colour}") for colour, n in counts.items() for _ in range(n)]


def _checked_returns(game: SplendorGame, seat: int, action: int, returns: list[int]) -> tuple[tuple[int, ...], str]:
    """The returns that can be played in turn after ``action`` (played on a copy), up to the first that cannot,
    and why that one cannot ("" when all can). The move stands whatever its returns: those dropped are asked for
    at the return step, as the model's own decisions."""
    after = game.clone()
    after.step(action)
    for done, back in enumerate(returns):
        if after.phase != "return" or after.current_player != seat:
            return tuple(returns[:done]), f"{ACTION_NAMES[action]} leaves you {done} to return, not {len(returns)}"
        if not after.legal_mask()[back]:
            return tuple(returns[:done]), f"tokensToReturn: {after.explain_illegal(back)}"
        after.step(back)
    return tuple(returns), ""


class _SplendorPrompt:
    """Splendor's ``GamePrompt`` (see ``tabletop_rl.agents.llm.policy``)."""

    game = "splendor"
    system_prompt = SYSTEM_PROMPT

    def user_message(self, game: SplendorGame, seat: int, legal: Sequence[int], legal_list: bool) -> str:
        """The board as ``seat`` sees it and the legal moves (main phase), or a short question (token return,
        noble choice)."""
        if game.phase == "return":
            me = game.player(seat)
            held = sum(me["tokens"].values())
            head = (f"You are P{seat} and hold {held} tokens {json.dumps(me['tokens'])}; the limit is 10, so return "
                    f"tokens now ({held - R.TOKEN_LIMIT} to return in all). Your bonuses: {json.dumps(me['bonuses'])}.")
            return f"{head}\nLegal moves:\n{_legal_move_lines(game, seat, legal)}"
        if game.phase == "noble":
            head = f"You are P{seat} and several nobles would visit you; choose one."
            return f"{head}\nLegal moves:\n{_legal_move_lines(game, seat, legal)}"
        text = f"You are P{seat}.\n{render_ansi(game, viewer=seat, color=False)}\n"
        if legal_list:
            return text + f"Legal moves (reply with the number):\n{_legal_move_lines(game, seat, legal)}"
        return text + "Choose a legal move; give it as a move name or a structured move."

    def action_schema(self, game: SplendorGame, seat: int, legal: Sequence[int], legal_list: bool) -> dict[str, Any]:
        """The JSON schema of ``action``: one of the legal ids, or one of the moves that pass ten tokens with the
        tokens to return, of colours held then (a strict schema: every property required, so the list is there even
        when empty); without the list, an id, a name or an object (a structured move, or a move with its returns)."""
        if not legal_list:
            return {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "object"}]}
        ids = {"type": "integer", "enum": [int(a) for a in legal]}
        past = _past_ten(game, seat, legal)
        if not past:
            return ids
        # one list for every such move: the colours held after any of them, as many as the most due
        held = {colour for after in past.values() for colour, n in after.player(seat)["tokens"].items() if n}
        returns = {"type": "array", "items": {"type": "string", "enum": [c for c in R.TOKEN_NAMES if c in held]},
                   "maxItems": max(_due(after, seat) for after in past.values())}
        with_returns = {"type": "object", "additionalProperties": False, "required": ["move", "tokensToReturn"],
                        "properties": {"move": {"type": "integer", "enum": list(past)}, "tokensToReturn": returns}}
        return {"anyOf": [ids, with_returns]}

    def parse_action(self, value: Any, game: SplendorGame, seat: int, legal: Sequence[int]) -> PlannedMove:
        """The move a reply's ``action`` names, with the returns it gives played next (up to the first that
        cannot be played, which ``PlannedMove.dropped`` names); ``ReplyError`` when the move is not understood
        or not legal now."""
        returns: list[int] = []
        if isinstance(value, dict) and "move" in value:
            action = _move_id(value["move"])
            returns = _returns(value.get("tokensToReturn") or [], "tokensToReturn")
        elif isinstance(value, dict):
            action, returns = self._structured(value, game, seat)
        else:
            action = _move_id(value)
        if action not in legal:
            raise ReplyError("illegal", game.explain_illegal(action) + " (it is not among the legal moves)")
        plan, dropped = _checked_returns(game, seat, action, returns) if returns else ((), "")
        return PlannedMove(action, plan, dropped)

    @staticmethod
    def _structured(value: dict, game: SplendorGame, seat: int) -> tuple[int, list[int]]:
        """The move and the returns after it (a return's own move is the first token it gives back)."""
        move_type = str(value.get("type", "")).strip().upper()
        if move_type == "RETURN_TOKENS":
            returns = _returns(value.get("tokens"), "tokens")
            if not returns:
                raise ReplyError("parse", "RETURN_TOKENS needs tokens such as {\"red\": 1}")
            return returns[0], returns[1:]
        if move_type not in _STRUCTURED:
            raise ReplyError("parse", f"unknown move type {value.get('type')!r} (known: "
                                      f"{', '.join([*_STRUCTURED, 'RETURN_TOKENS'])})")
        action = move_id(_STRUCTURED[move_type](value, game, seat))
        return action, _returns(value.get("tokensToReturn") or [], "tokensToReturn")

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
