"""Run a tournament: schedule the games, play them in worker processes (or on Ray: ``arena/ray_backend.py``),
append each to ``games.jsonl``. Each policy is built once here and handed on as a value (``arena/lineup.py``).

>>> summary = run_arena(players=["random", "greedy"], games=2, jobs=1, out=tmp_dir(), progress=False)
>>> summary["games"]
2
"""

from __future__ import annotations

import os
import queue
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from multiprocessing import get_context
from pathlib import Path
from typing import IO, Any

import tabletop_rl.arena.llm as arena_llm
from tabletop_rl.agents import make_policy
from tabletop_rl.agents.llm.client import FatalLLMError, LLMUnavailableError
from tabletop_rl.agents.llm.policy import ForfeitError
from tabletop_rl.arena.labels import check_labels
from tabletop_rl.arena.lineup import Lineup, worker_lineup
from tabletop_rl.arena.report import write_report
from tabletop_rl.arena.results import GAMES_FILE, RunFolderError, append_game, hold_run_folder, open_games, prepare_run
from tabletop_rl.arena.schedule import Match, check_players, derive_seed, schedule
from tabletop_rl.arena.warmup import check_policies
from tabletop_rl.core.extras import install_hint
from tabletop_rl.core.game import policy_answer, step_entry
from tabletop_rl.core.policy import Policy
from tabletop_rl.core.progress import Progress, ignore_interrupt
from tabletop_rl.core.seeding import check_seed
from tabletop_rl.games import check_options, game_class

__all__ = ["BACKENDS", "default_out_dir", "play_match", "run_arena", "tmp_dir"]

#: Where the games are played: worker processes on this machine, or tasks on a Ray cluster.
BACKENDS = ("process", "ray")
#: Read by Ray when it is imported: "0" makes a local instance bind to 127.0.0.1 only.
_RAY_LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


class _Abandoned(BaseException):
    """A game given up part-way because its run stopped (not an ``Exception``: no policy error, nothing recorded)."""


def default_out_dir(game: str = "splendor") -> Path:
    """``runs/arena-<game>-<YYYYmmdd-HHMMSS>`` under the current folder."""
    return Path("runs") / f"arena-{game}-{datetime.now():%Y%m%d-%H%M%S}"


def tmp_dir() -> Path:
    """A fresh empty folder (for examples and tests)."""
    return Path(tempfile.mkdtemp(prefix="tabletop-arena-"))


def _canonical_players(players: Sequence[str], game: str, num_players: int) -> dict[str, Policy]:
    """Each spec built, once (so a bad spec fails before any game), by the name the policy gives itself (its
    canonical spec), in the order given."""
    names, policies = [], {}
    for spec in players:
        policy = make_policy(spec, game=game, seed=0)
        names.append(policy.name)
        policies[policy.name] = policy
    check_players(names, num_players)  # refuses a policy named twice, before the dict keeps one of them
    check_labels(names)
    return policies


def play_match(game: str, match: Match, num_players: int, max_plies: int | None,
               options: dict[str, Any] | None = None, stop: threading.Event | None = None,
               lineup: Lineup | None = None) -> dict[str, Any]:
    """Play one scheduled game to its end and return its record; a policy that raises ends the game
    and is recorded in ``error`` (with the seat in ``error_seat``) instead of propagating. Once ``stop`` is set
    the game is given up before its next decision (``_Abandoned``). ``lineup`` gives each seat's policy by its spec
    (``None``: built, and warmed, for this game alone).

    ``options`` are the game's (its ``option_names``). Each seat's policy is reset with
    ``derive_seed(match.seed, seat)``, so the record's seed, options and seats replay the same game (for
    policies whose budget is not wall time). LLM players
    (arena/llm.py): a forfeit loses the game; a match whose server stayed unavailable is played again
    up to ``VOID_RERUNS`` times and otherwise comes back with ``void`` set; a refused request
    (``FatalLLMError``) stops the run.
    """
    lineup = lineup if lineup is not None else Lineup(game, num_players, max_plies, options or {})
    record, reruns = _play_once(game, match, num_players, max_plies, options, stop, lineup), 0
    while record.get("void") and reruns < arena_llm.VOID_RERUNS:
        record, reruns = _play_once(game, match, num_players, max_plies, options, stop, lineup), reruns + 1
    if reruns:
        record["void_reruns"] = reruns
    return record


