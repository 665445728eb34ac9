"""Ctrl-C in a training run, at a chosen checkpoint: what the tests of each trainer's resume hint share."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest


def interrupt_after_saving(monkeypatch: pytest.MonkeyPatch, loop: ModuleType, checkpoint: str) -> Callable[..., Any]:
    """Make ``loop._save`` raise ``KeyboardInterrupt`` once it has written the file named ``checkpoint``, as a
    Ctrl-C just after it would; returns the real ``_save``, to put back before resuming."""
    saved = loop._save

    def save_then_interrupt(path, *args, **kwargs):
        written = saved(path, *args, **kwargs)
        if path.name == checkpoint:
            raise KeyboardInterrupt
        return written

    monkeypatch.setattr(loop, "_save", save_then_interrupt)
    return saved


def resume_hint(stderr: str) -> tuple[str, str]:
    """The last line an interrupted ``tabletop train`` printed, and the command in it that goes on."""
    hint = stderr.strip().splitlines()[-1]
    return hint, hint.partition("go on from its latest checkpoint with: ")[2]
