"""Files a user names: read with bounded time and memory, written whole and only over a regular file.

``read_regular_file`` refuses what is not a regular file (``/dev/zero`` never ends, a FIFO blocks until a
writer comes) and a file larger than the caller's limit, reads at most that many bytes, and turns every
``OSError`` (missing, a directory, a name too long, no permission) into a one-line ``ValueError`` that names
the file (its path cut to its end when long, ``shown_path``).

``replace_file`` serves every save of the library (a table, a run's config, a checkpoint, a cached LLM reply): it
writes a temporary file beside its target and renames it into place, so a crash never leaves half a file. A
rename replaces whatever the target is: aimed at ``/dev/null`` by a user's ``--save``, it would turn the device
into a regular file and break the machine for every other program (as root, the only user for whom that rename
succeeds). So the target must be a regular file or not exist yet; a device, a folder or a link to either is
refused before anything is written.

>>> read_regular_file("/dev/zero", 1024, "model")
Traceback (most recent call last):
...
ValueError: model '/dev/zero' is not a regular file
>>> replace_file("/dev/null", lambda temp: temp.write_text("hello"))
Traceback (most recent call last):
ValueError: cannot save to /dev/null: it is a device, not a regular file
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

__all__ = ["check_save_target", "file_problem", "read_regular_file", "replace_file", "shown_path"]

#: Characters of a path an error message shows: its end, where the file's name is.
_PATH_SHOWN = 160


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` quoted for an error message, cut to its last characters when long (the file's name stays).

    >>> shown_path("/tmp/model.txt"), shown_path("/x" * 100 + "/model.txt")[:12]
    ("'/tmp/model.txt'", "'.../x/x/x/x")
    """
    text = os.fspath(path)
    if len(text) <= _PATH_SHOWN:
        return repr(text)
    return f"{'...' + text[-_PATH_SHOWN:]!r} ({len(text)} characters)"


def read_regular_file(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them; ``ValueError`` (``what`` names
    the kind of file in the message) for anything else."""
    try:
        # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; a regular file ignores it
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise ValueError(_unopened(path, e, what)) from None
    problem = _refusal(path, os.fstat(fd), limit, what)  # of the file opened, so it cannot be swapped after the check
    if problem is not None:
        os.close(fd)
        raise ValueError(problem)
    with os.fdopen(fd, "rb") as file:
        try:
            data = file.read(limit + 1)
        except OSError as e:
            raise ValueError(f"{what} {shown_path(path)} cannot be read ({e.strerror or type(e).__name__})") from None
    if len(data) > limit:  # it grew while being read
        raise ValueError(f"{what} {shown_path(path)} has more than the {limit} bytes allowed")
    return data


def file_problem(path: str | Path, limit: int, what: str) -> str | None:
    """Why ``read_regular_file`` would refuse ``path``, in its words, found from the file's metadata alone (nothing
    is read); ``None`` when it looks readable (a file that cannot be opened for want of permission is found by
    reading it)."""
    try:
        info = os.stat(path)
    except OSError as e:
        return _unopened(path, e, what)
    return _refusal(path, info, limit, what)


def _unopened(path: str | Path, error: OSError, what: str) -> str:
    if isinstance(error, FileNotFoundError):
        return f"{what} {shown_path(path)} does not exist"
    return f"{what} {shown_path(path)} cannot be read ({error.strerror or type(error).__name__})"


def _refusal(path: str | Path, info: os.stat_result, limit: int, what: str) -> str | None:
    """Why a file of these metadata is not read: not a regular file, or larger than ``limit``."""
    if not stat.S_ISREG(info.st_mode):
        return f"{what} {shown_path(path)} is not a regular file"
    if info.st_size > limit:
        return f"{what} {shown_path(path)} has {info.st_size} bytes, more than the {limit} allowed"
    return None


def check_save_target(path: str | os.PathLike[str]) -> Path:
    """``path`` as a ``Path`` when a save may replace it (a regular file, or nothing yet); ``ValueError``
    naming what it is otherwise. A link counts as what it points to."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            raise ValueError(f"cannot save to {path}: it is a link to nothing, not a regular file") from None
        return path
    except OSError as e:
        raise ValueError(f"cannot save to {path}: {e.strerror}") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"cannot save to {path}: it is {_kind(mode)}, not a regular file")
    return path


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a named pipe" if stat.S_ISFIFO(mode) else "a socket"


def replace_file(path: str | os.PathLike[str], write: Callable[[Path], object], fsync: bool = False) -> Path:
    """Write ``path`` whole or not at all: ``write(temp)`` fills a temporary file beside it, which then replaces
    ``path``. ``ValueError`` (nothing written) when ``path`` is not a regular file (``check_save_target``); the
    temporary file is removed when ``write`` fails. ``fsync``: flush it to disk before the rename. Returns
    ``path`` as a ``Path``."""
    path = check_save_target(path)
    # unique, so two writers of one path never share a temporary file; the suffix keeps what savers that
    # add their own extension (numpy's .npz) recognise
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp{path.suffix}")
    try:
        write(temp)
        if fsync:
            with open(temp, "rb") as fh:
                os.fsync(fh.fileno())
        os.replace(temp, path)
    except BaseException:
        with suppress(OSError):
            temp.unlink()
        raise
    return path
