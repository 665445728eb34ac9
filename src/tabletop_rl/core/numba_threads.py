"""How numba's OpenMP threads wait between parallel loops: asleep, unless the user chose otherwise.

By default OpenMP (GNU libgomp, the layer numba picks where TBB is absent) spins a thread for about 3 ms at
every barrier before it sleeps. A vector env step is a few parallel loops of well under a millisecond each,
so on cores shared with other processes the spinning thread takes the core from the thread it waits for:
two spinning threads ran at a twentieth of one thread, two sleeping ones (``OMP_WAIT_POLICY=PASSIVE``) at one
to four times one thread (docs/benchmarks.md, "The vector env on shared cores"). OpenMP reads the setting
once, when it is loaded, which numba does at the first parallel loop, so ``wait_passively`` runs when
``tabletop_rl.core`` is imported. The setting lives in ``os.environ``: processes started later inherit it, as
does any other OpenMP library this process loads afterwards.

>>> environ = {}
>>> wait_passively(environ)
>>> environ
{'OMP_WAIT_POLICY': 'PASSIVE'}
>>> environ = {"OMP_WAIT_POLICY": "active"}  # the user's own choice is kept
>>> wait_passively(environ)
>>> environ
{'OMP_WAIT_POLICY': 'active'}
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

__all__ = ["WAIT_SETTINGS", "wait_passively"]

# a user who sets either has chosen how OpenMP waits (libgomp's GOMP_SPINCOUNT overrides the policy)
WAIT_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def wait_passively(environ: MutableMapping[str, str] = os.environ) -> None:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` in ``environ`` unless it holds one of ``WAIT_SETTINGS`` already."""
    if not any(name in environ for name in WAIT_SETTINGS):
        environ["OMP_WAIT_POLICY"] = "PASSIVE"
