"""Saved PPO models as policies, with the metadata that says which observation they expect.

Two formats, told apart by their content (both are zip files):

- an SB3 MaskablePPO zip saved by ``save_model`` (``tabletop train splendor --algo sb3``, and the shipped
  ``ppo:default``), carrying ``tabletop_rl.json`` beside SB3's own files;
- a ``.pt`` checkpoint of the CleanRL-style trainer (``tabletop train splendor``), written by
  ``save_checkpoint``: ``torch.save`` of a dict of plain types and tensors, ``{"format": "tabletop-ppo/1",
  "meta": {...}, "model": state_dict, "optimizer": state_dict, "step": int, "args": dict, "rng": dict}``,
  read back with ``torch.load(weights_only=True)`` so a checkpoint cannot run code. Its network is
  ``build_network``: separate policy and value MLPs (tanh), the policy's logits masked before sampling.

Either carries the game, the number of players and the observation layout version and size. ``PPOPolicy``
refuses a model whose metadata does not match what the game encodes now, with a one-line error.

Both need torch to be read. ``export_arrays`` writes a model's networks as plain arrays, a ``.npz`` that numpy
alone reads (``np.load(allow_pickle=False)``: no code runs): ``format`` (``ARRAYS_FORMAT``), ``meta`` (the
metadata as JSON) and each weight under ``build_network``'s name (``pi.0.weight``, ... outputs x inputs). It plays
as ``ppo:`` or ``az:`` like the model it came from, without torch; the shipped ``ppo:default`` and ``az:default``
are such files.

>>> policy = PPOPolicy("ppo:model.zip", path="model.zip",                  # doctest: +SKIP
...                    expected={"game": "splendor", "observation_version": 1})
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tabletop_rl.core.extras import installed, missing_extra
from tabletop_rl.core.files import file_problem, read_regular_file, replace_file, shown_path
from tabletop_rl.core.policy import BasePolicy
from tabletop_rl.core.text import quote

__all__ = ["ARRAYS_FORMAT", "CHECKPOINT_FORMAT", "ILLEGAL_LOGIT", "MAX_MODEL_BYTES", "META_FILE", "PPOPolicy",
           "build_network", "check_meta", "export_arrays", "export_model", "is_checkpoint", "load_checkpoint",
           "masked_logits", "model_problem", "network_state", "network_widths", "read_meta", "save_checkpoint",
           "save_model", "sb3_as_layers"]

META_FILE = "tabletop_rl.json"
CHECKPOINT_FORMAT = "tabletop-ppo/1"
#: The ``format`` array of a network exported as plain arrays (``export_arrays``).
ARRAYS_FORMAT = "tabletop-net/1"
#: The logit of an illegal action: exp() of it is exactly 0 in float32, and unlike -inf it keeps
#: ``probs * log_probs`` (the entropy) finite, so no NaN reaches the gradients.
ILLEGAL_LOGIT = -1e8
#: What reading each kind of model file imports (an ``export_arrays`` file: numpy alone).
_CHECKPOINT_MODULES = ("torch",)
_SB3_MODULES = ("torch", "sb3_contrib")
#: What needs them, in the message that asks for the [train] extra.
_NETWORK_POLICIES = "a policy with a network (ppo, az)"
#: The largest model file read, and the most its zip may unpack to: the shipped models are 0.9 MB (``az``) and
#: 4.2 MB (``ppo``), a training checkpoint with Adam's moments is three times its network; a file past this (or
#: one that is not a regular file, such as ``/dev/zero``) is refused before it is read.
MAX_MODEL_BYTES = 256 << 20


def model_problem(path: str | Path) -> str | None:
    """Why a ``ppo:``/``az:`` policy cannot load the model at ``path`` here, found without reading its networks: the
    file is missing or is no regular file, or its kind needs a module that is not installed (torch for a ``.pt``
    checkpoint, torch and sb3-contrib for a MaskablePPO zip); the message is the one loading it would give. ``None``
    when it is worth loading (a damaged file is found then)."""
    path = Path(path)
    problem = file_problem(path, MAX_MODEL_BYTES, "ppo model")
    if problem is not None:
        return problem
    try:
        with zipfile.ZipFile(path) as z:  # reads the zip's directory, not its members
            names: list[str] | None = z.namelist()
    except (zipfile.BadZipFile, OSError):
        names = None
    needed = () if _is_arrays(names) else _CHECKPOINT_MODULES if _is_checkpoint(path, names) else _SB3_MODULES
    missing = [module for module in needed if not installed(module)]
    return missing_extra(missing[0], _NETWORK_POLICIES, "train") if missing else None


def _torch() -> Any:
    """torch, or a one-line ``ValueError`` naming the [train] extra."""
    try:
        import torch
    except ImportError as e:
        raise ValueError(missing_extra(e.name or "torch", _NETWORK_POLICIES, "train")) from None
    return torch


def _sb3() -> tuple[Any, Any]:
    try:
        import torch
        from sb3_contrib import MaskablePPO
    except ImportError as e:
        raise ValueError(missing_extra(e.name or "sb3_contrib", _NETWORK_POLICIES, "train")) from None
    return torch, MaskablePPO


def save_model(model: Any, path: str | Path, meta: Mapping[str, Any]) -> Path:
    """Save an SB3 model to ``path`` (a .zip) with our metadata inside; returns the path written."""
    path = Path(path).with_suffix(".zip")
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(path)
    with zipfile.ZipFile(path, "a") as z:
        z.writestr(META_FILE, json.dumps(dict(meta), sort_keys=True))
    return path


# --- the network of the CleanRL-style trainer, and its checkpoints ----------------------------------------
def build_network(observation_size: int, hidden: Sequence[int], num_actions: int,
                  value_hidden: Sequence[int] | None = None) -> Any:
    """``torch.nn.ModuleDict`` with ``"pi"`` (observation -> action logits) and ``"vf"`` (observation -> value):
    two separate MLPs with tanh, as SB3's ``MlpPolicy`` with ``net_arch={"pi": hidden, "vf": value_hidden}``
    (``value_hidden`` defaults to ``hidden``), and the same orthogonal initialisation (gain sqrt 2 inside, 0.01 on
    the logits so the first policy is near uniform over the legal moves, 1 on the value)."""
    torch = _torch()
    nn = torch.nn

    def mlp(out: int, last_gain: float, widths: Sequence[int]) -> Any:
        layers: list[Any] = []
        size = observation_size
        for width in widths:
            layers += [nn.Linear(size, width), nn.Tanh()]
            size = width
        layers.append(nn.Linear(size, out))
        for layer in layers:
            if isinstance(layer, nn.Linear):
                gain = last_gain if layer is layers[-1] else 2 ** 0.5
                nn.init.orthogonal_(layer.weight, gain)
                nn.init.zeros_(layer.bias)
        return nn.Sequential(*layers)

    return nn.ModuleDict({"pi": mlp(num_actions, 0.01, hidden),
                          "vf": mlp(1, 1.0, hidden if value_hidden is None else value_hidden)})


def network_widths(meta: Mapping[str, Any]) -> tuple[list[int], list[int]]:
    """The hidden layer sizes of a saved model's policy and value networks (``build_network``'s ``hidden`` and
    ``value_hidden``), from its metadata: ``value_net`` where the two differ, else ``net`` for both.

    >>> network_widths({"net": [256, 256], "value_net": [128, 128]})
    ([256, 256], [128, 128])
    """
    hidden = [int(h) for h in meta["net"]]
    return hidden, [int(h) for h in meta.get("value_net", hidden)]


def masked_logits(logits: Any, masks: Any) -> Any:
    """``logits`` with every illegal action (``masks`` False) set to ``ILLEGAL_LOGIT``: softmax gives it
    probability 0, so sampling and argmax only ever pick legal actions (a row needs one legal action)."""
    return logits.masked_fill(~masks, ILLEGAL_LOGIT)


def save_checkpoint(path: str | Path, network: Any, meta: Mapping[str, Any], optimizer: Any = None, step: int = 0,
                    args: Mapping[str, Any] | None = None, rng: Mapping[str, Any] | None = None) -> Path:
    """Write a ``.pt`` checkpoint (the module docstring has its layout) of ``network`` (a module, or its
    ``state_dict`` itself); returns the path written. It is written beside and renamed into place, so an
    interrupted save never leaves half a checkpoint."""
    torch = _torch()
    path = Path(path).with_suffix(".pt")
    path.parent.mkdir(parents=True, exist_ok=True)
    state = dict(network) if isinstance(network, Mapping) else network.state_dict()
    data = {"format": CHECKPOINT_FORMAT, "meta": dict(meta), "model": state,
            "optimizer": optimizer.state_dict() if optimizer is not None else {}, "step": int(step),
            "args": dict(args or {}), "rng": dict(rng or {})}
    return replace_file(path, lambda temp: torch.save(data, temp))


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """A ``.pt`` checkpoint written by ``save_checkpoint`` (tensors and plain types only: no code runs);
    ``ValueError`` for a missing, foreign, unreadable or too large file (``MAX_MODEL_BYTES``)."""
    path = Path(path)
    return _checkpoint(path, _read_model(path)[0])


def _read_model(path: Path) -> tuple[bytes, list[str] | None]:
    """The model file's bytes (a regular file of at most ``MAX_MODEL_BYTES``) and, for a zip, its members'
    names (``None`` for any other file); ``ValueError`` for a zip that would unpack past ``MAX_MODEL_BYTES``."""
    data = read_regular_file(path, MAX_MODEL_BYTES, "ppo model")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            members = z.infolist()
    except zipfile.BadZipFile:
        return data, None
    unpacked = sum(m.file_size for m in members)
    if unpacked > MAX_MODEL_BYTES:
        raise ValueError(f"ppo model {shown_path(path)} unpacks to {unpacked} bytes, more than the "
                         f"{MAX_MODEL_BYTES} allowed")
    return data, [m.filename for m in members]


def _checkpoint(path: Path, data: bytes) -> dict[str, Any]:
    """``load_checkpoint`` of bytes already read from ``path``."""
    torch = _torch()
    try:
        checkpoint = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises several kinds for a damaged or foreign file
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"ppo model {shown_path(path)} is not a readable checkpoint ({quote(reason)})") from None
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT \
            or not isinstance(checkpoint.get("meta"), dict):
        raise ValueError(f"ppo model {shown_path(path)} is not a {CHECKPOINT_FORMAT} checkpoint of tabletop_rl")
    return checkpoint


def export_model(checkpoint: str | Path, out: str | Path) -> Path:
    """Write ``checkpoint``'s network alone to ``out`` (a ``.pt`` that plays as ``ppo:`` or ``az:`` like the
    original): Adam's moments and the random streams are dropped, which makes it a third of the size; the
    metadata, the step and the run's arguments stay, so the file still says where it came from.

    >>> export_model("runs/az/checkpoints/iter_600.pt", "az_600.pt")   # doctest: +SKIP
    PosixPath('az_600.pt')
    """
    data = load_checkpoint(checkpoint)
    return save_checkpoint(out, data["model"], data["meta"], step=data["step"], args=data["args"])


#: Where the two networks sit in a MaskablePPO ``MlpPolicy`` (separate pi and vf nets, no shared layers).
_SB3_LAYERS = {"pi": ("mlp_extractor.policy_net.", "action_net."), "vf": ("mlp_extractor.value_net.", "value_net.")}


def sb3_as_layers(state: Mapping[str, Any]) -> dict[str, Any]:
    """A MaskablePPO policy's ``state_dict`` renamed to ``build_network``'s layout (``pi.K``, ``vf.K``)."""
    renamed = {}
    for side, (hidden, head) in _SB3_LAYERS.items():
        count = len({k.split(".")[2] for k in state if k.startswith(hidden)})
        for key, value in state.items():
            if key.startswith(hidden):
                renamed[f"{side}.{key[len(hidden):]}"] = value
            elif key.startswith(head):
                renamed[f"{side}.{2 * count}.{key[len(head):]}"] = value
    return renamed


def network_state(path: str | Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The metadata and the policy-and-value weights (``build_network``'s names, numpy arrays) of a ``.pt``
    checkpoint, a MaskablePPO zip or an ``export_arrays`` file (the only one read without torch); the caller
    checks the metadata (``check_meta``)."""
    path = Path(path)
    data, names = _read_model(path)
    if _is_arrays(names):
        return _arrays(path, data)
    if _is_checkpoint(path, names):
        checkpoint = _checkpoint(path, data)
        return dict(checkpoint["meta"]), {k: v.numpy() for k, v in checkpoint["model"].items()}
    meta = _zip_meta(path, data, names)
    _, MaskablePPO = _sb3()
    policy = MaskablePPO.load(io.BytesIO(data), device="cpu").policy
    return meta, sb3_as_layers({k: v.numpy() for k, v in policy.state_dict().items()})


