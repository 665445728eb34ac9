"""The examples in the docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import tabletop_rl
from extra_skips import needs

MODULES = sorted(m.name for m in pkgutil.walk_packages(tabletop_rl.__path__, "tabletop_rl."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:  # a module of an extra that is not installed
        if e.name.split(".")[0] == "tabletop_rl":
            raise
        needs(e.name)  # skips, naming the extra
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples in {name} failed"
