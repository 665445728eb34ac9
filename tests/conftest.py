"""Shared test setup: the helper modules in ``tests/helpers/`` (``positions``, ``reference_splendor``,
``fake_openai_server``) are importable from every test file as top-level modules; Ray, which reads its
address policy when first imported, binds only to 127.0.0.1 in every test that starts it."""

import os
import sys
from pathlib import Path

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # before any test module imports ray

HELPERS = str(Path(__file__).resolve().parent / "helpers")
if HELPERS not in sys.path:
    sys.path.insert(0, HELPERS)
