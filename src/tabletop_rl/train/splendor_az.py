"""Search-guided self-play for Splendor (expert iteration): ``train()`` is the loop, each iteration's steps named
functions of this file (``self_play``, ``fresh_metrics``, ``learn``) read in the order they run, over the shared
pieces of ``train/selfplay.py``.

``tabletop train splendor --algo az``. Each iteration (a) plays ``--games`` games in which every seat is the
PUCT search (``agents/search/splendor_puct.py``) guided by the current network, with Dirichlet noise at the
root and visit-proportional moves for the first ``--temperature-plies`` plies; every position becomes a training
example: the mover's observation and legal mask, the search's visit distribution (the policy target) and, once
the game is over, the result from the mover's seat (the value target); (b) adds them to a replay buffer of the
last ``--buffer`` positions; (c) trains the network on minibatches drawn from it (cross-entropy to the visit
distribution plus ``--vf-coef`` times the value's squared error); (d) evaluates, checkpoints and logs.

The network is ``agents/ppo.py``'s ``build_network`` and its checkpoints are the PPO loop's ``.pt`` format
(``"algo": "az"`` in the metadata), so a checkpoint plays as ``az:PATH`` (the search) and ``ppo:PATH`` (the
network alone). docs/training.md describes every decision. Needs the ``[train]`` extra.

    tabletop train splendor --algo az --iterations 100 --out runs/az

>>> train(Args(iterations=2, games=2, simulations=8, net="16", init="none", workers=0))   # doctest: +SKIP
PosixPath('runs/az/final.pt')
"""

from __future__ import annotations

import csv
import dataclasses
import json
import multiprocessing
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from tabletop_rl.agents import make_policy, parse_spec
from tabletop_rl.agents.ppo import (
    build_network,
    masked_logits,
    network_widths,
    save_checkpoint,
)
from tabletop_rl.agents.search.splendor_puct import Net, PUCTPolicy
from tabletop_rl.core.files import replace_file, shown_path
from tabletop_rl.core.game import SeatView
from tabletop_rl.core.policy import Policy
from tabletop_rl.core.progress import Progress, ignore_interrupt
from tabletop_rl.core.stats import wilson_interval
from tabletop_rl.games.splendor.game import SplendorGame, check_max_plies
from tabletop_rl.games.splendor.observe import COLOUR_PERMUTATIONS, permute_colours
from tabletop_rl.games.splendor.rules import DEFAULT_MAX_PLIES, NUM_ACTIONS, NUM_PLAYERS_AT, STATE_DTYPE, STATE_SIZE
from tabletop_rl.train.selfplay import (
    EvalLog,
    eval_specs,
    hidden_layers,
    hold_threads,
    init_model,
    knob,
    load_optimizer,
    model_meta,
    network_act,
    numpy_net,
    one_cycle,
    resume_checkpoint,
    summary_writer,
    warm_start,
)

if TYPE_CHECKING:
    import torch

__all__ = ["Args", "Curves", "Positions", "ReplayBuffer", "SelfPlay", "fit_to", "fresh_metrics", "game_seeds",
           "held_out_rows", "kept_states", "learn", "losses", "play_game", "positions_from", "reanalyse", "refit_value",
           "search_again", "state_rows", "tempered", "train", "validate_args", "value_targets"]