def export_arrays(model: str | Path, out: str | Path) -> Path:
    """Write ``model``'s networks (a ``.pt`` checkpoint, a MaskablePPO zip or an exported file) to ``out`` as plain
    arrays (a ``.npz``; the module docstring has its layout), which ``ppo:`` and ``az:`` load without torch;
    returns the path written. Reading a ``.pt`` or a zip needs torch.

    >>> export_arrays("runs/az/checkpoints/iter_600.pt", "az_600.npz")   # doctest: +SKIP
    PosixPath('az_600.npz')
    """
    meta, state = network_state(model)
    arrays: dict[str, Any] = {key: np.ascontiguousarray(value, np.float32) for key, value in state.items()}
    arrays.update(format=np.array(ARRAYS_FORMAT), meta=np.array(json.dumps(meta, sort_keys=True)))
    # replace_file's temporary name keeps the .npz suffix, so np.savez adds none
    return replace_file(Path(out).with_suffix(".npz"), lambda temp: np.savez(temp, **arrays))


def _is_arrays(names: list[str] | None) -> bool:
    """An ``export_arrays`` file: a zip of ``.npy`` members, one of them the ``format``."""
    return names is not None and "format.npy" in names and all(n.endswith(".npy") for n in names)


def _arrays(path: Path, data: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The metadata and weights of the bytes of an ``export_arrays`` file read from ``path``."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {key: z[key] for key in z.files}
        meta = json.loads(str(arrays.pop("meta")))
    except (KeyError, ValueError, OSError, zipfile.BadZipFile) as e:  # JSONDecodeError is a ValueError
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"ppo model {quote(str(path))} is not a readable array file ({quote(reason)})") from None
    if str(arrays.pop("format")) != ARRAYS_FORMAT or not isinstance(meta, dict) \
            or any(a.dtype.kind != "f" for a in arrays.values()):
        raise ValueError(f"ppo model {quote(str(path))} is not a {ARRAYS_FORMAT} network of tabletop_rl")
    return meta, arrays


