"""What a call into compiled code costs from Python, before any rules run: the floor under the Python doors
(``SplendorGame.step_observe``, the AEC and Gymnasium envs, every search and LLM loop). Prints one table;
never part of the test suite.

    python benchmarks/bench_entry.py
    python benchmarks/bench_entry.py --calls 500000 --repeats 9

Every row calls a kernel that does nothing but read one number from each array it is given, with the
arguments ``step_observe`` passes its fused kernel: a game's row, the action, the card and noble tables, the
game's mask buffer, and the observation and mask to write. The rows differ only in how the arrays get there:

- a Python function with the same arguments: the interpreter's own call, the yardstick;
- numba's dispatcher, which works out the arguments' types on every call;
- the compiled entry point that ``core.kernels.Direct`` calls, with no type dispatch (what the package uses);
- that entry with two integers only: what numba's entry costs with nothing to unbox;
- that entry with one ``int64`` array holding the six arrays' addresses, the kernel making its views from
  them. The package does not do this: a kernel that trusts a raw address writes into freed or rebound memory
  without a word when a caller swaps an array, which is the silent failure the house rules out;
- ``np.empty`` for a fresh observation and mask, what the fresh-array doors add to a step.

Times are the best of ``--repeats`` passes of ``--calls`` calls, the rows taking turns, in ns a call.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from tabletop_rl.core.kernels import Direct
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.observe import observation_size
from tabletop_rl.games.splendor.rules import NUM_ACTIONS
from tabletop_rl.ui.bench import print_markdown


@intrinsic
def _pointer(typingctx, address, dtype):
    """A pointer to ``dtype`` at the integer ``address``."""
    signature = types.CPointer(dtype.dtype)(address, dtype)

    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], context.get_value_type(sig.return_type))

    return signature, codegen


@njit(cache=True)
def _by_arrays(state, action, cards, nobles, mask, obs, out_mask):
    return state[0] + action + cards[0, 0] + nobles[0, 0] + mask[0] + obs[0] + out_mask[0] > -1


@njit(cache=True)
def _two_ints(address, action):
    return address + action > -1


@njit(cache=True)
def _by_addresses(at, action):
    """``_by_arrays`` with its arrays made from the addresses and sizes in ``at``."""
    state = numba.carray(_pointer(at[0], numba.int16), at[6])
    cards = numba.carray(_pointer(at[1], numba.int16), (at[7], at[8]))
    nobles = numba.carray(_pointer(at[2], numba.int16), (at[9], at[10]))
    mask = numba.carray(_pointer(at[3], numba.bool_), at[12])
    obs = numba.carray(_pointer(at[4], numba.float32), at[11])
    out_mask = numba.carray(_pointer(at[5], numba.bool_), at[12])
    return state[0] + action + cards[0, 0] + nobles[0, 0] + mask[0] + obs[0] + out_mask[0] > -1


def _python(state, action, cards, nobles, mask, obs, out_mask):
    return True


def _best_of(repeats: int, calls: int, runs: list[Callable[[int], Any]]) -> list[float]:
    """The best pass of each run, in ns a call; the runs take turns, so a busy moment slows them all."""
    best = [float("inf")] * len(runs)
    for _ in range(repeats):
        for k, run in enumerate(runs):
            start = time.perf_counter()
            run(calls)
            best[k] = min(best[k], time.perf_counter() - start)
    return [b / calls * 1e9 for b in best]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200_000, help="calls a pass")
    parser.add_argument("--repeats", type=int, default=7, help="passes a row; the best is kept")
    args = parser.parse_args()

    game = SplendorGame(2, seed=1)
    state, cards, nobles, mask = game.state, game._cards, game._nobles, game._mask
    obs, out_mask = np.zeros(observation_size(2), np.float32), np.zeros(NUM_ACTIONS, np.bool_)
    for array, dtype in ((state, np.int16), (cards, np.int16), (nobles, np.int16)):
        assert array.dtype == dtype and array.flags.c_contiguous, "the kernels below assume int16 C arrays"
    at = np.array([a.ctypes.data for a in (state, cards, nobles, mask, obs, out_mask)]
                  + [state.size, *cards.shape, *nobles.shape, obs.size, NUM_ACTIONS], np.int64)
    arrays = Direct(_by_arrays)
    ints = Direct(_two_ints)
    addresses = Direct(_by_addresses)
    dispatch = _by_arrays
    for f in (arrays.call, dispatch):  # compile (or load from numba's cache) before timing
        f(state, 0, cards, nobles, mask, obs, out_mask)
    ints.call(1, 0)
    addresses.call(at, 0)
    arrays_call, ints_call, addresses_call = arrays.call, ints.call, addresses.call
    empty, f32, boolean = np.empty, np.dtype(np.float32), np.dtype(np.bool_)
    size = obs.size

    # Each loop is written out with its own call: a shared loop calling ``f(*args)`` would time the unpacking of
    # the argument tuple too, about as much as some of the rows measure.
    def python(n: int) -> None:
        for _ in range(n):
            _python(state, 0, cards, nobles, mask, obs, out_mask)

    def dispatcher(n: int) -> None:
        for _ in range(n):
            dispatch(state, 0, cards, nobles, mask, obs, out_mask)

    def direct(n: int) -> None:
        for _ in range(n):
            arrays_call(state, 0, cards, nobles, mask, obs, out_mask)

    def two_ints(n: int) -> None:
        for _ in range(n):
            ints_call(1, 0)

    def by_addresses(n: int) -> None:
        for _ in range(n):
            addresses_call(at, 0)

    def fresh(n: int) -> None:
        for _ in range(n):
            empty(size, f32), empty(NUM_ACTIONS, boolean)

    rows = [("a Python function, the same 7 arguments (yardstick)", python),
            ("numba's dispatcher, 7 arguments (6 arrays)", dispatcher),
            ("the compiled entry (`Direct`), 7 arguments: the package's call", direct),
            ("the compiled entry, 2 integers", two_ints),
            ("the compiled entry, 1 array of the 6 addresses + the action (not used)", by_addresses),
            (f"`np.empty` of a fresh observation ({size} float32) and mask ({NUM_ACTIONS} bool)", fresh)]
    times = _best_of(args.repeats, args.calls, [run for _, run in rows])
    print_markdown(["call", "ns a call", "against the yardstick"],
                   [[name, f"{t:.0f}", f"{t / times[0]:.2f}"] for (name, _), t in zip(rows, times)])


if __name__ == "__main__":
    main()
