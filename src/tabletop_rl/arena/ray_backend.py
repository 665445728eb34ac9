"""The arena's games as Ray tasks (``run_arena(..., backend="ray")``, ``tabletop arena ... --backend ray``).

The driver stays the only writer of the run folder: workers play games and hand back records, the driver
appends them (``runner.run_arena``), so resuming, the lock and the summary are those of the process pool.

- Games without an LLM seat are tasks holding one CPU each; Ray retries a task whose worker died, so a lost
  worker costs only the game it was playing.
- Games with an LLM seat wait on the network, not the CPU: they run in threaded actors that hold no CPU
  (``_LLM_GAMES_PER_WORKER`` games each, spread over the nodes). Each server's concurrency limit (the llm
  spec's ``concurrency=``) holds across the cluster: every request takes a slot from one small actor
  (``_Slots``) instead of a semaphore per process. A restarted actor gives back what its last life held.
- Before anything is written, every node is asked (``_node_report``) whether it runs this version of
  tabletop_rl, can read each file a spec names (``ppo:PATH``) with the same content at the same absolute
  path, and sees the same LLM response cache folder: these are not shipped; a node that lacks one is refused
  in one line naming what must be shared.

Only ``runner`` imports this module, inside the function that needs it: nothing of Ray loads otherwise.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import logging
import math
import os
import socket
import threading
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

import tabletop_rl.agents.llm.client as llm_client
from tabletop_rl.agents import parse_spec
from tabletop_rl.agents.llm.client import is_loopback, key_env_vars
from tabletop_rl.agents.llm.policy import server_defaults
from tabletop_rl.arena.lineup import Lineup
from tabletop_rl.arena.schedule import Match

__all__ = ["GameLostError", "ray_games"]

#: Games one LLM worker actor plays at once (threads); more games in flight start more actors.
_LLM_GAMES_PER_WORKER = 8
#: Times a game whose worker died is played again before the run stops (Ray's own retries).
_RETRIES = 3
#: Seconds to wait for a cluster's address to answer before calling it unreachable (Ray itself would wait for
#: minutes).
_CONNECT_TIMEOUT_S = 5.0
#: Spec options that name files or folders (a value equal to the option's default is a packaged file).
_FILE_OPTIONS = ("path", "cache")
_CACHE_OPTION = "cache"
_DISTRIBUTION = "tabletop-rl"

#: Plays one game in a worker: ``runner._play_in_worker(game, match, num_players, max_plies, options)``, with the
#: policies that thread of the worker builds and keeps (``lineup.worker_lineup``: policies do not travel).
PlayMatch = Callable[[str, Match, int, int | None, dict[str, Any]], dict[str, Any]]


class GameLostError(ValueError):
    """A game Ray could not get played (its worker died more than ``_RETRIES`` times, a node went away); the
    message is one line, and the games finished before it are kept for ``--resume``."""


# --- connecting ---------------------------------------------------------------------------------------------
@contextmanager
def _connected(address: str | None, stream: IO[str] | None) -> Iterator[None]:
    """Ray for the block: the instance this process already joined, else the cluster at ``address``, else a
    new local instance (bound to 127.0.0.1: the runner sets ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` before
    importing Ray), which is shut down at the end. ``ValueError`` (one line) for an address that does not
    answer, or that is not the cluster this process has joined."""
    if ray.is_initialized():
        joined = ray.get_runtime_context().gcs_address
        if address not in (None, "auto", joined):
            raise ValueError(f"this process has already joined the Ray cluster at {joined}, not {address}")
        yield
        return
    if address is not None:
        _check_reachable(address)
    try:
        ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise ValueError(f"cannot join the Ray cluster at {address or 'a new local instance'}: "
                         f"{_first_line(e)}") from None
    try:
        if stream is not None:
            resources = ray.cluster_resources()
            print(f"Ray: {len(_alive_nodes())} node(s), {resources.get('CPU', 0):g} CPUs"
                  + (f" at {address}" if address else " (a local instance on 127.0.0.1)"), file=stream)
        yield
    finally:
        ray.shutdown()


def _check_reachable(address: str) -> None:
    """Refuse at once an address whose port does not answer (Ray would retry for minutes); ``auto`` (the
    cluster ``ray start`` left on this machine, or ``$RAY_ADDRESS``) is Ray's to find."""
    if address == "auto":
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"--address {address!r} is not HOST:PORT (e.g. 10.0.0.5:6379, what 'ray start --head' "
                         "printed), ray://HOST:PORT or auto")
    try:
        socket.create_connection((host, int(port)), timeout=_CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise ValueError(f"no Ray cluster answers at {address}: {e.strerror or e}; start one with "
                         "'ray start --head' and pass the address it prints") from None


def _alive_nodes() -> list[dict[str, Any]]:
    return [node for node in ray.nodes() if node.get("Alive")]


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


# --- what every node must have ------------------------------------------------------------------------------
def _spec_files(specs: list[str], game: str) -> tuple[list[str], list[str]]:
    """The files (``ppo:PATH``) and the response cache folders the specs name. ``ValueError`` for a relative
    path: workers do not start in the driver's folder."""
    files: list[str] = []
    caches: list[str] = []
    for spec in specs:
        parsed = parse_spec(spec, game)
        defaults = {option.name: option.default for option in parsed.entry.options}
        for name in _FILE_OPTIONS:
            value = parsed.given.get(name)
            if not value or value == defaults.get(name):
                continue  # not given, or the packaged default
            if not os.path.isabs(value):
                raise ValueError(f"{spec}: with --backend ray, {name}= needs an absolute path (workers do not "
                                 f"start in this folder), e.g. {os.path.abspath(value)}")
            (caches if name == _CACHE_OPTION else files).append(value)
    return sorted(set(files)), sorted(set(caches))


def _digest(path: str) -> str | None:
    """The file's SHA-256, or ``None`` where it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def _node_report(files: list[str], markers: list[str]) -> dict[str, Any]:
    """What a node has: tabletop_rl's version, each file's digest, and which cache markers it sees."""
    return {"version": importlib.metadata.version(_DISTRIBUTION), "files": {path: _digest(path) for path in files},
            "markers": {path: os.path.exists(path) for path in markers}}


def _check_nodes(files: list[str], caches: list[str]) -> None:
    """Ask every alive node for its ``_node_report`` and refuse (one line) a node that differs from here.

    A cache folder is shared when a marker file written here is seen on every node.
    """
    markers = [_marker(cache) for cache in caches]
    try:
        here = _node_report(files, [])
        missing = [path for path, digest in here["files"].items() if digest is None]
        if missing:
            raise ValueError(f"cannot read {missing[0]}, named by a policy spec")
        task = ray.remote(num_cpus=0)(_node_report)
        nodes = _alive_nodes()
        refs = [task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False))
                .remote(files, markers) for node in nodes]
        for node, ref in zip(nodes, refs):
            problem = _node_problem(here, _node_answer(node, ref), caches, markers)
            if problem:
                raise ValueError(f"Ray node {node['NodeManagerAddress']} {problem}")
    finally:
        for marker in markers:
            with suppress(OSError):
                os.remove(marker)


def _marker(cache: str) -> str:
    try:
        os.makedirs(cache, exist_ok=True)
        path = os.path.join(cache, f".tabletop-shared-{uuid.uuid4().hex}")
        Path(path).touch()
    except OSError as e:
        raise ValueError(f"cannot write the response cache {cache}: {e.strerror or e}") from None
    return path


def _node_answer(node: dict[str, Any], ref: Any) -> dict[str, Any]:
    try:
        return ray.get(ref)
    except ray.exceptions.RayError as e:  # most often: tabletop_rl is not installed there
        raise ValueError(f"Ray node {node['NodeManagerAddress']} cannot run the arena ({_first_line(e)}); install "
                         f"tabletop-rl {importlib.metadata.version(_DISTRIBUTION)} with the [ray] extra on every "
                         "node") from None


def _node_problem(here: dict[str, Any], there: dict[str, Any], caches: list[str], markers: list[str]) -> str | None:
    """Why a node's report does not match this machine's, or ``None``."""
    if there["version"] != here["version"]:
        return f"runs tabletop-rl {there['version']}, this machine {here['version']}; install the same on every node"
    for path, digest in here["files"].items():
        if there["files"][path] != digest:
            what = "cannot read" if there["files"][path] is None else "has another file at"
            return f"{what} {path}; put the files that specs name on a folder every node shares at the same path"
    for cache, marker in zip(caches, markers):
        if not there["markers"][marker]:
            return (f"does not share the response cache {cache}; cache= must name a folder every node shares "
                    "(NFS) at the same path")
    return None


# --- the cluster-wide LLM limit ---------------------------------------------------------------------------------
class _Slots:
    """Per server (``base_url``), a semaphore of its ``concurrency`` limit for the whole cluster; a Ray actor.

    Holders are worker lives (``register``): a worker that dies holding slots is replaced by a new life, which
    registers and so gives back what the old one held, and a slot granted late to a dead life is given back.
    """

    def __init__(self, limits: dict[str, int]) -> None:
        self.limits = limits
        self.semaphores: dict[str, asyncio.Semaphore] = {}  # made in the actor's event loop, on first use
        self.held: Counter[tuple[str, str]] = Counter()  # (life, url) -> slots held
        self.life_of: dict[int, str] = {}
        self.retired: set[str] = set()

    def _semaphore(self, url: str) -> asyncio.Semaphore:
        return self.semaphores.setdefault(url, asyncio.Semaphore(self.limits[url]))

    async def register(self, worker: int, life: str) -> None:
        old = self.life_of.get(worker)
        self.life_of[worker] = life
        if old is not None:
            self.retired.add(old)
            for (holder, url), count in list(self.held.items()):
                if holder == old:
                    del self.held[(holder, url)]
                    for _ in range(count):
                        self._semaphore(url).release()

    async def acquire(self, url: str, life: str) -> None:
        await self._semaphore(url).acquire()
        if life in self.retired:
            self._semaphore(url).release()
            return
        self.held[(life, url)] += 1

    async def release(self, url: str, life: str) -> None:
        if self.held[(life, url)] > 0:
            self.held[(life, url)] -= 1
            self._semaphore(url).release()


class _ClusterSlots(threading.BoundedSemaphore):
    """The LLM client's per-server semaphore, taken from the ``_Slots`` actor instead of this process."""

    def __init__(self, slots: Any, url: str, life: str) -> None:
        super().__init__(1)
        self.slots, self.url, self.life = slots, url, life

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        ray.get(self.slots.acquire.remote(self.url, self.life))
        return True

    def __enter__(self, blocking: bool = True, timeout: float | None = None) -> bool:
        return self.acquire(blocking, timeout)  # threading.Semaphore binds __enter__ to its own acquire

    def release(self, n: int = 1) -> None:
        for _ in range(n):
            self.slots.release.remote(self.url, self.life)


class _LLMWorker:
    """Plays games with LLM seats in threads, every request through the cluster-wide slots; a Ray actor."""

    def __init__(self, worker: int, play: PlayMatch, slots_name: str, urls: list[str], keys: dict[str, str]) -> None:
        self.play = play
        os.environ.update(keys)  # the API keys: a remote node's environment does not have the driver's
        # Found by name: an actor handle among the arguments would keep a restarted actor from starting again.
        slots = ray.get_actor(slots_name)
        life = uuid.uuid4().hex
        ray.get(slots.register.remote(worker, life))
        for url in urls:
            llm_client.share_server_slots(url, _ClusterSlots(slots, url, life))  # before any client exists

    def play_match(self, *args: Any) -> dict[str, Any]:
        return self.play(*args)


def _llm_limits(specs: list[str], game: str) -> dict[str, int]:
    """Per server URL, the concurrency limit of the first spec naming it (as in one process); a spec that names a
    local (loopback) server without ``concurrency=`` counts with the local default (``server_defaults``)."""
    limits: dict[str, int] = {}
    for spec in specs:
        options = parse_spec(spec, game).options
        url, given = options.get("base_url"), options.get("concurrency")
        if url and (given or is_loopback(str(url))):
            limits.setdefault(str(url).rstrip("/"), int(server_defaults(str(url), concurrency=given)[1]))
    return limits


def _api_keys(specs: list[str], game: str) -> dict[str, str]:
    """The variables here that LLM specs may read their key from (``key_env_vars``, ``api_key_env=``)."""
    names: set[str] = set()
    for spec in specs:
        options = parse_spec(spec, game).options
        names.update(key_env_vars(str(options.get("base_url", ""))))
        if options.get("api_key_env"):
            names.add(str(options["api_key_env"]))
    return {name: os.environ[name] for name in sorted(names) if os.environ.get(name)}


# --- playing -------------------------------------------------------------------------------------------------
class _Pool:
    """The games in flight: CPU games as tasks, LLM games on the least busy LLM worker."""

    def __init__(self, play: PlayMatch, llm_specs: list[str], workers: int, game: str,
                 rest: tuple[int, int | None, dict[str, Any]]) -> None:
        self.llm_specs, self.game, self.rest = set(llm_specs), game, rest  # rest: play's arguments after the match
        self.task = ray.remote(num_cpus=1, max_retries=_RETRIES)(play)
        self.slots: Any = None
        self.workers: list[Any] = []
        if workers:
            limits = _llm_limits(llm_specs, game)
            name = f"tabletop-arena-slots-{uuid.uuid4().hex}"
            self.slots = ray.remote(num_cpus=0)(_Slots).options(name=name).remote(limits)
            remote: Any = ray.remote  # its typed overloads leave out the actor options used here
            actor = remote(num_cpus=0, max_concurrency=_LLM_GAMES_PER_WORKER, max_restarts=_RETRIES,
                           max_task_retries=_RETRIES, scheduling_strategy="SPREAD")(_LLMWorker)
            keys = _api_keys(llm_specs, game)
            self.workers = [actor.remote(i, play, name, list(limits), keys) for i in range(workers)]
        self.load = [0] * workers
        self.pending: dict[Any, tuple[Match, int | None]] = {}  # ref -> (match, LLM worker or None)

    def submit(self, match: Match) -> None:
        if self.llm_specs.isdisjoint(match.seats):
            self.pending[self.task.remote(self.game, match, *self.rest)] = (match, None)
            return
        worker = min(range(len(self.workers)), key=self.load.__getitem__)
        self.load[worker] += 1
        self.pending[self.workers[worker].play_match.remote(self.game, match, *self.rest)] = (match, worker)

    def next_record(self) -> dict[str, Any]:
        """The next game to finish; the cause itself for a game that raised (``FatalLLMError`` stops the run)."""
        [ref], _ = ray.wait(list(self.pending), num_returns=1)
        match, worker = self.pending.pop(ref)
        if worker is not None:
            self.load[worker] -= 1
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as e:
            cause = getattr(e, "cause", None)
            raise (cause if isinstance(cause, Exception) else e) from None
        except ray.exceptions.RayError as e:
            raise GameLostError(f"game {match.index} could not be played on Ray ({_first_line(e)}); the games "
                                "finished before it are kept, and --resume plays the rest") from None

    def stop(self) -> None:
        """Cancel what is still in flight (a fatal error, Ctrl-C): nothing of it is written."""
        for ref, (_, worker) in self.pending.items():
            if worker is None:
                with suppress(Exception):
                    ray.cancel(ref, force=True)
        for actor in [*self.workers, self.slots]:
            if actor is not None:
                with suppress(Exception):
                    ray.kill(actor)


@contextmanager
def ray_games(address: str | None, game: str, specs: list[str], llm_specs: list[str], play: PlayMatch,
              stream: IO[str] | None) -> Iterator[Callable[..., Iterator[dict[str, Any]]]]:
    """Join Ray, check every node (``_check_nodes``), and give the function that plays games there: the same
    arguments and records as ``runner._play_all``, with ``jobs`` the games in flight on the cluster; the lineup's
    settings go to the workers, which build their own policies (``play``)."""
    files, caches = _spec_files(specs, game)
    with _connected(address, stream):
        _check_nodes(files, caches)

        def play_all(todo: list[Match], lineup: Lineup, jobs: int, threads: bool = False) -> Iterator[dict[str, Any]]:
            in_flight = min(jobs, len(todo))
            llm_games = sum(1 for m in todo if not set(llm_specs).isdisjoint(m.seats))
            workers = math.ceil(min(in_flight, llm_games) / _LLM_GAMES_PER_WORKER)
            pool = _Pool(play, llm_specs, workers, lineup.game, (lineup.num_players, lineup.max_plies, lineup.options))
            queue = deque(todo)
            try:
                while queue or pool.pending:
                    while queue and len(pool.pending) < in_flight:
                        pool.submit(queue.popleft())
                    yield pool.next_record()
            finally:
                pool.stop()

        yield play_all