def is_checkpoint(path: Path) -> bool:
    """A torch checkpoint (``torch.save``'s zip holds ``<name>/data.pkl``), not an SB3 model zip; for a file
    that cannot be read, whether it is named ``.pt``."""
    try:
        names = _read_model(path)[1]
    except ValueError:
        return path.suffix == ".pt"
    return _is_checkpoint(path, names)


def _is_checkpoint(path: Path, names: list[str] | None) -> bool:
    if names is None:
        return path.suffix == ".pt"
    return META_FILE not in names and any(n.endswith("/data.pkl") for n in names)


def read_meta(path: str | Path) -> dict[str, Any]:
    """The metadata of a model saved by ``save_model``, ``save_checkpoint`` or ``export_arrays``; ``ValueError``
    for a missing, foreign or too large file."""
    path = Path(path)
    data, names = _read_model(path)
    if _is_arrays(names):
        return _arrays(path, data)[0]
    if _is_checkpoint(path, names):
        return dict(_checkpoint(path, data)["meta"])
    return _zip_meta(path, data, names)


def _zip_meta(path: Path, data: bytes, names: list[str] | None) -> dict[str, Any]:
    """The metadata inside the bytes of a model zip saved by ``save_model``."""
    if names is None:
        raise ValueError(f"ppo model {shown_path(path)} is not a readable model file (not a zip file)")
    if META_FILE not in names:
        raise ValueError(f"ppo model {shown_path(path)} has no {META_FILE}: it was not saved by tabletop_rl")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            meta = json.loads(z.read(META_FILE))
    except (zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"ppo model {shown_path(path)} is not a readable model file ({quote(str(e))})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"ppo model {shown_path(path)} has a {META_FILE} that is not an object")
    return meta


def check_meta(meta: Mapping[str, Any], expected: Mapping[str, Any], path: str | Path) -> None:
    """``ValueError`` naming the first field where a model's metadata differs from ``expected``."""
    for key, want in expected.items():
        if meta.get(key) != want:
            raise ValueError(f"ppo model {shown_path(path)} was trained with {key}={quote(meta.get(key))}, "
                             f"this version needs {key}={want!r}; retrain it with `tabletop train`")


def _policy_layers(state: Mapping[str, np.ndarray], path: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """The policy MLP's (weight, bias) per layer (``pi.K``, weights outputs x inputs), checked to chain."""
    indices = sorted(int(k.split(".")[1]) for k in state if k.startswith("pi.") and k.endswith(".weight"))
    try:
        layers = [(state[f"pi.{i}.weight"], state[f"pi.{i}.bias"]) for i in indices]
    except KeyError as e:
        raise ValueError(f"ppo model {quote(str(path))} has no bias {e} for its weights") from None
    for k, (w, b) in enumerate(layers):
        if w.ndim != 2 or b.shape != (w.shape[0],) or (k and w.shape[1] != layers[k - 1][0].shape[0]):
            raise ValueError(f"ppo model {quote(str(path))} has a policy network whose layer shapes do not chain")
    if not layers:
        raise ValueError(f"ppo model {quote(str(path))} has no policy network ('pi' layers)")
    return layers


def _forward(layers: Sequence[tuple[np.ndarray, np.ndarray]], observations: np.ndarray) -> np.ndarray:
    """``build_network``'s MLP in numpy, float32: tanh after every layer but the last."""
    h = np.asarray(observations, np.float32)
    for k, (w, b) in enumerate(layers):
        h = h @ w.T + b
        if k < len(layers) - 1:
            h = np.tanh(h)
    return h


class PPOPolicy(BasePolicy):
    """Acts with a saved model on the env's observation vector (the mask applied): an SB3 MaskablePPO zip,
    a ``.pt`` checkpoint of the CleanRL-style trainer or their networks exported as arrays (``export_arrays``,
    played with numpy alone), told apart by content.

    ``deterministic=True`` plays the most probable legal action; otherwise it samples from the
    masked distribution with the policy's own seeded generator.
    """

    def __init__(self, name: str, seed: int | None = None, path: str | Path = "",
                 expected: Mapping[str, Any] | None = None, deterministic: bool = True) -> None:
        super().__init__(name, seed)
        path = Path(path)
        self.deterministic = deterministic
        self.model: Any = None  # the SB3 model, for a zip
        self.network: Any = None  # the policy MLP, for a .pt checkpoint
        self.layers: list[tuple[np.ndarray, np.ndarray]] | None = None  # the policy MLP, for exported arrays
        data, names = _read_model(path)
        if _is_arrays(names):
            self.meta, state = _arrays(path, data)
            check_meta(self.meta, expected or {}, path)
            self.layers = _policy_layers(state, path)
            self._shape: tuple[int, ...] = (self.layers[0][0].shape[1],)
        elif _is_checkpoint(path, names):
            checkpoint = _checkpoint(path, data)
            self.meta = dict(checkpoint["meta"])
            check_meta(self.meta, expected or {}, path)
            self._torch = _torch()
            try:
                hidden, value_hidden = network_widths(self.meta)
                net = build_network(int(self.meta["observation_size"]), hidden, int(self.meta["num_actions"]),
                                    value_hidden)
                net.load_state_dict(checkpoint["model"])
            except (KeyError, TypeError, ValueError, RuntimeError) as e:
                reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise ValueError(f"ppo model {shown_path(path)} does not hold a network its metadata describes "
                                 f"({reason})") from None
            self.network = net["pi"].eval()
            self._shape = (int(self.meta["observation_size"]),)
        else:
            self.meta = _zip_meta(path, data, names)
            check_meta(self.meta, expected or {}, path)
            torch, MaskablePPO = _sb3()
            self._torch = torch
            self.model = MaskablePPO.load(io.BytesIO(data), device="cpu")
            self._shape = tuple(self.model.observation_space.shape)

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        obs = np.asarray(observation, np.float32)
        if obs.shape != self._shape:
            players = self.meta.get("num_players")
            raise ValueError(f"{self.name}: observation has shape {obs.shape}, the model expects {self._shape}"
                             + (f" (it was trained for {players}-player games)" if players else ""))
        return int(self.act_batch(obs[None], mask[None])[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions for a batch of observations and masks (one forward pass); used by training's pool."""
        if self.layers is not None:
            logits = np.where(np.asarray(masks, np.bool_), _forward(self.layers, observations), ILLEGAL_LOGIT)
            if self.deterministic:
                return logits.argmax(axis=1)
            probs = np.exp(logits.astype(np.float64) - logits.max(axis=1, keepdims=True))
            return self._sample(probs)
        torch = self._torch
        with torch.inference_mode():
            obs = torch.as_tensor(np.asarray(observations, np.float32))
            if self.network is not None:
                logits = masked_logits(self.network(obs), torch.as_tensor(np.asarray(masks, np.bool_)))
                if self.deterministic:
                    return logits.argmax(dim=1).numpy()
                probs = torch.softmax(logits, dim=1).numpy().astype(np.float64)
            else:
                dist = self.model.policy.get_distribution(obs, action_masks=masks)
                if self.deterministic:
                    return dist.distribution.probs.argmax(dim=1).numpy()
                probs = dist.distribution.probs.numpy().astype(np.float64)
        return self._sample(probs)

    def _sample(self, probs: np.ndarray) -> np.ndarray:
        """An action per row drawn from ``probs`` (weights, not necessarily summing to 1) with the policy's rng."""
        cumulative = probs.cumsum(axis=1)
        draws = self.rng.random((len(probs), 1)) * cumulative[:, -1:]
        return (cumulative < draws).sum(axis=1)