# --- the knobs ------------------------------------------------------------------------------------
@dataclass
class Args:
    """Every knob of ``tabletop train splendor --algo az``; each field is the flag of the same name."""

    iterations: int = knob(100, "iterations to run (self-play, then training); a resumed run counts on to this")
    out: str = knob("runs/az", "folder for checkpoints, eval.csv, TensorBoard logs, config.json and replay.npz")
    players: int = knob(2, "players per game (2-4)")
    games: int = knob(32, "self-play games per iteration")
    simulations: int = knob(200, "PUCT simulations per self-play move")
    c: float = knob(1.5, "PUCT exploration constant")
    value_mix: float = knob(0.0, "weight of greedy's evaluation in the search's leaf values, after "
                                 "--rollout-depth greedy turns (the az policy's mix; 0: the network's value alone)")
    rollout_depth: int = knob(0, "greedy turns played from a leaf before greedy's evaluation is mixed in")
    fast_simulations: int = knob(0, "playout cap randomisation: simulations of the short searches (no root noise) "
                                    "that play the moves not searched in full; only full searches are recorded "
                                    "(0: every move searched in full)")
    full_share: float = knob(0.25, "with --fast-simulations, the share of moves searched in full")
    root: str = knob("puct", "the self-play search's root: puct (visits are the policy target; root noise and "
                             "--temperature-plies explore) or gumbel (sequential halving with Gumbel noise; its "
                             "improved policy is the target)")
    considered: int = knob(16, "with --root gumbel, the root moves sequential halving considers")
    root_value_weight: float = knob(0.5, "weight of the search's root value in a searched position's value target "
                                         "(the rest: the game's result; 0: the result alone)")
    target_temperature: float = knob(1.0, "temperature of the policy target in training: each target's "
                                          "probabilities raised to 1/T and renormalised (1: the search's as they "
                                          "are; below 1 sharper, towards its most visited move)")
    reanalyse: int = knob(0, "reanalysis: positions of the replay buffer searched again each iteration by the "
                             "current network, as self-play searches, their policy and value targets replaced "
                             "(0: none)")
    opponents: str = knob("", "comma-separated policy specs (split as --eval-opponents is) that take every seat but "
                          "the searching one in --opponent-share of the self-play games, each such game's opponent "
                          "drawn from the list; only the searching seat's positions are recorded")
    opponent_share: float = knob(0.25, "with --opponents, the share of self-play games played against one of them")
    noise_alpha: float = knob(0.3, "Dirichlet alpha of the root noise in self-play (0: no noise)")
    noise_fraction: float = knob(0.25, "weight of the root noise in the root's priors")
    temperature_plies: int = knob(8, "plies of each game played at temperature 1 (moves drawn in proportion to "
                                      "visits); the most visited move after them")
    max_plies: int = knob(DEFAULT_MAX_PLIES, "ply cap of a self-play game (a capped game's value target is 0)")
    workers: int = knob(2, "processes playing the self-play games (0: in this process)")
    buffer: int = knob(100_000, "positions kept in the replay buffer (the newest)")
    batch_size: int = knob(256, "minibatch size")
    train_steps: int = knob(50, "minibatch steps per iteration")
    min_buffer: int = knob(0, "positions the replay buffer holds before training starts: until then self-play "
                              "goes on with the network as it is (a run resumed without its replay.npz, say; "
                              "0: train from the first iteration)")
    lr: float = knob(1e-4, "learning rate (Adam)")
    weight_decay: float = knob(1e-4, "Adam's L2 weight decay")
    vf_coef: float = knob(1.0, "weight of the value loss")
    max_grad_norm: float = knob(1.0, "clip the gradient's global norm to this")
    augment: str = knob("colours", "none, or colours: each minibatch position is trained on with its five colours "
                                "renamed by a random permutation (observation, legal mask and policy target alike)")
    net: str = knob("256,256", "hidden layer sizes of a fresh network (one from --init or --resume keeps its own)")
    value_net: str = knob("", "hidden layer sizes of the value network (empty: those of --net, or of the model "
                              "from --init or --resume); another shape than --resume's is first fitted to its "
                              "value network on the replay buffer, another than --init's starts fresh")
    refit_steps: int = knob(10_000, "minibatch steps that fit a value network of another shape to --resume's")
    init: str = knob("default", "network to start from: default (ppo:default's network for 2 players, a fresh one "
                                "for 3-4), az (az:default's), a .pt checkpoint or MaskablePPO .zip, or none: a "
                                "fresh --net network")
    eval_every: int = knob(5, "iterations between evaluations")
    eval_games: int = knob(200, "games per evaluation opponent of the network alone")
    eval_opponents: str = knob("random,greedy", "comma-separated policy specs the network alone is evaluated against")
    eval_past: bool = knob(True, "also evaluate the network alone against the network this run started from")
    eval_search_games: int = knob(10, "games of the search (no noise, most visited move) against "
                                      "--eval-search-opponent at each evaluation (0: none)")
    eval_search_opponent: str = knob("greedy", "policy spec the search is evaluated against")
    eval_search_simulations: int = knob(50, "simulations per move of the search in its evaluation games")
    checkpoint_every: int = knob(5, "iterations between checkpoints (OUT/checkpoints/iter_N.pt)")
    seed: int = knob(0, "seed of the run (the same seed repeats a run on the same machine)")
    threads: int = knob(1, "torch threads of the learner")
    resume: str = knob("", "a .pt checkpoint of --algo az to continue from: its iteration count, network and "
                           "optimizer carry on, and the replay buffer if OUT/replay.npz of that iteration is beside it")
    progress: bool = knob(True, "print a progress line with positions/s, the loss and the latest evaluation")


def validate_args(args: Args) -> None:
    """One-line ``ValueError`` naming the first bad setting."""
    positive = ("iterations", "games", "simulations", "buffer", "batch_size", "train_steps", "eval_every",
                "eval_games", "checkpoint_every", "threads", "refit_steps")
    for name in positive:
        if getattr(args, name) <= 0:
            raise ValueError(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    for name in ("workers", "temperature_plies", "reanalyse", "eval_search_games", "eval_search_simulations",
                 "weight_decay", "vf_coef", "noise_alpha", "c", "min_buffer"):
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(args, name)}")
    if args.min_buffer > args.buffer:
        raise ValueError(f"--min-buffer must be at most --buffer ({args.buffer:,}), got {args.min_buffer:,}: "
                         "the run would never train")
    if args.players not in (2, 3, 4):
        raise ValueError(f"--players must be 2, 3 or 4, got {args.players}")
    if not 0 < args.lr < 1 or args.max_grad_norm <= 0 or not 0 <= args.noise_fraction <= 1:
        raise ValueError("--lr must be in (0, 1), --max-grad-norm positive and --noise-fraction in [0, 1]")
    if args.augment not in ("none", "colours"):
        raise ValueError(f"--augment must be none or colours, got {args.augment!r}")
    if not 0 <= args.fast_simulations < args.simulations or not 0 < args.full_share <= 1:
        raise ValueError(f"--fast-simulations must be >= 0 and below --simulations, and --full-share in (0, 1], got "
                         f"{args.fast_simulations} and {args.full_share}")
    if args.root not in ("puct", "gumbel") or args.considered < 2:
        raise ValueError(f"--root must be puct or gumbel and --considered at least 2, got {args.root!r} and "
                         f"{args.considered}")
    if not 0 < args.target_temperature <= 10:
        raise ValueError(f"--target-temperature must be in (0, 10], got {args.target_temperature}")
    if not 0 <= args.root_value_weight <= 1:
        raise ValueError(f"--root-value-weight must be in [0, 1], got {args.root_value_weight}")
    if not 0 <= args.value_mix <= 1 or args.rollout_depth < 0:
        raise ValueError(f"--value-mix must be in [0, 1] and --rollout-depth >= 0, got {args.value_mix} and "
                         f"{args.rollout_depth}")
    check_max_plies(args.max_plies)
    hidden_layers(args.net)
    if args.value_net:
        hidden_layers(args.value_net, "--value-net")
    if not 0 < args.opponent_share <= 1:
        raise ValueError(f"--opponent-share must be in (0, 1], got {args.opponent_share}")
    for spec in [*eval_specs(args.eval_opponents), args.eval_search_opponent, *eval_specs(args.opponents)]:
        parse_spec(spec, "splendor")  # a bad spec fails now, not at the first evaluation
    if args.resume and not Path(args.resume).is_file():
        raise ValueError(f"--resume: no model at {args.resume!r}")
    _init_model(args)


