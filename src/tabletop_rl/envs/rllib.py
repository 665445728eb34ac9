"""RLlib adapter (needs the ``[ray]`` extra): every game as an RLlib ``MultiAgentEnv`` for the new API stack, a
PPO module that obeys the action mask, and a self-play config joining the two (docs/rllib.md).

``TabletopMultiAgentEnv``: agents ``player_0 .. player_{n-1}``, each observing ``{"observations": float32[...],
"action_mask": int8[...]}`` from its own seat (the keys RLlib's action-masking modules read). In the turn-based
games (Splendor, Klaverjas) only the agent to act gets an observation, and at the end every agent gets its
last one with its end reward; in Space Conquest both agents observe and act every turn.
``MaskedPPOTorchModule``: PPO's default torch module whose networks see ``observations`` and whose
logits of masked actions are the float minimum, so they are never sampled. ``selfplay_config``: a
``PPOConfig`` in which every seat plays the one shared module.

>>> env = TabletopMultiAgentEnv({"game": "splendor"})
>>> obs, infos = env.reset(seed=1)
>>> list(obs), sorted(obs["player_0"]), int(obs["player_0"]["action_mask"].sum())
(['player_0'], ['action_mask', 'observations'], 30)
>>> obs, rewards, terminateds, truncateds, infos = env.step({"player_0": "take:white,blue,green"})
>>> list(obs), terminateds
(['player_1'], {'__all__': False})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from tabletop_rl.core.game import IllegalActionError
from tabletop_rl.core.text import quote
from tabletop_rl.envs.episode import GAME_DEFAULT, Episodes, check_choice, reward_mode
from tabletop_rl.envs.space_conquest_parallel import space_conquest_env
from tabletop_rl.games import GAMES

__all__ = ["SHARED_MODULE", "MaskedPPOTorchModule", "TabletopMultiAgentEnv", "selfplay_config"]

#: The module id every seat maps to in ``selfplay_config``.
SHARED_MODULE = "shared"
_OBS, _MASK = "observations", "action_mask"
_ILLEGAL_MODES = ("raise", "penalize")
_ILLEGAL_PENALTY = -1.0
#: Space Conquest's settings (its parallel env's); the turn-based games take the AEC env's.
_SPACE_CONQUEST_KEYS = frozenset({"max_turns", "loss_model"})


class _TurnBased:
    """Splendor or Klaverjas played straight on the game contract, one agent to act per step."""

    def __init__(self, game: str, num_players: int = 2, max_plies: int | None = GAME_DEFAULT, reward: str = "win",
                 illegal: str = "raise", **options: Any) -> None:
        self._episodes = Episodes.of(game, num_players, max_plies, options)
        game_class = self._episodes.game_class
        self._mode = reward_mode(reward, game_class.reward_modes)
        self._scale = game_class.score_scale if self._mode == "score" else None
        check_choice(illegal, "illegal", _ILLEGAL_MODES)
        self.illegal = illegal
        self.agents = [f"player_{s}" for s in range(self._episodes.num_seats)]
        self.observation_space = game_class.observation_space(num_players)
        self.action_space: spaces.Space = spaces.Discrete(game_class.num_actions)
        self.num_actions = game_class.num_actions
        self.game: Any = None

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> dict[str, Any]:
        self.game = self._episodes.deal(seed, self.game, options)
        return self._observe([self.game.current_player])

    def step(self, actions: Mapping[str, Any]) -> tuple[dict, dict, bool, bool, dict]:
        """Play the action of the agent to act; ``(observations, rewards, over, truncated, infos)``."""
        game = self.game
        seat = game.current_player
        action = _action_of(actions, self.agents[seat])
        before = self._score(seat)
        try:
            game.step(action)
        except IllegalActionError as e:
            if self.illegal == "raise":
                raise IllegalActionError(f"{e.reason} (a policy must choose from the observation's action_mask; "
                                         "see docs/rllib.md)", game=e.game, seat=seat) from None
            return self._penalize(seat, action)
        rewards = {self.agents[seat]: self._score(seat) - before}
        if not game.is_over:
            return self._observe([game.current_player]), rewards, False, False, {}
        for agent, end in zip(self.agents, game.end_rewards(self._mode), strict=True):
            rewards[agent] = rewards.get(agent, 0.0) + end
        return self._observe(range(len(self.agents))), rewards, True, game.is_truncated, {}

    def _score(self, seat: int) -> float:
        """``seat``'s score in reward units (``reward="score"``; always 0 for ``"win"``)."""
        return 0.0 if self._scale is None else self.game.scores[self.game.player_of(seat)] / self._scale

    def _penalize(self, seat: int, action: Any) -> tuple[dict, dict, bool, bool, dict]:
        """``illegal="penalize"``: the episode ends, -1 for the mover and 0 for the others, the move in infos."""
        rewards = dict.fromkeys(self.agents, 0.0)
        rewards[self.agents[seat]] = _ILLEGAL_PENALTY
        infos = {self.agents[seat]: {"illegal_action": action}}
        return self._observe(range(len(self.agents))), rewards, True, False, infos

    def _observe(self, seats: Any) -> dict[str, Any]:
        return {self.agents[s]: {_OBS: self.game.observe(s), _MASK: self.game.seat_mask(s, np.int8)} for s in seats}


