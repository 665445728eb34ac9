"""envs/extras.py: ``import tabletop_rl`` loads no optional framework, and registers Splendor with OpenSpiel and
TextArena whenever they are imported, before or after it (each case in a fresh interpreter)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_loads_no_framework():
    assert run("import sys, tabletop_rl; print(sorted({'pyspiel', 'textarena'} & set(sys.modules)))") == "[]"


needs_both = pytest.mark.skipif(not (importlib.util.find_spec("pyspiel") and importlib.util.find_spec("textarena")),
                                reason="needs the [openspiel] and [textarena] extras")


@needs_both
@pytest.mark.openspiel
@pytest.mark.textarena
@pytest.mark.parametrize("order", ["tabletop_rl, pyspiel, textarena", "pyspiel, textarena, tabletop_rl"])
def test_both_doors_open_in_either_import_order(order):
    out = run(f"import {order}\n"
              "print(pyspiel.load_game('tabletop_splendor').num_players(), textarena.make('Splendor-v0').env_id)")
    assert out == "2 Splendor-v0"
