"""Terminal play against policies, and replays of recorded games; any game with an adapter.

A person's turn shows the board from their seat and the legal moves, numbered; they answer with a
number or a move name. ``help`` explains, ``board`` redraws, ``quit`` (or end of input) saves the
game to a file that ``--load`` resumes.

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
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tabletop_rl.arena.games import GameAdapter, TurnBasedAdapter, entry_moves, get_adapter, policy_game
from tabletop_rl.arena.llm import note_lines
from tabletop_rl.arena.results import load_games
from tabletop_rl.arena.schedule import derive_seed

SAVE_FORMAT = "tabletop-save/1"
DEFAULT_SAVE = Path("tabletop-save.json")
COMMANDS_HELP = """\
Answer with a move number from the list, or a move name. Other commands:
  help   this text          board   draw the board again
  quit   save and stop (resume with: tabletop play <game> --load FILE)"""


def use_color(stream: IO[str]) -> bool:
    """ANSI colours only on a terminal, and never when NO_COLOR is set."""
    return bool(getattr(stream, "isatty", lambda: False)()) and "NO_COLOR" not in os.environ


# --- play ----------------------------------------------------------------------------------------
@dataclass
class Table:
    """A game in progress: the game object, the person's seat, each seat's policy spec (None: person)."""

    game: str
    state: Any
    seat: int
    specs: list[str | None]
    seed: int


def opponents(vs: list[str], num_players: int, seat: int) -> list[str | None]:
    """Seat -> spec (``None`` for the person): one spec fills every other seat, else one per other seat.

    >>> opponents(["greedy"], 3, seat=1)
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
    adapter = get_adapter(game)
    if num_players not in adapter.player_counts:
        raise ValueError(f"{game} is played by {', '.join(map(str, adapter.player_counts))} players, "
                         f"not {num_players}")
    seed = int.from_bytes(os.urandom(7), "little") if seed is None else seed
    return Table(game, adapter.new_game(seed, num_players), seat, opponents(vs, num_players, seat), seed)


def load_table(path: Path) -> Table:
    """A game saved by ``quit``; ``ValueError`` naming the problem when the file is not one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read saved game {path}: {e}") from None
    if not isinstance(data, dict) or data.get("format") != SAVE_FORMAT:
        raise ValueError(f"{path} is not a game saved by tabletop play (format {SAVE_FORMAT})")
    adapter = get_adapter(data["game"])
    return Table(data["game"], adapter.from_json(data["position"]), data["seat"], data["players"], data["seed"])


def save_table(table: Table, path: Path) -> None:
    """Everything needed to go on: the position (hidden cards included, so do not read it), seats, seed."""
    adapter = get_adapter(table.game)
    data = {"format": SAVE_FORMAT, "game": table.game, "seat": table.seat, "players": table.specs,
            "seed": table.seed, "position": json.loads(adapter.to_json(table.state))}
    Path(path).write_text(json.dumps(data) + "\n", encoding="utf-8")


def play_terminal(game: str = "splendor", vs: list[str] | None = None, num_players: int = 2, seat: int = 0,
                  seed: int | None = None, load: Path | None = None, save: Path = DEFAULT_SAVE,
                  stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Play a game in the terminal; returns an exit status (0: finished or saved)."""
    from tabletop_rl.agents import make_policy

    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    table = load_table(load) if load is not None else new_table(game, vs or ["greedy"], num_players, seat, seed)
    adapter = get_adapter(table.game)
    policies = {s: make_policy(spec, game=policy_game(table.game), seed=derive_seed(table.seed, s))
                for s, spec in enumerate(table.specs) if spec is not None}
    con = Console(stdout)
    con.say(f"You are P{table.seat}; " + ", ".join(f"P{s} is {p.name}" for s, p in policies.items())
        + ". Type help for commands.")
    while not adapter.is_over(table.state):
        mover = adapter.current_player(table.state)
        if mover != table.seat:
            action = policies[mover].act(adapter.observation(table.state, mover), adapter.legal_mask(table.state),
                                         adapter.info(table.state, mover))
            con.say(f"P{mover} ({policies[mover].name}) plays {adapter.move_name(action)}")
            adapter.step(table.state, action)
            continue
        action = _ask_move(adapter, table, stdin, con)
        if action is None:
            save_table(table, save)
            con.say(f"Game saved to {save}; resume with: tabletop play {table.game} --load {save}")
            return 0
        con.say(f"P{mover} (you) plays {adapter.move_name(action)}")
        adapter.step(table.state, action)
    con.say(adapter.render(table.state, viewer=table.seat, color=con.color))
    con.say(result_line(adapter, table.state))
    return 0


class Console:
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


def _ask_move(adapter: TurnBasedAdapter, table: Table, stdin: IO[str], con: Console) -> int | None:
    """The person's legal move, asking again with the reason after a bad answer; ``None`` to quit."""
    legal = [int(a) for a in adapter.legal_mask(table.state).nonzero()[0]]
    con.say(adapter.render(table.state, viewer=table.seat, color=con.color))
    con.say(move_list([adapter.move_name(a) for a in legal]))
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
            con.say(COMMANDS_HELP + "\n" + adapter.rules_help())
        elif answer.lower() == "board":
            con.say(adapter.render(table.state, viewer=table.seat, color=con.color))
            con.say(move_list([adapter.move_name(a) for a in legal]))
        elif answer:
            action, problem = parse_move(adapter, table.state, answer, legal)
            if problem is None:
                return action
            con.say(f"{problem}; try again (help lists the commands)")


