"""The run folder: ``config.json`` (the run's arguments) and ``games.jsonl`` (one line per finished game).

Lines are appended, flushed and fsync'ed as each game ends, so a killed run loses at most the line
being written; ``load_games`` drops such a torn last line (with a warning) and resuming plays that
game again.

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp())
>>> with open_games(out) as fh:
...     append_game(fh, {"index": 0, "winners": [1]})
>>> load_games(out)
[{'index': 0, 'winners': [1]}]
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import IO, Any

GAMES_FILE = "games.jsonl"
CONFIG_FILE = "config.json"


def open_games(out: Path) -> IO[str]:
    """``games.jsonl`` in ``out``, opened for appending."""
    return open(Path(out) / GAMES_FILE, "a", encoding="utf-8")


def append_game(fh: IO[str], record: dict[str, Any]) -> None:
    """Write one game as one line and make it durable before returning."""
    fh.write(json.dumps(record, separators=(",", ":")) + "\n")
    fh.flush()
    os.fsync(fh.fileno())


def load_games(out: Path | str, repair: bool = True) -> list[dict[str, Any]]:
    """Every complete game line of ``out/games.jsonl`` (``[]`` when there is none), in file order.

    A last line cut short by a killed run is dropped with a warning (and, with ``repair``, cut from
    the file so new lines start clean). A bad line elsewhere, or a game index seen twice, is a
    ``ValueError``: that file was not written by an interrupted run and needs a look.
    """
    path = Path(out) / GAMES_FILE if Path(out).is_dir() else Path(out)
    if not path.exists():
        return []
    data = path.read_bytes()
    lines = data.split(b"\n")
    records, seen, good_end = [], set(), 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            good_end += len(line) + 1
            continue
        record = _parse_line(line, path, number, last=number == len(lines))
        if record is None:
            break
        index = record.get("index")
        if index in seen:
            raise ValueError(f"{path}:{number}: game {index} appears twice")
        seen.add(index)
        records.append(record)
        good_end += len(line) + 1
    if good_end < len(data) and repair:
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
    return records


def _parse_line(line: bytes, path: Path, number: int, last: bool) -> dict[str, Any] | None:
    """The record on a line; ``None`` for a torn last line (every complete line ends in a newline)."""
    if last:
        warnings.warn(f"{path}:{number}: ignoring a torn last line (the run was interrupted while writing it)",
                      stacklevel=3)
        return None
    try:
        record = json.loads(line)
    except ValueError:
        record = None
    if not isinstance(record, dict) or "index" not in record:
        raise ValueError(f"{path}:{number}: not a game record; is this a games.jsonl written by tabletop arena?")
    return record


def read_config(out: Path) -> dict[str, Any] | None:
    path = Path(out) / CONFIG_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def write_config(out: Path, config: dict[str, Any]) -> None:
    (Path(out) / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def prepare_run(out: Path, config: dict[str, Any], resume: bool) -> list[dict[str, Any]]:
    """Create or reopen the run folder; return the games already finished (none for a new run).

    A new run refuses a folder that already has games; a resumed run refuses different arguments.
    """
    out = Path(out)
    old = read_config(out)
    if not resume:
        if old is not None or load_games(out, repair=False):
            raise ValueError(f"{out} already holds a run; add --resume to continue it, or choose another --out")
        out.mkdir(parents=True, exist_ok=True)
        write_config(out, config)
        return []
    if old is None:
        raise ValueError(f"nothing to resume in {out}: it has no {CONFIG_FILE}")
    changed = [f"{key} was {old.get(key)!r}, now {config[key]!r}" for key in config if old.get(key) != config[key]]
    if changed:
        raise ValueError(f"cannot resume {out} with different arguments: {'; '.join(changed)}")
    return load_games(out)
