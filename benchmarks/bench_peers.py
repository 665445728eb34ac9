"""tabletop_rl's Splendor against other Splendor engines, measured side by side. Never part of the test suite.

    git clone https://github.com/inhabae/AhinLendor PEERS/AhinLendor
    git clone https://github.com/seal256/splendor PEERS/splendor
    pip install pybind11                       # only for AhinLendor's Python binding row
    python benchmarks/bench_peers.py --peers PEERS

Every figure is uniform random legal play of 2-player games until the engine's own end or 1,000 decisions,
counting each engine's own decisions (the rules differ, see docs/benchmarks.md), so decisions/s is the
comparable figure. The peers are compiled here, at run time, from their sources (g++, -O3 and
-O3 -march=native) with drivers written against their public APIs (below); the builds are cached under
PEERS/.bench_peers_build. Each measurement is a subprocess pinned to one core; the 2-core rows run the peers
as two processes (one a core) and the project as two numba threads, then as two processes. Project and peer
runs alternate (project, peer, project, peer, ...) and the table shows medians. Without --peers, or where a
peer, pybind11 or the compiler is missing, the project's rows are printed and each skip is named in a line.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from shutil import which

import numpy as np

from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.observe import observation_size
from tabletop_rl.games.splendor.rules import NUM_ACTIONS

CAP = 1000  # decisions per game, then the game is abandoned (the project's ply cap)

# --- drivers (our code, compiled against the peers' headers) -------------------------------------------------
# Both loops draw with the same splitmix64 and check the clock every 16 games, so the loop overhead is equal.
_CPP_COMMON = r"""
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
static inline std::uint64_t next_draw(std::uint64_t& s) {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static unsigned first_game = 0;
static int play_game(unsigned seed, std::uint64_t& rng);  // decisions made
int main(int argc, char** argv) {
    const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
    const unsigned first_seed = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 1u;
    first_game = first_seed;
    std::uint64_t rng = first_seed, games = 0, decisions = 0;
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    double elapsed = 0.0;
    do {
        for (int i = 0; i < 16; ++i) decisions += play_game(first_seed + static_cast<unsigned>(games++), rng);
        elapsed = std::chrono::duration<double>(clock::now() - t0).count();
    } while (elapsed < seconds);
    std::printf("%llu %.6f %llu\n", (unsigned long long)decisions, elapsed, (unsigned long long)games);
    return 0;
}
"""

# AhinLendor: the 69-slot legal mask, the k-th legal slot, actionIndexToMove, applyMove; isGameOver ends the game.
# (findAllValidMoves + applyMove measured slower here: it builds a std::vector<Move> each decision.)
AHIN_LOOP = '#include "game_logic.h"\n' + _CPP_COMMON + r"""
static int play_game(unsigned seed, std::uint64_t& rng) {
    static GameState s;
    initializeGame(s, seed);
    int n = 0;
    while (n < 1000 && !isGameOver(s)) {
        const std::array<int, 69> mask = getValidMoveMask(s);
        int count = 0;
        for (int m : mask) count += m != 0;
        int k = static_cast<int>(next_draw(rng) % static_cast<std::uint64_t>(count)), a = 0;
        for (; a < 69; ++a) if (mask[a] && k-- == 0) break;
        applyMove(s, actionIndexToMove(a));
        ++n;
    }
    return n;
}
"""

# seal256: get_actions, apply_action, is_terminal. Refilling the market is a chance node (active_player() == -1):
# the driver deals a uniform deck card; it is timed but not counted as a decision.
SEAL_LOOP = '#include "splendor.h"\n' + _CPP_COMMON + r"""
static int play_game(unsigned seed, std::uint64_t& rng) {
    if (seed == first_game) std::srand(seed);  // the engine seeds its shuffler once, from std::rand()
    splendor::SplendorGameState s(2);
    int n = 0;
    while (n < 1000 && !s.is_terminal()) {
        const std::vector<int> actions = s.get_actions();
        const bool chance = s.active_player() == CHANCE_PLAYER;
        s.apply_action(actions[next_draw(rng) % actions.size()]);
        n += !chance;
    }
    return n;
}
"""

# Built unchanged with g++/libstdc++, seal256's sources need two things that libc++ (macOS, where the peer is
# presumably built) gives them for free: <stdexcept> and <numeric> included, and no std::random_shuffle beside
# the peer's own random_shuffle(first, last) (libstdc++ still declares the deprecated one, and argument lookup
# finds it: an ambiguous call). This prelude, force-included before the peer's files, renames the peer's helper.
SEAL_PRELUDE = """#include <algorithm>
#include <numeric>
#include <stdexcept>
#define random_shuffle seal256_random_shuffle
"""
REPOS = {"AhinLendor": "https://github.com/inhabae/AhinLendor", "splendor": "https://github.com/seal256/splendor"}
FLAGS = {"-O3": ["-O3", "-DNDEBUG"], "-O3 -march=native": ["-O3", "-march=native", "-DNDEBUG"]}


@dataclass
class Target:
    """One thing to compile: a peer's sources plus, for the loops, our driver."""
    name: str  # e.g. "AhinLendor -O3"
    peer: str  # the folder under --peers
    sources: list[str]  # relative to the peer folder
    flags: list[str]
    driver: str = ""  # C++ source written beside the build; empty for the Python module
    shared: bool = False  # a Python extension module instead of an executable
    includes: list[str] = field(default_factory=list)
    prelude: str = ""  # a header force-included before every source (-include)


def loop_targets() -> list[Target]:
    ahin = ["game_logic.cpp"]
    seal = ["src/splendor.cpp", "src/game_state.cpp", "src/random_util.cpp"]
    out = []
    for label, flags in FLAGS.items():
        out.append(Target(f"AhinLendor {label}", "AhinLendor", ahin, ["-std=c++17", *flags], AHIN_LOOP,
                          includes=["."]))
        out.append(Target(f"seal256/splendor {label}", "splendor", seal, ["-std=c++20", *flags], SEAL_LOOP,
                          includes=["src"], prelude=SEAL_PRELUDE))
    return out


def pybind_target() -> Target | str:
    """AhinLendor's ``splendor_native`` module as its CMake builds it (-O3), or why it cannot be built."""
    try:
        import pybind11  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return "AhinLendor Python binding: pybind11 is not installed (pip install pybind11)"
    sources = ["py_splendor.cpp", "native_mcts.cpp", "native_endgame.cpp", "game_logic.cpp", "state_encoder.cpp"]
    flags = ["-std=c++17", "-O3", "-DNDEBUG", "-fPIC", "-fvisibility=hidden", "-pthread",
             '-DSPLENDOR_BUILD_TYPE="Release"', "-DSPLENDOR_BUILD_OPTIMIZED=1"]
    includes = [".", pybind11.get_include(), sysconfig.get_paths()["include"]]
    return Target("AhinLendor pybind", "AhinLendor", sources, flags, shared=True, includes=includes)


# --- building ------------------------------------------------------------------------------------------------
def _cache_key(target: Target, root: Path, compiler: str) -> str:
    """Sources, driver, flags and compiler version: a changed checkout or compiler rebuilds."""
    h = hashlib.sha256(subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout.encode())
    for s in target.sources:
        h.update((root / s).read_bytes())
    h.update(repr((target.driver, target.prelude, target.flags, target.includes)).encode())
    return h.hexdigest()[:16]


def build(target: Target, peers: Path, build_dir: Path, compiler: str, timeout: float) -> Path | str:
    """The built binary (cached), or a one-line reason it could not be built."""
    root = peers / target.peer
    missing = [s for s in target.sources if not (root / s).is_file()]
    if missing:
        return f"{target.name}: {root} lacks {missing[0]} (clone the peer there)"
    out_dir = build_dir / _cache_key(target, root, compiler)
    suffix = sysconfig.get_config_var("EXT_SUFFIX") if target.shared else ""
    out = out_dir / (("splendor_native" if target.shared else "loop") + suffix)
    if out.exists():
        return out
    out_dir.mkdir(parents=True, exist_ok=True)
    sources = [str(root / s) for s in target.sources]
    if target.driver:
        (out_dir / "driver.cpp").write_text(target.driver)
        sources.append(str(out_dir / "driver.cpp"))
    if target.prelude:
        (out_dir / "prelude.h").write_text(target.prelude)
        sources = ["-include", str(out_dir / "prelude.h"), *sources]
    cmd = [compiler, *target.flags, *[f"-I{root / i}" for i in target.includes], *sources,
           *(["-shared"] if target.shared else []), "-o", str(out) + ".tmp"]
    t0 = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"{target.name}: the build took over {timeout:.0f} s (--build-timeout)"
    if done.returncode != 0:
        first = next((ln for ln in done.stderr.splitlines() if "error" in ln), done.stderr.strip()[:200])
        return f"{target.name}: the build failed: {first}"
    os.replace(str(out) + ".tmp", out)  # only a finished binary lands under the cached name
    print(f"built {target.name} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return out


def build_all(targets: list[Target], peers: Path, build_dir: Path, compiler: str,
              timeout: float) -> dict[str, Path | str]:
    """Compile the targets concurrently, one compiler per core."""
    with ThreadPoolExecutor(max_workers=max(1, len(os.sched_getaffinity(0)))) as pool:
        futures = {t.name: pool.submit(build, t, peers, build_dir, compiler, timeout) for t in targets}
        return {name: f.result() for name, f in futures.items()}


def commit(repo: Path) -> str:
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip()[:12] if done.returncode == 0 else "unknown commit (not a git checkout)"


# --- workers: one measurement per subprocess, printing "decisions seconds games" -----------------------------
_PICKS = 1 << 16


def _picks() -> list[int]:
    """Pre-drawn random numbers, shared by the project's and the peer's Python loops (same overhead)."""
    return np.random.default_rng(0).integers(0, 1 << 30, _PICKS).tolist()


def _timed(game: Callable[[int], int], seconds: float) -> tuple[int, float, int]:
    """Play games (seeds 1, 2, ...) until ``seconds`` pass; one untimed game first loads compiled code."""
    game(0)
    decisions, games, t0 = 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        games += 1
        decisions += game(games)
    return decisions, time.perf_counter() - t0, games


def project_loop(seconds: float, parallel: bool) -> tuple[int, float, int]:
    """The numba core: deal and play batches of 1,000 games (``play_random_batch``), dealing included."""
    cards, nobles = R.tables()
    batch = 1000
    states, steps = R.new_states(batch), np.zeros(batch, np.int64)
    R.reset_batch(states[:2], np.arange(2, dtype=np.int64), 2, CAP, parallel)
    R.play_random_batch(states[:2], cards, nobles, steps[:2], parallel)  # load the compiled kernels
    decisions, games, t0 = 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        R.reset_batch(states, np.arange(games, games + batch, dtype=np.int64), 2, CAP, parallel)
        R.play_random_batch(states, cards, nobles, steps, parallel)
        decisions, games = decisions + int(steps.sum()), games + batch
    return decisions, time.perf_counter() - t0, games


def project_python(seconds: float, observe: bool, fresh: bool = True) -> tuple[int, float, int]:
    """One ``SplendorGame`` stepped from Python: ``legal_mask`` and ``step``, or (``observe``) ``step_observe``,
    which returns the next observation and mask from the same compiled call as the move, as fresh arrays or
    (not ``fresh``) written into the same two buffers each step."""
    picks = _picks()
    out = None if fresh else (np.empty(observation_size(2), np.float32), np.empty(NUM_ACTIONS, np.bool_))

    def game(seed: int) -> int:
        g, n = SplendorGame(2, seed=seed, max_plies=CAP), 0
        if observe:
            mask = g.legal_mask()
            while not g.is_over:
                legal = mask.nonzero()[0]
                _obs, mask = g.step_observe(int(legal[picks[n & 0xFFFF] % len(legal)]), out=out)
                n += 1
            return n
        while not g.is_over:
            legal = g.legal_mask().nonzero()[0]
            g.step(int(legal[picks[n & 0xFFFF] % len(legal)]))
            n += 1
        return n

    return _timed(game, seconds)


def ahin_python(seconds: float, observe: bool, lib: str) -> tuple[int, float, int]:
    """AhinLendor's ``NativeEnv.step``: it returns the next state encoding and mask; we read the mask (and the
    encoding, as numpy arrays, when ``observe``)."""
    sys.path.insert(0, lib)
    import splendor_native
    env, picks = splendor_native.NativeEnv(), _picks()

    def game(seed: int) -> int:
        r, n = env.reset(seed + 1), 0  # seed 0 would mean "the clock" to this engine
        while not r.is_terminal and n < CAP:
            legal = r.mask.nonzero()[0]
            r = env.step(int(legal[picks[n & 0xFFFF] % len(legal)]))
            if observe:
                r.state  # noqa: B018 - building the numpy observation is the cost measured
            n += 1
        return n

    return _timed(game, seconds)


def worker(kind: str, seconds: float, lib: str) -> None:
    runs: dict[str, Callable[[], tuple[int, float, int]]] = {
        "project-loop": lambda: project_loop(seconds, False),
        "project-loop-parallel": lambda: project_loop(seconds, True),
        "project-mask": lambda: project_python(seconds, False),
        "project-obs": lambda: project_python(seconds, True),
        "project-obs-out": lambda: project_python(seconds, True, fresh=False),
        "ahin-mask": lambda: ahin_python(seconds, False, lib),
        "ahin-obs": lambda: ahin_python(seconds, True, lib),
    }
    decisions, elapsed, games = runs[kind]()
    print(f"{decisions} {elapsed:.6f} {games}")


# --- running and interleaving --------------------------------------------------------------------------------
Runner = Callable[[], tuple[float, float]]  # one pinned measurement: decisions/s, decisions a game


def _rate(cmds: list[list[str]], cores: list[set[int]], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Start the commands together, each pinned to its cores; the sum of their decisions/s and the mean game
    length (which shows how the engines' rules differ)."""
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                              preexec_fn=lambda c=c: os.sched_setaffinity(0, c))
             for cmd, c in zip(cmds, cores, strict=True)]
    rate, decisions, games = 0.0, 0, 0
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0:
            last = (err.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
            raise RuntimeError(f"{Path(cmds[0][0]).name} failed: {last}")
        d, elapsed, g = out.split()
        rate, decisions, games = rate + int(d) / float(elapsed), decisions + int(d), games + int(g)
    return rate, decisions / max(games, 1)


def py_runner(kind: str, seconds: float, cores: set[int], lib: str = "", processes: int = 1) -> Runner:
    """``processes`` workers, each pinned to one of ``cores`` (or all of them, threaded, for one process)."""
    cmd = [sys.executable, __file__, "--worker", kind, "--seconds", str(seconds), "--lib", lib]
    env = dict(os.environ, NUMBA_NUM_THREADS=str(len(cores) if processes == 1 else 1))
    pins = [cores] if processes == 1 else [{c} for c in sorted(cores)[:processes]]
    return lambda: _rate([cmd] * len(pins), pins, env)


def cpp_runner(binary: Path, seconds: float, cores: list[int]) -> Runner:
    """One process per core (the peers have no threaded loop), different seeds per process."""
    cmds = [[str(binary), str(seconds), str(1 + 1_000_000 * i)] for i in range(len(cores))]
    return lambda: _rate(cmds, [{c} for c in cores])


@dataclass
class Door:
    label: str
    project: Runner
    peers: list[tuple[str, Runner]]


Figure = tuple[float, float]  # median decisions/s, median decisions a game


def _median(runs: list[tuple[float, float]]) -> Figure:
    return statistics.median(r for r, _ in runs), statistics.median(g for _, g in runs)


def interleave(door: Door, repeats: int, skipped: list[str]) -> tuple[Figure, list[tuple[str, Figure]]]:
    """Medians of project, peer 1, project, peer 2, ... repeated: drift and a busy neighbour hit both sides.
    A peer run that fails drops that peer from the row with a line in ``skipped``; the others go on."""
    ours: list[tuple[float, float]] = []
    theirs: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in door.peers}
    failed: set[str] = set()
    for _ in range(repeats):
        for name, run in door.peers or [("", door.project)]:
            if name in failed:
                continue
            ours.append(door.project())
            if not name:
                continue
            try:
                theirs[name].append(run())
            except RuntimeError as e:
                failed.add(name)
                skipped.append(f"{door.label}, {name}: {e}")
    return _median(ours), [(name, _median(v)) for name, v in theirs.items() if name not in failed]


def print_markdown(results: list[tuple[str, Figure, list[tuple[str, Figure]]]]) -> None:
    print("| door | tabletop_rl (decisions/s) | peer | peer (decisions/s) | ratio | decisions a game, ours / peer |")
    print("|---|---|---|---|---|---|")
    for label, (ours, our_len), peers in results:
        for name, (theirs, their_len) in peers or [("(no peer run)", (0.0, 0.0))]:
            peer, ratio = (f"{theirs / 1e6:.3f} M", f"{ours / theirs:.2f}") if theirs else ("-", "-")
            length = f"{our_len:.0f} / {their_len:.0f}" if theirs else f"{our_len:.0f}"
            print(f"| {label} | {ours / 1e6:.3f} M | {name} | {peer} | {ratio} | {length} |")


# --- assembling the doors ------------------------------------------------------------------------------------
def doors(args: argparse.Namespace, built: dict[str, Path | str], cores: list[int]) -> tuple[list[Door], list[str]]:
    """The rows to measure from what was built; the skipped peers and doors, one line each."""
    s, one = args.seconds, {cores[0]}
    skipped = list(dict.fromkeys(v for v in built.values() if isinstance(v, str)))  # each reason once
    loops = [(name, cpp_runner(b, s, cores[:1])) for name, b in built.items()
             if isinstance(b, Path) and name != "AhinLendor pybind"]
    lib = built.get("AhinLendor pybind")

    def ahin(kind: str) -> list[tuple[str, Runner]]:
        if not isinstance(lib, Path):
            return []
        return [("AhinLendor pybind NativeEnv.step", py_runner(kind, s, one, str(lib.parent)))]

    out = [Door("engine loop, 1 thread", py_runner("project-loop", s, one), loops),
           Door("one game from Python: step + legal mask", py_runner("project-mask", s, one), ahin("ahin-mask")),
           Door("one game from Python: step + mask + observation", py_runner("project-obs", s, one),
                ahin("ahin-obs")),
           Door("one game from Python: step + mask + observation, into the caller's buffers (out=)",
                py_runner("project-obs-out", s, one), ahin("ahin-obs"))]
    if len(cores) < 2:
        skipped.append("2 cores: this process may use only one core")
        return out, skipped
    pair = cores[:2]
    best = [(f"{name}, 2 processes", cpp_runner(b, s, pair)) for name, b in built.items()
            if isinstance(b, Path) and name.endswith("-march=native")]
    threads = py_runner("project-loop-parallel", s, set(pair))
    out.append(Door("2 cores (ours: 2 numba threads)", threads, best))
    # the same shape as the peers' figure, and immune to numba's even split waiting on a thread whose core is shared
    out.append(Door("2 cores (ours: 2 processes)", py_runner("project-loop", s, set(pair), processes=2), best))
    return out, skipped


def peer_builds(args: argparse.Namespace) -> dict[str, Path | str]:
    """Build what --peers holds; a missing folder or compiler is one line each, not an error."""
    if args.peers is None:
        return {"peers": "all peers: no --peers DIR given (clone inhabae/AhinLendor and seal256/splendor into it)"}
    peers = Path(args.peers).resolve()
    if which(args.cxx) is None:
        return {"peers": f"all peers: no C++ compiler {args.cxx!r} on PATH (--cxx)"}
    built: dict[str, Path | str] = {}
    targets = []
    for t in loop_targets():
        if (peers / t.peer).is_dir():
            targets.append(t)
        else:  # one line per absent peer, not one per build
            built[t.peer] = f"{t.peer}: no folder {peers / t.peer} (git clone {REPOS[t.peer]} there)"
    py = pybind_target()
    if isinstance(py, str) or not (peers / py.peer).is_dir():
        built["AhinLendor pybind"] = py if isinstance(py, str) else built["AhinLendor"]
    else:
        targets.append(py)
    build_dir = Path(args.build_dir) if args.build_dir else peers / ".bench_peers_build"
    try:
        build_dir.mkdir(parents=True, exist_ok=True)
    except OSError:
        build_dir = Path(tempfile.mkdtemp(prefix="bench-peers-"))
    built.update(build_all(targets, peers, build_dir, args.cxx, args.build_timeout))
    for name in ("AhinLendor", "splendor"):
        if (peers / name).is_dir():
            print(f"{name}: {commit(peers / name)}", file=sys.stderr)
    return built


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peers", help="folder holding AhinLendor/ and splendor/ (git clones of the peers)")
    ap.add_argument("--seconds", type=float, default=2.0, help="length of each timed run")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved runs per engine; medians are shown")
    ap.add_argument("--cxx", default="g++", help="C++ compiler")
    ap.add_argument("--build-dir", help="where peer builds are cached (default PEERS/.bench_peers_build)")
    ap.add_argument("--build-timeout", type=float, default=600.0, help="seconds allowed for one peer build")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--lib", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.seconds, args.lib)
        return
    if not args.seconds > 0 or args.repeats < 1:
        ap.error("--seconds must be positive and --repeats at least 1")
    cores = sorted(os.sched_getaffinity(0))
    built = peer_builds(args)
    rows, skipped = doors(args, built, cores)
    results = []
    for door in rows:
        ours, theirs = interleave(door, args.repeats, skipped)
        results.append((door.label, ours, theirs))
        print(f"measured: {door.label}", file=sys.stderr)
    print(f"\nuniform random legal 2-player play, cap {CAP} decisions, pinned to cores {cores[:2]}, "
          f"{args.repeats} interleaved runs of {args.seconds:g} s, medians; ratio = tabletop_rl / peer\n")
    print_markdown(results)
    for line in skipped:
        print(f"skipped: {line}")
    busy_warning(len(cores))


def busy_warning(cores: int) -> None:
    """Other work on the cores skews the 2-core row most: numba's static split waits for the slower thread."""
    load = os.getloadavg()[0]
    if load > cores - 0.5:
        print(f"note: load average {load:.1f} on {cores} cores after the run; other processes competed, "
              "so rerun on a quiet machine before quoting the 2-core row")


if __name__ == "__main__":
    main()
