"""A network that plays alone, taught by a search (distillation with DAgger-style positions): ``train()`` is the
loop over named steps of this file (labelling, fitting, evaluation), over the shared pieces of ``train/selfplay.py``.

``tabletop train splendor --algo distill``. Each round (a) labels ``--games`` games: at every decision the
teacher (a policy spec, ``az:default`` unless told) chooses, and its choice is the target (the visit
distribution of its root when it is a PUCT search, its move otherwise). The move played is the teacher's, the
student network's on ``--student-share`` of the seats (drawn per game), or a uniform legal move in the first
``--random-plies`` plies and at an ``--epsilon`` share of the later decisions: so the positions are those the
network alone will meet, not only the teacher's own games. The result of each game, from the mover's seat, is
its value target. Games are written to ``OUT/data`` as they finish, so an interrupted run keeps them and a rerun
labels only those missing. (b) fits the network to every position labelled so far: ``--epochs`` passes, one
game in ten held out, cross-entropy to the teacher's targets plus ``--vf-coef`` times the value's squared error,
AdamW with a one-cycle learning rate. (c) evaluates the network alone against ``--eval-opponents``. The next
round's student is the network just fitted.

``OUT/final.pt`` is a ``.pt`` checkpoint like the other trainers' (``"algo": "distill"``): it plays as
``ppo:OUT/final.pt`` (the network alone) and ``az:OUT/final.pt`` (a search guided by it). docs/training.md
has the decisions and the run behind the shipped network. Needs the ``[train]`` extra.

    tabletop train splendor --algo distill --games 4000 --out runs/distill

>>> train(Args(games=2, teacher="greedy", epochs=1, workers=0, eval_games=2))   # doctest: +SKIP
PosixPath('runs/distill/final.pt')
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tabletop_rl.agents import make_policy, parse_spec
from tabletop_rl.agents.ppo import build_network, masked_logits, save_checkpoint
from tabletop_rl.agents.search.splendor_puct import Net, PUCTPolicy
from tabletop_rl.core.files import replace_file
from tabletop_rl.core.policy import Policy
from tabletop_rl.core.progress import Progress, ignore_interrupt
from tabletop_rl.games.splendor.game import SplendorGame, check_max_plies
from tabletop_rl.games.splendor.rules import DEFAULT_MAX_PLIES, NUM_ACTIONS
from tabletop_rl.train.selfplay import (
    EvalLog,
    eval_specs,
    hidden_layers,
    hold_threads,
    init_model,
    knob,
    model_meta,
    network_act,
    numpy_net,
    one_cycle,
    warm_start,
)
from tabletop_rl.train.splendor_az import Positions, losses, positions_from, state_rows, value_targets

if TYPE_CHECKING:
    import torch

__all__ = ["Args", "Labelling", "label_game", "labelled_games", "load_positions", "train", "validate_args"]


# --- the knobs ------------------------------------------------------------------------------------
@dataclass
class Args:
    """Every knob of ``tabletop train splendor --algo distill``; each field is the flag of the same name."""

    out: str = knob("runs/distill", "folder for OUT/data (the labelled games), checkpoints, eval.csv and config.json")
    players: int = knob(2, "players per game (2-4)")
    teacher: str = knob("az:default", "policy spec whose choices are the targets (a PUCT search gives its visit "
                                      "distribution, any other policy its move)")
    rounds: int = knob(1, "rounds of labelling then fitting; each round's student is the last round's network")
    games: int = knob(4000, "games labelled per round (a rerun labels only the games missing from OUT/data)")
    student_share: float = knob(0.5, "share of the seats, drawn per game, whose moves are the student network's "
                                     "rather than the teacher's")
    random_plies: int = knob(6, "plies at the start of each game played by uniform legal moves")
    epsilon: float = knob(0.1, "share of the later decisions played by a uniform legal move")
    max_plies: int = knob(DEFAULT_MAX_PLIES, "ply cap of a labelled game (a capped game's value target is 0)")
    workers: int = knob(2, "processes labelling games (0: in this process)")
    init: str = knob("az", "network of the first student and the start of the fit: az (az:default's network), "
                           "default (ppo:default's), a .pt checkpoint or MaskablePPO .zip, or none: a fresh --net "
                           "network")
    net: str = knob("256,256", "hidden layer sizes of a fresh network (one from --init keeps its own)")
    epochs: int = knob(10, "passes over the positions in each round's fit")
    batch_size: int = knob(256, "minibatch size")
    lr: float = knob(3e-4, "peak learning rate of the one-cycle schedule (AdamW)")
    weight_decay: float = knob(1e-4, "AdamW's weight decay")
    vf_coef: float = knob(0.5, "weight of the value loss")
    max_grad_norm: float = knob(1.0, "clip the gradient's global norm to this")
    eval_games: int = knob(200, "games per evaluation opponent of the network alone, after each round")
    eval_opponents: str = knob("greedy", "comma-separated policy specs the network alone is evaluated against")
    seed: int = knob(1, "seed of the run: game k of round r is deal seed * 1,000,000 + r * --games + k")
    threads: int = knob(1, "torch threads of the fit")
    progress: bool = knob(True, "print a progress line while labelling and one line per epoch")


def validate_args(args: Args) -> None:
    """One-line ``ValueError`` naming the first bad setting."""
    for name in ("rounds", "games", "epochs", "batch_size", "eval_games", "threads"):
        if getattr(args, name) <= 0:
            raise ValueError(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    for name in ("workers", "random_plies", "weight_decay", "vf_coef", "seed"):
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(args, name)}")
    if args.players not in (2, 3, 4):
        raise ValueError(f"--players must be 2, 3 or 4, got {args.players}")
    if not 0 <= args.student_share <= 1 or not 0 <= args.epsilon <= 1:
        raise ValueError(f"--student-share and --epsilon must be in [0, 1], got {args.student_share} and "
                         f"{args.epsilon}")
    if not 0 < args.lr < 1 or args.max_grad_norm <= 0:
        raise ValueError("--lr must be in (0, 1) and --max-grad-norm positive")
    check_max_plies(args.max_plies)
    hidden_layers(args.net)
    for spec in [args.teacher, *eval_specs(args.eval_opponents)]:
        parse_spec(spec, "splendor")  # a bad spec fails now, not after an hour of labelling
    init_model(args.init, args.players)


# --- labelling ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Labelling:
    """What a labelled game needs besides its index and the student (sent to the worker processes)."""

    players: int
    teacher: str
    student_share: float
    random_plies: int
    epsilon: float
    max_plies: int
    seed: int


_TEACHERS: dict[str, Policy] = {}  # one teacher per spec and process: a network loads once, not every game


def _teacher(spec: str) -> Policy:
    """The teacher ``spec`` names, built once a process. A PUCT search spends its whole budget unless the spec
    asks for ``stop_early=true``: its visits are the target, and a search stopped once its move was settled
    would teach a flatter distribution than its budget gives."""
    if spec not in _TEACHERS:
        teacher = make_policy(spec, "splendor")
        if isinstance(teacher, PUCTPolicy) and "stop_early" not in parse_spec(spec, "splendor").given:
            teacher.stop_early = False
        _TEACHERS[spec] = teacher
    return _TEACHERS[spec]


def label_game(student: Net, index: int, setup: Labelling) -> tuple[Positions, int]:
    """Game ``index`` of the run: its positions with the teacher's targets, and the index. It depends only on
    the index, the student and the settings: the deal, the teacher's seed and the behaviour's draws all come
    from ``setup.seed`` and ``index``."""
    deal = setup.seed * 1_000_000 + index
    game = SplendorGame(setup.players, seed=deal, max_plies=setup.max_plies)
    teacher = _teacher(setup.teacher)
    reset = getattr(teacher, "reset", None)  # optional in the Policy protocol; every registered policy has it
    if reset is not None:
        reset(deal)
    network = PUCTPolicy(student, "student", 0, simulations=0)
    rng = np.random.default_rng([setup.seed, index])
    students = {seat for seat in range(setup.players) if rng.random() < setup.student_share}
    observations, masks, policies, seats, states = [], [], [], [], []
    while not game.is_over:
        seat, mask = game.current_player, game.legal_mask()
        observation, info = game.observe(seat), game.policy_info(seat)
        if mask.sum() == 1:  # a forced move: nothing to ask, the target is certain
            action = int(np.argmax(mask))
            target = mask.astype(np.float32)
        else:
            action = teacher.act(observation, mask, info)
            target = _target(teacher, action, mask)
            if game.ply < setup.random_plies or rng.random() < setup.epsilon:
                action = int(rng.choice(np.flatnonzero(mask)))
            elif seat in students:
                action = network.act(observation, mask, info)
        observations.append(observation)
        masks.append(mask)
        policies.append(target / target.sum())
        seats.append(seat)
        states.append(info.game.state)
        game.step(action)
    seat_array = np.array(seats, np.int64)
    results = value_targets(game.winners, game.is_truncated, seat_array, setup.players)
    return Positions(np.array(observations, np.float32), np.array(masks, bool), np.array(policies, np.float32),
                     seat_array, results, results, state_rows(states)), index


def _target(teacher: Policy, action: int, mask: np.ndarray) -> np.ndarray:
    """The teacher's root visits over the legal moves when it searched with PUCT; else its move, one-hot."""
    if isinstance(teacher, PUCTPolicy) and teacher.simulations_run > 0:
        return np.where(mask, teacher.root_visits(), 0).astype(np.float32)
    target = np.zeros(NUM_ACTIONS, np.float32)
    target[action] = 1.0
    return target