# --- self-play ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SelfPlay:
    """What a self-play game needs besides the network and its seed (sent to the worker processes)."""

    players: int
    simulations: int
    c: float
    noise_alpha: float
    noise_fraction: float
    temperature_plies: int
    max_plies: int
    value_mix: float = 0.0
    rollout_depth: int = 0
    fast_simulations: int = 0
    full_share: float = 1.0
    root_value_weight: float = 0.0
    root: str = "puct"
    considered: int = 16
    opponents: tuple[str, ...] = ()
    opponent_share: float = 0.0

    @classmethod
    def of(cls, args: Args) -> SelfPlay:
        return cls(args.players, args.simulations, args.c, args.noise_alpha, args.noise_fraction,
                   args.temperature_plies, args.max_plies, args.value_mix, args.rollout_depth,
                   args.fast_simulations, args.full_share, args.root_value_weight, args.root, args.considered,
                   tuple(eval_specs(args.opponents)), args.opponent_share)


class Positions(NamedTuple):
    """Training examples, one row per position: the mover's observation, its legal mask, the search's visit
    distribution (sums to 1 over the legal moves), the mover's seat, the value target, the game's result for
    the mover (the value target itself unless ``--root-value-weight`` mixes in the search's root value) and the
    position as the mover saw it (its view's state row, ``SplendorGame.from_state``; zeros where none was kept),
    which reanalysis searches again."""

    observations: np.ndarray  # float32 [n, observation size]
    masks: np.ndarray  # bool [n, 72]
    policies: np.ndarray  # float32 [n, 72]
    seats: np.ndarray  # int64 [n]
    values: np.ndarray  # float32 [n]
    results: np.ndarray  # float32 [n]
    states: np.ndarray  # int16 [n, state size]


def value_targets(winners: Sequence[int], truncated: bool, seats: np.ndarray, players: int) -> np.ndarray:
    """The value target of each position, from its mover's seat: +1 for the sole winner, -1 for a loser, and
    for k winners who share the win 2/k - 1 each (0 in a 2-player game); 0 for everyone in a capped game.
    This is the search's own scoring of a finished game (winners share 1, mapped from [0, 1] to [-1, 1]),
    so the network learns the values the search backs up."""
    share = np.zeros(players)
    if not truncated and winners:
        share[list(winners)] = 1.0 / len(winners)
        return (2.0 * share - 1.0)[seats].astype(np.float32)
    return np.zeros(len(seats), np.float32)


def play_game(net: Net, seed: int, setup: SelfPlay) -> Positions:
    """One self-play game, every seat played by the same search; its positions with their targets. With playout
    cap randomisation (``fast_simulations``) a move is searched in full, with root noise, at a ``full_share`` of
    decisions drawn from the game's seed, and only those positions are recorded: the short searches play the
    other moves faster, so a CPU-second yields more games and more independent results. In a game drawn to be
    played against one of ``opponents``, that policy takes every seat but the searching one, and only the
    searching seat's positions are recorded."""
    game = SplendorGame(setup.players, seed=seed, max_plies=setup.max_plies)
    search = _self_play_search(net, seed, setup)
    caps = np.random.default_rng([seed, 1])
    opponent, searcher = _opponent(seed, setup)
    observations, masks, policies, seats, roots, states = [], [], [], [], [], []
    while not game.is_over:
        seat, mask = game.current_player, game.legal_mask()
        observation, info = game.observe(seat), game.policy_info(seat)
        if opponent is not None and seat != searcher:
            game.step(opponent.act(observation, mask, info))
            continue
        if mask.sum() == 1:  # a forced move (e.g. a lone token return): nothing to search, the target is certain
            action, visits, root = int(np.argmax(mask)), mask.astype(np.float32), np.nan
        else:
            full = setup.fast_simulations == 0 or caps.random() < setup.full_share
            temperature = 1.0 if game.ply < setup.temperature_plies else 0.0
            action = _search_move(search, setup, observation, mask, info, full, temperature)
            if not full:
                game.step(action)
                continue
            visits, root = search.policy_target(mask), search.root_value()
        observations.append(observation)
        masks.append(mask)
        policies.append(visits / visits.sum())
        seats.append(seat)
        roots.append(root)
        states.append(info.game.state)
        game.step(action)
    seat_array = np.array(seats, np.int64)
    results = value_targets(game.winners, game.is_truncated, seat_array, setup.players)
    values = np.where(np.isnan(roots), results, _value_target(results, np.array(roots, np.float32), setup))
    return Positions(np.array(observations, np.float32), np.array(masks, bool), np.array(policies, np.float32),
                     seat_array, values.astype(np.float32), results, state_rows(states))


def _opponent(seed: int, setup: SelfPlay) -> tuple[Policy | None, int]:
    """The opponent a game is drawn to be played against, and the searching seat; ``(None, -1)`` for a game of
    the search in every seat. Drawn from the game's seed alone, so a worker process plays the same game."""
    if not setup.opponents:  # the default: no draw to make
        return None, -1
    draw = np.random.default_rng([seed, 2])
    if draw.random() >= setup.opponent_share:
        return None, -1
    spec = setup.opponents[int(draw.integers(len(setup.opponents)))]
    return make_policy(spec, "splendor", seed=seed), int(draw.integers(setup.players))


