"""What the web viewer shows, computed on the server from a run's records through the ``Game`` contract.

A recorded game is rebuilt from its seed and moves (``terminal.replay_frames``, as ``tabletop replay`` does),
and each position is drawn for one viewer: ``None``, a spectator, or a player (the record's seat index; a
partnership in Klaverjas). The board is the ``board_view(game, viewer)`` that the game's record names, so a new
game's viewer is that one function; the text board (``game.render(viewer)``, what the terminal
replay prints) comes with it. Nothing the viewer may not see is computed into a response.

>>> import tempfile
>>> from tabletop_rl.arena import run_arena
>>> out = tempfile.mkdtemp()
>>> _ = run_arena("splendor", ["random", "greedy"], games=2, jobs=1, out=out, progress=False)
>>> run = RunView.open(out)
>>> [row["index"] for row in run.games()], run.position(0, 0, viewer=1)["board"]["players"][1]["seat"]
([0, 1], 1)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from tabletop_rl.arena.labels import policy_labels
from tabletop_rl.arena.report import SUMMARY_FILE
from tabletop_rl.arena.results import GAMES_FILE, load_games, read_json_object
from tabletop_rl.core.game import Game
from tabletop_rl.games import entry
from tabletop_rl.games.registry import resolve
from tabletop_rl.ui.terminal import forfeit_seen, replay_frames, result_line, step_moves

__all__ = ["RunView", "board_view", "check_viewer", "position_view"]

#: Games whose positions are kept rebuilt in memory at once (the least recently viewed is dropped).
_CACHED_GAMES = 8


def board_view(game: Game, viewer: int | None) -> dict[str, Any] | None:
    """The board as data, by the function the game's record names (``GameEntry.board_view``); ``None`` for a game
    whose record names none: the page then shows the text board alone."""
    draw = entry(game.name).board_view
    return None if draw is None else resolve(draw)(game, viewer)


def check_viewer(viewer: int | None, num_players: int) -> None:
    """``ValueError`` unless ``viewer`` is None (a spectator) or a player of the game."""
    if viewer is not None and not 0 <= viewer < num_players:
        raise ValueError(f"viewer must be the spectator or a player in 0..{num_players - 1}, got {viewer}")


def position_view(game: Game, viewer: int | None) -> dict[str, Any]:
    """A position as ``viewer`` sees it: the board as data, the text board, and the result once it is over."""
    check_viewer(viewer, game.num_players)
    return {
        "board": board_view(game, viewer),
        "text": game.render(viewer=viewer),
        "over": game.is_over,
        "result": result_line(game) if game.is_over else None,
    }


def _result_text(record: dict[str, Any]) -> str:
    """A finished game's outcome from its record alone, e.g. ``P1 wins`` or ``crashed: ...``."""
    if record["error"]:
        return f"crashed: {record['error']}"
    if record.get("void"):
        return "void"
    if record["truncated"]:
        return "truncated at the ply cap"
    winners = record["winners"]
    if not winners or len(winners) == len(record["seats"]):
        return "draw"
    result = " and ".join(f"P{w}" for w in winners) + (" win" if len(winners) > 1 else " wins")
    return result + (f": P{record['forfeit']} forfeited" if record.get("forfeit") is not None else "")


class RunView:
    """An arena run (its ``games.jsonl``, and ``summary.json`` beside it when there is one), read once."""

    def __init__(self, source: Path, records: list[dict[str, Any]], summary: dict[str, Any] | None) -> None:
        self.source = source
        self.records = {record["index"]: record for record in sorted(records, key=lambda r: r["index"])}
        self.summary = summary
        specs = list(dict.fromkeys(spec for record in records for spec in record["seats"]))
        self.labels: dict[str, str] = (summary or {}).get("labels") or policy_labels(specs)
        self._frames: OrderedDict[int, list[Game]] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path | str) -> RunView:
        """The run in folder ``path``, or the ``games.jsonl`` file ``path``; ``ValueError`` in one line for a path
        that is neither, a damaged record or one its own moves contradict (its file and line: ``load_games``) or a
        ``summary.json`` that is not JSON."""
        path = Path(path)
        games = path / GAMES_FILE if path.is_dir() else path
        if not games.is_file():
            raise ValueError(f"no arena run at {path}: expected a run folder holding {GAMES_FILE}, or such a file")
        records = load_games(games, repair=False)
        if not records:
            raise ValueError(f"{games} holds no finished game")
        return cls(games, records, read_json_object(games.parent / SUMMARY_FILE, "the summary.json of an arena run"))

    def games(self) -> list[dict[str, Any]]:
        """One row per game: index, seats (specs and labels), result, scores, length, whether an LLM played."""
        return [
            {
                "index": r["index"],
                "seats": r["seats"],
                "labels": [self.labels.get(s, s) for s in r["seats"]],
                "result": _result_text(r),
                "scores": r["scores"],
                "winners": r["winners"],
                "plies": r["plies"],
                "llm": bool(r.get("llm_notes")),
            }
            for r in self.records.values()
        ]

    def game(self, index: int) -> dict[str, Any]:
        """A game's header: seats and labels, seed, its length in steps (``last``), result, LLM accounting."""
        record, frames = self._record(index), self.frames(index)
        return {
            "index": index,
            "game": record["game"],
            "seed": record["seed"],
            "seats": record["seats"],
            "labels": [self.labels.get(s, s) for s in record["seats"]],
            "unit": "turn" if frames[0].simultaneous else "ply",
            "last": len(frames) - 1,
            "result": _result_text(record),
            "error": record["error"],
            "llm": record.get("llm"),
        }

    def position(self, index: int, ply: int, viewer: int | None) -> dict[str, Any]:
        """Game ``index`` after ``ply`` steps as ``viewer`` sees it, with the moves that led there as the viewer may
        see them (``step_moves``; none after ``ply``, which might show a hidden card it later made public), and at the
        last step the forfeit that ended the game, if one did (``forfeit_seen``); ``LookupError`` for a step outside
        the game."""
        record, frames = self._record(index), self.frames(index)
        if not 0 <= ply < len(frames):
            raise LookupError(f"game {index} has steps 0..{len(frames) - 1}, not {ply}")
        view = position_view(frames[ply], viewer)
        moves = [step_moves(record, frames[k - 1], k, viewer) for k in range(1, ply + 1)]
        forfeit = forfeit_seen(record, viewer) if ply == len(frames) - 1 else None
        return {"index": index, "ply": ply, "last": len(frames) - 1, "moves": moves, "forfeit": forfeit, **view}

    def frames(self, index: int) -> list[Game]:
        """Every position of game ``index`` (rebuilt once, then kept among the last few games viewed)."""
        record = self._record(index)
        with self._lock:
            if index in self._frames:
                self._frames.move_to_end(index)
                return self._frames[index]
        frames = replay_frames(record)
        with self._lock:
            self._frames[index] = frames
            while len(self._frames) > _CACHED_GAMES:
                self._frames.popitem(last=False)
        return frames

    def _record(self, index: int) -> dict[str, Any]:
        if index not in self.records:
            first, last = min(self.records), max(self.records)
            raise LookupError(f"{self.source} has no game {index} (games {first}..{last})")
        return self.records[index]

