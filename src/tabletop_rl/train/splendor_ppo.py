"""PPO self-play for Splendor with stable-baselines3: MaskablePPO on SplendorVectorEnv against an opponent
pool (``tabletop train splendor --algo sb3``; the default trainer is ``splendor_cleanrl_ppo``).

One learning seat per game (drawn at random each game); the other seats are played inside the
env's step by the game's opponent, drawn when the game is dealt: ``random`` or ``greedy`` (inside
numba) or a frozen past checkpoint of the learner (one batched forward pass per round of waiting
games). Needs the ``[train]`` extra.

    tabletop train splendor --steps 2_000_000 --out runs/ppo

>>> cfg = TrainConfig(steps=4096, num_envs=32, out="runs/smoke")      # doctest: +SKIP
>>> train(cfg)                                                        # doctest: +SKIP
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from tabletop_rl.agents.ppo import check_meta, is_checkpoint, read_meta, save_model
from tabletop_rl.core.progress import Progress
from tabletop_rl.envs.splendor_vector import SplendorVectorEnv
from tabletop_rl.train.selfplay import (
    EvalLog,
    TrainConfig,
    add_arguments,
    config_from_args,
    hidden_layers,
    hold_threads,
    model_meta,
    opponent_kinds,
    parse_mix,
    rollout_target,
    validate,
)

__all__ = ["TrainConfig", "add_arguments", "config_from_args", "parse_mix", "train", "validate"]


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


def _deterministic(policy: Any) -> Any:
    """The SB3 policy as evaluation's ``act``: the most probable legal action of each observation."""
    import torch

    def act(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            dist = policy.get_distribution(torch.as_tensor(observations), action_masks=masks)
            return dist.distribution.probs.argmax(dim=1).numpy()

    return act


# --- training ------------------------------------------------------------------------------------
def train(cfg: TrainConfig) -> Path:
    """Train; returns the path of the final model (``<out>/final.zip``). ``<out>/timing.json`` gets the
    steps trained, the seconds taken and the seconds spent stepping the games."""
    validate(cfg)
    if cfg.resume and is_checkpoint(Path(cfg.resume)):
        raise ValueError(f"--resume: {cfg.resume!r} is a .pt checkpoint of the default trainer; resume it without "
                         "--algo sb3")
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
    # The run's settings; on resume they replace the ones saved in the zip, which SB3 would otherwise bring back.
    settings: dict[str, Any] = dict(n_steps=cfg.n_steps, batch_size=cfg.batch_size, n_epochs=cfg.epochs,
                                    learning_rate=cfg.lr, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda,
                                    ent_coef=cfg.ent_coef, clip_range=cfg.clip)
    if cfg.resume:
        check_meta(read_meta(cfg.resume), model_meta(cfg.players), cfg.resume)
        model = MaskablePPO.load(cfg.resume, env=venv, device="cpu", **settings)
    else:
        layers = hidden_layers(cfg.net)
        model = MaskablePPO("MlpPolicy", venv, seed=cfg.seed, device="cpu", verbose=0,
                            policy_kwargs={"net_arch": {"pi": layers, "vf": layers}}, **settings)
    model.set_logger(configure(str(out / "logs"), ["csv", "tensorboard"]))
    pool.add(model.policy)
    pool.pick()
    env.set_opponents(opponent_kinds(mix, cfg.num_envs, rng), now=True)
    callback = _SelfPlayCallback(cfg, env, pool, mix, rng, out, BaseCallback)
    remaining = cfg.steps - model.num_timesteps
    start, first_step = time.perf_counter(), model.num_timesteps
    rollout = cfg.num_envs * cfg.n_steps  # PPO trains whole rollouts: the target rounds up to one
    callback.target = rollout_target(cfg.steps, first_step, rollout)
    if remaining > 0 and callback.target != cfg.steps and cfg.progress:
        print(f"--steps {cfg.steps:,} rounded up to {callback.target:,} (whole rollouts of {cfg.num_envs} games x "
              f"{cfg.n_steps} steps = {rollout:,})", file=sys.stderr)
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=callback.sb3, reset_num_timesteps=not cfg.resume)
        if callback.rollout_ended is not None:  # the last update
            callback.update_seconds += time.perf_counter() - callback.rollout_ended
    seconds = time.perf_counter() - start
    (out / "timing.json").write_text(json.dumps({  # throughput of this run, periodic evaluations included
        "steps": model.num_timesteps - first_step, "seconds": seconds, "env_seconds": venv.seconds,
        "update_seconds": callback.update_seconds}))
    if callback.evals.evaluated_at != model.num_timesteps:
        callback.evaluate(model)
    final = save_model(model, out / "final.zip", model_meta(cfg.players))
    callback.close()
    return final


class _SelfPlayCallback:
    """Pool refresh each rollout, snapshots, periodic evaluation, checkpoints and the progress line."""

    def __init__(self, cfg: TrainConfig, env: SplendorVectorEnv, pool: _SnapshotPool, mix: np.ndarray,
                 rng: np.random.Generator, out: Path, base: type) -> None:
        self.cfg, self.env, self.pool, self.mix, self.rng, self.out = cfg, env, pool, mix, rng, out
        self.updates = 0
        self.evals = EvalLog(cfg, out)
        self.start = time.perf_counter()
        self.start_steps: int | None = None
        self.bar: Progress | None = None  # made at the first rollout, when the step count resumed from is known
        self.target = cfg.steps  # the step count training stops at: --steps rounded up to whole rollouts
        # SB3 runs its update between the end of one rollout and the start of the next: time that gap.
        self.update_seconds = 0.0
        self.rollout_ended: float | None = None
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
            if self.cfg.progress:
                self.bar = self.evals.bar = Progress(self.target, steps, label="steps")
        if self.rollout_ended is not None:
            self.update_seconds += time.perf_counter() - self.rollout_ended
        self.pool.pick()
        self.env.set_opponents(opponent_kinds(self.mix, self.env.num_envs, self.rng))

    def rollout_end(self, model: Any) -> None:
        import torch  # the [train] extra, imported by train() already

        hold_threads(torch, self.cfg.threads)  # SB3's update follows
        self.updates += 1
        if self.updates % self.cfg.snapshot_every == 0:
            self.pool.add(model.policy)
        steps = model.num_timesteps
        if steps >= self.next_eval:
            self.next_eval += self.cfg.eval_every
            self.evaluate(model)
        if steps >= self.next_checkpoint:
            self.next_checkpoint += self.cfg.checkpoint_every
            save_model(model, self.out / "checkpoints" / f"step_{steps}.zip", model_meta(self.cfg.players))
        if self.bar is not None:
            self.progress(model, self.bar)
        self.rollout_ended = time.perf_counter()

    def evaluate(self, model: Any) -> None:
        model.policy.eval()
        for spec, rate in self.evals.run(_deterministic(model.policy), model.num_timesteps).items():
            model.logger.record(f"eval/{spec}_win_rate", rate)
        model.policy.train()

    def progress(self, model: Any, bar: Progress) -> None:
        seconds = time.perf_counter() - self.start
        done = model.num_timesteps - (self.start_steps or 0)
        share = model.get_env().seconds / seconds if seconds else 0.0
        bar.update(model.num_timesteps, f"{done / seconds:,.0f} steps/s, env {share:.0%}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.evals.close()

