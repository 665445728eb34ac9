"""PPO self-play for Splendor: MaskablePPO on SplendorVectorEnv against an opponent pool.

One learning seat per game (drawn at random each game); the other seats are played inside the
env's step by the game's opponent, drawn when the game is dealt: ``random`` or ``greedy`` (inside
numba) or a frozen past checkpoint of the learner (one batched forward pass per round of waiting
games). Needs the ``[train]`` extra.

    tabletop train splendor --steps 2_000_000 --out runs/ppo

>>> cfg = TrainConfig(steps=4096, num_envs=32, out="runs/smoke")      # doctest: +SKIP
>>> train(cfg)                                                        # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import copy
import csv
import dataclasses
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tabletop_rl.agents import make_policy, parse_spec
from tabletop_rl.agents.ppo import check_meta, read_meta, save_model
from tabletop_rl.core.stats import wilson_interval
from tabletop_rl.envs.splendor_vector import EXTERNAL, GREEDY, RANDOM, SplendorVectorEnv
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.observe import OBSERVATION_VERSION, observation_size

__all__ = ["TrainConfig", "add_arguments", "config_from_args", "parse_mix", "train", "validate"]


def _knob(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass
class TrainConfig:
    """Every knob of ``tabletop train splendor``; each field is the flag of the same name."""

    steps: int = _knob(2_000_000, "learner steps to train for (env-steps of the learning seat), rounded up to whole "
                                 "rollouts of num_envs x n_steps; the progress line shows the rounded target")
    out: str = _knob("runs/ppo", "folder for checkpoints, eval.csv, TensorBoard logs and config.json")
    players: int = _knob(2, "players per game (2-4)")
    num_envs: int = _knob(256, "games stepped together")
    n_steps: int = _knob(64, "rollout length per game between updates")
    batch_size: int = _knob(4096, "minibatch size of the PPO update")
    epochs: int = _knob(4, "PPO epochs per update")
    lr: float = _knob(3e-4, "learning rate")
    gamma: float = _knob(0.995, "discount factor")
    gae_lambda: float = _knob(0.95, "GAE lambda")
    ent_coef: float = _knob(0.01, "entropy bonus")
    clip: float = _knob(0.2, "PPO clip range")
    net: str = _knob("256,256", "hidden layer sizes of the policy and value networks")
    reward: str = _knob("dense", "dense: + own points gained / 15 each step, plus the end reward; sparse: end only")
    mix: str = _knob("random=0.1,greedy=0.5,self=0.4", "opponent kinds drawn for each new game")
    snapshot_every: int = _knob(10, "updates between frozen snapshots of the learner added to the pool")
    pool_size: int = _knob(20, "snapshots kept in the pool (the oldest are dropped)")
    eval_every: int = _knob(250_000, "learner steps between evaluations")
    eval_games: int = _knob(400, "games per evaluation opponent")
    eval_opponents: str = _knob("random,greedy", "comma-separated policy specs to evaluate against")
    checkpoint_every: int = _knob(500_000, "learner steps between checkpoints")
    seed: int = _knob(0, "seed of the run (the same seed repeats a run on the same machine)")
    threads: int = _knob(1, "torch threads (1 is fastest on small, busy machines)")
    resume: str = _knob("", "a checkpoint .zip to continue from (its step count continues)")
    progress: bool = _knob(True, "print a progress line with steps/s and the latest evaluation")


def add_arguments(parser: Any) -> None:
    """One ``--flag`` per ``TrainConfig`` field, with its default and help."""
    for f in dataclasses.fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        if f.type in ("bool", bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=f.metadata["help"])
        else:
            kind = {"int": int, "float": float, "str": str}[f.type]
            parser.add_argument(flag, type=kind, default=f.default, metavar=f.name.upper(),
                                help=f"{f.metadata['help']} (default {f.default})")


def config_from_args(args: Any) -> TrainConfig:
    return TrainConfig(**{f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)})


def parse_mix(text: str) -> np.ndarray:
    """``"random=0.1,greedy=0.5,self=0.4"`` -> probabilities over (random, greedy, self), summing to 1."""
    weights = dict.fromkeys(("random", "greedy", "self"), 0.0)
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, value = part.partition("=")
        if key not in weights:
            raise ValueError(f"--mix: unknown opponent {key!r} (known: random, greedy, self)")
        try:
            weights[key] = float(value)
        except ValueError:
            raise ValueError(f"--mix: {part!r} needs a number, as in greedy=0.5") from None
        if weights[key] < 0:
            raise ValueError(f"--mix: {key} has a negative weight")
    total = sum(weights.values())
    if total <= 0:
        raise ValueError("--mix: the weights add up to 0")
    return np.array([weights["random"], weights["greedy"], weights["self"]]) / total


def validate(cfg: TrainConfig) -> None:
    """One-line ``ValueError`` naming the first bad setting."""
    positive = ("steps", "num_envs", "n_steps", "batch_size", "epochs", "snapshot_every", "pool_size",
                "eval_every", "eval_games", "checkpoint_every", "threads")
    for name in positive:
        if getattr(cfg, name) <= 0:
            raise ValueError(f"--{name.replace('_', '-')} must be positive, got {getattr(cfg, name)}")
    if cfg.players not in (2, 3, 4):
        raise ValueError(f"--players must be 2, 3 or 4, got {cfg.players}")
    if not 0 < cfg.lr < 1 or not 0 < cfg.gamma <= 1 or not 0 < cfg.gae_lambda <= 1:
        raise ValueError("--lr must be in (0, 1) and --gamma, --gae-lambda in (0, 1]")
    if cfg.reward not in ("dense", "sparse"):
        raise ValueError(f"--reward must be dense or sparse, got {cfg.reward!r}")
    _hidden_layers(cfg.net)
    parse_mix(cfg.mix)
    for spec in _eval_specs(cfg):
        if spec not in ("random", "greedy"):
            parse_spec(spec, "splendor")
    if cfg.resume and not Path(cfg.resume).is_file():
        raise ValueError(f"--resume: no checkpoint at {cfg.resume!r}")


def _hidden_layers(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) <= 0:
        raise ValueError(f"--net must be comma-separated positive layer sizes such as 256,256, got {text!r}")
    return sizes


def _eval_specs(cfg: TrainConfig) -> list[str]:
    return [s.strip() for s in cfg.eval_opponents.split(",") if s.strip()]


def _model_meta(players: int) -> dict[str, Any]:
    """What a Splendor model was trained on; ``PPOPolicy`` refuses a model whose metadata differs."""
    return {"game": "splendor", "num_players": players, "observation_version": OBSERVATION_VERSION,
            "observation_size": observation_size(players)}


# --- the opponent pool -------------------------------------------------------------------------
class _SnapshotPool:
    """Frozen copies of the learner's policy network; one of them plays the ``self`` games."""

    def __init__(self, size: int, rng: np.random.Generator) -> None:
        self.size = size
        self.rng = rng
        self.snapshots: list[Any] = []
        self.active: Any = None

    def add(self, policy: Any) -> None:
        frozen = copy.deepcopy(policy).eval()
        self.snapshots = (self.snapshots + [frozen])[-self.size:]

    def pick(self) -> None:
        """Choose the snapshot that plays the ``self`` games until the next pick."""
        self.active = self.snapshots[self.rng.integers(len(self.snapshots))]

    def __call__(self, observations: np.ndarray, masks: np.ndarray, envs: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            dist = self.active.get_distribution(torch.as_tensor(observations), action_masks=masks)
            return dist.distribution.sample().numpy()


def _opponent_kinds(mix: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.choice(np.array([RANDOM, GREEDY, EXTERNAL]), size=n, p=mix)


# --- evaluation ----------------------------------------------------------------------------------
def _evaluate(policy: Any, opponent: str, games: int, players: int, seed: int) -> dict[str, float]:
    """Play ``games`` games (one per env, learner seat drawn per game) with the deterministic policy."""
    import torch

    hook = None if opponent in ("random", "greedy") else _SpecHook(opponent, seed)
    env = SplendorVectorEnv(num_envs=games, opponent=hook or opponent, num_players=players, parallel=False)
    if hook is not None:
        hook.env = env
    obs, info = env.reset(seed=seed)
    outcome = np.full(games, np.nan)
    while np.isnan(outcome).any():
        with torch.no_grad():
            dist = policy.get_distribution(torch.as_tensor(obs), action_masks=info["action_mask"])
            actions = dist.distribution.probs.argmax(dim=1).numpy()
        obs, _r, _t, _u, info = env.step(actions)
        if "outcome" in info:
            fresh = info["_outcome"] & np.isnan(outcome)
            outcome[fresh] = info["outcome"][fresh]
    wins, draws = float((outcome > 0).sum()), float((outcome == 0).sum())
    low, high = wilson_interval(wins + draws / 2, games)
    return {"win_rate": (wins + draws / 2) / games, "low": low, "high": high, "wins": wins, "draws": draws}


class _SpecHook:
    """Plays the other seats with a policy spec (e.g. ``expectiminimax``), one policy object per seat."""

    def __init__(self, spec: str, seed: int) -> None:
        self.policy = make_policy(spec, "splendor", seed=seed)
        self.env: SplendorVectorEnv | None = None

    def __call__(self, observations: np.ndarray, masks: np.ndarray, envs: np.ndarray) -> np.ndarray:
        if self.env is None:
            raise RuntimeError("the hook plays in no env: set hook.env first")
        actions = np.empty(len(envs), np.int64)
        for k, i in enumerate(envs):
            game = SplendorGame._from_state(self.env.states[i].copy())
            actions[k] = self.policy.act(observations[k], masks[k], {"game": game, "player": game.current_player})
        return actions


# --- training ------------------------------------------------------------------------------------
def train(cfg: TrainConfig) -> Path:
    """Train; returns the path of the final model (``<out>/final.zip``). ``<out>/timing.json`` gets the
    steps trained, the seconds taken and the seconds spent stepping the games."""
    validate(cfg)
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import configure

    torch.set_num_threads(cfg.threads)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=2))
    rng = np.random.default_rng(cfg.seed)
    mix = parse_mix(cfg.mix)
    pool = _SnapshotPool(cfg.pool_size, rng)
    # One thread for the games: PPO's update holds a core, and numba threads waiting on a busy core stall.
    env = SplendorVectorEnv(num_envs=cfg.num_envs, opponent=pool, num_players=cfg.players, reward=cfg.reward,
                            parallel=False)
    venv = env.to_sb3()
    venv.seed(cfg.seed)
    if cfg.resume:
        check_meta(read_meta(cfg.resume), _model_meta(cfg.players), cfg.resume)
        model = MaskablePPO.load(cfg.resume, env=venv, device="cpu")
    else:
        layers = _hidden_layers(cfg.net)
        model = MaskablePPO(
            "MlpPolicy", venv, n_steps=cfg.n_steps, batch_size=cfg.batch_size, n_epochs=cfg.epochs,
            learning_rate=cfg.lr, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda, ent_coef=cfg.ent_coef,
            clip_range=cfg.clip, seed=cfg.seed, device="cpu", verbose=0,
            policy_kwargs={"net_arch": {"pi": layers, "vf": layers}},
        )
    model.set_logger(configure(str(out / "logs"), ["csv", "tensorboard"]))
    pool.add(model.policy)
    pool.pick()
    env.set_opponents(_opponent_kinds(mix, cfg.num_envs, rng), now=True)
    callback = _SelfPlayCallback(cfg, env, pool, mix, rng, out, BaseCallback)
    remaining = cfg.steps - model.num_timesteps
    start, first_step = time.perf_counter(), model.num_timesteps
    rollout = cfg.num_envs * cfg.n_steps  # PPO trains whole rollouts: the target rounds up to one
    callback.target = first_step + -(-max(remaining, 0) // rollout) * rollout
    if remaining > 0 and callback.target != cfg.steps and cfg.progress:
        print(f"--steps {cfg.steps:,} rounded up to {callback.target:,} (whole rollouts of {cfg.num_envs} games x "
              f"{cfg.n_steps} steps = {rollout:,})", file=sys.stderr)
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=callback.sb3, reset_num_timesteps=not cfg.resume)
    seconds = time.perf_counter() - start
    (out / "timing.json").write_text(json.dumps({  # throughput of this run, periodic evaluations included
        "steps": model.num_timesteps - first_step, "seconds": seconds, "env_seconds": venv.seconds}))
    if callback.evaluated_at != model.num_timesteps:
        callback.evaluate(model)
    final = save_model(model, out / "final.zip", _model_meta(cfg.players))
    callback.close()
    return final


