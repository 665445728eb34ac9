"""numba's on-disk cache, made to notice an edit to any of the package's compiled code.

numba keys each cached function by its own source file only. A kernel that calls kernels of another file
keeps its compiled copy of them when that other file changes: after a ``git pull`` into an editable install,
the vector env would go on playing the old rules, or greedy's old moves, with nothing to say so (numba issue
1833). ``install`` adds to every function's key a digest of the package's files that hold numba code, so
that an edit to any of them recompiles everything that could have inlined it. Edits elsewhere (the arena,
the command line, the docs) leave the cache alone.

It runs when ``tabletop_rl.core`` is imported, which every module of the package is imported after, so it
is in place before the first ``@njit(cache=True)`` is decorated. numba's locator classes are not a public
interface: where they are not as expected (another numba), ``install`` changes nothing and numba keeps
its own keys.

>>> install()  # again: it is installed once
>>> len(sources_digest(PACKAGE_ROOT))
64
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any

from numba.core import caching

__all__ = ["PACKAGE_ROOT", "install", "sources_digest"]

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


@cache
def sources_digest(root: Path) -> str:
    """A hex digest of the contents of the ``.py`` files under ``root`` that mention numba."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        text = path.read_bytes()
        if b"numba" in text:  # every file that compiles with numba imports it
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + text + b"\0")
    return digest.hexdigest()


def _with_package_stamp(locator: Any, roots: tuple[Path, ...]) -> type:
    """A subclass of numba's cache ``locator`` whose source stamp also holds the digest of ``roots``."""

    def get_source_stamp(self: Any) -> Any:
        return (locator.get_source_stamp(self), tuple(sources_digest(root) for root in roots))

    return type(locator.__name__, (locator,), {"get_source_stamp": get_source_stamp, "__module__": __name__,
                                                 "_numba_locator": locator})


def install(*roots: Path) -> None:
    """Key numba's cache of every function also by ``sources_digest`` of ``roots`` (default: this package)."""
    impl: Any = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)  # renamed in 0.6x
    classes: Any = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list) or not all(hasattr(c, "get_source_stamp") for c in classes):
        return
    # installed before: wrap numba's own classes again, with these roots
    impl._locator_classes = [_with_package_stamp(getattr(c, "_numba_locator", c), roots or (PACKAGE_ROOT,))
                             for c in classes]