def _self_play_search(net: Net, seed: int, setup: SelfPlay) -> PUCTPolicy:
    """The search of ``setup``, seeded (by a game's seed, or a reanalysis task's)."""
    return PUCTPolicy(net, "self-play", seed, setup.simulations, None, setup.c, setup.noise_alpha,
                      setup.noise_fraction, mix=setup.value_mix, rollout_depth=setup.rollout_depth, root=setup.root,
                      considered=setup.considered)


def _search_move(search: PUCTPolicy, setup: SelfPlay, observation: np.ndarray, mask: np.ndarray, info: SeatView,
                 full: bool, temperature: float) -> int:
    """The search's move: a full search (``simulations``, root noise) or a short one (``fast_simulations``)."""
    search.simulations = setup.simulations if full else setup.fast_simulations
    search.noise_fraction = setup.noise_fraction if full else 0.0
    search.gumbel_noise = full
    search.temperature = temperature
    return search.act(observation, mask, info)


def _value_target(results: np.ndarray, roots: np.ndarray, setup: SelfPlay) -> np.ndarray:
    """A searched position's value target: the result, with ``root_value_weight`` of the search's root value."""
    w = setup.root_value_weight
    return ((1 - w) * results + w * roots).astype(np.float32)


def state_rows(states: Sequence[np.ndarray]) -> np.ndarray:
    """Views' state rows as one ``int16[n, state size]`` array (``[0, state size]`` for none)."""
    return np.array(states, STATE_DTYPE).reshape(len(states), STATE_SIZE)


def _play_task(task: tuple[Net, int, SelfPlay]) -> Positions:
    """A worker process's job: one game (a top-level function, so the 'spawn' context can pickle it)."""
    return play_game(*task)


def game_seeds(seed: int, iteration: int, games: int) -> np.ndarray:
    """The deals of an iteration's games: from the run's seed and the iteration alone, so a resumed run plays
    the games the uninterrupted one would have."""
    return np.random.default_rng([seed, iteration]).integers(1 << 31, size=games)


def self_play(net: Net, seeds: np.ndarray, setup: SelfPlay, pool: Executor | None) -> list[Positions]:
    """The games of ``seeds``, in order: in the worker processes, or here without a pool. A game depends only
    on its seed and the network, so the pool changes the speed, never the records."""
    tasks = [(net, int(s), setup) for s in seeds]
    games: Iterator[Positions] = map(_play_task, tasks) if pool is None else pool.map(_play_task, tasks)
    return list(games)


def positions_from(saved: Mapping[str, np.ndarray], rows: Any = slice(None)) -> Positions:
    """``rows`` of the positions in a saved file (an ``np.load``). A file from before the results were kept
    apart has values alone, which were the results then; one from before the states were kept has none (zeros)."""
    columns = {name: saved[name if name in saved else "values"][rows] for name in Positions._fields[:-1]}
    kept = saved["states"][rows] if "states" in saved else np.zeros((len(columns["values"]), STATE_SIZE), STATE_DTYPE)
    return Positions(**columns, states=kept)


# --- the replay buffer ----------------------------------------------------------------------------
class ReplayBuffer:
    """The newest ``capacity`` positions in preallocated numpy arrays, overwritten oldest first."""

    def __init__(self, capacity: int, observation_size: int) -> None:
        self.capacity, self.size, self.next = capacity, 0, 0
        self.data = Positions(np.zeros((capacity, observation_size), np.float32),
                              np.zeros((capacity, NUM_ACTIONS), bool), np.zeros((capacity, NUM_ACTIONS), np.float32),
                              np.zeros(capacity, np.int64), np.zeros(capacity, np.float32),
                              np.zeros(capacity, np.float32), np.zeros((capacity, STATE_SIZE), STATE_DTYPE))

    def add(self, positions: Positions) -> None:
        rows = positions.values.shape[0]
        first = max(0, rows - self.capacity)  # more than fits: only the newest go in
        slots = (self.next + np.arange(rows - first)) % self.capacity
        for column, new in zip(self.data, positions):
            column[slots] = new[first:]
        self.next = int((self.next + rows - first) % self.capacity)
        self.size = min(self.capacity, self.size + rows - first)

    def save(self, path: Path, iteration: int) -> None:
        """Write ``path`` (.npz) with the iteration it belongs to; written beside and renamed into place."""
        replace_file(path, lambda temp: np.savez(temp, iteration=iteration, next=self.next, size=self.size,
                                                 **self.data._asdict()))

    def load(self, path: Path) -> int:
        """Fill from a file ``save`` wrote (the newest rows when it held more); returns its iteration. Every kept
        state is checked as a position (reanalysis hands them to the engine): ``ValueError`` naming the first
        that is not one, before the buffer changes."""
        with np.load(path) as saved:
            size, next_ = int(saved["size"]), int(saved["next"])
            order = (next_ - size + np.arange(size)) % len(saved["values"])  # oldest first
            positions = positions_from(saved, order)
            for row in np.flatnonzero(kept_states(positions.states)):
                try:
                    SplendorGame.from_state(positions.states[row])
                except ValueError as e:
                    raise ValueError(f"{shown_path(path)}: position {order[row]}: {e}") from None
            self.add(positions)
            return int(saved["iteration"])


def kept_states(states: np.ndarray) -> np.ndarray:
    """Which rows of ``Positions.states`` hold a position (a row of zeros holds none)."""
    return states[:, NUM_PLAYERS_AT] != 0


