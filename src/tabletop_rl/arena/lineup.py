"""The policies that play a run's games, asked for by spec: each built once where it plays, and asked for one
untimed move before its first game (``warmup.warm_policy``), so no recorded decision holds loading or compiling.

Policies flow one way, as values:

- The driver builds each of the run's policies once (``runner.run_arena``), checks them (``check_policies``) and
  hands them on in a ``Lineup``: the games it plays itself (``jobs=1``), and those of the first thread of a threaded
  run, play these very policies. When the run returns nothing holds them.
- Every other player of games builds its own from the specs, each on first use: a further thread of a threaded run
  gets a ``Lineup`` of its own (``fresh``), and so does each thread of a worker process (``worker_lineup``).

``worker_lineup`` is this package's one piece of module state: a worker process (the process pool's, a Ray
worker's, a thread of a Ray LLM actor) is handed a match and the run's settings, never policies (they do not
travel between processes), and plays many games of a run, one at a time per thread; building its policies (loading
a network) for each game would cost more than short games. So each thread of a worker keeps the lineup of the
settings it last played. A Ray worker outlives a run, and keeps its lineup for the next run of the same settings,
as it keeps numba's kernels; a run of other settings replaces it.

>>> lineup = Lineup("splendor", num_players=2, max_plies=None, options={})
>>> lineup.policy("greedy") is lineup.policy("greedy")
True
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from tabletop_rl.agents import make_policy
from tabletop_rl.arena.warmup import warm_policy
from tabletop_rl.core.policy import Policy

__all__ = ["Lineup", "worker_lineup"]


@dataclass
class Lineup:
    """A run's settings and the policies built for them, by canonical spec; ``policies`` given are taken as built
    and warmed (the driver's, after ``check_policies``)."""

    game: str
    num_players: int
    max_plies: int | None
    options: dict[str, Any]
    policies: dict[str, Policy] = field(default_factory=dict)

    def policy(self, spec: str) -> Policy:
        """The policy of ``spec``: the one built already, else built and warmed now."""
        if spec not in self.policies:
            policy = make_policy(spec, game=self.game, seed=0)
            warm_policy(policy, self.game, self.num_players, self.max_plies, self.options)
            self.policies[spec] = policy
        return self.policies[spec]

    def fresh(self) -> Lineup:
        """A lineup of the same settings with nothing built: for another thread, which must not share policies."""
        return Lineup(self.game, self.num_players, self.max_plies, self.options)

    def serves(self, game: str, num_players: int, max_plies: int | None, options: dict[str, Any]) -> bool:
        """Whether these are its settings."""
        return (self.game, self.num_players, self.max_plies, self.options) == (game, num_players, max_plies, options)


#: Per thread of a worker process, the lineup it plays with (module docstring).
_WORKER = threading.local()


def worker_lineup(game: str, num_players: int, max_plies: int | None, options: dict[str, Any]) -> Lineup:
    """This worker thread's lineup for these settings: the one it kept, else a new one, kept from now on."""
    lineup = getattr(_WORKER, "lineup", None)
    if not isinstance(lineup, Lineup) or not lineup.serves(game, num_players, max_plies, options):
        lineup = _WORKER.lineup = Lineup(game, num_players, max_plies, options)
    return lineup
