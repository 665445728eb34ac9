"""A small progress bar on stderr: redrawn in place on a terminal, a line per 10% otherwise (logs, CI).

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
from typing import IO

__all__ = ["Progress"]

_WIDTH = 30


class Progress:
    """Counts finished items out of ``total`` (``done`` already finished before this run started)."""

    def __init__(self, total: int, done: int = 0, stream: IO[str] | None = None, label: str = "games") -> None:
        self.total, self.done, self.label = total, done, label
        self.stream = sys.stderr if stream is None else stream
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start, self.start_done = time.monotonic(), done
        self._last_tenth = -1
        self._draw()

    def advance(self, extra: str = "") -> None:
        """One more item finished; ``extra`` (e.g. ``"1 crashed"``) is shown after the counts."""
        self.done += 1
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
        elapsed = time.monotonic() - self.start
        new = self.done - self.start_done
        left = f", {_clock(elapsed / new * (self.total - self.done))} left" if new and self.done < self.total else ""
        return (f"{self.label} {self.done}/{self.total} [{'#' * filled}{'-' * (_WIDTH - filled)}] "
                f"{_clock(elapsed)} elapsed{left}")


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}" if minutes >= 60 else f"{minutes}:{secs:02d}"
