"""Saved MaskablePPO models as policies, with the metadata that says which observation they expect.

A model zip saved by ``save_model`` carries ``tabletop_rl.json`` beside SB3's own files: the game,
the number of players and the observation layout version and size. ``PPOPolicy`` refuses a model
whose metadata does not match what the game encodes now, with a one-line error.

>>> policy = PPOPolicy("ppo:model.zip", path="model.zip",                  # doctest: +SKIP
...                    expected={"game": "splendor", "observation_version": 1})
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from tabletop_rl.core.policy import BasePolicy

__all__ = ["META_FILE", "PPOPolicy", "check_meta", "read_meta", "save_model"]

META_FILE = "tabletop_rl.json"


def _sb3():
    try:
        import torch
        from sb3_contrib import MaskablePPO
    except ImportError as e:
        raise ValueError(f"ppo policies need the [train] extra: pip install 'tabletop-rl[train]' ({e.name} missing)")\
            from None
    return torch, MaskablePPO


def save_model(model: Any, path: str | Path, meta: Mapping[str, Any]) -> Path:
    """Save an SB3 model to ``path`` (a .zip) with our metadata inside; returns the path written."""
    path = Path(path).with_suffix(".zip")
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(path)
    with zipfile.ZipFile(path, "a") as z:
        z.writestr(META_FILE, json.dumps(dict(meta), sort_keys=True))
    return path


def read_meta(path: str | Path) -> dict[str, Any]:
    """The metadata of a model saved by ``save_model``; ``ValueError`` for a missing or foreign file."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"ppo model {str(path)!r} does not exist")
    try:
        with zipfile.ZipFile(path) as z:
            return json.loads(z.read(META_FILE))
    except KeyError:
        raise ValueError(f"ppo model {str(path)!r} has no {META_FILE}: it was not saved by tabletop_rl") from None
    except (zipfile.BadZipFile, json.JSONDecodeError) as e:
        raise ValueError(f"ppo model {str(path)!r} is not a readable model file ({e})") from None


def check_meta(meta: Mapping[str, Any], expected: Mapping[str, Any], path: str | Path) -> None:
    """``ValueError`` naming the first field where a model's metadata differs from ``expected``."""
    for key, want in expected.items():
        if meta.get(key) != want:
            raise ValueError(f"ppo model {str(path)!r} was trained with {key}={meta.get(key)!r}, "
                             f"this version needs {key}={want!r}; retrain it with `tabletop train`")


class PPOPolicy(BasePolicy):
    """Acts with a saved MaskablePPO model on the env's observation vector (the mask applied).

    ``deterministic=True`` plays the most probable legal action; otherwise it samples from the
    masked distribution with the policy's own seeded generator.
    """

    def __init__(self, name: str, seed: int | None = None, path: str | Path = "",
                 expected: Mapping[str, Any] | None = None, deterministic: bool = True) -> None:
        super().__init__(name, seed)
        self.meta = read_meta(path)
        check_meta(self.meta, expected or {}, path)
        torch, MaskablePPO = _sb3()
        self._torch = torch
        self.model = MaskablePPO.load(str(path), device="cpu")
        self.deterministic = deterministic

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        obs = np.asarray(observation, np.float32)
        if obs.shape != self.model.observation_space.shape:
            raise ValueError(f"{self.name}: observation has shape {obs.shape}, the model expects "
                             f"{self.model.observation_space.shape}")
        return int(self.act_batch(obs[None], mask[None])[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions for a batch of observations and masks (one forward pass); used by training's pool."""
        with self._torch.no_grad():
            obs = self._torch.as_tensor(observations)
            dist = self.model.policy.get_distribution(obs, action_masks=masks)
            if self.deterministic:
                return dist.distribution.probs.argmax(dim=1).numpy()
            probs = dist.distribution.probs.numpy().astype(np.float64)
        cumulative = probs.cumsum(axis=1)
        draws = self.rng.random((len(probs), 1)) * cumulative[:, -1:]
        return (cumulative < draws).sum(axis=1)
