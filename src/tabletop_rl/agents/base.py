"""The game-agnostic policy framework: the ``Policy`` protocol, decision statistics, spec strings
and the per-game registry.

A spec string names a policy and its options, ``name[:key=value,key=value]`` (or ``name:VALUE``
for a policy with a positional option such as ``ppo:PATH``). Each game registers its own policies;
the ones registered for ``ANY_GAME`` (``random``) serve every game.

>>> policy = make_policy("random", game="splendor", seed=0)
>>> policy.name, policy.act(None, [False, True, True], {}) in (1, 2)
('random', True)
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

ANY_GAME = "*"

#: Modules that register a game's own policies when first imported (kept lazy: importing
#: ``tabletop_rl.agents`` loads no game).
GAME_POLICY_MODULES = {"splendor": "tabletop_rl.games.splendor.baselines",
                       "space_conquest": "tabletop_rl.games.space_conquest.baselines",
                       "klaverjas": "tabletop_rl.games.klaverjas.baselines"}


@dataclass
class PolicyStats:
    """Decisions made since the policy's last ``reset``: count, wall time, and search nodes.

    >>> s = PolicyStats(); s.record(0.5, nodes=100); s.record(1.5)
    >>> s.decisions, s.mean_time_s, s.nodes, s.last_nodes
    (2, 1.0, 100, 0)
    """

    decisions: int = 0
    total_time_s: float = 0.0
    nodes: int = 0
    last_time_s: float = 0.0
    last_nodes: int = 0

    def record(self, seconds: float, nodes: int = 0) -> None:
        self.decisions += 1
        self.total_time_s += seconds
        self.nodes += nodes
        self.last_time_s = seconds
        self.last_nodes = nodes

    @property
    def mean_time_s(self) -> float:
        return self.total_time_s / self.decisions if self.decisions else 0.0

    def as_dict(self) -> dict[str, float | int]:
        """Plain numbers for result files: decisions, total_time_s, mean_time_s, nodes."""
        return {"decisions": self.decisions, "total_time_s": self.total_time_s,
                "mean_time_s": self.mean_time_s, "nodes": self.nodes}


@runtime_checkable
class Policy(Protocol):
    """Anything that picks a legal action. ``reset(seed)`` (start of a game) is optional.

    ``info`` carries what a policy may need beyond the observation; for Splendor
    ``{"game": SplendorGame, "player": seat}``. A policy uses only what ``player`` can see.
    """

    name: str
    stats: PolicyStats

    def act(self, observation: Any, action_mask: Any, info: Mapping[str, Any] | None = None) -> int:
        ...


class BasePolicy:
    """Shared plumbing: mask checks, timing into ``stats``, a seeded ``rng``; subclasses write ``decide``.

    >>> class First(BasePolicy):
    ...     def decide(self, observation, mask, info):
    ...         return int(mask.argmax())
    >>> First("first").act(None, np.array([0, 0, 1]))
    2
    """

    def __init__(self, name: str, seed: int | None = None) -> None:
        self.name = name
        self.stats = PolicyStats()
        self.rng = np.random.default_rng(seed)
        self._nodes = 0

    def reset(self, seed: int | None = None) -> None:
        """Start a new game: reseed ``rng`` and clear ``stats``."""
        self.rng = np.random.default_rng(seed)
        self.stats = PolicyStats()

    def act(self, observation: Any, action_mask: Any, info: Mapping[str, Any] | None = None) -> int:
        mask = legal_mask_of(action_mask)
        self._nodes = 0
        start = time.perf_counter()
        action = int(self.decide(observation, mask, {} if info is None else info))
        self.stats.record(time.perf_counter() - start, self._nodes)
        if not 0 <= action < mask.size or not mask[action]:
            raise RuntimeError(f"policy {self.name!r} chose action {action}, which the mask does not allow")
        return action

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        raise NotImplementedError

    def add_nodes(self, count: int) -> None:
        """Count positions searched for the decision in progress (reported in ``stats``)."""
        self._nodes += int(count)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def legal_mask_of(action_mask: Any) -> np.ndarray:
    """``action_mask`` as a 1-D bool array with at least one legal action, or ``ValueError``."""
    mask = np.asarray(action_mask)
    if mask.ndim != 1:
        raise ValueError(f"action_mask must be 1-D, got shape {mask.shape}")
    mask = mask.astype(bool, copy=False)
    if not mask.any():
        raise ValueError("action_mask allows no action (is the game over?)")
    return mask


# --- options and the registry ----------------------------------------------------------------
_BOOLS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}
_TYPE_NAMES = {int: "int", float: "float", bool: "bool", str: "str"}


@dataclass(frozen=True)
class Option:
    """A typed policy option with its default, e.g. ``Option("depth", int, 3)``."""

    name: str
    type: type
    default: Any = None

    def parse(self, text: str) -> Any:
        """The option's value from spec text; ``ValueError`` (a short reason) when it does not fit."""
        if self.type is bool:
            if text.lower() not in _BOOLS:
                raise ValueError(f"{self.name}={text!r} is not a bool (true/false)")
            return _BOOLS[text.lower()]
        try:
            return self.type(text)
        except ValueError:
            raise ValueError(f"{self.name}={text!r} is not {_TYPE_NAMES[self.type]}") from None

    def usage(self) -> str:
        return f"{self.name}={format_value(self.default)}"


