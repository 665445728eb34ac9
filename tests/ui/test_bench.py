"""``tabletop bench``: every timed loop is warmed up first, and nonsense durations are refused."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tabletop_rl.envs.splendor_vector import SplendorVectorEnv
from tabletop_rl.ui import bench


class _SlowFirstStep(SplendorVectorEnv):
    """A vector env whose first step takes 0.5 s, as loading compiled kernels does on a cold start."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._first = True

    def step(self, actions):
        if self._first:
            self._first = False
            time.sleep(0.5)
        return super().step(actions)


def test_a_short_vector_measurement_leaves_the_warm_up_out(monkeypatch):
    # Before the fix the first (slow) step fell inside the window: at most 4 env-steps in 0.5 s, so about 8
    # env-steps/s; left out, a busy machine still gives thousands. The bound sits far from both.
    monkeypatch.setattr(bench, "SplendorVectorEnv", _SlowFirstStep)
    assert bench.vector_steps_per_second(4, "random", 0.2) > 100


def test_every_env_measurement_leaves_a_slow_first_call_out():
    calls = []

    def run() -> int:
        calls.append(1)
        if len(calls) == 1:
            time.sleep(0.5)
        return 10

    assert bench.steps_per_second(run, 0.2) > 200  # 20 steps/s with the slow call inside the window


@pytest.mark.parametrize("flag,value", [("--seconds", "0"), ("--seconds", "-1"), ("--games", "0"),
                                        ("--num-envs", "0"), ("--seconds", "soon")])
def test_nonsense_options_get_one_line(flag, value):
    result = subprocess.run([sys.executable, "-m", "tabletop_rl.cli", "bench", "splendor", flag, value],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    error = result.stderr.strip().splitlines()[-1]
    assert flag in error and ("positive" in error or "not a number" in error), result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("load,busy", [(0.5, False), (64.0, True)])
def test_the_table_says_when_other_work_lowers_it(monkeypatch, capsys, load, busy):
    monkeypatch.setattr(bench.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(bench.os, "cpu_count", lambda: 2)
    bench.main(["--seconds", "0.05", "--games", "20", "--num-envs", "4"])
    out = capsys.readouterr().out
    assert "SplendorVectorEnv(4)" in out
    assert ("load average 64.0 on 2 cores" in out) is busy
    assert ("other work on them lowers these figures" in out) is busy
