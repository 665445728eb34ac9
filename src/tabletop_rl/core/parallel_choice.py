"""Whether a batch kernel runs on numba's threads: measured while it runs, not assumed.

On a machine of its own, two threads step a batch of games nearly twice as fast as one; on cores shared
with other processes (a learner beside the env, a busy box) the threads wait for each other at every loop's
end, and one thread can be the faster (docs/benchmarks.md, "The vector env on shared cores"). Neither
choice is right everywhere, and the machine changes while a training run goes on, so ``ParallelChoice``
runs short trials: a few calls on the threads and then a few on the calling thread, back to back so that
both see the same load; it then keeps the faster for a run of calls and tries again. A run doubles while the
same side keeps winning (up to ``longest_run``) and starts short again when the other side wins, so the
trials cost little once the answer is stable and follow the machine when it changes.

>>> now = [0.0]
>>> def kernel(parallel):  # on this machine the threads are slow: 3 ticks a call against 1
...     now[0] += 3 if parallel else 1
...     return parallel
>>> choice = ParallelChoice("auto", trial_calls=2, first_run=2, clock=lambda: now[0])
>>> [choice.run(kernel, 10) for _ in range(10)]  # a trial, a run of 2, a trial, a run of 4
[True, True, False, False, False, False, True, True, False, False]
>>> choice.parallel
False
>>> ParallelChoice(False).run(kernel, 10)
False
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["ParallelChoice"]

T = TypeVar("T")


class ParallelChoice:
    """``run(kernel, items, *args)`` calls ``kernel(*args, parallel)`` with ``parallel`` chosen by measurement
    (``mode="auto"``) or fixed (``mode=True`` / ``False``). ``items``: the batch size of this call, so that
    calls over fewer games compare fairly (time per item).

    A trial is ``trial_calls`` calls on the threads, then as many on the calling thread. The first call of each
    side is not timed: it pays for the switch (waking the threads, which sleep after a run on one thread) and,
    the first time, for compiling the kernel or starting the thread pool; a run of the winner pays no switch.
    The sides are compared by their median time per item, so one call that the scheduler held up decides
    nothing.
    """

    def __init__(self, mode: bool | str = "auto", *, trial_calls: int = 5, first_run: int = 256,
                 longest_run: int = 4096, clock: Callable[[], float] = time.perf_counter) -> None:
        if mode not in (True, False, "auto") or isinstance(mode, int) and not isinstance(mode, bool):
            raise ValueError(f"parallel must be True, False or 'auto', got {mode!r}")
        if trial_calls < 2:
            raise ValueError(f"trial_calls must be at least 2 (a side's first call is not timed), got {trial_calls}")
        self.mode = mode
        self._trial_calls, self._first_run, self._longest_run = trial_calls, first_run, longest_run
        self._clock = clock
        #: the side in use now; threads until a trial says otherwise, as numba's own default
        self.parallel = mode is not False
        self._run_length = first_run
        self._plan: list[tuple[bool, bool]] = []  # (parallel, timed), popped from the end
        self._per_item: dict[bool, list[float]] = {True: [], False: []}

    def run(self, kernel: Callable[..., T], items: int, *args: Any) -> T:
        """``kernel(*args, parallel)``, timed when it is part of a trial."""
        if self.mode != "auto":
            return kernel(*args, self.mode)
        if not self._plan:
            self._start_trial()
        parallel, timed = self._plan.pop()
        if not timed:  # a run of the winner, or the first call of a trial's side
            return kernel(*args, parallel)
        start = self._clock()
        result = kernel(*args, parallel)
        self._record(parallel, self._clock() - start, items)
        return result

    def _start_trial(self) -> None:
        block = self._trial_calls
        trial = [(side, call > 0) for side in (True, False) for call in range(block)]
        self._per_item = {True: [], False: []}
        self._plan = trial[::-1]

    def _record(self, parallel: bool, seconds: float, items: int) -> None:
        self._per_item[parallel].append(seconds / max(items, 1))
        if not self._plan:
            self._decide()

    def _decide(self) -> None:
        """Run the side with the lower median time per item next (threads while one side has no timing yet);
        the run doubles when the side in use wins again."""
        threads, one = self._per_item[True], self._per_item[False]
        faster = statistics.median(threads) <= statistics.median(one) if threads and one else True
        stable = faster == self.parallel
        self._run_length = min(self._run_length * 2, self._longest_run) if stable else self._first_run
        self.parallel = faster
        self._plan = [(faster, False)] * self._run_length
