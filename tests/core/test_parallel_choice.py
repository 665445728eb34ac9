"""``ParallelChoice``: a batch kernel runs on the side (numba's threads or the calling thread) that this machine
runs faster now, found by trials that follow the machine when its load changes."""

import numpy as np
import pytest

from tabletop_rl.core.parallel_choice import ParallelChoice
from tabletop_rl.envs.splendor_vector import SplendorVectorEnv


class Machine:
    """A fake clock and kernel: a call on the threads takes ``threads`` ticks, on one thread ``one`` ticks."""

    def __init__(self, threads: float, one: float) -> None:
        self.now, self.threads, self.one = 0.0, threads, one
        self.sides: list[bool] = []

    def clock(self) -> float:
        return self.now

    def kernel(self, parallel: bool) -> None:
        self.now += self.threads if parallel else self.one
        self.sides.append(parallel)


def play(choice: ParallelChoice, machine: Machine, calls: int) -> list[bool]:
    start = len(machine.sides)
    for _ in range(calls):
        choice.run(machine.kernel, 100)
    return machine.sides[start:]


def test_a_busy_machine_runs_on_one_thread_and_a_quiet_one_on_the_threads():
    busy = Machine(threads=5, one=1)
    choice = ParallelChoice("auto", trial_calls=2, first_run=8, longest_run=64, clock=busy.clock)
    sides = play(choice, busy, 2000)
    assert choice.parallel is False
    # once settled, the threads run only in trials: a trial (2 calls on each side) and a run of 64 is 68 calls
    assert sides[-680:].count(True) == 10 * 2
    busy.threads, busy.one = 1, 2  # the neighbours left: the threads are twice as fast now
    sides = play(choice, busy, 500)
    assert choice.parallel is True
    assert sides[-100:].count(True) >= 90


def test_runs_double_while_the_same_side_wins_up_to_the_longest():
    machine = Machine(threads=1, one=2)
    choice = ParallelChoice("auto", trial_calls=2, first_run=4, longest_run=16, clock=machine.clock)
    sides = play(choice, machine, 100)
    # each trial is threads, threads, one thread, one thread: it starts two calls before its one-thread pair
    trial_starts = [i - 2 for i, side in enumerate(sides) if not side][::2]
    assert np.diff(trial_starts).tolist() == [4 + 8, 4 + 16, 4 + 16, 4 + 16, 4 + 16]


def test_the_first_call_of_each_side_is_not_timed():
    """A side's first call in a trial wakes the threads (or, once, compiles the kernel and starts the pool):
    counting it would pick the wrong side."""
    machine = Machine(threads=1, one=3)
    choice = ParallelChoice("auto", trial_calls=2, first_run=4, clock=machine.clock)
    machine.threads = 1000
    choice.run(machine.kernel, 100)  # the first call on the threads is slow once
    machine.threads = 1
    play(choice, machine, 3)
    assert choice.parallel is True


def test_fixed_modes_never_change_and_other_values_are_refused():
    machine = Machine(threads=100, one=1)
    assert set(play(ParallelChoice(True, clock=machine.clock), machine, 50)) == {True}
    assert set(play(ParallelChoice(False, clock=machine.clock), machine, 50)) == {False}
    for bad in ("yes", 1, None):
        with pytest.raises(ValueError, match="parallel must be True, False or 'auto'"):
            ParallelChoice(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="trial_calls must be at least 2"):
        ParallelChoice("auto", trial_calls=1)


def test_the_vector_env_steps_the_same_games_whichever_side_runs_them():
    runs = []
    for parallel in ("auto", False, True):
        env = SplendorVectorEnv(num_envs=32, parallel=parallel)
        obs, info = env.reset(seed=3)
        rng = np.random.default_rng(0)
        seen = [obs]
        for _ in range(150):
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]], np.int64)
            obs, _r, _t, _u, info = env.step(actions)
            seen.append(obs)
        runs.append(np.stack(seen))
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(runs[0], runs[2])


def test_one_call_held_up_by_the_scheduler_decides_nothing():
    """On shared cores a call can wait a whole time slice: the trial compares medians, not sums."""
    machine = Machine(threads=1, one=2)
    choice = ParallelChoice("auto", trial_calls=4, first_run=8, clock=machine.clock)
    calls = 0

    def kernel(parallel: bool) -> None:
        nonlocal calls
        calls += 1
        machine.kernel(parallel)
        if calls == 3:  # the second timed call on the threads is held up for 50 calls' time
            machine.now += 50

    for _ in range(8):
        choice.run(kernel, 100)
    assert choice.parallel is True
