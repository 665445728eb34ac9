"""Before the first game: every policy of a run plays one move, untimed.

In the driver (``check_policies``) this refuses a policy that cannot play the run's game and player count
(a model trained for two players in a three-player arena) before anything is written, and compiles every
numba kernel the games need, writing numba's on-disk cache, so that the worker processes started next load
the kernels instead of each compiling them again. When numba does compile (a first run, or the first run
after the code changed) it says so, since that can take a minute.

In each worker (``warm_policy``) the same untimed move loads the kernels from the cache before the policy's
first timed move, so no decision time in a game record holds compiling or loading.

>>> from tabletop_rl.agents import make_policy
>>> greedy = make_policy("greedy", game="splendor", seed=0)
>>> check_policies("splendor", {"greedy": greedy}, num_players=2, max_plies=None, options={}, stream=None)
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import IO, Any

from numba.core import event as numba_event

from tabletop_rl.agents import make_policy
from tabletop_rl.arena.llm import is_llm
from tabletop_rl.core.game import policy_answer
from tabletop_rl.games import game_class

__all__ = ["check_policies", "warm_policy"]

#: The seed of the warm-up match and of the policies' warm-up move (the games reset every policy anew).
_WARM_SEED = 0


def warm_policy(policy: Any, game: str, num_players: int, max_plies: int | None,
                options: Mapping[str, Any]) -> None:
    """Ask ``policy`` for the first move of a fresh match (nothing is played, nothing timed).

    LLM players are left out: their move is a paid request and they compile nothing. Whatever the policy
    raises is raised.
    """
    if is_llm(policy):
        return
    state = game_class(game).new(_WARM_SEED, num_players, max_plies, **options)
    seat = state.pending_seats()[0]
    reset = getattr(policy, "reset", None)
    if reset is not None:
        reset(_WARM_SEED)
    policy.act(state.observe(seat), state.seat_mask(seat), state.policy_info(seat))  # its move is not checked here


def _play_out(game: str, num_players: int, max_plies: int | None, options: Mapping[str, Any]) -> None:
    """A whole match of random moves: compiles the game's own kernels (every phase, the end, the scores)."""
    mover = make_policy("random", game=game, seed=_WARM_SEED)
    state = game_class(game).new(_WARM_SEED, num_players, max_plies, **options)
    while not state.is_over:
        step = {seat: policy_answer(state, seat, mover) for seat in state.pending_seats()}
        state.step_joint(step)
    _ = (state.scores, state.ranks, state.winners)  # the result's kernels too


def check_policies(game: str, policies: Mapping[str, Any], num_players: int, max_plies: int | None,
                   options: Mapping[str, Any], stream: IO[str] | None) -> None:
    """Play a random match and ask every policy for a move, compiling what is not in numba's cache.

    ``ValueError`` (one line, naming the spec and the reason) for a policy that cannot make the first move
    of a ``num_players`` match. When numba compiles, ``stream`` (if any) is told when it starts and how
    long it took.
    """
    with _CompileNotice(stream):
        _play_out(game, num_players, max_plies, options)
        for spec, policy in policies.items():
            try:
                warm_policy(policy, game, num_players, max_plies, options)
            except Exception as e:  # whatever stops its first move would crash every game it plays
                raise ValueError(f"policy {spec!r} cannot play {game} with {num_players} players: "
                                 f"{_reason(e)}") from None


def _reason(error: Exception) -> str:
    """The error's first line, with its type unless it is a plain ``ValueError`` (our one-line messages)."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return text if type(error) is ValueError and text else f"{type(error).__name__}: {text}".rstrip(": ")


class _CompileNotice(numba_event.Listener):
    """Within a ``with`` block: says when numba starts compiling (once) and, at the end, how long it took.

    Loading a kernel from numba's cache is no compile event, so a warm cache says nothing.
    """

    def __init__(self, stream: IO[str] | None) -> None:
        self.stream = stream
        self.compiled = False
        self._start = 0.0
        self._installed: Any = None

    def on_start(self, event: numba_event.Event) -> None:
        if not self.compiled and self.stream is not None:
            self.stream.write("compiling kernels (first run only; later runs load them from numba's cache) ...\n")
            self.stream.flush()
        self.compiled = True

    def on_end(self, event: numba_event.Event) -> None:
        pass

    def __enter__(self) -> _CompileNotice:
        self._start = time.monotonic()
        self._installed = numba_event.install_listener("numba:compile", self)
        self._installed.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._installed.__exit__(*exc)
        if self.compiled and self.stream is not None and exc[0] is None:
            self.stream.write(f"compiled in {time.monotonic() - self._start:.0f} s\n")
            self.stream.flush()
