"""Text for people: an input quoted in an error message, cut short (``quote``), an integer read from what a
user passed (``as_index``), and whether output may carry colours (``use_color``). Every layer's messages use
them, so they sit in the core, apart from the game contract."""

from __future__ import annotations

import operator
import os
from typing import Any

import numpy as np

__all__ = ["as_index", "quote", "use_color"]

#: Error messages quote at most this many characters of what the user gave.
_QUOTE_LIMIT = 80


def use_color(stream: Any = None) -> bool:
    """Whether text for ``stream`` may carry ANSI colours: never when ``NO_COLOR`` is set to anything but ""
    (no-color.org), and, for a stream, only when it is a terminal, so piped or redirected output stays plain.

    >>> import io; use_color(io.StringIO())
    False
    """
    if os.environ.get("NO_COLOR"):
        return False
    return stream is None or bool(getattr(stream, "isatty", lambda: False)())


def quote(value: Any, limit: int = _QUOTE_LIMIT) -> str:
    """``repr(value)`` cut to ``limit`` characters, so an error never echoes a huge input back.

    >>> quote("x" * 1000)[-30:]
    'xxxxxxxxx... (1002 characters)'
    """
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int past str()'s digit limit, or a deeply nested list
        size = f"{value.bit_length()}-bit integer" if isinstance(value, int) else type(value).__name__
        return f"<{size}, too large to show>"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def as_index(value: Any, what: str = "action", stop: int | None = None) -> int:
    """``value`` as a Python int when it is an integer (a Python or numpy integer, or a 0-d integer array);
    ``ValueError`` naming ``what`` for anything else: floats, bools, strings, arrays of another shape. With
    ``stop``, also ``ValueError`` for an integer outside ``0..stop - 1``.

    >>> as_index(np.int64(3)), as_index(np.array(4))
    (3, 4)
    >>> as_index(-1, "action id", stop=72)
    Traceback (most recent call last):
    ValueError: action id -1 is out of range 0..71
    """
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray) and value.dtype.kind not in "iu"):
        raise ValueError(f"{what} must be an integer, got {quote(value)}")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    try:
        index = operator.index(value)
    except TypeError:
        raise ValueError(f"{what} must be an integer, got {quote(value)}") from None
    if stop is not None and not 0 <= index < stop:
        raise ValueError(f"{what} {quote(index)} is out of range 0..{stop - 1}")
    return index
