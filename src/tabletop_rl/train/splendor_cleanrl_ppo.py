"""PPO self-play for Splendor, written the CleanRL way: the whole algorithm is one loop in ``train()`` that reads
top to bottom, in numbered steps (rollout, advantages, update, logs). What every trainer of the project shares,
and CleanRL would import from gym and its own utilities, is imported here too: the vector env, the network and
the masked logits (``agents/ppo.py``), the evaluations, checkpoints and progress line (``train/selfplay.py``).

The default trainer of ``tabletop train splendor`` (``--algo sb3`` runs MaskablePPO instead, from
``splendor_ppo``). Rollouts are read straight from ``SplendorVectorEnv``'s arrays into preallocated
tensors, actions are sampled from the masked categorical with one forward pass per step for all games,
and the opponent pool (frozen snapshots of the policy) is the env's external hook, one batched forward
pass per call. What is trained and against whom is the same as with SB3 (docs/training.md): one
learning seat per game, opponents drawn per game from ``--mix`` (``random`` and ``greedy`` inside numba,
``self`` a snapshot), the same evaluation, ``eval.csv`` and progress line. Needs the ``[train]`` extra.

    tabletop train splendor --steps 2_000_000 --out runs/ppo

Checkpoints are ``.pt`` files (``agents/ppo.py`` describes the format) that load as the policy
``ppo:PATH`` and resume a run (``--resume``).

>>> train(Args(steps=4096, num_envs=32, out="runs/smoke"))       # doctest: +SKIP
PosixPath('runs/smoke/final.pt')
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tabletop_rl.agents.ppo import (
    build_network,
    is_checkpoint,
    masked_logits,
    network_widths,
    save_checkpoint,
)
from tabletop_rl.core.progress import Progress
from tabletop_rl.envs.splendor_vector import SplendorVectorEnv
from tabletop_rl.games.splendor.rules import NUM_ACTIONS
from tabletop_rl.train.selfplay import (
    EvalLog,
    TrainConfig,
    hidden_layers,
    hold_threads,
    init_model,
    knob,
    load_optimizer,
    model_meta,
    network_act,
    opponent_kinds,
    parse_mix,
    resume_checkpoint,
    rollout_target,
    summary_writer,
    validate,
    warm_start,
)

if TYPE_CHECKING:
    import torch

__all__ = ["Args", "SnapshotPool", "sample_masked", "train", "validate_args"]


# --- the knobs ------------------------------------------------------------------------------------
@dataclass
class Args(TrainConfig):
    """Every knob of ``tabletop train splendor``: ``TrainConfig``'s (shared with ``--algo sb3``: steps, out,
    players, num_envs, n_steps, batch_size, epochs, lr, gamma, gae_lambda, ent_coef, clip, net, reward, mix,
    snapshot_every, pool_size, eval_every, eval_games, eval_opponents, checkpoint_every, seed, threads,
    progress) and these. The defaults of the PPO loss are SB3's, so the two trainers learn alike."""

    resume: str = knob("", "a .pt checkpoint of this trainer to continue from: its network, optimizer and step "
                           "count carry on (--net is taken from it); a MaskablePPO .zip resumes with --algo sb3")
    init: str = knob("none", "network to start from, its weights and shapes with a fresh optimizer: none (a fresh "
                             "--net network), default (ppo:default's network), az (az:default's), or a .pt "
                             "checkpoint of any trainer or a MaskablePPO .zip")
    vf_coef: float = knob(0.5, "weight of the value loss")
    max_grad_norm: float = knob(0.5, "clip the gradient's global norm to this")
    norm_adv: bool = knob(True, "normalise the advantages of each minibatch")
    anneal_lr: bool = knob(False, "decay the learning rate linearly to 0 at --steps")
    target_kl: float = knob(0.0, "stop an update's epochs once the approximate KL passes this (0: never)")
    bf16: bool = knob(False, "experimental: the learner's matrix products in bfloat16 (CPUs with AVX512-BF16 or "
                             "AMX run the update about twice as fast; the weights, losses and optimizer stay float32)")


def validate_args(args: Args) -> None:
    """One-line ``ValueError`` naming the first bad setting."""
    validate(args)
    if args.vf_coef < 0 or args.max_grad_norm <= 0 or args.target_kl < 0:
        raise ValueError("--vf-coef and --target-kl must be >= 0, --max-grad-norm positive")
    if args.resume and not is_checkpoint(Path(args.resume)):
        raise ValueError(f"--resume: {args.resume!r} is not a .pt checkpoint of this trainer "
                         "(a MaskablePPO .zip resumes with --algo sb3)")
    if init_model(args.init, args.players) is not None and args.resume:
        raise ValueError("--resume continues a run and --init starts one from a network: give one of them")


