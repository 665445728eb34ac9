"""stable-baselines3 adapter for SplendorVectorEnv (needs the ``[train]`` extra).

``SplendorVectorEnv.to_sb3()`` is the entry point: it imports this module when called, so the env
itself never needs stable-baselines3. This module does not import the env (no import circle): it only
uses the vector-env API (``num_envs``, the single spaces, ``reset``, ``step``, ``action_masks``, ``close``).

>>> from sb3_contrib import MaskablePPO                                # doctest: +SKIP
>>> model = MaskablePPO("MlpPolicy", SplendorVectorEnv(256).to_sb3())  # doctest: +SKIP
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

__all__ = ["SB3SplendorVecEnv"]


class SB3SplendorVecEnv(VecEnv):
    """SB3 ``VecEnv`` semantics over a SplendorVectorEnv: auto-reset in ``step_wait`` with the last
    observation in ``info["terminal_observation"]`` and the learner's end reward in ``info["outcome"]``,
    and ``env_method("action_masks")`` for MaskablePPO."""

    def __init__(self, env: Any) -> None:  # a SplendorVectorEnv
        self.env = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: np.ndarray | None = None
        self._seed: int | None = None
        self._empty: dict[str, Any] = {}
        self.seconds = 0.0  # time spent stepping the games (for the env's share of training time)

    def reset(self) -> np.ndarray:
        obs, _ = self.env.reset(seed=self._seed)
        self._seed = None
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        start = time.perf_counter()
        obs, rewards, terminated, truncated, info = self.env.step(self._actions)
        self.seconds += time.perf_counter() - start
        dones = terminated | truncated
        # One shared empty dict for the games still running: SB3 only reads these.
        infos: list[dict[str, Any]] = [self._empty] * self.num_envs
        for i in np.flatnonzero(dones):
            infos[i] = {"terminal_observation": info["final_obs"][i], "TimeLimit.truncated": bool(truncated[i]),
                        "outcome": float(info["outcome"][i])}
        return obs, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        return self.env.action_masks()

    def seed(self, seed: int | None = None) -> list[int | None]:
        self._seed = seed
        return [seed] * self.num_envs

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        return [getattr(self.env, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        if method_name == "action_masks":
            return list(self.env.action_masks()[self._indices(indices)])
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result] * len(self._indices(indices))

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices) -> np.ndarray:
        if indices is None:
            return np.arange(self.num_envs)
        return np.atleast_1d(np.asarray(indices))
