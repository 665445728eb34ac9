"""The strength benchmarks whose commands the docs show run as written, at a tiny size, and print their tables;
the fit check's shared network is built as its table names it."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from benchmark_scripts import load_benchmark
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


def test_the_fit_check_s_shared_network_has_one_trunk_under_both_heads():
    """``az_fit_check --shared`` fits a network whose value head reads the policy's hidden layers: the two heads
    hold one set of trunk weights (so training the value moves the policy), and only the value head is its own."""
    torch = pytest.importorskip("torch")
    net = load_benchmark("az_fit_check").shared_network(312, [16, 8])
    policy_weights = sum(p.numel() for p in net["pi"].parameters())
    assert sum(p.numel() for p in net.parameters()) == policy_weights + 8 + 1
    x = torch.rand(4, 312)
    before = net["pi"](x).detach().clone()
    optimizer = torch.optim.SGD(net["vf"].parameters(), lr=0.1)
    (net["vf"](x) - 1).pow(2).mean().backward()
    optimizer.step()
    assert not torch.allclose(net["pi"](x), before)