# --- the masked categorical -----------------------------------------------------------------------
def sample_masked(logits: torch.Tensor, masks: torch.Tensor, generator: torch.Generator
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """One action per row from the categorical over the legal actions (``masks`` True), and its log-prob.
    An illegal action's probability is exactly 0 after the mask, so it is never drawn."""
    import torch

    log_probs = torch.log_softmax(masked_logits(logits, masks), dim=1)
    actions = torch.multinomial(log_probs.exp(), 1, generator=generator)
    return actions.squeeze(1), log_probs.gather(1, actions).squeeze(1)


# --- the opponent pool ----------------------------------------------------------------------------
class SnapshotPool:
    """Frozen copies of the learner's policy network. At each rollout's start one is drawn to play every
    ``self`` game; as the env's external hook it decides all waiting games in one forward pass."""

    def __init__(self, size: int, rng: np.random.Generator, generator: torch.Generator) -> None:
        self.size, self.rng, self.generator = size, rng, generator
        self.snapshots: list[torch.nn.Module] = []
        self.active: torch.nn.Module | None = None
        self.seconds = 0.0  # time in the snapshots' forward passes (part of the env's time)

    def add(self, pi: torch.nn.Module) -> None:
        frozen = copy.deepcopy(pi).eval().requires_grad_(False)
        self.snapshots = (self.snapshots + [frozen])[-self.size:]

    def pick(self) -> None:
        self.active = self.snapshots[self.rng.integers(len(self.snapshots))]

    def __call__(self, observations: np.ndarray, masks: np.ndarray, envs: np.ndarray) -> np.ndarray:
        import torch

        assert self.active is not None, "pick() a snapshot first"
        start = time.perf_counter()
        with torch.inference_mode():
            logits = self.active(torch.from_numpy(observations))
            actions, _ = sample_masked(logits, torch.from_numpy(masks), self.generator)
        self.seconds += time.perf_counter() - start
        return actions.numpy()


# --- the loop -------------------------------------------------------------------------------------
def train(args: Args) -> Path:
    """Train; returns the path of the final model (``<out>/final.pt``). ``<out>/timing.json`` gets the
    steps trained, the seconds taken and where they went (env, policy in the rollouts, updates, evaluations)."""
    validate_args(args)
    import torch  # the [train] extra; a missing one is named in one line by the command

    checkpoint = resume_checkpoint(args.resume, "ppo", args.players)
    update_threads = hold_threads(torch, args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(args), indent=2))
    rng = np.random.default_rng(args.seed)
    generator = torch.Generator().manual_seed(args.seed)  # the learner's and the snapshots' action draws
    torch.manual_seed(args.seed)  # the network's initialisation
    mix = parse_mix(args.mix)

    # The network (policy and value MLPs) and its optimizer: fresh, from a checkpoint, or from a saved network.
    hidden = value_hidden = hidden_layers(args.net)
    step, start_state = 0, None
    if checkpoint is not None:
        hidden, value_hidden = network_widths(checkpoint["meta"])
        step, start_state = int(checkpoint["step"]), checkpoint["model"]
    elif (model := init_model(args.init, args.players)) is not None:
        hidden, value_hidden, start_state = warm_start(model, args.players)
    meta = {**model_meta(args.players), "net": hidden, "value_net": value_hidden, "num_actions": NUM_ACTIONS}
    obs_size = int(meta["observation_size"])
    net = build_network(obs_size, hidden, NUM_ACTIONS, value_hidden)
    pi, vf = net["pi"], net["vf"]
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr, eps=1e-5)  # SB3's PPO uses eps 1e-5 as well
    if start_state is not None:
        net.load_state_dict(start_state)
    if checkpoint is not None:
        if checkpoint["optimizer"]:
            load_optimizer(optimizer, checkpoint["optimizer"], lr=args.lr)
        if "numpy" in checkpoint["rng"]:  # the resumed run draws on where the saved one stopped
            rng.bit_generator.state = checkpoint["rng"]["numpy"]
            generator.set_state(checkpoint["rng"]["generator"])

    # The games. One numba thread: torch holds a core during the updates, and numba threads waiting on a
    # busy core stall. copy=False: the env hands out its own buffers, which the rollout copies from.
    pool = SnapshotPool(args.pool_size, rng, generator)
    pool.add(pi)
    pool.pick()
    env = SplendorVectorEnv(num_envs=args.num_envs, opponent=pool, num_players=args.players, reward=args.reward,
                            parallel=False, copy=False)
    env.set_opponents(opponent_kinds(mix, args.num_envs, rng), now=True)
    env_obs, env_info = env.reset(seed=args.seed + step)  # a resumed run deals other games
    next_obs = torch.from_numpy(env_obs)  # views of the env's buffers: each step rewrites them in place
    next_mask = torch.from_numpy(env_info["action_mask"])
    pool.seconds = 0.0  # the deal's first moves are not part of the timed run

    # The rollout buffers, preallocated: [n_steps, num_envs, ...].
    T, N = args.n_steps, args.num_envs
    obs_buf = torch.zeros((T, N, obs_size))
    mask_buf = torch.zeros((T, N, NUM_ACTIONS), dtype=torch.bool)
    action_buf = torch.zeros((T, N), dtype=torch.long)
    logp_buf = torch.zeros((T, N))
    reward_buf = torch.zeros((T, N))
    done_buf = torch.zeros((T, N))  # 1 where the step ended the game: the next observation is a new game's
    value_buf = torch.zeros((T, N))

    # Bookkeeping: targets, timers, logs.
    rollout = T * N
    target = rollout_target(args.steps, step, rollout)
    if target > step and target != args.steps and args.progress:
        print(f"--steps {args.steps:,} rounded up to {target:,} (whole rollouts of {N} games x {T} steps = "
              f"{rollout:,})", file=sys.stderr)
    next_eval = (step // args.eval_every + 1) * args.eval_every  # a resumed run carries on at the next multiple
    next_checkpoint = (step // args.checkpoint_every + 1) * args.checkpoint_every
    bar = Progress(target, step, label="steps") if args.progress else None
    evals = EvalLog(args, out, bar)
    writer = summary_writer(out / "logs")
    first_step, updates = step, 0
    seconds = dict.fromkeys(("env", "policy", "update", "eval"), 0.0)
    start = time.perf_counter()

    while step < target:
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.lr * max(1.0 - step / args.steps, 0.0)
        pool.pick()  # this rollout's snapshot for the ``self`` games
        env.set_opponents(opponent_kinds(mix, N, rng))  # taken by each game when it is next dealt

        # 1. Rollout: one forward pass for all games per step, actions sampled from the masked policy.
        outcomes: list[float] = []
        for t in range(T):
            tick = time.perf_counter()
            obs_buf[t].copy_(next_obs)
            mask_buf[t].copy_(next_mask)
            with torch.inference_mode():
                with torch.autocast("cpu", torch.bfloat16, enabled=args.bf16):  # as in the update: same log-probs
                    logits, values = pi(obs_buf[t]), vf(obs_buf[t])
                actions, logp = sample_masked(logits.float(), mask_buf[t], generator)
                value_buf[t] = values.float().squeeze(1)
            action_buf[t] = actions
            logp_buf[t] = logp
            tock = time.perf_counter()
            _, reward, terminated, truncated, info = env.step(actions.numpy())
            seconds["env"] += time.perf_counter() - tock
            seconds["policy"] += tock - tick
            if truncated.any():  # a game cut by the ply cap: bootstrap from the value of where it stopped
                cut = np.flatnonzero(truncated)
                with torch.inference_mode():
                    last_obs = torch.from_numpy(np.stack(info["final_obs"][cut]).astype(np.float32))
                    reward[cut] += args.gamma * vf(last_obs).squeeze(1).double().numpy()
            reward_buf[t] = torch.from_numpy(reward)
            done_buf[t] = torch.from_numpy(terminated | truncated)
            if "outcome" in info:
                outcomes += info["outcome"][info["_outcome"]].tolist()
        step += rollout

        # 2. Advantages: GAE(lambda) backwards through the rollout; a finished game cuts the bootstrap.
        tick = time.perf_counter()
        with torch.no_grad():
            next_value = vf(next_obs).squeeze(1)
            advantages = torch.zeros((T, N))
            last = torch.zeros(N)
            for t in reversed(range(T)):
                following = next_value if t == T - 1 else value_buf[t + 1]
                alive = 1.0 - done_buf[t]
                delta = reward_buf[t] + args.gamma * following * alive - value_buf[t]
                last = delta + args.gamma * args.gae_lambda * alive * last
                advantages[t] = last
            returns = advantages + value_buf

        # 3. Update: clipped PPO over shuffled minibatches, for ``epochs`` passes.
        b_obs, b_mask = obs_buf.reshape(rollout, obs_size), mask_buf.reshape(rollout, NUM_ACTIONS)
        b_actions, b_logp = action_buf.reshape(rollout), logp_buf.reshape(rollout)
        b_adv, b_returns = advantages.reshape(rollout), returns.reshape(rollout)
        stats: dict[str, float] = {}
        update_threads = hold_threads(torch, args.threads)
        for _epoch in range(args.epochs):
            order = torch.randperm(rollout, generator=generator)
            for first in range(0, rollout, args.batch_size):
                idx = order[first:first + args.batch_size]
                with torch.autocast("cpu", torch.bfloat16, enabled=args.bf16):
                    logits, values = pi(b_obs[idx]), vf(b_obs[idx])
                log_probs = torch.log_softmax(masked_logits(logits.float(), b_mask[idx]), dim=1)
                new_logp = log_probs.gather(1, b_actions[idx, None]).squeeze(1)
                log_ratio = new_logp - b_logp[idx]
                ratio = log_ratio.exp()
                adv = b_adv[idx]
                if args.norm_adv and len(idx) > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
                value_loss = ((values.float().squeeze(1) - b_returns[idx]) ** 2).mean()  # SB3's: MSE, no 1/2
                entropy = -(log_probs.exp() * log_probs).sum(dim=1).mean()  # illegal moves add 0 * -1e8 = 0
                loss = policy_loss - args.ent_coef * entropy + args.vf_coef * value_loss
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                optimizer.step()
                with torch.no_grad():  # the last minibatch's figures, for TensorBoard and --target-kl
                    stats = {"loss/policy": policy_loss.item(), "loss/value": value_loss.item(),
                             "loss/entropy": entropy.item(), "loss/approx_kl": ((ratio - 1) - log_ratio).mean().item(),
                             "loss/clip_fraction": ((ratio - 1).abs() > args.clip).float().mean().item()}
            if args.target_kl and stats["loss/approx_kl"] > args.target_kl:
                break
        seconds["update"] += time.perf_counter() - tick
        updates += 1
        if updates % args.snapshot_every == 0:
            pool.add(pi)

        # 4. Evaluations, checkpoints, logs and the progress line.
        if step >= next_eval:
            next_eval += args.eval_every
            seconds["eval"] += _evaluate(evals, pi, step, writer)
        if step >= next_checkpoint:
            next_checkpoint += args.checkpoint_every
            _save(out / "checkpoints" / f"step_{step}.pt", net, meta, optimizer, step, args, rng, generator)
        elapsed = time.perf_counter() - start
        if writer is not None:
            for key, value in stats.items():
                writer.add_scalar(key, value, step)
            writer.add_scalar("time/steps_per_second", (step - first_step) / elapsed, step)
            writer.add_scalar("time/env_share", seconds["env"] / elapsed, step)
            if outcomes:
                writer.add_scalar("rollout/outcome_mean", float(np.mean(outcomes)), step)
        if bar is not None:
            bar.update(step, f"{(step - first_step) / elapsed:,.0f} steps/s, env {seconds['env'] / elapsed:.0%}")

    total = time.perf_counter() - start
    (out / "timing.json").write_text(json.dumps({  # throughput of this run, periodic evaluations included
        "steps": step - first_step, "seconds": total, "env_seconds": seconds["env"],
        "opponent_seconds": pool.seconds, "policy_seconds": seconds["policy"], "update_seconds": seconds["update"],
        "eval_seconds": seconds["eval"], "threads": args.threads, "update_threads": update_threads}))
    if evals.evaluated_at != step:
        _evaluate(evals, pi, step, writer)
    final = _save(out / "final.pt", net, meta, optimizer, step, args, rng, generator)
    if bar is not None:
        bar.close()
    evals.close()
    if writer is not None:
        writer.close()
    return final


# --- helpers of the loop ----------------------------------------------------------------------------
def _evaluate(evals: EvalLog, pi: torch.nn.Module, step: int, writer: Any) -> float:
    """Evaluate the deterministic policy against every eval opponent; returns the seconds it took."""
    tick = time.perf_counter()
    for spec, rate in evals.run(network_act(pi), step).items():
        if writer is not None:
            writer.add_scalar(f"eval/{spec}_win_rate", rate, step)
    return time.perf_counter() - tick


def _save(path: Path, net: torch.nn.Module, meta: dict[str, Any], optimizer: torch.optim.Optimizer, step: int,
          args: Args, rng: np.random.Generator, generator: torch.Generator) -> Path:
    import torch

    state = {"numpy": rng.bit_generator.state, "generator": generator.get_state(), "torch": torch.get_rng_state()}
    return save_checkpoint(path, net, meta, optimizer, step, dataclasses.asdict(args), state)
