"""``tabletop bench``: every timed loop is warmed up first, and nonsense durations are refused."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tabletop_rl.envs.splendor_vector import SplendorVectorEnv
from tabletop_rl.ui import bench


class _Clock:
    """A stand-in for ``time`` in the bench module: it reads what the calls measured have advanced it by, so a
    measurement's result is exact and never depends on how busy the machine is."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


#: The first call takes this long on the clock (loading compiled kernels on a cold start), every later one 1 s.
WARM_UP_SECONDS = 100.0


def _clocked_vector_env(clock: _Clock) -> type[SplendorVectorEnv]:
    class SlowFirstStep(SplendorVectorEnv):
        """A vector env whose first step takes WARM_UP_SECONDS on ``clock`` and every later one a second."""

        def step(self, actions):
            clock.now += 1.0 if clock.now else WARM_UP_SECONDS
            return super().step(actions)

    return SlowFirstStep


def test_a_short_vector_measurement_leaves_the_warm_up_out(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(bench, "time", clock)
    monkeypatch.setattr(bench, "SplendorVectorEnv", _clocked_vector_env(clock))
    # 3 s of 1 s batches of 4 env-steps after the warm-up: 4 env-steps/s; with the warm-up inside, 4 in 100 s
    assert bench.vector_steps_per_second(4, "random", 3.0) == 4.0
    assert clock.now == WARM_UP_SECONDS + 3


def test_every_env_measurement_leaves_a_slow_first_call_out(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(bench, "time", clock)

    def run() -> int:
        clock.now += 1.0 if clock.now else WARM_UP_SECONDS
        return 10

    assert bench.steps_per_second(run, 2.0) == 10.0  # 10 steps/s; with the slow call inside, 20 in 101 s


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
