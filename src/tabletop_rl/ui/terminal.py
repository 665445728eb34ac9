"""Terminal play against policies, and replays of recorded games; any game, through the ``Game`` contract.

A person's turn shows the board from their seat and the legal moves, each numbered by its action id (so a
move keeps its number from turn to turn), moves that buy listed first; they answer with a number or a move
name. ``help`` explains, ``board`` redraws, ``quit`` (or end of input) saves the game to a file that
``--load`` resumes.

>>> import io, pathlib, tempfile
>>> out, save = io.StringIO(), pathlib.Path(tempfile.mkdtemp()) / "save.json"
>>> play_terminal(vs=["random"], seed=1, stdin=io.StringIO("quit\\n"), stdout=out, save=save)
0
>>> "saved" in out.getvalue()
True
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import IO, Any

from tabletop_rl.agents import make_policy
from tabletop_rl.arena.llm import accounting_lines, note_lines
from tabletop_rl.arena.results import load_games, replay_steps
from tabletop_rl.arena.schedule import derive_seed
from tabletop_rl.core.files import check_save_target, replace_file
from tabletop_rl.core.game import Game, entry_moves
from tabletop_rl.core.text import use_color
from tabletop_rl.games import GAMES as GAME_NAMES
from tabletop_rl.games import game_class, read_game_name

__all__ = ["SAVE_FORMAT", "Table", "forfeit_seen", "load_table", "new_table", "play_terminal", "replay_frames",
           "replay_terminal", "result_line", "save_table", "step_moves", "to_you", "write_game_logs"]

#: The saved-game format of ``tabletop play`` and ``tabletop web`` (each resumes the other's saves).
SAVE_FORMAT = "tabletop-save/1"
_DEFAULT_SAVE = Path("tabletop-save.json")
_COMMANDS_HELP = """\
Answer with a move number from the list, or a move name. Other commands:
  help   this text          board   draw the board again
  quit   save and stop (resume with: tabletop play <game> --load FILE)"""


# --- play ----------------------------------------------------------------------------------------
@dataclass
class Table:
    """A game in progress: the game object, the person's seat (a player: a partnership in Klaverjas), each
    player's policy spec (None: the person), and the deal seed (policies are seeded from it)."""

    game: str
    state: Any
    seat: int
    specs: list[str | None]
    seed: int


def _opponents(vs: list[str], num_players: int, seat: int) -> list[str | None]:
    """Seat -> spec (``None`` for the person): one spec fills every other seat, else one per other seat.

    >>> _opponents(["greedy"], 3, seat=1)
    ['greedy', None, 'greedy']
    """
    if not 0 <= seat < num_players:
        raise ValueError(f"--seat must be in 0..{num_players - 1} for {num_players} players, got {seat}")
    others = num_players - 1
    if len(vs) not in (1, others):
        raise ValueError(f"--vs names {len(vs)} policies for {others} opponent seats; give 1 or {others}")
    specs = iter(vs * others if len(vs) == 1 else vs)
    return [None if s == seat else next(specs) for s in range(num_players)]


def new_table(game: str, vs: list[str], num_players: int, seat: int, seed: int | None) -> Table:
    """A fresh deal of ``game`` with the person at ``seat`` and ``vs`` at the other seats (``_opponents``)."""
    rules = game_class(game)
    if num_players not in rules.player_counts:
        raise ValueError(f"{game} is played by {', '.join(map(str, rules.player_counts))} players, "
                         f"not {num_players}")
    seed = int.from_bytes(os.urandom(7), "little") if seed is None else seed
    return Table(game, rules.new(seed, num_players), seat, _opponents(vs, num_players, seat), seed)


def load_table(path: Path) -> Table:
    """A game saved by ``save_table``; ``ValueError`` naming the problem when the file is not one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read saved game {path}: {e}") from None
    if not isinstance(data, dict) or data.get("format") != SAVE_FORMAT:
        raise ValueError(f"{path} is not a game saved by tabletop play (format {SAVE_FORMAT})")
    data["game"] = read_game_name(data.get("game"))
    problem = _save_problem(data)
    if problem:
        raise ValueError(f"saved game {path} is damaged: {problem}")
    try:
        state = game_class(data["game"]).from_json(data["position"])
    except ValueError as e:
        raise ValueError(f"saved game {path} is damaged: {e}") from None
    return Table(data["game"], state, data["seat"], data["players"], data["seed"])


def _save_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with the fields of a saved game besides its position, or None."""
    players = data.get("players")
    if data.get("game") not in GAME_NAMES:
        return f"'game' must be one of {', '.join(sorted(GAME_NAMES))}"
    if not isinstance(players, list) or not all(spec is None or isinstance(spec, str) for spec in players):
        return "'players' must be a list of policy specs (null for the person)"
    seat = data.get("seat")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < len(players) or players[seat]:
        return "'seat' must be the person's seat, whose entry in 'players' is null"
    if not isinstance(data.get("seed"), int) or isinstance(data["seed"], bool):
        return "'seed' must be a whole number"
    return None