@dataclass(frozen=True)
class PolicyEntry:
    """A registered policy. ``factory(name=spec, seed=seed, **options)`` builds it; a string
    ``"module:attr"`` is imported on first use; ``None`` marks a policy that is not available yet."""

    name: str
    factory: Callable[..., Policy] | str | None
    options: tuple[Option, ...] = ()
    positional: str | None = None

    def usage(self) -> str:
        """E.g. ``expectiminimax[:depth=3,budget_ms=100.0]`` or ``ppo:PATH (not available yet)``."""
        parts = [self.positional.upper()] if self.positional else []
        parts += [o.usage() for o in self.options if o.name != self.positional]
        text = self.name
        if parts:
            text += (":" if self.positional else "[:") + ",".join(parts) + ("" if self.positional else "]")
        return text + (" (not available yet)" if self.factory is None else "")


_REGISTRY: dict[str, dict[str, PolicyEntry]] = {}


def register_policy(game: str, name: str, factory: Callable[..., Policy] | str | None,
                    options: tuple[Option, ...] = (), positional: str | None = None) -> None:
    """Make ``name`` buildable by ``make_policy(..., game=game)`` (``ANY_GAME``: every game).

    >>> register_policy("demo", "first", lambda name, seed: None)
    >>> "first" in known_policies("demo")
    True
    """
    if not name.isidentifier() or name != name.lower():
        raise ValueError(f"policy name must be a lower-case identifier, got {name!r}")
    if positional is not None and positional not in {o.name for o in options}:
        raise ValueError(f"positional option {positional!r} of {name!r} is not among its options")
    _REGISTRY.setdefault(game, {})[name] = PolicyEntry(name, factory, tuple(options), positional)


def known_games() -> list[str]:
    return sorted((set(GAME_POLICY_MODULES) | set(_REGISTRY)) - {ANY_GAME})


def known_policies(game: str = "splendor") -> dict[str, PolicyEntry]:
    """Every policy ``make_policy`` knows for ``game`` (the game's own override shared names)."""
    if game not in known_games():
        raise ValueError(f"unknown game {game!r}; known games: {', '.join(known_games())}")
    if game in GAME_POLICY_MODULES:
        importlib.import_module(GAME_POLICY_MODULES[game])
    return {**_REGISTRY.get(ANY_GAME, {}), **_REGISTRY.get(game, {})}