def reanalyse(net: Net, buffer: ReplayBuffer, count: int, setup: SelfPlay, pool: Executor | None, tasks: int,
              rng: np.random.Generator) -> dict[str, float]:
    """Reanalysis: ``count`` positions of the buffer, drawn at random among those with a kept state and a choice,
    searched again by ``net`` as a self-play move is searched in full (``search_again``, in ``tasks`` parts, in the
    worker processes): each one's policy target becomes the new visits and its value target the game's result
    with the new root value mixed in by ``root_value_weight``. Returns the positions and how far their targets
    moved (the mean total variation of the policies, the mean absolute change of the values)."""
    data, size = buffer.data, buffer.size
    eligible = np.flatnonzero(kept_states(data.states[:size]) & (data.masks[:size].sum(axis=1) > 1))
    rows = np.sort(rng.choice(eligible, size=min(count, len(eligible)), replace=False))
    if len(rows) == 0:
        return {"reanalyse/positions": 0.0}
    parts = np.array_split(rows, min(len(rows), tasks))
    seeds = rng.integers(1 << 31, size=len(parts))
    work = [(net, data.states[part], int(seed), setup) for part, seed in zip(parts, seeds)]
    answers = list(map(_search_again_task, work) if pool is None else pool.map(_search_again_task, work))
    policies = np.concatenate([policy for policy, _ in answers])
    values = _value_target(data.results[rows], np.concatenate([root for _, root in answers]), setup)
    moved = {"reanalyse/positions": float(len(rows)),
             "reanalyse/policy_change": float(0.5 * np.abs(policies - data.policies[rows]).sum(axis=1).mean()),
             "reanalyse/value_change": float(np.abs(values - data.values[rows]).mean())}
    data.policies[rows], data.values[rows] = policies, values
    return moved


def search_again(net: Net, states: np.ndarray, seed: int, setup: SelfPlay) -> tuple[np.ndarray, np.ndarray]:
    """The full self-play search of ``setup`` (``simulations``, root noise), guided by ``net``, at positions kept
    as their mover's view (``Positions.states``): each one's policy target and the search's root value."""
    search = _self_play_search(net, seed, setup)
    policies, roots = np.zeros((len(states), NUM_ACTIONS), np.float32), np.zeros(len(states), np.float32)
    for i, row in enumerate(states):
        game = SplendorGame.from_state(row)
        seat, mask = game.current_player, game.legal_mask()
        _search_move(search, setup, game.observe(seat), mask, game.policy_info(seat), True, 0.0)
        visits = search.policy_target(mask)
        policies[i], roots[i] = visits / visits.sum(), search.root_value()
    return policies, roots


def _search_again_task(task: tuple[Net, np.ndarray, int, SelfPlay]) -> tuple[np.ndarray, np.ndarray]:
    """A worker process's reanalysis job (top-level, so the 'spawn' context can pickle it)."""
    return search_again(*task)


