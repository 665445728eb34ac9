"""The arena: tournaments between policies with seat rotation, resumable results, summaries and ratings.

>>> from tabletop_rl.arena import run_arena
>>> summary = run_arena(players=["random", "greedy"], games=2, jobs=1, out=tmp_dir(), progress=False)
>>> sorted(summary["policies"])
['greedy', 'random']
"""

from tabletop_rl.arena.report import format_table, summarize
from tabletop_rl.arena.results import load_games
from tabletop_rl.arena.runner import default_out_dir, play_match, run_arena, tmp_dir
from tabletop_rl.arena.schedule import Match, derive_seed, schedule

__all__ = [
    "Match",
    "default_out_dir",
    "derive_seed",
    "format_table",
    "load_games",
    "play_match",
    "run_arena",
    "schedule",
    "summarize",
    "tmp_dir",
]