def _play_in_worker(game: str, match: Match, num_players: int, max_plies: int | None,
                    options: dict[str, Any]) -> dict[str, Any]:
    """``play_match`` in a worker process (the pool's, Ray's), with the policies this thread of it keeps for the
    run's settings (``worker_lineup``)."""
    return play_match(game, match, num_players, max_plies, options,
                      lineup=worker_lineup(game, num_players, max_plies, options))


def _play_once(game: str, match: Match, num_players: int, max_plies: int | None,
               options: dict[str, Any] | None, stop: threading.Event | None, lineup: Lineup) -> dict[str, Any]:
    start = time.perf_counter()
    state = game_class(game).new(match.seed, num_players, max_plies, **(options or {}))
    n = len(match.seats)
    moves, decisions, seconds, nodes = [], [0] * n, [0.0] * n, [0] * n
    seat, error, trace, policies, notes, forfeit, void = -1, None, None, [], [], None, None
    try:
        for seat, spec in enumerate(match.seats):
            policies.append(lineup.policy(spec))
            reset = getattr(policies[-1], "reset", None)
            if reset is not None:
                reset(derive_seed(match.seed, seat))
        while not state.is_over:
            step = {}
            for table_seat in state.pending_seats():  # every seat answers before any move is played
                if stop is not None and stop.is_set():
                    raise _Abandoned
                seat = state.player_of(table_seat)  # the policy's index (a Klaverjas partnership plays two seats)
                tick = time.perf_counter()
                try:
                    step[table_seat] = policy_answer(state, table_seat, policies[seat])
                finally:  # a decision that ends the game (a forfeit) took its time too
                    seconds[seat] += time.perf_counter() - tick
                    decisions[seat] += 1
            state.step_joint(step)
            moves.append(step_entry(state, step))
            notes.append(step_entry(state, {s: arena_llm.move_note(policies[state.player_of(s)]) for s in step}))
        nodes = [int(getattr(getattr(p, "stats", None), "nodes", 0)) for p in policies]
    except FatalLLMError:
        raise  # a refused request (a bad key, an unknown model): playing on cannot help
    except LLMUnavailableError as e:
        void = f"seat {seat} ({match.seats[seat]}): {e}"
    except ForfeitError as e:
        forfeit = e.seat
    except Exception as e:  # a policy's bug must not stop the tournament
        error = f"seat {seat} ({match.seats[seat]}) raised {type(e).__name__}: {e}"
        trace = traceback.format_exc(limit=-4)
    record = {
        "index": match.index, "game": game, **({"options": options} if options else {}),
        "num_players": num_players, "max_plies": max_plies, "deal": match.deal, "seed": match.seed,
        "seats": list(match.seats), "moves": moves, "plies": len(moves),
        "scores": state.scores, "winners": state.winners if error is None else [],
        "ranks": state.ranks if error is None else None, "truncated": state.is_truncated,
        "error": error, "error_seat": seat if error else None, "traceback": trace,
        "decisions": decisions, "time_s": seconds, "nodes": nodes, "wall_s": time.perf_counter() - start,
    }
    arena_llm.add_llm_outcome(record, policies, notes, forfeit, void)
    return record