# --- the loop -------------------------------------------------------------------------------------
def train(args: Args) -> Path:
    """Train; returns the path of the final model (``<out>/final.pt``). ``<out>/timing.json`` gets the games,
    positions and seconds of the run and where they went (self-play, training, evaluations)."""
    validate_args(args)
    import torch  # the [train] extra; a missing one is named in one line by the command

    checkpoint = resume_checkpoint(args.resume, "az", args.players)
    torch.set_num_threads(args.threads)

    # The network's shape and weights: resumed, warm-started (--init) or fresh; --value-net may reshape the value.
    iteration, start_state, replay = 0, None, None
    hidden = value_hidden = hidden_layers(args.net)
    if checkpoint is not None:
        (hidden, value_hidden), iteration = network_widths(checkpoint["meta"]), int(checkpoint["step"])
        start_state, replay = checkpoint["model"], _replay_file(Path(args.resume), iteration)
    elif (model := _init_model(args)) is not None:
        hidden, value_hidden, start_state = warm_start(model, args.players)
    old_value = value_hidden
    if args.value_net:
        value_hidden = hidden_layers(args.value_net, "--value-net")
    reshaped = start_state is not None and value_hidden != old_value
    if reshaped and checkpoint is not None and replay is None:
        raise ValueError(f"--value-net {_widths(value_hidden)} differs from the value network of "
                         f"{shown_path(args.resume)} ({_widths(old_value)}): it is fitted to that one on the replay "
                         f"buffer, and no replay.npz of iteration {iteration} is beside it")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(args), indent=2))
    rng = np.random.default_rng(args.seed)  # minibatch draws
    torch.manual_seed(args.seed)  # a fresh network's initialisation
    meta = {**model_meta(args.players), "net": hidden, "value_net": value_hidden, "num_actions": NUM_ACTIONS,
            "algo": "az"}
    obs_size = int(meta["observation_size"])
    net = build_network(obs_size, hidden, NUM_ACTIONS, value_hidden)
    if start_state is not None:  # a reshaped value network keeps its fresh weights until it is fitted below
        net.load_state_dict({k: v for k, v in start_state.items() if not (reshaped and k.startswith("vf."))},
                            strict=not reshaped)
    if reshaped and checkpoint is None and args.progress:
        print(f"--value-net {_widths(value_hidden)}: --init's value network has another shape "
              f"({_widths(old_value)}); a fresh one starts", file=sys.stderr)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    buffer = ReplayBuffer(args.buffer, obs_size)
    if checkpoint is not None:
        if checkpoint["optimizer"] and not reshaped:  # a reshaped network's Adam moments start afresh
            load_optimizer(optimizer, checkpoint["optimizer"], lr=args.lr, weight_decay=args.weight_decay)
        if "numpy" in checkpoint["rng"]:
            rng.bit_generator.state = checkpoint["rng"]["numpy"]
        if replay is not None:
            buffer.load(replay)
        elif args.progress:
            waits = (f"training waits until it holds {args.min_buffer:,} positions" if args.min_buffer else
                     "--min-buffer N makes training wait until it holds N positions")
            print(f"no replay.npz of iteration {iteration} beside {shown_path(args.resume)}: the replay buffer starts "
                  f"empty; {waits}", file=sys.stderr)
        if reshaped:
            difference = refit_value(net, checkpoint["model"], old_value, buffer, args, rng)
            if args.progress:
                print(f"value network {_widths(old_value)} -> {_widths(value_hidden)}: fitted to the old one on "
                      f"{buffer.size:,} positions, mean squared difference {difference:.4f} on the newest 5%, "
                      "held out", file=sys.stderr)

    # The network this run starts from, kept as the "past" opponent of the evaluations.
    first_iteration = iteration
    start_path = _save(out / "checkpoints" / f"iter_{iteration}.pt", net, meta, optimizer, iteration, args, rng)

    # Bookkeeping: the worker pool, timers, logs.
    setup = SelfPlay.of(args)
    pool = None if args.workers == 0 else ProcessPoolExecutor(
        args.workers, mp_context=multiprocessing.get_context("spawn"),  # no fork: torch's threads are live here
        initializer=ignore_interrupt)
    bar = Progress(args.iterations, iteration, label="iter") if args.progress else None
    evals = EvalLog(args, out, bar, unit="iteration")
    writer = summary_writer(out / "logs")
    curves = Curves(out / "curves.csv")
    seconds = dict.fromkeys(("selfplay", "reanalyse", "train", "eval"), 0.0)
    games = positions = 0
    stats: dict[str, float] = {}
    start = time.perf_counter()

    try:
        while iteration < args.iterations:
            iteration += 1

            # (a) Self-play: the current network, as numpy arrays, guides the search of every seat.
            tick = time.perf_counter()
            search_net = numpy_net(net)
            records = self_play(search_net, game_seeds(args.seed, iteration, args.games), setup, pool)
            seconds["selfplay"] += time.perf_counter() - tick
            games += len(records)
            positions += sum(len(r.values) for r in records)
            stats = fresh_metrics(net, records)
            if args.reanalyse:  # before the new positions go in: they were searched by this network just now
                tick = time.perf_counter()
                stats |= reanalyse(search_net, buffer, args.reanalyse, setup, pool, 4 * max(1, args.workers), rng)
                seconds["reanalyse"] += time.perf_counter() - tick

            # (b) The replay buffer; (c) training on minibatches drawn from it.
            tick = time.perf_counter()
            for record in records:
                buffer.add(record)
            hold_threads(torch, args.threads)
            stats |= learn(net, optimizer, buffer, args, rng)
            seconds["train"] += time.perf_counter() - tick
            curves.write(iteration, games, positions, stats)

            # (d) Evaluations, checkpoints, logs and the progress line.
            if iteration % args.eval_every == 0:
                seconds["eval"] += _evaluate(evals, net, iteration, args, start_path, writer)
            if iteration % args.checkpoint_every == 0:
                _save(out / "checkpoints" / f"iter_{iteration}.pt", net, meta, optimizer, iteration, args, rng)
                buffer.save(out / "replay.npz", iteration)
            elapsed = time.perf_counter() - start
            rate = positions / max(seconds["selfplay"], 1e-9)
            if writer is not None:
                for key, value in stats.items():
                    writer.add_scalar(key, value, iteration)
                writer.add_scalar("selfplay/positions_per_second", rate, iteration)
                writer.add_scalar("selfplay/game_length", positions / games, iteration)
                writer.add_scalar("time/selfplay_share", seconds["selfplay"] / elapsed, iteration)
            if bar is not None:
                learnt = f"loss {stats['loss/total']:.3f}" if buffer.size >= args.min_buffer else \
                    f"filling the buffer, {buffer.size:,} of {args.min_buffer:,} positions"
                bar.update(iteration, f"{rate:,.0f} positions/s, {learnt}")
    finally:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)  # on Ctrl-C: the hint need not wait for the games in play

    total = time.perf_counter() - start
    (out / "timing.json").write_text(json.dumps({  # throughput of this run, periodic evaluations included
        "iterations": iteration - first_iteration, "games": games, "positions": positions, "seconds": total,
        "selfplay_seconds": seconds["selfplay"], "reanalyse_seconds": seconds["reanalyse"],
        "train_seconds": seconds["train"], "eval_seconds": seconds["eval"],
        "positions_per_second": positions / max(seconds["selfplay"], 1e-9), "workers": args.workers,
        "simulations": args.simulations, "threads": args.threads}))
    if evals.evaluated_at != iteration:
        _evaluate(evals, net, iteration, args, start_path, writer)
    final = _save(out / "final.pt", net, meta, optimizer, iteration, args, rng)
    buffer.save(out / "replay.npz", iteration)
    if bar is not None:
        bar.close()
    evals.close()
    curves.close()
    if writer is not None:
        writer.close()
    return final


