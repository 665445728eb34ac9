"""numba's cache notices an edit to a kernel that a cached kernel of another file calls (core/numba_cache.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def test_an_edit_to_a_called_kernel_recompiles_its_callers(tmp_path: Path) -> None:
    (tmp_path / "caller.py").write_text(CALLER)
    (tmp_path / "callee.py").write_text(CALLEE.format(1))
    assert run(tmp_path, "keyed") == 1
    (tmp_path / "callee.py").write_text(CALLEE.format(2))
    assert run(tmp_path, "keyed") == 2


def test_without_the_key_numba_runs_the_old_callee(tmp_path: Path) -> None:
    """The fault the key mends, shown: numba alone keeps the caller's compiled copy of the old callee."""
    (tmp_path / "caller.py").write_text(CALLER)
    (tmp_path / "callee.py").write_text(CALLEE.format(1))
    assert run(tmp_path, "numba") == 1
    (tmp_path / "callee.py").write_text(CALLEE.format(2))
    assert run(tmp_path, "numba") == 1
