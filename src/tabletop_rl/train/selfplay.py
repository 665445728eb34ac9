"""What both Splendor PPO trainers share: the knobs (``TrainConfig``) and their flags, the opponent mix,
the evaluation against fixed opponents and its results file, and the metadata a model carries.

The default trainer (``splendor_cleanrl_ppo``, ``tabletop train splendor``) and the SB3 one
(``splendor_ppo``, ``--algo sb3``) import these, so the two cannot drift apart in what a flag means.

>>> parse_mix("random=1,greedy=1,self=2").tolist()
[0.25, 0.25, 0.5]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tabletop_rl.agents import make_policy, parse_spec, split_specs
from tabletop_rl.agents.ppo import check_meta, load_checkpoint, masked_logits, network_state
from tabletop_rl.agents.search.splendor_puct import Net, net_from_state_dict
from tabletop_rl.agents.splendor import default_az_model_path, default_ppo_model_path
from tabletop_rl.core.progress import Progress
from tabletop_rl.core.stats import wilson_interval
from tabletop_rl.envs.splendor_vector import EXTERNAL, GREEDY, RANDOM, SplendorVectorEnv
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.observe import OBSERVATION_VERSION, observation_size

__all__ = ["EvalLog", "EvalSettings", "SpecHook", "TrainConfig", "add_arguments", "config_from_args",
           "eval_specs", "evaluate", "hidden_layers", "hold_threads", "init_model", "knob", "load_optimizer",
           "model_meta", "network_act", "numpy_net", "one_cycle", "opponent_kinds", "parse_mix", "rollout_target",
           "summary_writer", "validate", "warm_start"]


def knob(default: Any, help: str) -> Any:
    """A config field with its ``--help`` text (``add_arguments`` makes the flag)."""
    return field(default=default, metadata={"help": help})


@dataclass
class TrainConfig:
    """Every knob of ``tabletop train splendor`` that both trainers have; each field is the flag of the same name."""

    steps: int = knob(2_000_000, "learner steps to train for (env-steps of the learning seat), rounded up to whole "
                                 "rollouts of num_envs x n_steps; the progress line shows the rounded target")
    out: str = knob("runs/ppo", "folder for checkpoints, eval.csv, TensorBoard logs and config.json")
    players: int = knob(2, "players per game (2-4)")
    num_envs: int = knob(256, "games stepped together")
    n_steps: int = knob(64, "rollout length per game between updates")
    batch_size: int = knob(4096, "minibatch size of the PPO update")
    epochs: int = knob(4, "PPO epochs per update")
    lr: float = knob(3e-4, "learning rate")
    gamma: float = knob(0.995, "discount factor")
    gae_lambda: float = knob(0.95, "GAE lambda")
    ent_coef: float = knob(0.01, "entropy bonus")
    clip: float = knob(0.2, "PPO clip range")
    net: str = knob("256,256", "hidden layer sizes of the policy and value networks")
    reward: str = knob("dense", "dense: + own points gained / 15 each step, plus the end reward; sparse: end only")
    mix: str = knob("random=0.1,greedy=0.5,self=0.4", "opponent kinds drawn for each new game")
    snapshot_every: int = knob(10, "updates between frozen snapshots of the learner added to the pool")
    pool_size: int = knob(20, "snapshots kept in the pool (the oldest are dropped)")
    eval_every: int = knob(250_000, "learner steps between evaluations")
    eval_games: int = knob(400, "games per evaluation opponent")
    eval_opponents: str = knob("random,greedy", "comma-separated policy specs to evaluate against")
    checkpoint_every: int = knob(500_000, "learner steps between checkpoints")
    seed: int = knob(0, "seed of the run (the same seed repeats a run on the same machine)")
    threads: int = knob(1, "torch threads (1 is fastest on small, busy machines)")
    resume: str = knob("", "a checkpoint .zip to continue from (its step count continues)")
    progress: bool = knob(True, "print a progress line with steps/s and the latest evaluation")


def add_arguments(parser: Any, config: type = TrainConfig, skip: Collection[str] = (), unset: bool = False) -> None:
    """One ``--flag`` per field of ``config`` (a dataclass such as ``TrainConfig``), with its default and help;
    none for the fields in ``skip``. ``unset=True`` leaves a flag not given off the parsed namespace (its help
    still shows the default), so a command serving several configs can tell which flags were given."""
    for f in dataclasses.fields(config):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        default = argparse.SUPPRESS if unset else f.default
        if f.type in ("bool", bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=f.metadata["help"])
        else:
            kind = {"int": int, "float": float, "str": str}[str(f.type)]
            parser.add_argument(flag, type=kind, default=default, metavar=f.name.upper(),
                                help=f.metadata["help"] + (f" (default {f.default})" if f.default != "" else ""))


def config_from_args(args: Any, config: type = TrainConfig) -> Any:
    """The ``config`` dataclass built from parsed arguments (the attributes of its fields' names)."""
    return config(**{f.name: getattr(args, f.name) for f in dataclasses.fields(config)})


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
    """One-line ``ValueError`` naming the first bad setting among ``TrainConfig``'s fields."""
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
    hidden_layers(cfg.net)
    parse_mix(cfg.mix)
    for spec in eval_specs(cfg.eval_opponents):
        if spec not in ("random", "greedy"):
            parse_spec(spec, "splendor")
    if cfg.resume and not Path(cfg.resume).is_file():
        raise ValueError(f"--resume: no checkpoint at {cfg.resume!r}")


def hidden_layers(text: str, flag: str = "--net") -> list[int]:
    """``"256,256"`` -> ``[256, 256]``; a one-line ``ValueError`` naming ``flag`` for anything else."""
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) <= 0:
        raise ValueError(f"{flag} must be comma-separated positive layer sizes such as 256,256, got {text!r}")
    return sizes


