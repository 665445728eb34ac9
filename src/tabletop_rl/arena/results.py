"""The run folder: ``config.json`` (the run's arguments), ``games.jsonl`` (one line per finished game) and
``.lock`` (held by the run that is writing them).

Lines are appended, flushed and fsync'ed as each game ends, so a killed run loses at most the line
being written; ``load_games`` drops such a torn last line (with a warning) and resuming plays that
game again. Every other line must be a whole game record (``record_problem``) whose moves replay to
what it says of its game (``replay_problem``), or loading stops with a one-line ``ValueError`` naming
the file and line. A file that cannot be read or written (a full disk) is a ``RunFolderError`` naming it.

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp())
>>> with open_games(out) as fh:
...     append_game(fh, {"index": 0, "winners": [1]})
>>> load_games(out)
Traceback (most recent call last):
ValueError: .../games.jsonl:1: not a game record: lacks "game", "num_players", ...
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from tabletop_rl.arena.llm import note_problem
from tabletop_rl.core.files import replace_file
from tabletop_rl.core.game import Game, entry_moves
from tabletop_rl.core.text import quote
from tabletop_rl.games import check_options, game_class, read_game_name

if sys.platform != "win32":
    import fcntl  # the run folder's lock; POSIX only, and without it a run simply takes no lock

__all__ = ["GAMES_FILE", "LOCK_FILE", "RECORD_KEYS", "RunFolderError", "append_game", "hold_run_folder",
           "load_games", "open_games", "prepare_run", "read_config", "read_json_object", "record_problem",
           "replay_problem", "replay_steps"]

GAMES_FILE = "games.jsonl"
LOCK_FILE = ".lock"
_CONFIG_FILE = "config.json"

#: The keys every game record must have: what resuming, the summary and replays read.
RECORD_KEYS = ("index", "game", "num_players", "max_plies", "seed", "seats", "moves", "plies", "scores",
               "winners", "ranks", "truncated", "error", "error_seat", "decisions", "time_s", "nodes")


class RunFolderError(OSError, ValueError):
    """A file of the run folder that could not be read or written (a full disk, no permission).

    An ``OSError`` carrying the system's ``errno``, and a ``ValueError`` whose message is one line naming
    the file and the reason, as the command line reports its own errors.
    """

    @classmethod
    def from_os(cls, action: str, path: Path | str, error: OSError, hint: str = "") -> RunFolderError:
        """``cannot <action> <path>: <the system's reason>[; <hint>]``, with ``error``'s ``errno``."""
        made = cls(f"cannot {action} {path}: {error.strerror or error}" + (f"; {hint}" if hint else ""))
        made.errno = error.errno  # the message stays the one line above (no strerror or filename set)
        return made


# --- games.jsonl --------------------------------------------------------------------------------------------
def open_games(out: Path) -> IO[bytes]:
    """``games.jsonl`` in ``out``, opened for appending (unbuffered: ``append_game`` writes whole lines)."""
    path = Path(out) / GAMES_FILE
    try:
        return open(str(path), "ab", buffering=0)
    except OSError as e:
        raise RunFolderError.from_os("open", path, e) from None


def append_game(fh: IO[Any], record: dict[str, Any]) -> None:
    """Write one game as one line and make it durable before returning.

    A write or an fsync that fails (a full disk) cuts the line off again, so the file holds exactly the
    games made durable before it, and raises ``RunFolderError`` naming the file.
    """
    line = (json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8")
    fh.flush()  # nothing is buffered in a file from open_games; another handle must not reorder lines
    fd = fh.fileno()
    start = os.lseek(fd, 0, os.SEEK_END)
    try:
        rest = memoryview(line)
        while rest:
            rest = rest[os.write(fd, rest):]
        os.fsync(fd)
    except OSError as e:
        with suppress(OSError):
            os.ftruncate(fd, start)
        raise RunFolderError.from_os("write", getattr(fh, "name", GAMES_FILE), e,
                                     "the games before this one are kept; --resume goes on from them") from None


def load_games(out: Path | str, repair: bool = True,
               check: Callable[[dict[str, Any]], str | None] | None = None) -> list[dict[str, Any]]:
    """Every complete game line of ``out/games.jsonl`` (``[]`` when there is none), in file order; a one-line
    ``ValueError`` for a path that is there but no regular file.

    A last line cut short by a killed run is dropped with a warning (and, with ``repair``, cut from
    the file so new lines start clean). Any other line that is no game record (``record_problem``), a
    game index seen twice, a record that ``check`` finds fault with (it returns the reason) or one that
    its own moves contradict (``replay_problem``) is a one-line ``ValueError`` naming the file and line:
    that file was not left by an interrupted run and needs a look. An older run's spelling of a record's game
    (``space-conquest``) is read as the game's one name (``games.read_game_name``).
    """
    path = Path(out) / GAMES_FILE if Path(out).is_dir() else Path(out)
    if path.exists() and not path.is_file():  # a FIFO would block the read, a device never end it
        raise ValueError(f"{path}: not a regular file; is this a games.jsonl written by tabletop arena?")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as e:
        raise RunFolderError.from_os("read", path, e) from None
    lines = data.split(b"\n")
    records, seen, good_end = [], set(), 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            good_end += len(line) + 1
            continue
        record = _parse_line(line, path, number, last=number == len(lines))
        if record is None:
            break
        index = record["index"]
        if index in seen:
            raise ValueError(f"{path}:{number}: game {index} appears twice")
        problem = (check(record) if check is not None else None) or replay_problem(record)
        if problem:
            raise ValueError(f"{path}:{number}: {problem}")
        seen.add(index)
        records.append(record)
        good_end += len(line) + 1
    if good_end < len(data) and repair:
        try:
            with open(path, "r+b") as fh:
                fh.truncate(good_end)
        except OSError as e:
            raise RunFolderError.from_os("repair", path, e) from None
    return records


def _parse_line(line: bytes, path: Path, number: int, last: bool) -> dict[str, Any] | None:
    """The record on a line; ``None`` for a torn last line (every complete line ends in a newline)."""
    if last:
        warnings.warn(f"{path}:{number}: ignoring a torn last line (the run was interrupted while writing it)",
                      stacklevel=3)
        return None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
        problem: str | None = "not JSON"
    else:
        problem = record_problem(record)
    if problem:
        raise ValueError(f"{path}:{number}: not a game record: {problem}; "
                         "is this a games.jsonl written by tabletop arena?")
    record["game"] = read_game_name(record["game"])
    return record


def record_problem(record: Any) -> str | None:
    """Why ``record`` is not a game record as the arena writes it, or ``None`` when it is one.

    It must be a JSON object with every key of ``RECORD_KEYS``; ``index`` a whole number from 0, ``seats``
    a non-empty list of policy names, ``moves`` a list, ``scores``, ``decisions``, ``time_s`` and ``nodes``
    one number per seat, ``winners`` seat numbers, ``ranks`` a place per seat (``null`` only in a crashed
    game), ``error`` ``null`` or a text with ``error_seat`` its seat. Other keys are free.

    >>> record_problem({"index": 0, "seats": ["a", "b"]})
    'lacks "game", "num_players", "max_plies", "seed", "moves", "plies", "scores", "winners", "ranks", ...'
    """
    if not isinstance(record, dict):
        return f"not a JSON object but {_short(record)}"
    missing = [key for key in RECORD_KEYS if key not in record]
    if missing:
        return "lacks " + ", ".join(f'"{key}"' for key in missing)
    seats = record["seats"]
    n = len(seats) if isinstance(seats, list) else 0
    crashed = isinstance(record["error"], str)
    checks: list[tuple[str, Callable[[Any], bool], str]] = [
        ("index", lambda v: _whole(v) and v >= 0, "a whole number from 0"),
        ("game", lambda v: isinstance(v, str) and bool(v), "a game's name"),
        ("num_players", _whole, "a whole number"),
        ("max_plies", lambda v: v is None or _whole(v), "a whole number or null"),
        ("seed", _whole, "a whole number"),
        ("seats", lambda v: isinstance(v, list) and bool(v) and all(isinstance(s, str) for s in v),
         "a list of policy names"),
        ("moves", lambda v: isinstance(v, list), "a list"),
        ("plies", lambda v: _whole(v) and v >= 0, "a whole number from 0"),
        ("scores", lambda v: _per_seat(v, n, _number), f"a list of {n} numbers"),
        ("winners", lambda v: isinstance(v, list) and all(_whole(s) and 0 <= s < n for s in v),
         "a list of seat numbers"),
        ("ranks", lambda v: (v is None and crashed) or _per_seat(v, n, _whole),
         f"a list of {n} places" + (" or null" if crashed else "")),
        ("truncated", lambda v: isinstance(v, bool), "true or false"),
        ("error", lambda v: v is None or isinstance(v, str), "null or a text"),
        ("error_seat", lambda v: _whole(v) and 0 <= v < n if crashed else v is None,
         "the seat that crashed" if crashed else "null when error is null"),
        ("decisions", lambda v: _per_seat(v, n, _whole), f"a list of {n} whole numbers"),
        ("time_s", lambda v: _per_seat(v, n, _number), f"a list of {n} numbers"),
        ("nodes", lambda v: _per_seat(v, n, _whole), f"a list of {n} whole numbers"),
        ("options", lambda v: isinstance(v, dict), "an object"),
    ]
    for key, good, what in checks:
        if key in record and not good(record[key]):
            return f'"{key}" must be {what}, not {_short(record[key])}'
    return None


def replay_steps(record: dict[str, Any]) -> Iterator[Game]:
    """The game of ``record`` (a game record, ``record_problem``) rebuilt through the game contract from its
    game, seed, options and moves: one object, yielded at the start and again after each step. A record whose
    game cannot be set up, or whose move does not replay (a move after the game's end, one the rules refuse),
    is a one-line ``ValueError`` naming the game and the move.

    >>> record = {"index": 4, "game": "splendor", "num_players": 2, "max_plies": None, "seed": 1, "moves": ["pass"]}
    >>> [state.ply for state in replay_steps(record)]
    Traceback (most recent call last):
    ValueError: game 4, move 1 ('pass') does not replay: splendor, seat 0: pass: pass is legal only when no ...
    """
    index = record["index"]
    try:
        state = game_class(record["game"]).new(record["seed"], record["num_players"], record["max_plies"],
                                               **check_options(record["game"], record.get("options")))
    except ValueError as e:  # the game's own message names the argument
        raise ValueError(f"game {index}: {e}") from None
    except OverflowError:  # a number past what the game's arrays hold, where new() checks no bound
        raise ValueError(f'game {index}: a number in "seed" or "options" is too large for {record["game"]}') from None
    yield state
    for ply, entry in enumerate(record["moves"], 1):
        try:
            state.step_joint(entry_moves(state, entry))
        except (ValueError, TypeError) as e:  # TypeError: a move of the wrong shape that a game's rules trip on
            raise ValueError(f"game {index}, move {ply} ({quote(entry)}) does not replay: {e}") from None
        yield state


def replay_problem(record: dict[str, Any]) -> str | None:
    """Where ``record`` (a game record, ``record_problem``) contradicts its own moves, in one line naming the
    game and the field, or ``None`` when its moves replay (``replay_steps``) to what it says of its game.

    ``seats`` must name one policy per player; ``plies`` count the moves and ``llm_notes`` (when there) hold one
    entry per move (``note_problem``), as ``forfeit_note`` holds one, with ``forfeit_reason`` a text; a game that
    ended by the rules (no ``error``, ``forfeit`` or ``void``) must end with its last move, and its ``decisions``
    be the moves of each player. ``truncated`` and ``scores`` are the replay's;
    ``winners`` and ``ranks`` too, except that a crashed game has no winners and no ranks and a forfeit loses.

    >>> crashed = {"index": 2, "game": "splendor", "num_players": 2, "max_plies": None, "seed": 1, "seats": ["a", "b"],
    ...            "moves": [], "plies": 0, "scores": [0, 0], "winners": [], "ranks": None, "truncated": False,
    ...            "error": "seat 0 (a) raised KeyError: 1"}
    >>> replay_problem(crashed), replay_problem({**crashed, "scores": [3, 0]})
    (None, 'game 2: "scores" is [3, 0] but its moves give [0, 0]')
    >>> print(replay_problem({**crashed, "error": None}))
    game 2: "moves" stop before the game's end, yet it has no "error", "forfeit" or "void"
    """
    decisions: list[int] = []
    try:
        for state in replay_steps(record):
            decisions = decisions or [0] * state.num_players
            for seat in state.pending_seats():  # the seats that answer the next step (none once it is over)
                decisions[state.player_of(seat)] += 1
    except ValueError as e:
        return str(e)
    index, moves, notes = record["index"], record["moves"], record.get("llm_notes")
    if len(record["seats"]) != state.num_players:
        return f'game {index}: "seats" name {len(record["seats"])} policies for {state.num_players} players'
    if notes is not None and (not isinstance(notes, list) or len(notes) != len(moves)):
        return f'game {index}: "llm_notes" must hold one entry per move ({len(moves)}), not {_short(notes)}'
    for ply, note in enumerate(notes or ()):
        per_seat = note if state.simultaneous and isinstance(note, list) else [note]
        problem = next(filter(None, map(note_problem, per_seat)), None) if not state.simultaneous or \
            isinstance(note, list) and len(note) == state.num_seats else "is not one entry per seat"
        if problem:
            return f'game {index}: "llm_notes" entry {ply} {problem}'
    if not isinstance(record.get("forfeit_reason", ""), (str, type(None))):
        return f'game {index}: "forfeit_reason" must be a text or null, not {_short(record["forfeit_reason"])}'
    problem = note_problem(record.get("forfeit_note"))
    if problem:
        return f'game {index}: "forfeit_note" {problem}'
    ended = record["error"] is None and record.get("forfeit") is None and not record.get("void")
    if ended and not state.is_over:
        return f'game {index}: "moves" stop before the game\'s end, yet it has no "error", "forfeit" or "void"'
    winners, ranks = _outcome(record, state)
    expected = {"plies": len(moves), "truncated": state.is_truncated, "scores": state.scores, "winners": winners,
                "ranks": ranks, **({"decisions": decisions} if ended else {})}
    for key, value in expected.items():
        if record[key] != value:
            return f'game {index}: "{key}" is {_short(record[key])} but its moves give {_short(value)}'
    return None


def _outcome(record: dict[str, Any], state: Game) -> tuple[list[int], list[int] | None]:
    """The winners and ranks a record of the game ``state`` ended in holds: none in a crashed game; in a forfeit
    (``arena/llm.py``) the seat that forfeited loses and the others share first place; else the game's."""
    forfeit = record.get("forfeit")
    if record["error"] is not None:
        return [], None
    if forfeit is None:
        return state.winners, state.ranks
    players = range(state.num_players)
    return [p for p in players if p != forfeit], [int(p == forfeit) for p in players]


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _per_seat(value: Any, n: int, good: Callable[[Any], bool]) -> bool:
    return isinstance(value, list) and len(value) == n and all(good(v) for v in value)


def _short(value: Any, width: int = 40) -> str:
    text = json.dumps(value)
    return text if len(text) <= width else text[:width - 3] + "..."


# --- config.json --------------------------------------------------------------------------------------------
_CONFIG_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "game": (lambda v: isinstance(v, str), "a game's name"),
    "players": (lambda v: isinstance(v, list) and all(isinstance(s, str) for s in v), "a list of policy specs"),
    "games": (lambda v: _whole(v) and v > 0, "a whole number from 1"),
    "seed": (lambda v: _whole(v) and v >= 0, "a whole number from 0"),
    "num_players": (_whole, "a whole number"),
    "max_plies": (lambda v: v is None or _whole(v), "a whole number or null"),
    "options": (lambda v: isinstance(v, dict), "an object"),
}


