"""The progress line of the long commands: 80 columns at most, elapsed and time left, however long the run."""

from __future__ import annotations

import io

import pytest

from tabletop_rl.core.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("total", [4_000, 2_000_000, 10_000_000_000])
def test_a_long_run_fits_80_columns_and_shows_elapsed_and_time_left(total):
    """Billions of steps, days left and a long extra text (a trainer's rate and evaluation) still fit."""
    clock, out = Clock(), io.StringIO()
    bar = Progress(total=total, stream=out, clock=clock, label="steps")
    clock.now = 3_600.0
    extra = "123,456 steps/s  eval: random 100% [96%, 100%], greedy 61% [51%, 70%]"
    bar.update(total // 100, extra)
    clock.now = 7_500.0
    bar.update(total // 50, extra)
    line = bar.text()
    assert len(line) <= 80 and "2:05:00 elapsed" in line and " left" in line, line
    left = line.partition("elapsed, ")[2].partition(" left")[0]
    assert int(left.split(":")[0]) > 100, f"hours left, from the rate since the first update: {line}"
    bar.update(total, extra)
    lines = out.getvalue().splitlines()  # off a terminal: a line per 10%
    assert len(lines) >= 2 and all(len(line) <= 80 for line in lines), lines


def test_on_a_terminal_the_line_is_redrawn_in_place_and_notes_go_above_it():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    clock, out = Clock(), Terminal()
    bar = Progress(total=10, stream=out, clock=clock, label="iter")
    bar.advance()
    bar.note("iteration 1: random 90%")
    bar.advance()
    bar.close()
    text = out.getvalue()
    assert text.count("\n") == 2 and "\riteration 1: random 90%" in text.replace("\x1b[K", "")
    assert all(len(part.replace("\x1b[K", "")) <= 80 for part in text.replace("\n", "\r").split("\r"))