# --- helpers of the loop ----------------------------------------------------------------------------
class Curves:
    """``OUT/curves.csv``: a row per iteration with the games and positions so far, ``fresh_metrics`` of the
    iteration's new positions and the last minibatch's losses (a resumed run appends to it)."""

    COLUMNS = ("fresh/policy_cross_entropy", "fresh/target_entropy", "fresh/agreement", "fresh/value_mse",
               "fresh/value_sign_accuracy", "loss/policy", "loss/value")

    def __init__(self, path: Path) -> None:
        new = not path.is_file()
        self._file = path.open("a", newline="")
        self._writer = csv.writer(self._file)
        if new:
            self._writer.writerow(["iteration", "games", "positions", *(c.split("/")[1] for c in self.COLUMNS)])

    def write(self, iteration: int, games: int, positions: int, stats: Mapping[str, float]) -> None:
        self._writer.writerow([iteration, games, positions, *(f"{stats[c]:.5f}" for c in self.COLUMNS)])
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def learn(net: torch.nn.ModuleDict, optimizer: torch.optim.Optimizer, buffer: ReplayBuffer, args: Args,
          rng: np.random.Generator) -> dict[str, float]:
    """``--train-steps`` minibatch steps on the replay buffer (each position's colours renamed at random with
    ``--augment colours``); the last minibatch's losses. No step while the buffer holds fewer than ``--min-buffer``
    positions (the losses then NaN)."""
    import torch

    data = buffer.data
    stats: dict[str, float] = {"buffer/positions": float(buffer.size)}
    if buffer.size < args.min_buffer:  # still filling: no minibatch, hence no loss
        return stats | dict.fromkeys(("loss/policy", "loss/value", "loss/total"), float("nan"))
    for _ in range(args.train_steps):
        idx = rng.integers(buffer.size, size=min(args.batch_size, buffer.size))
        observations, masks = data.observations[idx], data.masks[idx]
        policies = tempered(data.policies[idx], args.target_temperature)
        if args.augment == "colours":  # the value target is the same in every renaming
            renamings = rng.integers(len(COLOUR_PERMUTATIONS), size=len(idx))
            observations, masks, policies = permute_colours(observations, masks, policies, renamings)
        batch = [torch.from_numpy(c) for c in (observations, masks, policies, data.values[idx])]
        policy_loss, value_loss = losses(net, *batch)
        loss = policy_loss + args.vf_coef * value_loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
        optimizer.step()
        stats |= {"loss/policy": policy_loss.item(), "loss/value": value_loss.item(), "loss/total": loss.item()}
    return stats


def tempered(policies: np.ndarray, temperature: float) -> np.ndarray:
    """Each row's probabilities raised to ``1 / temperature`` and renormalised (a zero stays zero); the rows
    themselves at temperature 1.

    >>> tempered(np.array([[0.75, 0.25, 0.0]], np.float32), 0.5).astype(float).round(2).tolist()
    [[0.9, 0.1, 0.0]]
    """
    if temperature == 1:
        return policies
    top = policies.max(axis=1, keepdims=True)  # scaled by the row's largest first, so no power underflows to 0/0
    sharpened = (policies / top) ** np.float32(1 / temperature)
    return (sharpened / sharpened.sum(axis=1, keepdims=True)).astype(policies.dtype)


def fresh_metrics(net: torch.nn.ModuleDict, records: Sequence[Positions]) -> dict[str, float]:
    """The network on an iteration's new positions before it learns from them (held out by construction): the
    policy's cross-entropy to the search's visits and the visits' own entropy (their difference is what the
    network has left to learn), how often its most probable move is the one the search visited most, at
    positions with a choice; the value's squared error to the games' results and how often its sign names the
    winner, at positions of a decided game (a shared win or a capped game has result 0)."""
    import torch

    p = Positions(*(np.concatenate(column) for column in zip(*records)))
    with torch.no_grad():
        observations = torch.from_numpy(p.observations)
        log_probs = torch.log_softmax(masked_logits(net["pi"](observations), torch.from_numpy(p.masks)), 1).numpy()
        value = net["vf"](observations).squeeze(1).clamp(-1, 1).numpy()
    choice, decided = p.masks.sum(axis=1) > 1, p.results != 0
    targets = p.policies[choice]
    entropy = -(targets * np.log(np.where(targets > 0, targets, 1))).sum(axis=1)
    agree = log_probs[choice].argmax(axis=1) == targets.argmax(axis=1)
    return {"fresh/policy_cross_entropy": _mean(-(targets * log_probs[choice]).sum(axis=1)),
            "fresh/target_entropy": _mean(entropy), "fresh/agreement": _mean(agree),
            "fresh/value_mse": _mean((value - p.results) ** 2),
            "fresh/value_sign_accuracy": _mean(np.sign(value[decided]) == p.results[decided])}


def _mean(x: np.ndarray) -> float:
    """The mean, NaN for no rows (an iteration of capped games has no decided result), without numpy's warning."""
    return float(x.mean()) if x.size else float("nan")


