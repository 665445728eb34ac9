"""Every script in examples/ runs as a real subprocess with tiny settings and prints its result line."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from extra_skips import needs

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RATE = r"(?P<rate>\d+(?:\.\d+)?)"

# file -> (tiny command-line knobs, the result line to find (its "rate" in [0, 1]), modules it needs);
# "{tmp}" in a knob is the test's temporary folder (also the working directory).
CASES = {
    "random_rollout.py": (
        ["--games", "2", "--players", "3", "--seed", "1"],
        rf"win rate by seat: player_0 {RATE}, player_1 [\d.]+, player_2 [\d.]+", ()),
    "splendor_vector_rollout.py": (
        ["--num-envs", "16", "--games-per-env", "2", "--policy", "buy-first", "--opponent", "greedy"],
        rf"buy-first vs greedy over 32 games: win rate {RATE}", ()),
    "klaverjas_selfplay.py": (
        ["--deals", "32", "--batch-deals", "8", "--eval-deals", "16", "--log-every", "16"],
        rf"after training \(greedy\) vs random: mean deal score [+-]\d+\.\d .*win rate {RATE} over 16 deals", ()),
    "space_conquest_heuristic_vs_random.py": (
        ["--games", "2", "--max-turns", "15"],
        rf"heuristic vs random: win rate {RATE} \(won \d, drew \d, lost \d\)", ()),
    "sb3_maskable_ppo.py": (
        ["--num-envs", "8", "--steps", "256", "--n-steps", "32", "--batch-size", "128", "--epochs", "1",
         "--eval-games", "8", "--save", "{tmp}/model.zip"],
        rf"vs random over 8 games: win rate {RATE}", ("torch", "sb3_contrib")),
    "ppo_selfplay.py": (
        ["--steps", "256", "--num-envs", "8", "--n-steps", "32", "--batch-size", "128", "--epochs", "1",
         "--eval-every", "256", "--eval-games", "4", "--eval-opponents", "random", "--checkpoint-every", "1000",
         "--arena-games", "2", "--arena-players", "random", "--arena-jobs", "1", "--no-progress",
         "--out", "ppo"],  # relative to the working directory: a short name, which the arena's table prints whole
        rf"ppo:ppo/final\.zip vs random\s+2\s+{RATE}%", ("torch", "sb3_contrib")),
    "rllib_selfplay.py": (
        ["--iterations", "1", "--runners", "2", "--envs-per-runner", "2", "--batch", "400", "--minibatch", "200",
         "--epochs", "1", "--hidden", "16", "--eval-games", "2"],
        rf"vs greedy over 2 games: win rate {RATE}", ("ray", "torch")),
}


#: Examples that start a cluster (tens of seconds on 2 cores): ``pytest -m slow`` runs them.
SLOW = {"rllib_selfplay.py"}


def test_every_example_has_a_case():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(CASES)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(CASES)])
def test_example_runs(name, tmp_path):
    knobs, pattern, modules = CASES[name]
    for module in modules:
        needs(module)
    command = [sys.executable, str(EXAMPLES / name), *(k.format(tmp=tmp_path) for k in knobs)]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{output[-3000:]}"
    match = re.search(pattern, result.stdout)
    assert match, f"no line matching {pattern!r} in the output of {name}:\n{result.stdout[-3000:]}"
    rate = float(match["rate"]) / (100 if name == "ppo_selfplay.py" else 1)  # the arena's table prints percent
    assert 0.0 <= rate <= 1.0
