"""Env rendering honours NO_COLOR and non-terminals: ``human`` output piped to a file or a pipe carries no
ANSI codes, and ``ansi`` text carries none when NO_COLOR is set (no-color.org)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tabletop_rl import splendor_env

_HUMAN = ("from tabletop_rl import splendor_env\n"
          "env = splendor_env(render_mode='human'); env.reset(seed=3); env.render()\n")


def test_human_render_to_a_pipe_is_plain_text():
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    out = subprocess.run([sys.executable, "-c", _HUMAN], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert "Bank" in out.stdout or "bank" in out.stdout.lower()
    assert "\x1b[" not in out.stdout


@pytest.mark.parametrize("no_color, coloured", [("1", False), ("", True)])
def test_ansi_render_is_coloured_unless_no_color_is_set(monkeypatch, no_color, coloured):
    monkeypatch.setenv("NO_COLOR", no_color)
    env = splendor_env(render_mode="ansi")
    env.reset(seed=3)
    assert ("\x1b[" in env.render()) is coloured