def parse_move(adapter: TurnBasedAdapter, state: Any, answer: str, legal: list[int]) -> tuple[int, str | None]:
    """``(action, None)`` for a legal answer (list number or move name), else ``(-1, reason)``."""
    if answer.isdigit():
        number = int(answer)
        if 1 <= number <= len(legal):
            return legal[number - 1], None
        return -1, f"there is no move {number}: choose 1-{len(legal)} or type a move name"
    try:
        action = adapter.move_id(answer)
    except ValueError as e:
        return -1, str(e)
    if action not in legal:
        return -1, adapter.explain_illegal(state, action)
    return action, None


def move_list(names: list[str], columns: int = 3, width: int = 28) -> str:
    """Numbered names in columns, numbered from 1.

    >>> print(move_list(["pass"]))
    Legal moves:
       1 pass
    """
    cells = [f"{k:4d} {name:<{width - 5}}" for k, name in enumerate(names, 1)]
    rows = ["".join(cells[i:i + columns]).rstrip() for i in range(0, len(cells), columns)]
    return "Legal moves:\n" + "\n".join(rows)


def result_line(adapter: GameAdapter, state: Any) -> str:
    """E.g. ``Game over: P1 wins. Points: P0 12, P1 15``."""
    scores = ", ".join(f"P{s} {v}" for s, v in enumerate(adapter.scores(state)))
    winners = adapter.winners(state)
    if adapter.is_truncated(state):
        outcome = "stopped at the ply cap, no winner"
    elif not winners:
        outcome = "a draw"
    else:
        outcome = " and ".join(f"P{w}" for w in winners) + (" win" if len(winners) > 1 else " wins")
    return f"Game over: {outcome}. Points: {scores}"


# --- replay ----------------------------------------------------------------------------------------
def replay_frames(record: dict[str, Any]) -> tuple[GameAdapter, list[Any]]:
    """Every position of a recorded game, rebuilt from its seed and moves (``frames[k]``: after k steps)."""
    adapter = get_adapter(record["game"], record.get("options"))
    state = adapter.new_game(record["seed"], record["num_players"], record["max_plies"])
    frames = [adapter.from_json(adapter.to_json(state))]
    for ply, entry in enumerate(record["moves"], 1):
        try:
            adapter.step_joint(state, entry_moves(adapter, state, entry))
        except (ValueError, TypeError) as e:
            raise ValueError(f"game {record['index']}, move {ply} ({entry!r}) does not replay: {e}") from None
        frames.append(adapter.from_json(adapter.to_json(state)))
    return adapter, frames


def pick_record(path: Path, game_index: int | None) -> dict[str, Any]:
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

    ``seat`` None shows the game as a spectator sees it; a seat number shows only what that seat saw
    (its fog of war, its hand) and, in a game of simultaneous moves, only its own orders and LLM notes.
    """
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    record = pick_record(path, game_index)
    if seat is not None and not 0 <= seat < len(record["seats"]):
        raise ValueError(f"--seat must be in 0..{len(record['seats']) - 1} for game {record['index']}, got {seat}")
    adapter, frames = replay_frames(record)
    view = Viewer(adapter, record, frames, seat, use_color(stdout))
    interactive = stdin.isatty() if interactive is None else interactive
    con = Console(stdout)
    con.say(f"game {record['index']}: " + ", ".join(f"P{s} {spec}" for s, spec in enumerate(record["seats"]))
        + f"; seed {record['seed']}, {len(record['moves'])} {'turns' if adapter.simultaneous else 'moves'}"
        + (f"; crashed: {record['error']}" if record["error"] else "")
        + ("" if seat is None else f"; as P{seat} saw it"))
    if not interactive:
        for k in range(len(frames)):
            con.say(view.frame(k))
    else:
        _navigate(view, stdin, con)
    if adapter.is_over(frames[-1]):
        con.say(result_line(adapter, frames[-1]))
    return 0


@dataclass
class Viewer:
    """Frames of a replay as ``seat`` (None: a spectator) may see them."""

    adapter: GameAdapter
    record: dict[str, Any]
    frames: list[Any]
    seat: int | None
    color: bool

    @property
    def unit(self) -> str:
        """What one step of the game is called: a turn of simultaneous orders, else a ply."""
        return "turn" if self.adapter.simultaneous else "ply"

    def frame(self, k: int) -> str:
        """A header naming the moves that led to frame ``k`` (with LLM notes), then the board."""
        head = f"--- {self.unit} {k}/{len(self.frames) - 1}: " + (self._moves(k) if k else "start")
        return head + "\n" + self.adapter.render(self.frames[k], viewer=self.seat, color=self.color)

    def _moves(self, k: int) -> str:
        """The moves of step ``k`` that the viewer may see, then any LLM's reasoning and cost under them
        (named by seat when several seats moved at once)."""
        moves = entry_moves(self.adapter, self.frames[k - 1], self.record["moves"][k - 1])
        note = (self.record.get("llm_notes") or [None] * k)[k - 1]
        notes = {} if note is None else entry_moves(self.adapter, self.frames[k - 1], note)
        shown = [s for s in moves if self.seat is None or s == self.seat or not self.adapter.simultaneous]
        text = "; ".join(f"P{s} ({self.record['seats'][s]}) played {self.adapter.describe_move(moves[s])}"
                         for s in shown)
        for s in shown:
            if notes.get(s) is not None:
                text += (f"\n  P{s}:" if self.adapter.simultaneous else "") + "\n" + note_lines(notes[s]).rstrip("\n")
        return text


def _navigate(view: Viewer, stdin: IO[str], con: Console) -> None:
    k, last = 0, len(view.frames) - 1
    con.say(view.frame(k))
    while True:
        con.prompt(f"[n]ext [p]rev <{view.unit}> [q]uit> ")
        line = stdin.readline()
        answer = line.strip().lower()
        if not line or answer in ("q", "quit"):
            con.say()
            return
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
