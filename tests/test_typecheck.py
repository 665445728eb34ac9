"""mypy finds no type errors in the package (settings: ``[tool.mypy]`` in pyproject.toml).

Skipped where mypy is not installed (it comes with the ``[dev]`` extra). The first run takes 45 s or so;
later runs reuse mypy's cache (``.mypy_cache``, which mypy keeps out of git itself). ``conftest.py`` starts
this file among the first, so the other worker process is not left idle at the end.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install -e .[dev])")
def test_mypy_reports_no_errors():
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()
        pytest.fail(f"mypy exited with {result.returncode}:\n{output}", pytrace=False)
