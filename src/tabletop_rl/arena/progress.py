"""A small progress bar on stderr: redrawn in place on a terminal, a line per 10% otherwise (logs, CI).

The time left is the items still to do times the mean time per item, measured from the moment the first
``settle`` items of this run had finished: those carry the start-up (worker processes starting, loading
kernels), which the items after them do not pay again. Until then the bar says it is estimating.

>>> import io
>>> out = io.StringIO()
>>> bar = Progress(total=4, done=0, stream=out, label="games")
>>> for _ in range(4): bar.advance()
>>> out.getvalue().splitlines()[-1].startswith("games 4/4")
True
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO

__all__ = ["Progress"]

_WIDTH = 30


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
        self._last_tenth = -1
        self._draw()

    def advance(self, extra: str = "") -> None:
        """One more item finished; ``extra`` (e.g. ``"1 crashed"``) is shown after the counts."""
        self.done += 1
        if self.done - self.start_done == self.settle:
            self.settled_at = self.clock()
        self._draw(extra)

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()

    def _draw(self, extra: str = "") -> None:
        tenth = 10 * self.done // max(self.total, 1)
        if not self.live and tenth == self._last_tenth and self.done != self.total:
            return
        self._last_tenth = tenth
        line = self.text() + (f"  {extra}" if extra else "")
        self.stream.write(f"\r{line}\x1b[K" if self.live else line + "\n")
        self.stream.flush()

    def text(self) -> str:
        """E.g. ``games 12/40 [#########---------------------] 0:07 elapsed, 0:23 left``."""
        filled = _WIDTH * self.done // max(self.total, 1)
        now = self.clock()
        return (f"{self.label} {self.done}/{self.total} [{'#' * filled}{'-' * (_WIDTH - filled)}] "
                f"{_clock(now - self.start)} elapsed{self._left(now)}")

    def _left(self, now: float) -> str:
        """``, M:SS left`` from the rate since the run settled; ``, estimating`` before that."""
        if self.done >= self.total:
            return ""
        measured = self.done - self.start_done - self.settle
        if self.settled_at is None or measured <= 0:
            return ", estimating"
        return f", {_clock((now - self.settled_at) / measured * (self.total - self.done))} left"


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}" if minutes >= 60 else f"{minutes}:{secs:02d}"
