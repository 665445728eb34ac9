"""Terminal play: an ASCII map of a player's fog-of-war view, a turn summary, and natural commands.

``play_main(["--mode", "hvh"])`` (two people at one keyboard, with a hand-over prompt between their
views), ``--mode hvl`` (a person against a policy, ``--opponent SPEC``, default ``llm``) or
``--mode lvl`` (two policies, ``--players SPEC1 SPEC2``; the spectator's map is shown). Commands:

    move 3 ships from A to B | send 5 from D to F | attack C with 10 from A
    orders | cancel | pass / done | status | help | save FILE | quit

>>> parse_move("send 5 from D to F")
{'from': 'D', 'to': 'F', 'ships': 5}
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any, TextIO

from tabletop_rl.agents import make_policy
from tabletop_rl.agents.llm.client import LLMError
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.actions import MOVE_HELP as HELP
from tabletop_rl.games.space_conquest.actions import check_orders, star_index
from tabletop_rl.games.space_conquest.baselines import policy_orders
from tabletop_rl.games.space_conquest.game import SpaceConquestGame
from tabletop_rl.games.space_conquest.render import render_map, render_text, summary

__all__ = ["make_seats", "parse_move", "play_main"]

_PROG = "tabletop play space-conquest"
_DEFAULT_SAVE = "space-conquest-save.json"
_MOVE_PATTERNS = (
    re.compile(r"^(?:move|send)\s+(?P<n>\S+)(?:\s+ships?)?\s+from\s+(?P<a>\w+)\s+to\s+(?P<b>\w+)$"),
    re.compile(r"^attack\s+(?P<b>\w+)\s+with\s+(?P<n>\S+)(?:\s+ships?)?\s+from\s+(?P<a>\w+)$"),
)


# --- commands --------------------------------------------------------------------------------
def parse_move(text: str) -> dict[str, Any]:
    """A move command as an order, or ``ValueError`` saying what is wrong.

    >>> parse_move("attack c with 10 from a")
    {'from': 'A', 'to': 'C', 'ships': 10}
    """
    for pattern in _MOVE_PATTERNS:
        m = pattern.match(text.strip().lower())
        if m:
            if not m["n"].isdigit():
                raise ValueError(f"{m['n']!r} is not a number of ships")
            letters = [R.LETTERS[star_index(m[k])] for k in ("a", "b")]
            return {"from": letters[0], "to": letters[1], "ships": int(m["n"])}
    raise ValueError(f"unknown command {text.strip()!r}; type help")


class _Terminal:
    """Reads commands from ``stdin`` and writes to ``stdout`` (swappable for tests)."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.stdin, self.stdout = stdin or sys.stdin, stdout or sys.stdout

    def say(self, text: str) -> None:
        print(text, file=self.stdout)

    def ask(self, prompt: str) -> str | None:
        """One line of input, or None at the end of input."""
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        return None if line == "" else line.strip()


class _Quit(Exception):
    """The person typed quit (or input ended)."""


def _human_orders(game: SpaceConquestGame, player: int, term: _Terminal) -> dict[str, Any]:
    """Ask ``player`` for this turn's orders until pass/done; a bad command is re-asked with the reason."""
    term.say(render_map(game, player))
    term.say(summary(game, player))
    moves: list[dict[str, Any]] = []
    while True:
        line = term.ask(f"player {player + 1}> ")
        if line is None or line.lower() == "quit":
            raise _Quit
        word = line.lower().split()[0] if line.split() else ""
        if word in ("pass", "done"):
            return {"moves": moves}
        if word == "help" or not word:
            term.say(HELP)
        elif word == "status":
            term.say(render_map(game, player) + "\n" + summary(game, player))
        elif word == "orders":
            term.say("\n".join(f"  {m['ships']} from {m['from']} to {m['to']}" for m in moves) or "  no orders yet")
        elif word == "cancel":
            moves = []
            term.say("orders dropped")
        elif word == "save":
            _save(game, line.split(maxsplit=1)[1:], term)
        else:
            moves = _add_move(game, player, moves, line, term)


def _add_move(game: SpaceConquestGame, player: int, moves: list[dict], line: str, term: _Terminal) -> list[dict]:
    """``moves`` plus the move in ``line`` if it is valid with them; otherwise say why and keep ``moves``."""
    try:
        move = parse_move(line)
    except ValueError as e:
        term.say(f"! {e}")
        return moves
    check = check_orders(game.state, player, {"moves": moves + [move]})
    if check.errors:
        term.say(f"! {check.errors[0]['message']}")
        return moves
    d = game.distance(move["from"], move["to"])
    term.say(f"ok: {move['ships']} from {move['from']} to {move['to']} ({d} turn{'' if d == 1 else 's'})")
    return moves + [move]


def _save(game: SpaceConquestGame, args: list[str], term: _Terminal) -> None:
    if not args:
        term.say("! save needs a file name: save FILE")
        return
    problem = _write_save(game, args[0])
    term.say(f"! {problem}" if problem else f"saved to {args[0]}")


