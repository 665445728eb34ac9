"""numba's cache notices an edit to a kernel that a cached kernel of another file calls (core/numba_cache.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CALLER = "from callee import f\nfrom numba import njit\n\n\n@njit(cache=True)\ndef g():\n    return f()\n"
CALLEE = "from numba import njit\n\n\n@njit(cache=True)\ndef f():\n    return {}\n"
RUN = ("import sys; from pathlib import Path; from tabletop_rl.core.numba_cache import install; "
       "install(Path(sys.argv[1])) if sys.argv[2] == 'keyed' else None; "
       "sys.path.insert(0, sys.argv[1]); import caller; print(caller.g())")


def run(folder: Path, mode: str) -> int:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(folder / "cache"))
    out = subprocess.run([sys.executable, "-c", RUN, str(folder), mode], env=env, capture_output=True, text=True,
                         check=True, timeout=120)
    return int(out.stdout.split()[-1])


@pytest.mark.parametrize(("mode", "after_the_edit"), [
    ("keyed", 2),  # the package's key: the caller compiles again with the new callee
    ("numba", 1),  # numba's key alone: the fault the package's key mends, the caller's copy of the old callee
])
def test_an_edit_to_a_called_kernel_reaches_its_cached_callers(tmp_path: Path, mode: str, after_the_edit: int) -> None:
    (tmp_path / "caller.py").write_text(CALLER)
    (tmp_path / "callee.py").write_text(CALLEE.format(1))
    assert run(tmp_path, mode) == 1
    (tmp_path / "callee.py").write_text(CALLEE.format(2))
    assert run(tmp_path, mode) == after_the_edit