def eval_specs(text: str) -> list[str]:
    """The policy specs of ``--eval-opponents``, each with its own options (``split_specs``); none for ""."""
    return split_specs(text) if text.strip() else []


def model_meta(players: int) -> dict[str, Any]:
    """What a Splendor model was trained on; ``PPOPolicy`` refuses a model whose metadata differs."""
    return {"game": "splendor", "num_players": players, "observation_version": OBSERVATION_VERSION,
            "observation_size": observation_size(players)}


def resume_checkpoint(path: str, algo: str, players: int) -> dict[str, Any] | None:
    """The ``.pt`` checkpoint ``--resume`` names (``None`` for ""), refused in one line when another trainer
    wrote it (its ``step`` and optimizer mean something else there) or its metadata differs."""
    if not path:
        return None
    checkpoint = load_checkpoint(path)
    written_by = checkpoint["meta"].get("algo", "ppo")
    if written_by != algo:
        raise ValueError(f"--resume: {path!r} is a checkpoint of --algo {written_by}; resume it with "
                         f"--algo {written_by}, or start from its network with --init")
    check_meta(checkpoint["meta"], model_meta(players), path)
    return checkpoint


def load_optimizer(optimizer: Any, state: Mapping[str, Any], **settings: float) -> None:
    """Load a checkpoint's optimizer ``state`` (Adam's moments and step counts) under this run's ``settings``
    (``lr=...``, ``weight_decay=...``): torch's ``load_state_dict`` also brings back the saved run's settings,
    which would make a resumed run's ``--lr`` do nothing."""
    optimizer.load_state_dict(state)
    for group in optimizer.param_groups:
        group.update(settings)


def hold_threads(torch: Any, threads: int) -> int:
    """Set torch's thread count back to ``threads`` if something changed it; return the count now.

    numba compiling its parallel kernels (a first run after an install or an edit, with an empty cache) resets
    the process's OpenMP thread count to numba's, and torch, which shares that OpenMP runtime, follows: a run
    asked for ``--threads 1`` then updated on two threads, and two such runs on a 2-core machine stalled each
    other about six times over. The trainers call this before each update."""
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return int(torch.get_num_threads())