def describe_policies(game: str = "splendor") -> str:
    """One line: the policies known for ``game`` and their options with defaults (planned ones last)."""
    entries = sorted(known_policies(game).values(), key=lambda entry: entry.factory is None)
    return "; ".join(entry.usage() for entry in entries)


def format_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class PolicySpec:
    """A parsed spec: the entry, the options given (typed), and the canonical spec text."""

    entry: PolicyEntry
    given: dict[str, Any] = field(default_factory=dict)

    @property
    def options(self) -> dict[str, Any]:
        """All options: the given ones over the declared defaults."""
        return {**{o.name: o.default for o in self.entry.options}, **self.given}

    @property
    def text(self) -> str:
        """The spec normalised: options in declared order, only the ones given, e.g. ``mcts:simulations=50``."""
        items = [format_value(self.given[o.name]) if o.name == self.entry.positional
                 else f"{o.name}={format_value(self.given[o.name])}"
                 for o in self.entry.options if o.name in self.given]
        return self.entry.name + (":" + ",".join(items) if items else "")


def parse_spec(spec: str, game: str = "splendor") -> PolicySpec:
    """Parse ``spec`` for ``game``; a bad spec is a one-line ``ValueError`` listing the known policies.

    >>> parse_spec("greedy:points=2").options["points"]
    2.0
    """
    policies = known_policies(game)
    try:
        return _parse(spec, policies)
    except ValueError as e:
        raise ValueError(f"bad policy spec {spec!r} for {game}: {e}. "
                         f"Known policies: {describe_policies(game)}") from None


def _parse(spec: str, policies: dict[str, PolicyEntry]) -> PolicySpec:
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("a spec is a non-empty string such as 'greedy' or 'mcts:simulations=2000'")
    name, _, rest = spec.strip().partition(":")
    name = name.strip().lower()
    if name not in policies:
        raise ValueError(f"unknown policy {name!r}")
    entry = policies[name]
    if entry.factory is None:
        return PolicySpec(entry)
    declared = {o.name: o for o in entry.options}
    given: dict[str, Any] = {}
    items = [item.strip() for item in rest.split(",")] if rest.strip() else []
    if entry.positional:
        if not items or "=" in items[0]:
            raise ValueError(f"{name} needs {entry.positional.upper()}, as in {name}:{entry.positional.upper()}")
        given[entry.positional] = declared[entry.positional].parse(items.pop(0))
    for item in items:
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not key or not value:
            raise ValueError(f"option {item!r} is not key=value")
        if key not in declared or key == entry.positional:
            raise ValueError(f"{name} has no option {key!r}")
        if key in given:
            raise ValueError(f"option {key!r} is given twice")
        given[key] = declared[key].parse(value)
    return PolicySpec(entry, given)


def make_policy(spec: str, game: str = "splendor", seed: int | None = None) -> Policy:
    """Build the policy a spec names, e.g. ``make_policy("expectiminimax:depth=3,budget_ms=100")``.

    ``seed`` seeds the policy's own randomness (``None``: fresh entropy). ``ValueError`` for a bad
    spec, and for a known policy that is not available yet (its module is not built or installed).
    """
    parsed = parse_spec(spec, game)
    factory = _resolve(parsed.entry, game)
    return factory(name=parsed.text, seed=seed, **parsed.options)


def _resolve(entry: PolicyEntry, game: str) -> Callable[..., Policy]:
    """The entry's factory, importing a ``"module:attr"`` factory on first use."""
    factory = entry.factory
    if factory is None:
        raise ValueError(f"policy {entry.name!r} is not available yet for {game}")
    if not isinstance(factory, str):
        return factory
    module_name, _, attr = factory.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name != module_name:
            raise
        raise ValueError(f"policy {entry.name!r} is not available yet for {game} "
                         f"({module_name} is not built)") from None
    if not hasattr(module, attr):
        raise ValueError(f"policy {entry.name!r} is not available yet for {game} ({module_name} has no {attr})")
    return getattr(module, attr)
