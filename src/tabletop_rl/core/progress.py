"""The progress line of every long command (the arena, each trainer) on stderr: redrawn in place on a terminal,
a line per 10% otherwise (logs, CI); never wider than 80 columns, so a terminal never wraps it.

The time left is the items still to do times the mean time per item, measured from the moment the first
``settle`` items of this run had finished: those carry the start-up (worker processes starting, compiling or
loading kernels), which the items after them do not pay again. Until then the line says it is estimating.

>>> import io
>>> out = io.StringIO()
>>> bar = Progress(total=4, done=0, stream=out, label="games")
>>> for _ in range(4): bar.advance()
>>> out.getvalue().splitlines()[-1].startswith("games 4/4")
True
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from typing import IO

__all__ = ["COLUMNS", "Progress", "ignore_interrupt"]

#: The widest a line gets: one column short of a classic 80-column terminal, where a full last column wraps.
COLUMNS = 79
_BAR = (10, 30)  # the bar's narrowest and widest: it gives way to the text after it


class Progress:
    """Counts finished items out of ``total`` (``done`` already finished before this run started)."""

    def __init__(self, total: int, done: int = 0, stream: IO[str] | None = None, label: str = "games",
                 settle: int = 1, clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.done, self.label = total, done, label
        self.stream = sys.stderr if stream is None else stream
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.clock, self.settle = clock, max(1, settle)
        self.start, self.start_done = clock(), done
        self.settled_at: float | None = None  # when the first ``settle`` items of this run had finished
        self.settled_done = 0  # how many had by then (more than ``settle`` when a trainer counts a rollout at once)
        self.extra = ""
        self._last_tenth = -1
        self._draw()

    def advance(self, extra: str = "") -> None:
        """One more item finished; ``extra`` (e.g. ``"1 crashed"``) is shown after the times."""
        self.update(self.done + 1, extra)

    def update(self, done: int, extra: str = "") -> None:
        """``done`` items finished by now (a trainer's step count); ``extra`` as in ``advance``."""
        if self.settled_at is None and done - self.start_done >= self.settle:
            self.settled_at, self.settled_done = self.clock(), done - self.start_done
        self.done, self.extra = done, extra
        self._draw()

    def note(self, line: str) -> None:
        """Print ``line`` on its own (an evaluation's result), above the progress line on a terminal."""
        self.stream.write(f"\r\x1b[K{line}\n" if self.live else line + "\n")
        if self.live:
            self._draw(force=True)
        self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()

    def _draw(self, force: bool = False) -> None:
        tenth = 10 * self.done // max(self.total, 1)
        if not (self.live or force) and tenth == self._last_tenth and self.done < self.total:
            return
        self._last_tenth = tenth
        line = self.text()
        self.stream.write(f"\r{line}\x1b[K" if self.live else line + "\n")
        self.stream.flush()

    def text(self) -> str:
        """E.g. ``games 12/40 [#########---------------------] 0:07 elapsed, 0:23 left``, then the extra text, all
        cut to ``COLUMNS``; the bar narrows first to leave the extra text room."""
        now = self.clock()
        head = f"{self.label} {_count(self.done)}/{_count(self.total)} ["
        tail = f"] {_clock(now - self.start)} elapsed{self._left(now)}" + (f"  {self.extra}" if self.extra else "")
        width = max(_BAR[0], min(_BAR[1], COLUMNS - len(head) - len(tail)))
        filled = width * min(self.done, self.total) // max(self.total, 1)
        return (head + "#" * filled + "-" * (width - filled) + tail)[:COLUMNS]

    def _left(self, now: float) -> str:
        """``, M:SS left`` from the rate since the run settled; ``, estimating`` before that."""
        if self.done >= self.total:
            return ""
        measured = self.done - self.start_done - self.settled_done
        if self.settled_at is None or measured <= 0:
            return ", estimating"
        return f", {_clock((now - self.settled_at) / measured * (self.total - self.done))} left"


def ignore_interrupt() -> None:
    """The initializer of a long command's worker processes: Ctrl-C reaches the whole process group, and the
    parent alone answers it (it stops the pool, keeps what finished and prints how to go on), so no worker
    prints a traceback of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _count(n: int) -> str:
    """A count short enough for the line: ``12,345``, ``1.23M``, ``4.57G``.

    >>> _count(999_999), _count(1_234_567), _count(4_567_000_000)
    ('999,999', '1.23M', '4.57G')
    """
    if n < 1_000_000:
        return f"{n:,}"
    return f"{n / 1e6:.2f}M" if n < 1_000_000_000 else f"{n / 1e9:.2f}G"


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}" if minutes >= 60 else f"{minutes}:{secs:02d}"