class _Simultaneous:
    """Space Conquest through its parallel env: both agents observe and give orders every turn (orders that the
    rules cannot carry out are skipped, as in that env)."""

    def __init__(self, **settings: Any) -> None:
        unknown = sorted(set(settings) - _SPACE_CONQUEST_KEYS)
        if unknown:
            raise ValueError(f"space_conquest has no setting {unknown[0]!r} (it has "
                             f"{', '.join(sorted(_SPACE_CONQUEST_KEYS))})")
        self._env = space_conquest_env(**settings)
        self.agents = list(self._env.possible_agents)
        first = self.agents[0]
        self.observation_space = self._env.observation_space(first)["observation"]
        nvec = self._env.action_space(first).nvec
        self.action_space = spaces.MultiDiscrete(nvec)  # the plain space: RLlib's catalog builds its head from it
        self.num_actions = int(nvec.sum())  # the mask: one entry per choice of every dimension, in order

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> dict[str, Any]:
        observations, _ = self._env.reset(seed=seed, options=options)
        return _renamed(observations)

    def step(self, actions: Mapping[str, Any]) -> tuple[dict, dict, bool, bool, dict]:
        observations, rewards, terminations, truncations, infos = self._env.step(dict(actions))
        truncated = all(truncations.values()) and not any(terminations.values())
        return _renamed(observations), rewards, all(terminations.values()) or truncated, truncated, infos


def _renamed(observations: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, Any]:
    return {agent: {_OBS: o["observation"], _MASK: o["action_mask"]} for agent, o in observations.items()}


def _action_of(actions: Any, agent: str) -> Any:
    """The action of ``agent``, the only agent to act; ``ValueError`` for anything else."""
    if not isinstance(actions, Mapping) or set(actions) != {agent}:
        shown = sorted(map(str, actions)) if isinstance(actions, Mapping) else quote(actions)
        raise ValueError(f"step() takes {{{agent!r}: action}} ({agent} is to act), got keys {shown}")
    return actions[agent]


