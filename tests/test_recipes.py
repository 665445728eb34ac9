"""docs/recipes.md cannot rot: every ```python block runs as written, in its own process, when the libraries
it imports are installed (else it is skipped, naming the extra)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

RECIPES = Path(__file__).resolve().parents[1] / "docs" / "recipes.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", RECIPES.read_text(), flags=re.S | re.M)
#: The optional libraries a block may import, and the extra that installs each.
EXTRAS = {"tianshou": "tianshou", "torchrl": "torchrl", "tensordict": "torchrl"}
#: A block that trains a network takes 15-25 s on 2 cores (most of it importing Tianshou or TorchRL and
#: compiling their modules): ``pytest -m slow`` runs it, the default suite runs the rest.
TRAINS = re.compile(r"run_training\(|optimizer\.step\(\)")


def _missing(code: str) -> list[str]:
    """The optional libraries ``code`` imports that are not installed."""
    imported = set(re.findall(r"^(?:from|import) (\w+)", code, flags=re.M))
    return sorted(name for name in imported & set(EXTRAS) if importlib.util.find_spec(name) is None)


def test_the_page_has_a_recipe_per_door():
    assert len(BLOCKS) == 4
    assert [bool(TRAINS.search(block)) for block in BLOCKS] == [True, True, False, False]
    assert [any(f"import {name}" in block or f"from {name}" in block for block in BLOCKS)
            for name in ("tianshou", "torchrl", "pettingzoo")] == [True, True, True]


@pytest.mark.parametrize("index", [pytest.param(i, marks=pytest.mark.slow) if TRAINS.search(block) else i
                                   for i, block in enumerate(BLOCKS)])
def test_every_recipe_runs_as_written(tmp_path, index):
    code = BLOCKS[index]
    missing = _missing(code)
    if missing:
        extras = sorted({EXTRAS[name] for name in missing})
        pytest.skip(f"needs {', '.join(missing)}: pip install -e \".[{','.join(extras)}]\"")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"recipe {index}:\n{code}\n{result.stderr[-3000:]}"
    if "win rate" in code:
        rate = re.search(r"win rate (\d\.\d\d)", result.stdout)
        assert rate and 0.0 <= float(rate[1]) <= 1.0, result.stdout