class _SelfPlayCallback:
    """Pool refresh each rollout, snapshots, periodic evaluation, checkpoints and the progress line."""

    def __init__(self, cfg: TrainConfig, env: SplendorVectorEnv, pool: _SnapshotPool, mix: np.ndarray,
                 rng: np.random.Generator, out: Path, base: type) -> None:
        self.cfg, self.env, self.pool, self.mix, self.rng, self.out = cfg, env, pool, mix, rng, out
        self.updates = 0
        self.latest = ""
        self.evaluated_at = -1
        self.start = time.perf_counter()
        self.start_steps: int | None = None
        self.target = cfg.steps  # the step count training stops at: --steps rounded up to whole rollouts
        self._csv = (out / "eval.csv").open("a", newline="")
        self._writer = csv.writer(self._csv)
        owner = self

        class Hooks(base):
            def _on_rollout_start(self) -> None:
                owner.rollout_start(self.model)

            def _on_step(self) -> bool:
                return True

            def _on_rollout_end(self) -> None:
                owner.rollout_end(self.model)

        self.sb3 = Hooks()

    def rollout_start(self, model: Any) -> None:
        if self.start_steps is None:  # a resumed run evaluates and saves at the next multiples
            self.start_steps = steps = model.num_timesteps
            self.next_eval = (steps // self.cfg.eval_every + 1) * self.cfg.eval_every
            self.next_checkpoint = (steps // self.cfg.checkpoint_every + 1) * self.cfg.checkpoint_every
        self.pool.pick()
        self.env.set_opponents(_opponent_kinds(self.mix, self.env.num_envs, self.rng))

    def rollout_end(self, model: Any) -> None:
        self.updates += 1
        if self.updates % self.cfg.snapshot_every == 0:
            self.pool.add(model.policy)
        steps = model.num_timesteps
        if steps >= self.next_eval:
            self.next_eval += self.cfg.eval_every
            self.evaluate(model)
        if steps >= self.next_checkpoint:
            self.next_checkpoint += self.cfg.checkpoint_every
            save_model(model, self.out / "checkpoints" / f"step_{steps}.zip", _model_meta(self.cfg.players))
        if self.cfg.progress:
            self.progress(model)

    def evaluate(self, model: Any) -> None:
        model.policy.eval()
        results = []
        for k, spec in enumerate(_eval_specs(self.cfg)):
            r = _evaluate(model.policy, spec, self.cfg.eval_games, self.cfg.players, seed=10_000 + k)
            results.append(f"{spec} {r['win_rate']:.0%} [{r['low']:.0%}, {r['high']:.0%}]")
            model.logger.record(f"eval/{spec}_win_rate", r["win_rate"])
            self._writer.writerow([model.num_timesteps, spec, self.cfg.eval_games, r["wins"], r["draws"],
                                   f"{r['win_rate']:.4f}", f"{r['low']:.4f}", f"{r['high']:.4f}"])
        self._csv.flush()
        model.policy.train()
        self.latest = ", ".join(results)
        self.evaluated_at = model.num_timesteps

    def progress(self, model: Any) -> None:
        seconds = time.perf_counter() - self.start
        done = model.num_timesteps - (self.start_steps or 0)
        share = model.get_env().seconds / seconds if seconds else 0.0
        print(f"\r{model.num_timesteps:>11,} / {self.target:,} steps  {done / seconds:,.0f} steps/s  "
              f"env {share:.0%}  eval: {self.latest or '-'}   ", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.cfg.progress:
            print(file=sys.stderr)
        self._csv.close()