def _write_save(game: SpaceConquestGame, path: str) -> str | None:
    """Write ``game`` to ``path``; the reason it could not be written, or None."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(game.to_json())
    except OSError as e:
        return f"cannot save to {path}: {e.strerror}"
    return None


def _play(game: SpaceConquestGame, seats: list[Any], term: _Terminal) -> dict[str, Any]:
    """Play ``game`` to the end; a seat is ``"human"`` or a policy. Two humans get a hand-over
    prompt (and a cleared screen) before each view, so their views never mix."""
    humans = [p for p, seat in enumerate(seats) if seat == "human"]
    while not game.is_over:
        # policies answer first, so a failing LLM server costs nobody orders already typed
        orders = {p: policy_orders(seat, game, p) for p, seat in enumerate(seats) if seat != "human"}
        for p in humans:
            if len(humans) > 1:
                term.say("\n" * 40)
                if term.ask(f"Hand over to player {p + 1} and press Enter (player {2 - p}: look away) ") is None:
                    raise _Quit
            orders[p] = _human_orders(game, p, term)
        if len(humans) > 1:
            term.say("\n" * 40)
        game.step(orders[0], orders[1])
        if not humans:
            term.say("--- " + render_text(game, None))
    result = game.result()
    outcome = "a draw" if result["winner"] is None else f"player {result['winner'] + 1} wins"
    term.say(f"Game over after turn {result['turn']} ({result['end']}): {outcome}. "
             f"RU {result['ru']}, ships {result['ships']}")
    return result


def play_main(argv: list[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """``tabletop play space-conquest`` entry point; returns the exit status.

    Bad arguments, an unreadable save and an LLM server that refuses or stays unreachable are one line
    on standard error. ``quit``, the end of input, Ctrl-C and a failed LLM all leave the game saved in
    ``--save``.
    """
    args = _build_parser().parse_args(argv)
    term = _Terminal(stdin, stdout)
    try:
        game = _load_or_new(args)
        seats = make_seats(args)
    except ValueError as e:
        print(f"{_PROG}: error: {e}", file=sys.stderr)
        return 2
    try:
        _play(game, seats, term)
    except (_Quit, KeyboardInterrupt):  # Ctrl-C keeps the game too
        term.say("\n" + _keep(game, args.save))
    except LLMError as e:
        print(f"{_PROG}: error: {e}; {_keep(game, args.save)}", file=sys.stderr)
        return 1
    return 0


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG, description="Play Space Conquest in the terminal: hvh (two people at one keyboard), hvl (you "
                               "against a policy, by default the tool-using LLM) or lvl (two policies, watched).")
    parser.add_argument("--mode", choices=("hvh", "hvl", "lvl"), default="hvl")
    parser.add_argument("--opponent", default="llm", metavar="SPEC",
                        help="the policy you play in hvl (default llm; e.g. heuristic, llm:model=M,base_url=URL)")
    parser.add_argument("--players", nargs=2, default=["llm", "llm"], metavar=("SPEC1", "SPEC2"),
                        help="the two policies of lvl, separated by a space (default: llm llm)")
    parser.add_argument("--seat", type=int, choices=(1, 2), default=1, help="your seat in hvl (default 1)")
    parser.add_argument("--seed", type=int, default=None, help="map seed (default: a random one)")
    parser.add_argument("--max-turns", type=int, default=R.DEFAULT_MAX_TURNS, metavar="N",
                        help=f"turn cap (default {R.DEFAULT_MAX_TURNS})")
    parser.add_argument("--load", metavar="FILE", help="continue a saved game")
    parser.add_argument("--save", default=_DEFAULT_SAVE, metavar="FILE",
                        help=f"where quit, the end of input or a failed LLM saves the game (default {_DEFAULT_SAVE})")
    return parser


def _keep(game: SpaceConquestGame, path: str) -> str:
    """Save ``game`` to ``path`` and say how to go on (or why it could not be saved)."""
    return _write_save(game, path) or f"game saved to {path}; go on with: {_PROG} --load {path}"


def _load_or_new(args: argparse.Namespace) -> SpaceConquestGame:
    if args.load:
        try:
            with open(args.load, encoding="utf-8") as f:
                return SpaceConquestGame.from_json(f.read())
        except OSError as e:
            raise ValueError(f"cannot read {args.load}: {e.strerror}") from None
        except UnicodeDecodeError:
            raise ValueError(f"{args.load} is not a saved game (not text)") from None
    return SpaceConquestGame(seed=args.seed, max_turns=args.max_turns)


def make_seats(args: argparse.Namespace) -> list[Any]:
    if args.mode == "hvh":
        return ["human", "human"]
    if args.mode == "hvl":
        seats: list[Any] = ["human", make_policy(args.opponent, game="space_conquest")]
        return seats if args.seat == 1 else seats[::-1]
    return [make_policy(spec, game="space_conquest", seed=p) for p, spec in enumerate(args.players)]