def read_config(out: Path) -> dict[str, Any] | None:
    """The run's ``config.json`` (``None`` when there is none); a one-line ``ValueError`` naming the file
    when it cannot be read, is not JSON, is not an object, or holds an argument of the wrong type. An older run's
    spelling of its game (``space-conquest``) is read as the game's one name (``games.read_game_name``)."""
    path = Path(out) / _CONFIG_FILE
    config = read_json_object(path, "the config.json of a tabletop arena run")
    if config is None:
        return None
    for key, (good, what) in _CONFIG_CHECKS.items():
        if key in config and not good(config[key]):
            raise ValueError(f'{path}: "{key}" must be {what}, not {_short(config[key])}')
    if "game" in config:
        config["game"] = read_game_name(config["game"])
    return config


def read_json_object(path: Path, what: str) -> dict[str, Any] | None:
    """The JSON object in ``path`` (``None`` when there is no such file); a one-line ``ValueError`` naming the
    file when it cannot be read, is not JSON, or is not an object (``what`` it should have been)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        raise RunFolderError.from_os("read", path, e) from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e})") from None
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ValueError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a JSON object but {_short(data)}; is this {what}?")
    return data


def _write_config(out: Path, config: dict[str, Any]) -> None:
    """Write ``config.json`` whole or not at all (through a temporary file), so a full disk leaves no torn
    config to block the next run."""
    path = Path(out) / _CONFIG_FILE
    text = json.dumps(config, indent=2) + "\n"
    try:
        replace_file(path, lambda temp: temp.write_text(text, encoding="utf-8"), fsync=True)
    except OSError as e:
        raise RunFolderError.from_os("write", path, e) from None


# --- the run ---------------------------------------------------------------------------------------------------
@contextmanager
def hold_run_folder(out: Path | str, create: bool) -> Iterator[None]:
    """Hold the lock of the run folder ``out`` for the block (created first when ``create``).

    The lock is an ``fcntl.flock`` on ``out/.lock``, which names its holder (``pid N on HOST since
    TIME``). It goes when the block ends or the process dies, however it dies. A folder held by
    another run is a one-line ``ValueError`` naming that run. Nothing is locked where ``fcntl`` is
    missing (Windows), or when ``out`` does not exist and ``create`` is false (there is nothing to resume).
    """
    out = Path(out)
    if sys.platform == "win32" or not (create or out.is_dir()):
        yield
        return
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RunFolderError.from_os("create", out, e) from None
    path = out / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise RunFolderError.from_os("lock", path, e) from None
    held = False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"run folder {out} is in use by {_holder(path)}; wait for that run to end, "
                             "or choose another --out") from None
        held = True
        with suppress(OSError):  # the holder's name is for the message of a refused run; the lock holds without it
            os.ftruncate(fd, 0)
            holder = f"pid {os.getpid()} on {socket.gethostname()} since {datetime.now():%Y-%m-%d %H:%M:%S}"
            os.write(fd, (holder + "\n").encode())
        yield
    finally:
        if held:
            with suppress(OSError):
                os.ftruncate(fd, 0)
        os.close(fd)  # releases the lock


def _holder(path: Path, wait_s: float = 1.0) -> str:
    """Who holds the lock, as its line says; a run that has just taken it may not have written it yet."""
    deadline = time.monotonic() + wait_s
    while True:
        with suppress(OSError, UnicodeDecodeError):
            text = path.read_bytes().decode("utf-8").strip()
            if text:
                return text
        if time.monotonic() >= deadline:
            return "another process"
        time.sleep(0.05)


def prepare_run(out: Path, config: dict[str, Any], resume: bool,
                check: Callable[[dict[str, Any]], str | None] | None = None) -> list[dict[str, Any]]:
    """Create or reopen the run folder; return the games already finished (none for a new run).

    A new run refuses a folder that already has games; a resumed run refuses different arguments, and
    any record that is no game record or that ``check`` finds fault with (see ``load_games``).
    """
    out = Path(out)
    old = read_config(out)
    if not resume:
        if old is not None or load_games(out, repair=False):
            raise ValueError(f"{out} already holds a run; add --resume to continue it, or choose another --out")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RunFolderError.from_os("create", out, e) from None
        _write_config(out, config)
        return []
    if old is None:
        raise ValueError(f"nothing to resume in {out}: it has no {_CONFIG_FILE}")
    changed = [f"{key} was {old.get(key)!r}, now {config[key]!r}" for key in config if old.get(key) != config[key]]
    if changed:
        raise ValueError(f"cannot resume {out} with different arguments: {'; '.join(changed)}")
    return load_games(out, check=check)