def _label_task(task: tuple[Net, int, Labelling]) -> tuple[Positions, int]:
    """A worker process's job (a top-level function, so the 'spawn' context can pickle it)."""
    return label_game(*task)


def _write(folder: Path, games: list[tuple[Positions, int]]) -> None:
    """One file of finished games (positions, plus each position's game index), written beside and renamed."""
    folder.mkdir(parents=True, exist_ok=True)
    columns: dict[str, Any] = {name: np.concatenate([getattr(p, name) for p, _ in games]) for name in Positions._fields}
    index = np.concatenate([np.full(len(p.values), i, np.int64) for p, i in games])
    path = folder / f"games_{min(i for _, i in games):07d}_{len(games)}.npz"
    replace_file(path, lambda temp: np.savez(temp, games=index, **columns))


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("games_*[0-9].npz"))


def labelled_games(folder: Path) -> set[int]:
    """The indices of the games labelled under ``folder``, read from each file's index column alone."""
    indices: set[int] = set()
    for f in _files(folder):
        with np.load(f) as saved:
            indices.update(saved["games"].tolist())
    return indices


def load_positions(folder: Path) -> tuple[Positions, np.ndarray]:
    """Every labelled position under ``folder`` and the game index of each (empty when there are none)."""
    files = _files(folder)
    if not files:
        return Positions(*(np.zeros((0,)) for _ in Positions._fields)), np.zeros(0, np.int64)
    parts = []
    for f in files:
        with np.load(f) as saved:
            parts.append((positions_from(saved), saved["games"]))
    positions = Positions(*(np.concatenate(column) for column in zip(*(p for p, _ in parts))))
    return positions, np.concatenate([games for _, games in parts])


