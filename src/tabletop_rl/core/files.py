"""Reading a file a user names (a model, say) with bounded time and memory.

``read_regular_file`` refuses what is not a regular file (``/dev/zero`` never ends, a FIFO blocks until a
writer comes) and a file larger than the caller's limit, reads at most that many bytes, and turns every
``OSError`` (missing, a directory, a name too long, no permission) into a one-line ``ValueError`` that names
the file, quoted cut (``core.game.quote``).

>>> read_regular_file("/dev/zero", 1024, "model")
Traceback (most recent call last):
...
ValueError: model '/dev/zero' is not a regular file
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tabletop_rl.core.game import quote

__all__ = ["read_regular_file"]


def read_regular_file(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them; ``ValueError`` (``what`` names
    the kind of file in the message) for anything else."""
    try:
        # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; a regular file ignores it
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ValueError(f"{what} {quote(str(path))} does not exist") from None
    except OSError as e:
        raise ValueError(f"{what} {quote(str(path))} cannot be read ({e.strerror or type(e).__name__})") from None
    info = os.fstat(fd)  # of the file opened, so it cannot be swapped after the check
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        os.close(fd)
        problem = "is not a regular file" if not stat.S_ISREG(info.st_mode) else \
            f"has {info.st_size} bytes, more than the {limit} allowed"
        raise ValueError(f"{what} {quote(str(path))} {problem}")
    with os.fdopen(fd, "rb") as file:
        try:
            data = file.read(limit + 1)
        except OSError as e:
            raise ValueError(f"{what} {quote(str(path))} cannot be read ({e.strerror or type(e).__name__})") from None
    if len(data) > limit:  # it grew while being read
        raise ValueError(f"{what} {quote(str(path))} has more than the {limit} bytes allowed")
    return data