class TabletopMultiAgentEnv(MultiAgentEnv):
    """Any game of the package as an RLlib ``MultiAgentEnv`` (module docstring).

    ``config`` (RLlib's ``env_config``): ``game`` (``"splendor"``, the default, ``"klaverjas"`` or
    ``"space_conquest"``); for the turn-based games ``num_players``, ``max_plies``, ``reward`` (``"win"`` or
    ``"score"``, as in the AEC env), ``illegal`` (``"raise"``, the default: ``IllegalActionError`` and nothing
    played; ``"penalize"``: -1 for the mover, the episode ends, ``infos[agent]["illegal_action"]``) and the
    game's own options (Klaverjas's match options); for Space Conquest ``max_turns`` and ``loss_model``.
    ``reset(seed=None)`` deals the next game from the previous game's own random stream, as every env here.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        settings = dict(config or {})
        game = settings.pop("game", "splendor")
        check_choice(game, "game", tuple(GAMES))
        self._core = _Simultaneous(**settings) if game == "space_conquest" else _TurnBased(game, **settings)
        self.game_name = game
        self.possible_agents = list(self._core.agents)
        # RLlib types agent ids as Hashable | str; ours are str (the ignores below are for that)
        self.agents: list[str] = []  # type: ignore[assignment]
        space = spaces.Dict({_OBS: self._core.observation_space,
                             _MASK: spaces.Box(0, 1, (self._core.num_actions,), np.int8)})
        self.observation_spaces: dict[str, spaces.Space] = dict.fromkeys(  # type: ignore[assignment]
            self.possible_agents, space)  # type: ignore[arg-type]
        self.action_spaces: dict[str, spaces.Space] = dict.fromkeys(  # type: ignore[assignment]
            self.possible_agents, self._core.action_space)  # type: ignore[arg-type]
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)

    def reset(self, *, seed: int | None = None,  # type: ignore[override]
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        observations = self._core.reset(seed, options)
        self.agents = self.possible_agents[:]  # type: ignore[assignment]
        return observations, {}

    # RLlib's step (a dict per agent) differs from gymnasium.Env's, which MultiAgentEnv subclasses
    def step(self, action_dict: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:  # type: ignore[override]
        if not self.agents:
            raise RuntimeError("the episode is over (or never began): call reset() before step()")
        observations, rewards, over, truncated, infos = self._core.step(action_dict)
        if over:
            self.agents = []
        ended = over and not truncated
        finished = observations if over else ()  # an agent is done only when the game is
        terminateds = {**dict.fromkeys(finished, ended), "__all__": ended}
        truncateds = {**dict.fromkeys(finished, truncated), "__all__": truncated}
        return observations, rewards, terminateds, truncateds, infos


class MaskedPPOTorchModule(DefaultPPOTorchRLModule):
    """PPO's default torch module for ``{"observations", "action_mask"}`` observations: the encoder, policy
    and value networks see ``observations``; a masked action's logit is the float minimum, in rollouts and in
    the loss alike, so it is never sampled and has no gradient. ``MultiDiscrete`` actions (Space Conquest)
    take the per-dimension masks concatenated, which lines up with the concatenated logits."""

    def __init__(self, *, observation_space: Any = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, spaces.Dict) or {_OBS, _MASK} - set(observation_space.spaces):
            raise ValueError(f"MaskedPPOTorchModule needs a Dict observation space with keys {_OBS!r} and "
                             f"{_MASK!r} (TabletopMultiAgentEnv's), got {quote(observation_space)}")
        super().__init__(observation_space=observation_space[_OBS], **kwargs)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inputs, mask = _split(batch)
        return _masked(super()._forward(inputs, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inputs, mask = _split(batch)
        return _masked(super()._forward_train(inputs, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        inputs, _ = _split(batch)
        return super().compute_values(inputs, embeddings)


def _split(batch: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """A copy of ``batch`` whose observations are the networks' input, and the mask (the batch is not changed:
    RLlib may read it again)."""
    obs = batch[Columns.OBS]
    return {**batch, Columns.OBS: obs[_OBS]}, obs[_MASK]


def _masked(outputs: dict[str, Any], mask: Any) -> dict[str, Any]:
    logits = outputs[Columns.ACTION_DIST_INPUTS]
    outputs[Columns.ACTION_DIST_INPUTS] = logits.masked_fill(mask == 0, torch.finfo(logits.dtype).min)
    return outputs


def _to_shared(agent_id: Any, episode: Any, **kwargs: Any) -> str:
    """Self-play: every seat plays the one shared module."""
    return SHARED_MODULE


def selfplay_config(game: str = "splendor", hidden: tuple[int, ...] = (256, 256), **env_config: Any) -> PPOConfig:
    """A ``PPOConfig`` training ``game`` by self-play: ``TabletopMultiAgentEnv`` (``env_config``: its settings),
    every seat mapped to the one ``MaskedPPOTorchModule`` (``hidden``: its layer sizes). Set runners, envs per
    runner and the PPO settings on the result as usual.

    RLlib's env pre-check is off: it steps each new env once with an unmasked random action, which is an
    illegal move more often than not (docs/rllib.md, "Illegal moves at ply 0").

    >>> config = selfplay_config("klaverjas")
    >>> sorted(config.policies), config.disable_env_checking
    (['shared'], True)
    """
    TabletopMultiAgentEnv({"game": game, **env_config})  # bad settings fail here, not in a remote env runner
    module = RLModuleSpec(module_class=MaskedPPOTorchModule, model_config={"fcnet_hiddens": list(hidden)})
    return (PPOConfig()
            .environment(TabletopMultiAgentEnv, env_config={"game": game, **env_config}, disable_env_checking=True)
            .multi_agent(policies={SHARED_MODULE}, policy_mapping_fn=_to_shared)
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED_MODULE: module})))
