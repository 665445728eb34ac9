"""How to install an optional extra: the one command every message that asks for an extra shows.

The ``[train]`` extra needs torch, and the default package index serves torch's CUDA build (gigabytes, useless on a
CPU-only machine), so its command installs torch's CPU build from torch's own index first; the version is the one
CI tests. Every other extra installs in one step from the checkout, as the README's set-up does.

>>> install_hint("web")
'pip install -e ".[web]"'
>>> install_hint("train")
'pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu && pip install -e ".[train]"'
>>> missing_extra("fastapi", "tabletop web", "web")
'fastapi is not installed; tabletop web needs the [web] extra: pip install -e ".[web]"'
"""

from __future__ import annotations

import importlib.util

__all__ = ["TORCH_CPU_INSTALL", "TRAIN_MODULES", "install_hint", "installed", "missing_extra"]

#: torch's CPU build, the version CI tests, from torch's own index.
TORCH_CPU_INSTALL = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
#: The top-level modules of the [train] extra.
TRAIN_MODULES = ("torch", "stable_baselines3", "sb3_contrib")


def install_hint(extra: str) -> str:
    """The shell command that installs ``extra`` into a checkout of the project."""
    command = f'pip install -e ".[{extra}]"'
    return f"{TORCH_CPU_INSTALL} && {command}" if extra == "train" else command


def installed(module: str) -> bool:
    """Whether ``module`` can be imported here, asked of the import system without importing it (a dotted name
    imports its parent packages). A module set to ``None`` in ``sys.modules``, which makes its import raise, is not.

    >>> installed("numpy"), installed("no_such_module_anywhere")
    (True, False)
    """
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing; a module loaded without a spec
        return False


def missing_extra(module: str, what: str, extra: str) -> str:
    """The one-line message for ``module``, of ``extra``, not installed where ``what`` needs it."""
    return f"{module} is not installed; {what} needs the [{extra}] extra: {install_hint(extra)}"
