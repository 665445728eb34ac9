"""A rating interval from too few games, or of zero width, says it is not meaningful
(in the table and in ``summary.json``); a run's first crash is kept in the summary; no file is listed that was
not written."""

from __future__ import annotations

import json

from tabletop_rl.arena import format_table, summarize
from tabletop_rl.arena.report import write_report


def _records(players: list[str], games: int, crash: bool = False, winner: str | None = None) -> list[dict]:
    """``games`` games of a two-player table, seats swapped every game: the first seat wins (or ``winner``
    does), or seat 1 crashes."""
    a, b = players
    records = []
    for i in range(games):
        seats = [a, b] if i % 2 == 0 else [b, a]
        ranks = [0, 1] if winner is None or seats[0] == winner else [1, 0]
        records.append({"index": i, "seats": seats, "ranks": None if crash else ranks, "scores": [15, 9],
                        "plies": 60, "error": "seat 1 (x) raised ValueError: bad shape" if crash else None,
                        "error_seat": 1 if crash else None, "truncated": False, "decisions": [30, 30],
                        "time_s": [0.3, 0.03], "nodes": [0, 0]})
    return records


CONFIG = {"players": ["random", "greedy"], "num_players": 2, "game": "splendor"}


def test_intervals_from_two_games_are_flagged_in_the_summary_and_the_table():
    summary = summarize(_records(["random", "greedy"], 2), CONFIG)
    greedy = summary["ratings"]["values"]["greedy"]
    assert greedy["interval_note"] == "too few games (2, fewer than 10)"
    assert summary["ratings"]["values"]["random"]["interval_note"] == "anchor: 0 by definition"
    rows = {line.split()[0]: line for line in format_table(summary).splitlines() if line and " vs " not in line}
    assert "n/a (too few games)" in rows["greedy"] and "[" not in rows["greedy"]
    assert "anchor" in rows["random"]


def test_intervals_from_enough_games_are_shown():
    records = _records(["random", "greedy"], 40)
    for record in records[::4]:  # a few upsets, so the interval has a width
        record["ranks"] = [1, 0]
    summary = summarize(records, CONFIG)
    greedy = summary["ratings"]["values"]["greedy"]
    assert greedy["interval_note"] is None and greedy["low"] < greedy["rating"] < greedy["high"]
    row = next(line for line in format_table(summary).splitlines() if line.startswith("greedy "))
    assert f"[{greedy['low']:.0f}, {greedy['high']:.0f}]" in row


def test_a_zero_width_interval_is_flagged_however_many_games():
    """Greedy wins all 40 games: every bootstrap resample is the same 40 wins, so the interval has no width."""
    summary = summarize(_records(["random", "greedy"], 40, winner="greedy"), CONFIG)
    greedy = summary["ratings"]["values"]["greedy"]
    assert greedy["interval_note"] == "zero width (every resample gives the same rating)"
    row = next(line for line in format_table(summary).splitlines() if line.startswith("greedy "))
    assert "n/a (zero width)" in row


def test_a_run_where_every_game_crashed_keeps_its_first_crash_and_lists_only_written_files(tmp_path):
    records = _records(["random", "greedy"], 3, crash=True)
    summary = write_report(tmp_path, records, CONFIG)
    assert summary["crashed"] == 3 and summary["first_crash"] == "game 0: seat 1 (x) raised ValueError: bad shape"
    assert summary["files"] == [name for name in ("summary.json", "winrate.png", "ratings.png")
                                if (tmp_path / name).exists()]
    assert "ratings.png" not in summary["files"]
    assert json.loads((tmp_path / "summary.json").read_text())["files"] == summary["files"]
