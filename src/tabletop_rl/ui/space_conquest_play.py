"""Terminal play: an ASCII map of a player's fog-of-war view, a turn summary, and natural commands.

``play_main([])`` is a person against the heuristic (seat 0); ``--mode hvh`` two people at one keyboard,
with the screen cleared and a hand-over prompt between their views; ``--mode hvl`` a person against a
policy (``--opponent SPEC``, default ``heuristic``, so nothing needs a network or an API key);
``--mode lvl`` two policies (``--players SPEC1 SPEC2``; the spectator's map is shown). A save keeps the
mode and the seats, so ``--load FILE`` alone goes on as before. Commands:

    move 3 ships from A to B | send 5 from D to F | attack C with 10 from A
    orders | cancel | pass / done | status | help | save FILE | quit

>>> parse_move("send 5 from D to F")
{'from': 'D', 'to': 'F', 'ships': 5}
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shlex
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

from tabletop_rl.agents import make_policy
from tabletop_rl.agents.llm.client import LLMError
from tabletop_rl.core.files import replace_file
from tabletop_rl.games.space_conquest import observe as O
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.actions import MOVE_HELP as HELP
from tabletop_rl.games.space_conquest.actions import check_orders, star_index
from tabletop_rl.games.space_conquest.baselines import RandomPolicy, plan_orders, policy_orders
from tabletop_rl.games.space_conquest.game import SpaceConquestGame, parse_save
from tabletop_rl.games.space_conquest.render import render_map, render_text, summary

__all__ = ["make_seats", "parse_move", "play_main", "seat_specs"]

_PROG = "tabletop play space-conquest"
_DEFAULT_SAVE = "space-conquest-save.json"
_DEFAULT_OPPONENT = "heuristic"  # plays offline: plain `tabletop play space-conquest` needs no server or key
_MODES = ("hvh", "hvl", "lvl")
_HUMAN = "human"  # a seat's spec in a save when a person plays it
#: cursor home, clear the screen, clear the scrollback: 40 blank lines leave the other player's orders a
#: scroll away, this does not (xterm and the terminals that follow it)
_CLEAR_SCREEN = "\x1b[H\x1b[2J\x1b[3J"
_COMPILE_NOTICE_AFTER_S = 1.5  # a start slower than this is numba compiling (a cached start takes ~0.4 s): say so
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
        print(text, file=self.stdout, flush=True)

    def ask(self, prompt: str) -> str | None:
        """One line of input, or None at the end of input."""
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        return None if line == "" else line.strip()

    def clear(self, player: int) -> None:
        """Wipe what is on the screen before seat ``player`` looks. Escape codes only go to a terminal;
        a pipe or file gets a marker line, so a log shows where the screen was wiped."""
        isatty = getattr(self.stdout, "isatty", None)
        if isatty is not None and isatty():
            self.stdout.write(_CLEAR_SCREEN)
            self.stdout.flush()
        else:
            self.say(f"{'-' * 24} screen cleared for P{player} {'-' * 24}")


class _Quit(Exception):
    """The person typed quit (or input ended)."""


@dataclass
class _Session:
    """One terminal game: the seats (``"human"`` or a policy spec), where it saves, and the files that hold
    this game, which its saves may overwrite (any other existing file is another game's)."""

    game: SpaceConquestGame
    mode: str
    specs: list[str]
    seats: list[Any]
    save: str
    term: _Terminal
    own: set[str] = field(default_factory=set)

    def save_data(self) -> dict[str, Any]:
        """The game's save plus ``play``: the mode and the seats' specs, so ``--load`` alone resumes it."""
        return {**self.game.to_dict(), "play": {"mode": self.mode, "seats": self.specs}}


def _human_orders(session: _Session, player: int) -> dict[str, Any]:
    """Ask ``player`` for this turn's orders until pass/done; a bad command is re-asked with the reason."""
    game, term = session.game, session.term
    term.say(render_map(game, player))
    term.say(summary(game, player))
    moves: list[dict[str, Any]] = []
    while True:
        line = term.ask(f"P{player}> ")
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
            _save_command(session, line.split(maxsplit=1)[1:])
        else:
            moves = _add_move(game, player, moves, line, term)


def _add_move(game: SpaceConquestGame, player: int, moves: list[dict], line: str, term: _Terminal) -> list[dict]:
    """The orders after the command in ``line``: with its move when valid; without it when the move alone is
    bad (the rules would skip it); none at all when it over-commits a star, since the rules reject such a
    set whole (docs/space_conquest.md §9). The screen says which."""
    try:
        move = parse_move(line)
    except ValueError as e:
        term.say(f"! {e}")
        return moves
    check = check_orders(game.state, player, {"moves": moves + [move]})
    if check.overcommitted:
        return _reject_all(moves + [move], check.overcommitted, term)
    if check.errors:
        term.say(f"! {check.errors[0]['message']}")
        return moves
    d = game.distance(move["from"], move["to"])
    term.say(f"ok: {move['ships']} from {move['from']} to {move['to']} ({d} turn{'' if d == 1 else 's'})")
    return moves + [move]


def _reject_all(moves: list[dict], reason: str, term: _Terminal) -> list[dict]:
    """List every typed move as rejected and leave no orders standing (they are typed again or not at all)."""
    term.say(f"! {reason}: over-committed, so the whole order set is rejected (rules §9):")
    for m in moves:
        term.say(f"  rejected: {m['ships']} from {m['from']} to {m['to']}")
    term.say("  no orders stand now: give new ones, or done to end the turn without moves")
    return []


# --- saving ----------------------------------------------------------------------------------
def _save_command(session: _Session, args: list[str]) -> None:
    if not args:
        session.term.say("! save needs a file name: save FILE")
        return
    problem = _write_save(session, args[0])
    session.term.say(f"! {problem}" if problem else f"saved to {args[0]}")


def _write_save(session: _Session, path: str) -> str | None:
    """Write the session's game to ``path``; the reason it could not (or would not) be written, or None."""
    key = os.path.realpath(path)
    if os.path.exists(path) and key not in session.own:
        return f"{path} already exists and holds another game; choose another name"
    text = json.dumps(session.save_data(), separators=(",", ":"))
    try:
        replace_file(path, lambda temp: temp.write_text(text, encoding="utf-8"))
    except ValueError as e:
        return str(e)
    except OSError as e:
        return f"cannot save to {path}: {e.strerror}"
    session.own.add(key)
    return None


def _keep(session: _Session) -> str:
    """Save the game to the session's file and give the command that goes on with it (or why it could not)."""
    return _write_save(session, session.save) or (
        f"game saved to {session.save}; go on with: {_PROG} --load {shlex.quote(session.save)}")


def _save_target(wanted: str | None, loaded: str | None) -> tuple[str, str]:
    """Where this game saves, and a note when that is not the file asked for. A loaded game saves back to its
    own file; a file holding another game is never overwritten: the game takes the next free name."""
    path = wanted or loaded or _DEFAULT_SAVE
    if not os.path.exists(path) or (loaded is not None and os.path.exists(loaded) and os.path.samefile(path, loaded)):
        return path, ""
    stem, suffix = os.path.splitext(path)
    free = next(f"{stem}-{n}{suffix}" for n in itertools.count(2) if not os.path.exists(f"{stem}-{n}{suffix}"))
    return free, f"{path} exists (another game, kept); this game saves to {free}"


# --- the game loop ---------------------------------------------------------------------------
def _hand_over(term: _Terminal, player: int) -> None:
    """Clear the screen and wait for ``player`` (0 or 1) to take the keyboard."""
    term.clear(player)
    line = term.ask(f"Hand over to P{player} and press Enter (P{1 - player}: look away) ")
    if line is None or line.lower() == "quit":
        raise _Quit


def _play(session: _Session) -> dict[str, Any]:
    """Play to the end; two people get a cleared screen and a hand-over prompt before each view, so their
    views and orders never share the screen."""
    game, term, seats = session.game, session.term, session.seats
    humans = [p for p, seat in enumerate(seats) if seat == _HUMAN]
    while not game.is_over:
        # policies answer first, so a failing LLM server costs nobody orders already typed
        orders = {p: policy_orders(seat, game, p) for p, seat in enumerate(seats) if seat != _HUMAN}
        for p in humans:
            if len(humans) > 1:
                _hand_over(term, p)
            orders[p] = _human_orders(session, p)
        game.step(orders[0], orders[1])
        if not humans:
            term.say("--- " + render_text(game, None))
    result = game.result()
    outcome = "a draw" if result["winner"] is None else f"P{result['winner']} wins"
    term.say(f"Game over after turn {result['turn']} ({result['end']}): {outcome}. "
             f"RU {result['ru']}, ships {result['ships']}")
    return result


def _compile_kernels() -> None:
    """Run every compiled kernel a session calls on a throwaway two-turn game, so numba compiles (or loads
    its cache) now rather than after the first ``done``."""
    game = SpaceConquestGame(seed=0, max_turns=2)
    random_policy = RandomPolicy(seed=0)
    while not game.is_over:
        for p in range(2):
            render_map(game, p)
            summary(game, p)
            check_orders(game.state, p, plan_orders(O.player_view(game, p)))
        render_text(game, None)
        game.result()
        home = game.home_letter(0)
        game.step({"moves": [{"from": home, "to": game.nearest_letter(home), "ships": 1}]},
                  policy_orders(random_policy, game, 1))


def _warm_up(term: _Terminal) -> None:
    """Compile the kernels, saying so when that takes noticeable time (the first run; later runs load numba's
    cache at once and say nothing)."""
    shown = threading.Event()

    def announce() -> None:
        shown.set()
        term.say("compiling kernels (first run only)...")

    start = time.perf_counter()
    notice = threading.Timer(_COMPILE_NOTICE_AFTER_S, announce)
    notice.start()
    try:
        _compile_kernels()
    finally:
        notice.cancel()
        notice.join()  # a notice being written is finished before anything else is
    if shown.is_set():
        term.say(f"compiled in {time.perf_counter() - start:.0f} s")


def play_main(argv: list[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """``tabletop play space-conquest`` entry point; returns the exit status.

    Bad arguments, an unreadable or contradictory save, a missing API key and an LLM server that refuses or
    stays unreachable are one line on standard error. ``quit``, the end of input, Ctrl-C and a failed LLM
    all leave the game saved (``--save``; a loaded game saves back to its file) with the command that goes on.
    """
    args = _build_parser().parse_args(argv)
    term = _Terminal(stdin, stdout)
    try:
        saved = _read_save(args.load) if args.load else None
        mode, specs = seat_specs(args, saved.get("play") if saved else None)
        seats = _make_policies(specs)
        save, note = _save_target(args.save, args.load)
        _warm_up(term)
        game = SpaceConquestGame.from_dict(saved) if saved else SpaceConquestGame(
            args.seed, R.DEFAULT_MAX_TURNS if args.max_turns is None else args.max_turns)
    except ValueError as e:
        print(f"{_PROG}: error: {e}", file=sys.stderr)
        return 2
    own = {os.path.realpath(path) for path in (save, args.load) if path}
    session = _Session(game, mode, specs, seats, save, term, own)
    term.say(_introduction(session) + (f"\n{note}" if note else ""))
    try:
        _play(session)
    except (_Quit, KeyboardInterrupt):  # Ctrl-C keeps the game too
        term.say("\n" + _keep(session))
    except LLMError as e:
        print(f"{_PROG}: error: {e}; {_keep(session)}", file=sys.stderr)
        return 1
    return 0


def _introduction(session: _Session) -> str:
    """Who plays which seat, and where the game is saved."""
    names = {_HUMAN: "you" if session.mode == "hvl" else "a person at this keyboard"}
    seats = ", ".join(f"P{p}: {names.get(spec, spec)}" for p, spec in enumerate(session.specs))
    return f"Space Conquest, turn {session.game.turn}, map seed {session.game.seed}; {seats}. " \
           f"quit saves the game to {session.save}."


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG, description="Play Space Conquest in the terminal: hvl (you against a policy, by default the "
                               "heuristic bot: no network or API key needed), hvh (two people at one keyboard) or "
                               "lvl (two policies, watched). A save keeps the mode and the seats: --load FILE alone "
                               "goes on with them (a flag given with it changes them).")
    parser.add_argument("--mode", choices=_MODES, default=None, help="default hvl (or the loaded game's)")
    parser.add_argument("--opponent", default=None, metavar="SPEC",
                        help=f"the policy you play in hvl (default {_DEFAULT_OPPONENT}; e.g. random, "
                             "llm:model=M,base_url=URL, which needs an API key or a local server)")
    parser.add_argument("--players", nargs=2, default=None, metavar=("SPEC1", "SPEC2"),
                        help=f"the two policies of lvl, separated by a space (default: {_DEFAULT_OPPONENT} "
                             f"{_DEFAULT_OPPONENT})")
    parser.add_argument("--seat", type=int, choices=(0, 1), default=None, help="your seat in hvl, 0 or 1 (default 0)")
    parser.add_argument("--seed", type=int, default=None, help="map seed (default: a random one)")
    parser.add_argument("--max-turns", type=int, default=None, metavar="N",
                        help=f"turn cap (default {R.DEFAULT_MAX_TURNS})")
    parser.add_argument("--load", metavar="FILE", help="continue a saved game, with its mode and seats")
    parser.add_argument("--save", default=None, metavar="FILE",
                        help=f"where quit, the end of input or a failed LLM saves the game (default: the loaded "
                             f"file, else {_DEFAULT_SAVE}); a file holding another game is never overwritten: "
                             f"the game then saves to the next free name (FILE-2.json, ...) and says so")
    return parser


def _read_save(path: str) -> dict[str, Any]:
    """The JSON of a save file (the game is checked when it is built, after the kernels are compiled)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a saved game (not text)") from None
    data = parse_save(text)
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a saved game (not a JSON object)")
    return data


def _saved_play(play: Any) -> tuple[str | None, list[str]]:
    """The mode and seat specs kept in a save's ``play`` (none in a save written by the Python API)."""
    if play is None:
        return None, []
    ok = isinstance(play, dict) and play.get("mode") in _MODES and isinstance(play.get("seats"), list) \
        and len(play["seats"]) == 2 and all(isinstance(s, str) and s for s in play["seats"]) \
        and play["seats"].count(_HUMAN) == _MODES[::-1].index(play["mode"])  # people: hvh 2, hvl 1, lvl 0
    if not ok:
        raise ValueError('save: play must be {"mode": "hvh"|"hvl"|"lvl", "seats": [two specs]}')
    return play["mode"], play["seats"]


def seat_specs(args: argparse.Namespace, saved_play: Any = None) -> tuple[str, list[str]]:
    """The mode and each seat's spec (``"human"`` or a policy spec): a flag given wins, then what the save kept,
    then the defaults (hvl, you in seat 0 against the heuristic)."""
    if getattr(args, "load", None) and (getattr(args, "seed", None) is not None
                                        or getattr(args, "max_turns", None) is not None):
        raise ValueError("--load goes on with the saved map and turn cap; drop --seed and --max-turns")
    saved_mode, saved = _saved_play(saved_play)
    mode = args.mode or saved_mode or "hvl"
    if mode == "hvh":
        return mode, [_HUMAN, _HUMAN]
    if mode == "lvl":
        players = getattr(args, "players", None) or (saved if saved_mode == "lvl" else [_DEFAULT_OPPONENT] * 2)
        return mode, list(players)
    kept = saved if saved_mode == "hvl" else [_HUMAN, _DEFAULT_OPPONENT]
    seat = getattr(args, "seat", None)
    seat = kept.index(_HUMAN) if seat is None else seat  # not `or`: seat 0 is a choice
    opponent = getattr(args, "opponent", None) or next(s for s in kept if s != _HUMAN)
    return mode, [_HUMAN, opponent] if seat == 0 else [opponent, _HUMAN]


def _make_policies(specs: list[str]) -> list[Any]:
    """The seats: ``"human"`` or the policy a spec names (seeded by seat, so a rerun plays the same)."""
    return [spec if spec == _HUMAN else make_policy(spec, game="space_conquest", seed=p)
            for p, spec in enumerate(specs)]


def make_seats(args: argparse.Namespace) -> list[Any]:
    """The seats the arguments ask for: ``"human"`` or a policy."""
    return _make_policies(seat_specs(args)[1])
