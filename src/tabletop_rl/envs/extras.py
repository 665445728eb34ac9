"""The optional frameworks' registries, filled at no cost: Splendor is registered with OpenSpiel
(``pyspiel.load_game("tabletop_splendor")``) and TextArena (``textarena.make("Splendor-v0")``) the moment the
framework itself is imported, before or after ``import tabletop_rl``.

Importing either framework here would cost every user its import time (TextArena takes about 1.5 s, three
times ``import tabletop_rl``) and break the rule that nothing optional loads unless asked. So
``register_on_import`` puts a finder on ``sys.meta_path`` that, when one of them is imported, lets the normal
import run and then imports our module for it (``envs.openspiel``, ``envs.textarena``), which registers the
game. A framework imported already is served at once.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from importlib import import_module
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

__all__ = ["DOORS", "register_on_import"]

#: framework module -> our module that registers Splendor with it when imported
DOORS = {"pyspiel": "tabletop_rl.envs.openspiel", "textarena": "tabletop_rl.envs.textarena"}


def _open(framework: str) -> None:
    """Import our module for ``framework``; a failure (an unsupported version) is a warning, so it never
    breaks the user's own ``import``."""
    try:
        import_module(DOORS[framework])
    except Exception as error:  # noqa: BLE001 - any failure inside the framework's import must stay a warning
        warnings.warn(f"tabletop_rl could not register Splendor with {framework}: {error}", stacklevel=3)


class _RegisterAfterImport(MetaPathFinder):
    """Finds nothing itself: for a framework in ``DOORS`` it asks the other finders for the spec and wraps
    the loader so our module is imported right after the framework's own code has run."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) \
            -> ModuleSpec | None:
        if fullname not in DOORS:
            return None
        spec = next((s for finder in sys.meta_path if finder is not self
                     and (s := getattr(finder, "find_spec", lambda *_: None)(fullname, path, target))), None)
        loader: Any = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _open(fullname)

        loader.exec_module = exec_module  # the loader object serves this one module only
        return spec


_FINDER = _RegisterAfterImport()


def register_on_import() -> None:
    """Register Splendor with each framework in ``DOORS`` now if it is imported, else when it is (once)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    for framework in DOORS:
        if framework in sys.modules:
            _open(framework)