def one_cycle(torch: Any, optimizer: Any, max_lr: float, steps: int, warm_up: float = 0.3) -> Any:
    """torch's ``OneCycleLR`` over ``steps`` minibatch steps, ``warm_up`` of them rising to ``max_lr``. Where
    ``warm_up`` x ``steps`` is exactly 1 (a tenth of 10 steps) torch's warm-up lasts 0 steps and its first step
    divides by that zero; the warm-up is then a shade shorter: under one step, as torch makes it for fewer steps."""
    share = warm_up * 0.999 if warm_up * steps == 1 else warm_up
    return torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=max_lr, total_steps=steps, pct_start=share)


def rollout_target(steps: int, done: int, rollout: int) -> int:
    """The step count a run that has ``done`` steps stops at: ``steps`` rounded up to whole rollouts."""
    return done + -(-max(steps - done, 0) // rollout) * rollout


def opponent_kinds(mix: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Opponent kinds (the env's RANDOM, GREEDY, EXTERNAL) for ``n`` games, drawn from ``mix``."""
    return rng.choice(np.array([RANDOM, GREEDY, EXTERNAL]), size=n, p=mix)


# --- evaluation ----------------------------------------------------------------------------------
#: A deterministic learner for evaluation: ``(observations[n, obs], masks[n, 72]) -> actions[n]``.
Act = Callable[[np.ndarray, np.ndarray], np.ndarray]


def evaluate(act: Act, opponent: str, games: int, players: int, seed: int) -> dict[str, float]:
    """Play ``games`` games (one per env, learner seat drawn per game) with ``act`` against ``opponent``."""
    hook = None if opponent in ("random", "greedy") else SpecHook(opponent, seed)
    env = SplendorVectorEnv(num_envs=games, opponent=hook or opponent, num_players=players, parallel=False)
    if hook is not None:
        hook.env = env
    obs, info = env.reset(seed=seed)
    outcome = np.full(games, np.nan)
    while np.isnan(outcome).any():
        obs, _r, _t, _u, info = env.step(act(obs, info["action_mask"]))
        if "outcome" in info:
            fresh = info["_outcome"] & np.isnan(outcome)
            outcome[fresh] = info["outcome"][fresh]
    wins, draws = float((outcome > 0).sum()), float((outcome == 0).sum())
    low, high = wilson_interval(wins + draws / 2, games)
    return {"win_rate": (wins + draws / 2) / games, "low": low, "high": high, "wins": wins, "draws": draws}


class SpecHook:
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
            actions[k] = self.policy.act(observations[k], masks[k], game.policy_info(game.current_player))
        return actions


class EvalSettings(Protocol):
    """What ``EvalLog`` reads from a trainer's config (``TrainConfig`` and the search trainer's ``Args``)."""

    players: int
    eval_games: int
    eval_opponents: str


class EvalLog:
    """Evaluates against every ``--eval-opponents`` spec and appends the results to ``OUT/eval.csv``
    (``step, opponent, games, wins, draws, win_rate, low, high``); ``latest`` is the last evaluation's text,
    shown as a line of its own above ``bar``, the run's progress line, when there is one, at the ``unit`` (what
    ``step`` counts)."""

    def __init__(self, cfg: EvalSettings, out: Path, bar: Progress | None = None, unit: str = "step") -> None:
        self.cfg, self.bar, self.unit = cfg, bar, unit
        self.latest = ""
        self.evaluated_at = -1
        self._file = (out / "eval.csv").open("a", newline="")
        self._writer = csv.writer(self._file)

    def run(self, act: Act, step: int, extra: Mapping[str, str] | None = None) -> dict[str, float]:
        """Evaluate now against the ``--eval-opponents`` and the ``extra`` specs (``{label: spec}``, written
        under their labels); returns ``{label: win rate}`` (for TensorBoard)."""
        rates, shown = {}, []
        opponents = {**{spec: spec for spec in eval_specs(self.cfg.eval_opponents)}, **(extra or {})}
        for k, (label, spec) in enumerate(opponents.items()):
            r = evaluate(act, spec, self.cfg.eval_games, self.cfg.players, seed=10_000 + k)
            rates[label] = r["win_rate"]
            shown.append(self.record(step, label, self.cfg.eval_games, r))
        self._file.flush()
        self.latest = ", ".join(shown)
        self.evaluated_at = step
        if self.bar is not None:
            self.bar.note(f"eval at {self.unit} {step:,}: {self.latest}")
        return rates

    def record(self, step: int, label: str, games: int, r: dict[str, float]) -> str:
        """Append one result (``evaluate``'s dict) to eval.csv; returns its text for the progress line."""
        self._writer.writerow([step, label, games, r["wins"], r["draws"],
                               f"{r['win_rate']:.4f}", f"{r['low']:.4f}", f"{r['high']:.4f}"])
        self._file.flush()
        return f"{label} {r['win_rate']:.0%} [{r['low']:.0%}, {r['high']:.0%}]"

    def close(self) -> None:
        self._file.close()


# --- torch helpers shared by the loops ------------------------------------------------------------
def network_act(pi: Any) -> Act:
    """A torch policy network as evaluation's ``act``: the most probable legal action of each observation."""
    import torch  # the [train] extra

    def act(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            logits = masked_logits(pi(torch.from_numpy(observations)), torch.from_numpy(masks))
            return logits.argmax(dim=1).numpy()

    return act


def numpy_net(net: Any) -> Net:
    """A torch network of ``build_network`` as the search's numpy ``Net`` (a copy: training on does not move it)."""
    return net_from_state_dict({k: v.detach().numpy().copy() for k, v in net.state_dict().items()})


#: ``--init`` values that name a shipped 2-player network instead of a file (``none`` starts a fresh network).
_SHIPPED_INITS: dict[str, Callable[[], Path]] = {"default": default_ppo_model_path, "az": default_az_model_path}


def init_model(init: str, players: int) -> Path | None:
    """The model ``--init`` names: None for ``none`` (a fresh network), ppo:default's network for ``default``,
    az:default's for ``az``, else the file given; refused in one line when it names nothing it can load.

    >>> init_model("none", 2) is None, init_model("az", 2).name
    (True, 'az_splendor_2p.pt')
    >>> init_model("default", 3)
    Traceback (most recent call last):
    ValueError: --init default is a 2-player network; with --players 3 start from --init none or a model of ...
    """
    if init in ("", "none"):
        return None
    if init in _SHIPPED_INITS:
        if players != 2:
            raise ValueError(f"--init {init} is a 2-player network; with --players {players} start from --init none "
                             "or a model of that player count")
        return _SHIPPED_INITS[init]()
    if not Path(init).is_file():
        raise ValueError(f"--init: no model at {init!r}")
    return Path(init)


def warm_start(path: Path, players: int) -> tuple[list[int], list[int], dict[str, Any]]:
    """A saved network to start a run from (``--init``): the hidden layer sizes of its policy and of its value
    network (each network's layer widths but its outputs') and its weights as tensors, for ``build_network`` and
    ``load_state_dict``. Refused in one line when it was trained for another player count or observation layout."""
    import torch  # the [train] extra

    meta, weights = network_state(path)
    check_meta(meta, model_meta(players), path)

    def widths(prefix: str) -> list[int]:
        layers = sorted((k for k in weights if k.startswith(prefix) and k.endswith(".weight")),
                        key=lambda k: int(k.split(".")[1]))
        return [int(weights[k].shape[0]) for k in layers][:-1]

    return widths("pi."), widths("vf."), {k: torch.from_numpy(np.asarray(v, np.float32)) for k, v in weights.items()}


def summary_writer(folder: Path) -> Any:
    """A TensorBoard writer for ``folder``, or None when tensorboard is not installed (it is in [train])."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(folder))