def losses(net: torch.nn.ModuleDict, observations: torch.Tensor, masks: torch.Tensor, policies: torch.Tensor,
           values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The policy's cross-entropy to the target distributions and the value's squared error, means over a
    minibatch. An illegal move's target is 0, so its logit of -1e8 adds nothing."""
    import torch

    log_probs = torch.log_softmax(masked_logits(net["pi"](observations), masks), dim=1)
    policy_loss = -(policies * log_probs).sum(dim=1).mean()
    value_loss = ((net["vf"](observations).squeeze(1) - values) ** 2).mean()
    return policy_loss, value_loss


def _evaluate(evals: EvalLog, net: torch.nn.ModuleDict, iteration: int, args: Args, start: Path,
              writer: Any) -> float:
    """The network alone against --eval-opponents (and the starting network), then the search against
    --eval-search-opponent; returns the seconds it took."""
    tick = time.perf_counter()
    rates = evals.run(network_act(net["pi"]), iteration, {"start": f"ppo:{start}"} if args.eval_past else None)
    if args.eval_search_games:
        label = f"search:{args.eval_search_opponent}"
        result = _search_match(numpy_net(net), args)
        rates[label] = result["win_rate"]
        evals.latest = ", ".join(filter(None, [evals.latest, evals.record(iteration, label, args.eval_search_games,
                                                                          result)]))
    if writer is not None:
        for spec, rate in rates.items():
            writer.add_scalar(f"eval/{spec}_win_rate", rate, iteration)
    return time.perf_counter() - tick


def _search_match(net: Net, args: Args) -> dict[str, float]:
    """``--eval-search-games`` games of the search (no noise, most visited move) against the opponent spec, the
    search's seat rotating; a shared win counts as a draw (half)."""
    wins = draws = 0.0
    for g in range(args.eval_search_games):
        game = SplendorGame(args.players, seed=20_000 + g, max_plies=args.max_plies)
        seat = g % args.players
        search = PUCTPolicy(net, "search", g, args.eval_search_simulations, None, args.c, mix=args.value_mix,
                            rollout_depth=args.rollout_depth, root=args.root, considered=args.considered)
        other = make_policy(args.eval_search_opponent, "splendor", seed=g)
        while not game.is_over:
            mover = game.current_player
            policy = search if mover == seat else other
            game.step(policy.act(game.observe(mover), game.legal_mask(), game.policy_info(mover)))
        if seat in game.winners:
            wins, draws = (wins + 1, draws) if len(game.winners) == 1 else (wins, draws + 1)
    low, high = wilson_interval(wins + draws / 2, args.eval_search_games)
    return {"win_rate": (wins + draws / 2) / args.eval_search_games, "low": low, "high": high, "wins": wins,
            "draws": draws}


def _init_model(args: Args) -> Path | None:
    """The model ``--init`` names (``init_model``), where ``default`` for 3-4 players starts a fresh network."""
    return None if args.init == "default" and args.players != 2 else init_model(args.init, args.players)


def _replay_file(resume: Path, iteration: int) -> Path | None:
    """``replay.npz`` beside the checkpoint (or in the run folder above ``checkpoints/``) when it was saved at the
    checkpoint's iteration."""
    for folder in (resume.parent, resume.parent.parent):
        path = folder / "replay.npz"
        if path.is_file():
            with np.load(path) as saved:
                if int(saved["iteration"]) == iteration:
                    return path
    return None


def refit_value(net: torch.nn.ModuleDict, old_state: Mapping[str, Any], old_hidden: Sequence[int],
                buffer: ReplayBuffer, args: Args, rng: np.random.Generator) -> float:
    """Fit ``net``'s value network, of a new shape, to the old one (``old_state``'s ``vf`` layers, hidden sizes
    ``old_hidden``) with ``fit_to``: ``--refit-steps`` minibatches of ``--batch-size``, colours renamed as in
    training. Returns the mean squared difference of the two values on the held-out positions."""
    old = build_network(int(buffer.data.observations.shape[1]), old_hidden, NUM_ACTIONS, old_hidden)
    old["vf"].load_state_dict({k.removeprefix("vf."): v for k, v in old_state.items() if k.startswith("vf.")})
    return fit_to(net, old, "vf", buffer, args.refit_steps, args.batch_size, args.augment, rng)


def held_out_rows(buffer: ReplayBuffer) -> tuple[np.ndarray, np.ndarray]:
    """The buffer's rows, oldest first, split into the positions a fit learns from and the newest 5% it is
    judged on."""
    rows = (buffer.next - buffer.size + np.arange(buffer.size)) % buffer.capacity
    held_out = max(1, buffer.size // 20)
    return rows[:-held_out], rows[-held_out:]


def fit_to(net: torch.nn.ModuleDict, teacher: torch.nn.ModuleDict, part: str, buffer: ReplayBuffer, steps: int,
           batch_size: int, augment: str, rng: np.random.Generator) -> float:
    """Fit ``net[part]`` to ``teacher[part]`` (``"vf"``: the value, by squared error; ``"pi"``: the policy, by
    cross-entropy to the teacher's distribution over the legal moves) on the buffer's positions but the newest
    5% (``held_out_rows``), each renamed with ``augment="colours"``: ``steps`` minibatches, Adam on a one-cycle
    schedule peaking at 1e-3. Returns the loss on the held-out positions less the teacher's own (its entropy,
    for the policy): 0 when the two agree there."""
    import torch

    fit, test = held_out_rows(buffer)
    data = buffer.data
    optimizer = torch.optim.Adam(net[part].parameters(), lr=1e-3)
    schedule = one_cycle(torch, optimizer, 1e-3, steps)

    def loss(rows: np.ndarray, renamings: np.ndarray | None, less_own: bool = False) -> torch.Tensor:
        observations, masks = data.observations[rows], data.masks[rows]
        if renamings is not None:
            observations, masks, _ = permute_colours(observations, masks, data.policies[rows], renamings)
        x, legal = torch.from_numpy(observations), torch.from_numpy(masks)
        if part == "vf":
            with torch.no_grad():
                target = teacher["vf"](x)
            return ((net["vf"](x) - target) ** 2).mean()
        with torch.no_grad():
            target = torch.softmax(masked_logits(teacher["pi"](x), legal), 1)
        cross_entropy = -(target * torch.log_softmax(masked_logits(net["pi"](x), legal), 1)).sum(1).mean()
        if not less_own:  # a constant of the teacher's: it moves no gradient, so training leaves it out
            return cross_entropy
        return cross_entropy + (target * torch.log(target.clamp_min(1e-30))).sum(1).mean()

    for _ in range(steps):
        rows = fit[rng.integers(len(fit), size=min(batch_size, len(fit)))]
        renamings = rng.integers(len(COLOUR_PERMUTATIONS), size=len(rows)) if augment == "colours" else None
        step_loss = loss(rows, renamings)
        optimizer.zero_grad(set_to_none=True)
        step_loss.backward()
        optimizer.step()
        schedule.step()
    with torch.no_grad():
        return float(loss(test, None, less_own=True))


def _widths(hidden: Sequence[int]) -> str:
    return ",".join(map(str, hidden))


def _save(path: Path, net: torch.nn.ModuleDict, meta: dict[str, Any], optimizer: torch.optim.Optimizer,
          iteration: int, args: Args, rng: np.random.Generator) -> Path:
    import torch

    state = {"numpy": rng.bit_generator.state, "torch": torch.get_rng_state()}
    return save_checkpoint(path, net, meta, optimizer, iteration, dataclasses.asdict(args), state)
