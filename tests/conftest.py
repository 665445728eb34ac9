"""Shared test setup: the helper modules in ``tests/helpers/`` (``positions``, ``reference_splendor``,
``fake_openai_server``) are importable from every test file as top-level modules."""

import sys
from pathlib import Path

HELPERS = str(Path(__file__).resolve().parent / "helpers")
if HELPERS not in sys.path:
    sys.path.insert(0, HELPERS)
