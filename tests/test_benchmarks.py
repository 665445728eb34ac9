"""The strength benchmarks whose commands the docs show run as written, at a tiny size, and print their tables."""

from __future__ import annotations

import re
import subprocess
import sys

from doc_blocks import ROOT


def run_benchmark(script: str, *args: str) -> str:
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args], capture_output=True,
                            text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, f"{script} {' '.join(args)}:\n{result.stderr[-3000:]}"
    return result.stdout


def test_the_klaverjas_strength_benchmark_plays_its_deals():
    out = run_benchmark("bench_klaverjas_strength.py", "--players", "heuristic,random", "--seeds", "1")
    assert re.search(r"^both +\d+\.\d% \[\d+\.\d, \d+\.\d\] of 4 deals", out, re.MULTILINE), out


def test_the_splendor_strength_benchmark_plays_its_games():
    out = run_benchmark("bench_strength.py", "--pairs", "greedy random", "--games", "2", "--jobs", "1")
    assert re.search(r"^greedy vs random +\d+/\d+/\d+ +\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", out, re.MULTILINE), out


def test_move_agreement_against_an_opponent_asks_the_judges_at_the_players_turns_only():
    """The player (greedy, which plays the same move on the same view) judged by itself agrees at every position
    it was asked; the opponent's turns (random's) are not asked, so fewer positions are asked than in the same
    deals with the player in every seat."""
    def asked(*extra: str) -> int:
        out = run_benchmark("move_agreement.py", "--player", "greedy", "--judge", "greedy", "--games", "2", *extra)
        row = re.search(r"^\| greedy \| ([\d.]+)% \[[\d.]+%, [\d.]+%\] \| (\d+) \|", out, re.MULTILINE)
        assert row, out
        assert row.group(1) == "100.0", out
        return int(row.group(2))

    assert 0 < asked("--opponent", "random") < asked()
