"""The scripts of benchmarks/ as modules, for tests that call their functions rather than run them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/NAME.py`` imported as the module ``NAME`` (registered in ``sys.modules``: dataclasses look
    their module up while a class is made)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