def save_table(table: Table, path: Path) -> None:
    """Everything needed to go on: the position (hidden cards included, so do not read it), seats, seed.
    Written whole or not at all, and only over a regular file (``core.files.replace_file``)."""
    data = {"format": SAVE_FORMAT, "game": table.game, "seat": table.seat, "players": table.specs,
            "seed": table.seed, "position": json.loads(table.state.to_json())}
    text = json.dumps(data) + "\n"
    replace_file(path, lambda temp: temp.write_text(text, encoding="utf-8"))


def play_terminal(game: str = "splendor", vs: list[str] | None = None, num_players: int = 2, seat: int = 0,
                  seed: int | None = None, load: Path | None = None, save: Path = _DEFAULT_SAVE,
                  stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Play a game in the terminal; returns an exit status (0: finished or saved)."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    check_save_target(save)  # before the game, not after a person has played it
    table = load_table(load) if load is not None else new_table(game, vs or ["greedy"], num_players, seat, seed)
    state = table.state
    if state.simultaneous:  # a game played in tabletop web: this loop asks one seat at a time
        raise ValueError(f"{load} is a {table.game} game of tabletop web; resume it there (tabletop web --saves DIR)")
    policies = {s: make_policy(spec, game=table.game, seed=derive_seed(table.seed, s))
                for s, spec in enumerate(table.specs) if spec is not None}
    con = _Console(stdout)
    con.say(f"You are P{table.seat}; " + ", ".join(f"P{s} is {p.name}" for s, p in policies.items())
        + ". Type help for commands.")
    while not state.is_over:
        seat = state.current_player
        mover = state.player_of(seat)
        if mover != table.seat:
            action = policies[mover].act(state.observe(seat), state.legal_mask(), state.policy_info(seat))
            con.say(f"P{mover} ({policies[mover].name}) plays {_described(state, seat, action)}")
            state.step(action)
            continue
        choice = _ask_move(table, stdin, con)
        if choice is None:
            save_table(table, save)
            con.say(f"Game saved to {save}; resume with: tabletop play {table.game} --load {save}")
            return 0
        con.say(f"P{mover} (you) plays {_described(state, seat, choice)}")
        state.step(choice)
    con.say(state.render(viewer=table.seat, color=con.color))
    con.say(result_line(state))
    return 0


class _Console:
    """Output that reaches the person at once (flushed), with prompts left open for the answer."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.color = use_color(stream)

    def say(self, text: str = "") -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def prompt(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


def _described(state: Any, seat: int, action: int) -> str:
    """A move as the game describes it before it is played (Splendor: the name and the card it takes)."""
    return str(state.describe_move(state.move_record(seat, action)))


def _ask_move(table: Table, stdin: IO[str], con: _Console) -> int | None:
    """The person's legal move, asking again with the reason after a bad answer; ``None`` to quit."""
    state = table.state
    seat = state.current_player
    legal = [int(a) for a in state.legal_mask().nonzero()[0]]
    shown = sorted(((a, _described(state, seat, a)) for a in legal), key=lambda move: _listed_late(move[1]))
    moves = _move_list(shown)
    con.say(state.render(viewer=table.seat, color=con.color))
    con.say(moves)
    while True:
        con.prompt("your move> ")
        try:
            line = stdin.readline()
        except KeyboardInterrupt:
            line = ""
        if not line:  # end of input or Ctrl-C: keep the game rather than lose it
            con.say()
            return None
        answer = line.strip()
        if answer.lower() in ("quit", "q", "exit"):
            return None
        if answer.lower() in ("help", "?", "h"):
            con.say(_COMMANDS_HELP + "\n" + state.rules_help())
        elif answer.lower() == "board":
            con.say(state.render(viewer=table.seat, color=con.color))
            con.say(moves)
        elif answer:
            action, problem = _parse_move(state, answer, legal)
            if problem is None:
                return action
            con.say(f"{to_you(problem, table.seat)}; try again (help lists the commands)")


def _parse_move(state: Any, answer: str, legal: list[int]) -> tuple[int, str | None]:
    """``(action, None)`` for a legal answer (a number from the list, the move's action id, or its name), else
    ``(-1, reason)``."""
    if answer.isdigit():
        number = int(answer)
        if number in legal:
            return number, None
        return -1, f"there is no move {number} in the list: choose a number shown or type a move name"
    try:
        action = state.move_id(answer)
    except ValueError as e:
        return -1, str(e)
    if action not in legal:
        return -1, state.explain_illegal(action)
    return action, None


#: The game's reasons speak of the player in the third person ("player 0 holds"); said to that person,
#: the verb after "you" loses its -s.
_YOU_VERBS = {"has": "have", "holds": "hold", "is": "are", "was": "were", "does": "do", "needs": "need",
              "owns": "own", "qualifies": "qualify", "lacks": "lack"}


def to_you(reason: str, seat: int) -> str:
    """A game's reason, said to the person at ``seat``: "player 0's tokens" -> "your tokens", "player 0 already
    holds" -> "you already hold", and the "they" that refers back to them -> "you".

    The terminal and the web page both speak to the person this way.

    >>> to_you("buy:2.0: card 45 costs 6 more than player 0's tokens cover, and they hold 0 gold", 0)
    'buy:2.0: card 45 costs 6 more than your tokens cover, and you hold 0 gold'
    >>> to_you("reserve:1.0: player 1 already holds 3 reserved cards", 1)
    'reserve:1.0: you already hold 3 reserved cards'
    """
    text = re.sub(rf"\b(?:[Pp]layer |[Ss]eat |P){seat}'s\b", "your", reason)
    text = re.sub(rf"\b(?:[Pp]layer|[Ss]eat) {seat}\b|\bP{seat}\b", "you", text)
    if text != reason:  # only then is "they" the person (another reason's "they" may be someone else)
        text = re.sub(r"\bthey\b", "you", text)
    verbs = "|".join(_YOU_VERBS)
    return re.sub(rf"\byou((?: already| only| still| not)?) ({verbs})\b",
                  lambda m: f"you{m[1]} {_YOU_VERBS[m[2]]}", text)


_SHORT_NAME = 24  # the longest bare move name, Splendor's "take:white,green,black" and the like


#: Move kinds listed before the others: buying is what a person looks for first (Splendor's ids put the takes
#: and the 15 reserves before the buys).
_LISTED_FIRST = ("buy", "buy_reserved")


def _listed_late(name: str) -> bool:
    """Sort key of a described move: buys (False) before the rest (True); ``sorted`` keeps id order within each.

    >>> _listed_late("buy:1.0 [#2 W 0p | b1 g2 r1 k1]"), _listed_late("reserve:1.0 [#2 W 0p | b1 g2 r1 k1]")
    (False, True)
    """
    return name.partition(":")[0] not in _LISTED_FIRST


def _move_list(numbered: list[tuple[int, str]], line: int = 80) -> str:
    """Numbered names in as many columns as fit in ``line`` characters; short names and long ones (a move shown
    with its card) are laid out in separate blocks, so the short ones are not spread thin.

    >>> print(_move_list([(71, "pass")]))
    Legal moves:
      71 pass
    """
    long = _SHORT_NAME  # a bare move name fits; one shown with its card does not
    blocks = [[(k, name) for k, name in group] for _, group in groupby(numbered, key=lambda kn: len(kn[1]) > long)]
    return "Legal moves:\n" + "\n".join(row for block in blocks for row in _columns(block, line))


def _columns(block: list[tuple[int, str]], line: int) -> list[str]:
    """Rows of numbered cells, all as wide as the block's longest name."""
    width = max(len(name) for _, name in block) + 7  # "  12 " before a name, two spaces after
    columns = max(1, line // width)
    cells = [f"{k:4d} {name:<{width - 5}}" for k, name in block]
    return ["".join(cells[i:i + columns]).rstrip() for i in range(0, len(cells), columns)]


def result_line(state: Game) -> str:
    """E.g. ``Game over: P1 wins. Points: P0 12, P1 15``."""
    scores = ", ".join(f"P{s} {v}" for s, v in enumerate(state.scores))
    winners = state.winners
    if state.is_truncated:
        outcome = "stopped at the ply cap, no winner"
    elif not winners:
        outcome = "a draw"
    else:
        outcome = " and ".join(f"P{w}" for w in winners) + (" win" if len(winners) > 1 else " wins")
    return f"Game over: {outcome}. Points: {scores}"


# --- replay ----------------------------------------------------------------------------------------
def replay_frames(record: dict[str, Any]) -> list[Game]:
    """Every position of a recorded game, rebuilt from its seed and moves (``frames[k]``: after k steps); a move
    that does not replay is a one-line ``ValueError`` naming the game and the move (``replay_steps``)."""
    return [type(state).from_json(state.to_json()) for state in replay_steps(record)]


def _pick_record(path: Path, game_index: int | None) -> dict[str, Any]:
    """The game numbered ``game_index`` in a ``games.jsonl`` (or run folder); the first one by default."""
    if not Path(path).exists():
        raise ValueError(f"no such file: {path}")
    records = sorted(load_games(path, repair=False), key=lambda r: r["index"])
    if not records:
        raise ValueError(f"{path} holds no finished game")
    if game_index is None:
        return records[0]
    for record in records:
        if record["index"] == game_index:
            return record
    raise ValueError(f"{path} has no game {game_index} (games {records[0]['index']}..{records[-1]['index']})")


def replay_terminal(path: Path, game_index: int | None = None, stdin: IO[str] | None = None,
                    stdout: IO[str] | None = None, interactive: bool | None = None, seat: int | None = None) -> int:
    """Show a recorded game: step with n/p, jump with a step number, q to stop; from a pipe, print it all.
    The result is told once the last position is shown; stopping earlier says where, not how it ended.

    ``seat`` None shows the game as a spectator sees it; a seat number shows only what that seat saw
    (its fog of war, its hand), only its own LLM notes and, in a game of simultaneous moves, only its own orders.
    """
    return _show_record(_pick_record(path, game_index), stdin, stdout, interactive, seat)


def _show_record(record: dict[str, Any], stdin: IO[str] | None = None, stdout: IO[str] | None = None,
                 interactive: bool | None = None, seat: int | None = None) -> int:
    """``replay_terminal`` of one record, already loaded (and so checked) from its file."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    if seat is not None and not 0 <= seat < len(record["seats"]):
        raise ValueError(f"--seat must be in 0..{len(record['seats']) - 1} for game {record['index']}, got {seat}")
    frames = replay_frames(record)
    view = _Viewer(record, frames, seat, use_color(stdout))
    interactive = stdin.isatty() if interactive is None else interactive
    con = _Console(stdout)
    con.say(f"game {record['index']}: " + ", ".join(f"P{s} {spec}" for s, spec in enumerate(record["seats"]))
        + f"; seed {record['seed']}, {len(record['moves'])} {'turns' if frames[0].simultaneous else 'moves'}"
        + (f"; crashed: {record['error']}" if record["error"] else "")
        + ("" if seat is None else f"; as P{seat} saw it"))
    shown = len(frames) - 1
    if not interactive:
        for k in range(len(frames)):
            con.say(view.frame(k))
    else:
        shown = _navigate(view, stdin, con)
    ending = _ending(view, shown)
    if ending:
        con.say(ending)
    return 0


def _ending(view: _Viewer, shown: int) -> str | None:
    """The result once the replay has reached the last position (None for a record that stops before the end),
    a forfeit's with who forfeited and why; a viewer who stopped earlier is told where, not how the game ends:
    they may not want to know yet."""
    last = len(view.frames) - 1
    if shown < last:
        return f"stopped at {view.unit} {shown} of {last}"
    forfeit = forfeit_seen(view.record, view.seat)
    if forfeit is not None:
        said = f"P{forfeit['player']} ({forfeit['policy']}) forfeits" + (f": {forfeit['reason']}" if forfeit["reason"]
                                                                        else "")
        winners = " and ".join(f"P{w}" for w in view.record["winners"])
        scores = ", ".join(f"P{s} {v}" for s, v in enumerate(view.frames[-1].scores))
        return (f"{said}\n{note_lines(forfeit['note'])}Game over: P{forfeit['player']} forfeited; {winners} "
                f"win{'s' if len(view.record['winners']) == 1 else ''}. Points: {scores}")
    return result_line(view.frames[-1]) if view.frames[-1].is_over else None


def forfeit_seen(record: dict[str, Any], viewer: int | None) -> dict[str, Any] | None:
    """The forfeit that ended ``record`` as player ``viewer`` (None: a spectator) may see it, or None for a game with
    no forfeit: the ``player`` who forfeited and its ``policy``; the ``reason`` and the ``note`` of the decision
    (calls, rejected replies) only for a spectator and that player, as with every LLM note (``step_moves``)."""
    player = record.get("forfeit")
    if player is None:
        return None
    mine = viewer is None or viewer == player
    return {"player": player, "policy": record["seats"][player],
            "reason": record.get("forfeit_reason") if mine else None,
            "note": record.get("forfeit_note") if mine else None}


@dataclass
class _Viewer:
    """Frames of a replay as ``seat`` (None: a spectator) may see them."""

    record: dict[str, Any]
    frames: list[Any]
    seat: int | None
    color: bool

    @property
    def unit(self) -> str:
        """What one step of the game is called: a turn of simultaneous orders, else a ply."""
        return "turn" if self.frames[0].simultaneous else "ply"

    def frame(self, k: int) -> str:
        """A header naming the moves that led to frame ``k`` (with LLM notes), then the board. A game of turns
        numbers them from 1, as its board does, which shows the turn whose orders it awaits: frame ``k`` comes
        after turn ``k`` and before turn ``k + 1``."""
        last = len(self.frames) - 1
        if not k:
            head = f"--- before turn 1/{last}: start" if self.frames[0].simultaneous else f"--- ply 0/{last}: start"
        else:
            head = f"--- {'after turn' if self.frames[0].simultaneous else 'ply'} {k}/{last}: {self._moves(k)}"
        return head + "\n" + self.frames[k].render(viewer=self.seat, color=self.color)

    def _moves(self, k: int) -> str:
        """The moves of step ``k`` that the viewer may see, then any LLM's reasoning and cost under them
        (named by seat when several seats moved at once)."""
        shown = step_moves(self.record, self.frames[k - 1], k, self.seat)
        text = "; ".join(f"P{m['player']} ({m['policy']}) played {m['move']}" for m in shown)
        for m in (m for m in shown if m["note"] is not None):
            who = f"\n  P{m['player']}:" if self.frames[0].simultaneous else ""
            text += who + "\n" + note_lines(m["note"]).rstrip("\n")
        return text


def step_moves(record: dict[str, Any], before: Game, k: int, seat: int | None) -> list[dict[str, Any]]:
    """The moves of step ``k`` of ``record`` (played on the position ``before``) that player ``seat`` may see
    (None: a spectator, who sees them all): per move the ``seat`` that made it, its ``player`` and that
    player's ``policy`` spec, the ``move`` as the game describes it, and the LLM's ``note`` (``None`` when the
    record has none). In a game of simultaneous moves a player sees only its own orders. A player sees only its own
    notes: a model's reasoning and rejected replies may speak of what only its seat can see (a blind reserve)."""
    moves = entry_moves(before, record["moves"][k - 1])
    note = (record.get("llm_notes") or [None] * k)[k - 1]
    notes = {} if note is None else entry_moves(before, note)
    player = before.player_of  # the policy's index of a seat (a Klaverjas partnership plays two)
    return [{"seat": s, "player": player(s), "policy": record["seats"][player(s)],
             "move": before.describe_move(moves[s]), "note": notes.get(s) if seat in (None, player(s)) else None}
            for s in moves if seat is None or player(s) == seat or not before.simultaneous]


def _navigate(view: _Viewer, stdin: IO[str], con: _Console) -> int:
    """Step through the frames as the person asks; returns the frame shown when they quit."""
    k, last = 0, len(view.frames) - 1
    con.say(view.frame(k))
    while True:
        con.prompt(f"[n]ext [p]rev <{view.unit}> [q]uit> ")
        line = stdin.readline()
        answer = line.strip().lower()
        if not line or answer in ("q", "quit"):
            con.say()
            return k
        if answer in ("", "n", "next"):
            target = k + 1
        elif answer in ("p", "prev"):
            target = k - 1
        elif answer.isdigit():
            target = int(answer)
        else:
            con.say(f"unknown command {answer!r}: n, p, a {view.unit} number 0-{last}, or q")
            continue
        if not 0 <= target <= last:
            con.say(f"{view.unit} {target} is outside 0-{last}")
            continue
        k = target
        con.say(view.frame(k))


def write_game_logs(out: Path, records: list[dict[str, Any]]) -> list[Path]:
    """``out/logs/game-<index>.txt`` for each record (as ``load_games`` read them): what ``tabletop replay`` prints
    for that game."""
    folder = Path(out) / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for record in sorted(records, key=lambda r: r["index"]):
        path = folder / f"game-{record['index']:04d}.txt"
        with open(path, "w", encoding="utf-8") as fh:
            _show_record(record, stdout=fh, interactive=False)
            fh.write(accounting_lines(record))
        paths.append(path)
    return paths