def label(student: Net, indices: list[int], setup: Labelling, folder: Path, pool: Executor | None,
          progress: Progress | None) -> None:
    """Label the games ``indices`` and write them to ``folder`` in files of up to 50 games, as they finish, each
    counted on ``progress``. When labelling stops on an error or an interrupt, the games finished before it are
    written first."""
    tasks = [(student, i, setup) for i in indices]
    done: list[tuple[Positions, int]] = []
    start, count = time.perf_counter(), 0
    try:
        for result in (map(_label_task, tasks) if pool is None else pool.map(_label_task, tasks)):
            done.append(result)
            count += 1
            if len(done) == 50:
                _write(folder, done)
                done = []
            if progress is not None:
                progress.advance(f"{count / (time.perf_counter() - start):.2f} games/s")
    finally:
        if done:
            _write(folder, done)


# --- fitting --------------------------------------------------------------------------------------
def fit(net: torch.nn.ModuleDict, data: Positions, games: np.ndarray, args: Args,
        rng: np.random.Generator, progress: Progress | None = None) -> dict[str, float]:
    """``--epochs`` passes over ``data`` less the held-out games (index % 10 == 7); returns the held-out
    agreement with the teacher's choice, cross-entropy and value error after the last pass, each pass's shown
    above ``progress``."""
    import torch

    tensors = [torch.from_numpy(np.ascontiguousarray(c)) for c in (data.observations, data.masks, data.policies,
                                                                    data.values)]
    held = (games % 10) == 7
    train_rows, test_rows = np.flatnonzero(~held), np.flatnonzero(held)
    batches = max(len(train_rows) // args.batch_size, 1)
    optimizer = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    schedule = one_cycle(torch, optimizer, args.lr, args.epochs * batches, warm_up=0.1)
    stats: dict[str, float] = {}
    for epoch in range(args.epochs):
        order = rng.permutation(train_rows)
        for b in range(batches):
            rows = torch.from_numpy(order[b * args.batch_size:(b + 1) * args.batch_size])
            policy_loss, value_loss = losses(net, *(column[rows] for column in tensors))
            optimizer.zero_grad(set_to_none=True)
            (policy_loss + args.vf_coef * value_loss).backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
            schedule.step()
        stats = _held_out(net, tensors, torch.from_numpy(test_rows))
        if progress is not None:
            progress.note(f"epoch {epoch + 1} / {args.epochs}  held out: agreement {stats['agreement']:.3f}  "
                          f"cross-entropy {stats['policy_loss']:.3f}  value error {stats['value_loss']:.3f}")
    return stats


def _held_out(net: torch.nn.ModuleDict, data: list[torch.Tensor], rows: torch.Tensor) -> dict[str, float]:
    """The agreement of the network's most probable move with the teacher's choice, the cross-entropy and the
    value error, on ``rows`` of ``data`` (observations, masks, targets, values)."""
    import torch

    if len(rows) == 0:
        return {"agreement": float("nan"), "policy_loss": float("nan"), "value_loss": float("nan")}
    observations, masks, policies, values = (column[rows] for column in data)
    with torch.no_grad():
        policy_loss, value_loss = losses(net, observations, masks, policies, values)
        chosen = masked_logits(net["pi"](observations), masks).argmax(dim=1)
        agreement = (chosen == policies.argmax(dim=1)).float().mean()
    return {"agreement": agreement.item(), "policy_loss": policy_loss.item(), "value_loss": value_loss.item()}


# --- the run --------------------------------------------------------------------------------------
def train(args: Args) -> Path:
    """Label, fit and evaluate for ``--rounds`` rounds; returns the path of the final model (``OUT/final.pt``)."""
    validate_args(args)
    import torch  # the [train] extra; a missing one is named in one line by the command

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(args), indent=2))
    meta = {**model_meta(args.players), "num_actions": NUM_ACTIONS, "algo": "distill"}
    net, meta["net"], meta["value_net"] = _first_network(args, int(meta["observation_size"]))
    setup = Labelling(args.players, args.teacher, args.student_share, args.random_plies, args.epsilon,
                      args.max_plies, args.seed)
    pool = None if args.workers == 0 else ProcessPoolExecutor(
        args.workers, mp_context=multiprocessing.get_context("spawn"),  # no fork: torch's threads are live here
        initializer=ignore_interrupt)
    # The progress line counts the games to label, all rounds together: labelling takes most of the time.
    total = args.rounds * args.games
    bar = Progress(total, len(labelled_games(out / "data") & set(range(total))), label="labelled",
                   settle=max(args.workers, 1)) if args.progress else None
    evals = EvalLog(args, out, bar, unit="round")
    seconds = dict.fromkeys(("label", "fit", "eval"), 0.0)
    positions = 0
    try:
        for r in range(args.rounds):
            tick = time.perf_counter()
            wanted = range(r * args.games, (r + 1) * args.games)
            missing = sorted(set(wanted) - labelled_games(out / "data"))
            label(numpy_net(net), missing, setup, out / "data", pool, bar)
            seconds["label"] += time.perf_counter() - tick

            tick = time.perf_counter()
            data, games = load_positions(out / "data")
            hold_threads(torch, args.threads)
            stats = fit(net, data, games, args, np.random.default_rng([args.seed, r]), bar)
            seconds["fit"] += time.perf_counter() - tick

            tick = time.perf_counter()
            evals.run(network_act(net["pi"]), r + 1)
            seconds["eval"] += time.perf_counter() - tick
            save_checkpoint(out / "checkpoints" / f"round_{r + 1}.pt", net, meta, step=r + 1,
                            args=dataclasses.asdict(args))
            positions = len(games)
            if bar is not None:
                bar.note(f"round {r + 1} / {args.rounds}: {len(games):,} positions, held-out agreement "
                         f"{stats['agreement']:.3f}")
    finally:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)  # on Ctrl-C: the hint need not wait for the games in play
        evals.close()
        if bar is not None:
            bar.close()
    (out / "timing.json").write_text(json.dumps({**seconds, "positions": positions, "workers": args.workers}))
    return save_checkpoint(out / "final.pt", net, meta, step=args.rounds, args=dataclasses.asdict(args))


def _first_network(args: Args, observation_size: int) -> tuple[torch.nn.ModuleDict, list[int], list[int]]:
    """The network of ``--init`` and its policy's and value's hidden layer sizes: az:default's, a saved model's
    (its layer sizes kept), or a fresh ``--net``."""
    path = init_model(args.init, args.players)
    if path is None:
        hidden = hidden_layers(args.net)
        return build_network(observation_size, hidden, NUM_ACTIONS), hidden, hidden
    hidden, value_hidden, weights = warm_start(path, args.players)
    net = build_network(observation_size, hidden, NUM_ACTIONS, value_hidden)
    net.load_state_dict(weights)
    return net, hidden, value_hidden