def run_arena(game: str = "splendor", players: Sequence[str] = ("random", "greedy"), games: int = 10,
              seed: int = 0, jobs: int = 2, out: Path | str | None = None, resume: bool = False,
              num_players: int = 2, max_plies: int | None = None, options: dict[str, Any] | None = None,
              progress: bool = True, log: IO[str] | None = None, backend: str = "process",
              address: str | None = None) -> dict[str, Any]:
    """Play every scheduled game not yet in ``out/games.jsonl``, then write and return the summary.

    ``games`` is per table (see ``schedule``); ``options`` are the game's (its ``option_names``). ``resume=True``
    continues the run in ``out`` (which must have been started with the same arguments; ``jobs`` may
    differ). ``ValueError`` for bad arguments, and for a policy that cannot make the first move of this game
    and player count: before anything is written, every policy plays one untimed move (``arena/warmup.py``),
    which also compiles numba's kernels here, once, for the workers to load.

    ``backend="ray"`` plays the games as Ray tasks (``jobs`` in flight) on the cluster at ``address`` (``None``:
    the Ray this process has joined, else a new local instance bound to 127.0.0.1); this process still writes
    every file, so resuming works across backends. Needs the [ray] extra (docs/arena.md).
    """
    options = check_options(game, options)
    rules = game_class(game)
    if num_players not in rules.player_counts:
        raise ValueError(f"{game} is played by {', '.join(map(str, rules.player_counts))} players, "
                         f"not {num_players!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    seed = check_seed(seed)
    _check_backend(backend, address)
    built = _canonical_players(players, game, num_players)
    names = list(built)
    cap = max_plies if max_plies is not None else rules.default_max_plies
    stream = (log or sys.stderr) if progress else None
    # Before anything is written: refuse a policy that cannot play this game, and compile in this process
    # so the workers load numba's cache rather than each compiling again.
    check_policies(game, built, num_players, cap, options, stream)
    llm = [name for name, policy in built.items() if arena_llm.is_llm(policy)]
    lineup = Lineup(game, num_players, cap, options, built)
    matches = schedule(names, games, seed, num_players)
    out = Path(out) if out is not None else default_out_dir(game)
    config: dict[str, Any] = {"game": game, "players": names, "games": games, "seed": seed,
                              "num_players": num_players, "max_plies": cap,
                              **({"options": options} if options else {})}  # absent when empty: older runs still resume
    with _games_on(backend, address, game, names, llm, stream) as play_all, \
            hold_run_folder(out, create=not resume):  # one run writes a run folder at a time
        records = prepare_run(out, config, resume, check=_scheduled_in(matches, game))
        done = {r["index"] for r in records}
        todo = [m for m in matches if m.index not in done]
        bar = None
        if stream is not None:
            print(f"arena {game}: {', '.join(names)}; {games} games per table, {num_players} players, seed {seed}, "
                  f"{jobs} jobs{' on Ray' if backend == 'ray' else ''} -> {out}"
                  + (f" (resuming: {len(done)} done)" if resume else ""), file=stream)
            # the first game of each worker carries its start-up: the time left is measured after them
            bar = Progress(len(matches), len(done), stream=log, settle=min(jobs, max(len(todo), 1)))
        with open_games(out) as fh:
            for record in play_all(todo, lineup, jobs, bool(llm)):
                if not record.get("void"):  # a void game is not written, so --resume plays it again
                    append_game(fh, record)
                records.append(record)
                if bar is not None:
                    crashed = sum(1 for r in records if r["error"])
                    bar.advance(f"{crashed} crashed" if crashed else "")
        if bar is not None:
            bar.close()
        try:
            return write_report(out, records, config)
        except OSError as e:
            raise RunFolderError.from_os("write", e.filename or f"the summary and plots in {out}", e,
                                         f"every game is kept in {GAMES_FILE}; --resume writes them again") from None


def _check_backend(backend: str, address: str | None) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if address is not None and backend != "ray":
        raise ValueError(f"address={address!r} needs backend='ray'")


def _games_on(backend: str, address: str | None, game: str, specs: list[str], llm: list[str],
              stream: IO[str] | None) -> AbstractContextManager[Callable[..., Iterator[dict[str, Any]]]]:
    """The function that plays the games (``_play_all``'s arguments and records), for the block."""
    if backend == "process":
        return nullcontext(_play_all)
    if address is None:  # a local instance: nothing of it may listen beyond this machine
        os.environ.setdefault(_RAY_LOOPBACK_ENV, "0")
    try:
        from tabletop_rl.arena import ray_backend
    except ModuleNotFoundError as e:
        if (e.name or "").partition(".")[0] != "ray":
            raise
        raise ValueError(f"backend ray needs Ray, which is not installed: {install_hint('ray')}") from None
    return ray_backend.ray_games(address, game, specs, llm, _play_in_worker, stream)


def _scheduled_in(matches: list[Match], game: str) -> Callable[[dict[str, Any]], str | None]:
    """The check of a resumed run's records: each must be the game its index names in this run's schedule."""
    by_index = {m.index: m for m in matches}

    def check(record: dict[str, Any]) -> str | None:
        index, match = record["index"], by_index.get(record["index"])
        if match is None:
            return f"game {index} is not in this run's schedule (games 0 to {len(matches) - 1})"
        if record["game"] != game or record["seed"] != match.seed or record["seats"] != list(match.seats):
            return (f"game {index} is not this run's game {index}: it has {record['game']}, seed {record['seed']}, "
                    f"seats {record['seats']}, where the schedule has {game}, seed {match.seed}, "
                    f"seats {list(match.seats)}")
        return None

    return check


def _play_all(todo: list[Match], lineup: Lineup, jobs: int, threads: bool = False) -> Iterator[dict[str, Any]]:
    """Records as games finish, played under ``lineup``'s settings: in this process for ``jobs=1``, with its
    policies, else in ``jobs`` spawned workers, each building its own (``worker_lineup``), or ``jobs`` threads when
    ``threads`` (LLM players wait on the network, not the CPU), the first with ``lineup``'s policies and each other
    with its own."""
    game, num_players, max_plies, options = lineup.game, lineup.num_players, lineup.max_plies, lineup.options
    if jobs == 1 or len(todo) <= 1:
        for match in todo:
            yield play_match(game, match, num_players, max_plies, options, lineup=lineup)
        return
    workers = min(jobs, len(todo))
    if threads:
        def play(match: Match, stop: threading.Event, own: Lineup) -> dict[str, Any]:
            return play_match(game, match, num_players, max_plies, options, stop, own)

        yield from _in_threads(play, todo, [lineup, *(lineup.fresh() for _ in range(workers - 1))])
        return
    # spawn: numba and fork do not mix, and workers then start the same on every platform.
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), initializer=ignore_interrupt)
    pending: set[Future] = set()
    try:
        pending = {pool.submit(_play_in_worker, game, m, num_players, max_plies, options) for m in todo}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                yield future.result()
    finally:
        if pending:  # stopped early (Ctrl-C, an error): the games in play are given up
            _end_workers(pool)
        pool.shutdown(wait=False, cancel_futures=True)


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """End the pool's worker processes now. Shutting the pool down alone lets each worker finish its game first, at
    interpreter exit if not before, so a Ctrl-C would print its message and then wait for them (Python 3.14's
    ``terminate_workers`` does this; before it, the processes are only in ``_processes``)."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


def _in_threads(play: Callable[[Match, threading.Event, Lineup], dict[str, Any]], todo: list[Match],
                lineups: list[Lineup]) -> Iterator[dict[str, Any]]:
    """Records as games finish, played by one daemon thread per lineup (``play(match, stop, its lineup)``: threads
    share no policy); a game's error is raised here. When the caller stops reading (Ctrl-C, an error) the threads
    are told to stop and nobody waits for them: a thread pool's would each finish its game at interpreter exit, still
    sending requests, while a daemon thread does not hold the process, so an interrupted run ends at once and its
    requests in flight are abandoned (in a process that lives on, each thread gives its game up at its next
    decision)."""
    matches: queue.SimpleQueue[Match] = queue.SimpleQueue()
    for match in todo:
        matches.put(match)
    done: queue.SimpleQueue[dict[str, Any] | BaseException] = queue.SimpleQueue()
    stop = threading.Event()

    def work(lineup: Lineup) -> None:
        while not stop.is_set():
            try:
                match = matches.get_nowait()
            except queue.Empty:
                return
            try:
                done.put(play(match, stop, lineup))
            except _Abandoned:
                return
            except BaseException as e:  # for the reader to raise, as a pool's future would
                done.put(e)

    for number, lineup in enumerate(lineups):
        threading.Thread(target=work, args=(lineup,), name=f"arena-game-{number}", daemon=True).start()
    try:
        for _ in todo:
            finished = done.get()
            if isinstance(finished, BaseException):
                raise finished
            yield finished
    finally:
        stop.set()
