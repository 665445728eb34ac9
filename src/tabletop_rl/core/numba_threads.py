"""How long numba's OpenMP threads spin between parallel loops: briefly, unless the user chose otherwise.

By default OpenMP (GNU libgomp, the layer numba picks where TBB is absent) spins a waiting thread for about
3 ms before it sleeps. A vector env step is a loop well under a millisecond long, so on cores shared with
other processes the spinning thread takes the core from the thread it waits for: two threads spinning that
long ran at a twentieth of one thread (docs/benchmarks.md, "The vector env on shared cores"). Sleeping at once
(``OMP_WAIT_POLICY=PASSIVE``) gives the core back but wakes the threads too late on a machine of their own,
about 30% under spinning there. A short spin (``GOMP_SPINCOUNT=3000``, tens of microseconds) covers the gap
between two steps of a busy training loop, so it keeps the spinning rate on a quiet machine and loses little
on a shared one; where one thread is still the faster, the vector env's ``parallel="auto"`` measures that and
steps on one thread (``core.parallel_choice``). OpenMP reads the setting once, when it is loaded, which numba
does at the first parallel loop, so ``spin_briefly`` runs when ``tabletop_rl.core`` is imported. The setting
lives in ``os.environ``: processes started later inherit it, as does any other OpenMP library this process
loads afterwards.

>>> environ = {}
>>> spin_briefly(environ)
>>> environ
{'GOMP_SPINCOUNT': '3000'}
>>> environ = {"OMP_WAIT_POLICY": "passive"}  # the user's own choice is kept
>>> spin_briefly(environ)
>>> environ
{'OMP_WAIT_POLICY': 'passive'}
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

__all__ = ["SPIN_ROUNDS", "WAIT_SETTINGS", "spin_briefly"]

# a user who sets either has chosen how OpenMP waits (libgomp's GOMP_SPINCOUNT overrides the policy)
WAIT_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
#: libgomp's spin rounds before a waiting thread sleeps (its own default is 300000)
SPIN_ROUNDS = "3000"


def spin_briefly(environ: MutableMapping[str, str] = os.environ) -> None:
    """Set ``GOMP_SPINCOUNT=SPIN_ROUNDS`` in ``environ`` unless it holds one of ``WAIT_SETTINGS`` already."""
    if not any(name in environ for name in WAIT_SETTINGS):
        environ["GOMP_SPINCOUNT"] = SPIN_ROUNDS
