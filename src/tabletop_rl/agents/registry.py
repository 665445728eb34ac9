"""Spec strings and the per-game policy registry.

A spec string names a policy and its options, ``name[:key=value,key=value]`` (or ``name:VALUE``
for a policy with a positional option such as ``ppo:PATH``). Every policy also takes ``name=LABEL``, the
label tables and plots show for it (``LABEL_OPTION``); it is kept in the spec and never reaches the
policy's constructor. There is no default game: every lookup
names one. Each game's policies are registered by its registration module in this layer
(named by the game's record, ``GameEntry.policies``: ``tabletop_rl.agents.splendor`` ...), imported on first
use of the game; the ones registered for ``ANY_GAME`` (``random``) serve every game. ``why_unavailable`` says
whether a spec can load here without building it (no network is read).

>>> policy = make_policy("random", game="splendor", seed=0)
>>> policy.name, policy.act(None, [False, True, True], {}) in (1, 2)
('random', True)
"""

from __future__ import annotations

import difflib
import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tabletop_rl.core.extras import installed
from tabletop_rl.core.policy import Policy
from tabletop_rl.core.text import quote
from tabletop_rl.games import GAMES
from tabletop_rl.games import entry as game_entry

__all__ = ["ANY_GAME", "LABEL_OPTION", "MAX_SPEC_CHARS", "Option", "PolicyEntry", "PolicySpec",
           "describe_policies", "known_games", "known_policies", "make_policy", "parse_spec", "register_policy",
           "split_specs", "why_unavailable"]

ANY_GAME = "*"
#: The option every policy takes: its label in tables and plots (``mcts:simulations=50,name=fast``).
LABEL_OPTION = "name"
#: The longest spec parsed: room for a path as long as the OS allows (4096) and the options after it; a
#: longer one is refused before it is split, so a huge spec costs no time.
MAX_SPEC_CHARS = 8192


_BOOLS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}
_TYPE_NAMES = {int: "int", float: "float", bool: "bool", str: "str"}
#: A bad value is quoted cut to this many characters (the spec around it is quoted too).
_VALUE_QUOTE = 40


@dataclass(frozen=True)
class Option:
    """A typed policy option with its default, e.g. ``Option("depth", int, 3)``."""

    name: str
    type: type
    default: Any = None

    def parse(self, text: str) -> Any:
        """The option's value from spec text; ``ValueError`` (a short reason, the text quoted cut) when it
        does not fit. A float must be finite: ``nan``, ``inf`` and ``1e400`` (which overflows to inf) are
        refused here for every policy, so no policy's arithmetic ever sees one.

        >>> Option("c", float, 0.7).parse("1e400")
        Traceback (most recent call last):
        ...
        ValueError: c='1e400' is not a finite float
        """
        if self.type is bool:
            if text.lower() not in _BOOLS:
                raise ValueError(f"{self.name}={quote(text, _VALUE_QUOTE)} is not a bool (true/false)")
            return _BOOLS[text.lower()]
        try:
            value = self.type(text)
        except ValueError:
            raise ValueError(f"{self.name}={quote(text, _VALUE_QUOTE)} is not {_TYPE_NAMES[self.type]}") from None
        if self.type is float and not math.isfinite(value):
            raise ValueError(f"{self.name}={quote(text, _VALUE_QUOTE)} is not a finite float")
        return value

    def usage(self) -> str:
        return f"{self.name}={_format_value(self.default)}"


#: A policy's own check that it can load here, given all its options: why not (a file that is not there, an extra
#: its model's format needs), without building it; ``None`` when nothing stands in the way.
Check = Callable[[dict[str, Any]], str | None]


@dataclass(frozen=True)
class PolicyEntry:
    """A registered policy. ``factory(name=spec, seed=seed, **options)`` builds it; a string
    ``"module:attr"`` is imported on first use. ``check`` (if any) is its ``Check``, for ``why_unavailable``."""

    name: str
    factory: Callable[..., Policy] | str
    options: tuple[Option, ...] = ()
    positional: str | None = None
    check: Check | None = None

    def usage(self) -> str:
        """E.g. ``expectiminimax[:depth=3,budget_ms=100.0]`` or ``ppo:PATH``."""
        parts = [self.positional.upper()] if self.positional else []
        parts += [o.usage() for o in self.options if o.name != self.positional]
        text = self.name
        if parts:
            text += (":" if self.positional else "[:") + ",".join(parts) + ("" if self.positional else "]")
        return text


_REGISTRY: dict[str, dict[str, PolicyEntry]] = {}


def register_policy(game: str, name: str, factory: Callable[..., Policy] | str,
                    options: tuple[Option, ...] = (), positional: str | None = None,
                    check: Check | None = None) -> None:
    """Make ``name`` buildable by ``make_policy(..., game=game)`` (``ANY_GAME``: every game); ``check`` is how
    ``why_unavailable`` asks whether it can load without building it (a policy that reads a file has one).

    >>> register_policy("demo", "first", lambda name, seed: None)
    >>> "first" in known_policies("demo")
    True
    """
    if not name.isidentifier() or name != name.lower():
        raise ValueError(f"policy name must be a lower-case identifier, got {name!r}")
    if factory is None:
        raise ValueError(f"policy {name!r} needs a factory (a callable or 'module:attr')")
    if LABEL_OPTION in {o.name for o in options}:
        raise ValueError(f"option {LABEL_OPTION!r} of {name!r} is taken: every policy's {LABEL_OPTION}= is its label")
    if positional is not None and positional not in {o.name for o in options}:
        raise ValueError(f"positional option {positional!r} of {name!r} is not among its options")
    _REGISTRY.setdefault(game, {})[name] = PolicyEntry(name, factory, tuple(options), positional, check)


def known_games() -> list[str]:
    """The registered games (``tabletop_rl.games``) and any other game a policy is registered for."""
    return sorted((set(GAMES) | set(_REGISTRY)) - {ANY_GAME})


def known_policies(game: str) -> dict[str, PolicyEntry]:
    """Every policy ``make_policy`` knows for ``game`` (the game's own override shared names); the first lookup
    of a registered game imports the module its record names for its policies (kept lazy: importing
    ``tabletop_rl.agents`` loads no game)."""
    if game not in known_games():
        raise ValueError(f"unknown game {game!r}; known games: {', '.join(known_games())}")
    module = game_entry(game).policies if game in GAMES else None
    if module is not None:
        importlib.import_module(module)
    return {**_REGISTRY.get(ANY_GAME, {}), **_REGISTRY.get(game, {})}


def describe_policies(game: str, full: str | None = None, width: int | None = None) -> str:
    """One line: the policies known for ``game`` and their options with defaults.

    With ``width``, each policy's listing is cut to about that many characters (``...`` for the rest),
    except the policy named ``full``.

    >>> describe_policies("klaverjas", width=12)
    'random; heuristic; model[:path=packaged]; search[:samples=12,...]'
    """
    return "; ".join(_short_usage(entry, None if name == full else width)
                     for name, entry in known_policies(game).items())


def _short_usage(entry: PolicyEntry, width: int | None) -> str:
    """``entry.usage()``, with options dropped from the end (``...``) until it fits ``width``."""
    usage = entry.usage()
    options = [o for o in entry.options if o.name != entry.positional]
    if width is None or len(usage) <= width or not options:
        return usage
    head = entry.name + (":" + entry.positional.upper() + "," if entry.positional else "[:")
    shown: list[str] = []
    for option in options:  # at least one option, so the listing says what kind of options it takes
        if shown and len(head + ",".join([*shown, option.usage()])) > width:
            break
        shown.append(option.usage())
    rest = ["..."] if len(shown) < len(options) else []
    return head + ",".join([*shown, *rest]) + ("" if entry.positional else "]")


def _format_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class PolicySpec:
    """A parsed spec: the entry, the options given (typed), the label given (``name=``), and the canonical
    spec text."""

    entry: PolicyEntry
    given: dict[str, Any] = field(default_factory=dict)
    label: str | None = None

    @property
    def options(self) -> dict[str, Any]:
        """All options: the given ones over the declared defaults (the label is none of them)."""
        return {**{o.name: o.default for o in self.entry.options}, **self.given}

    @property
    def text(self) -> str:
        """The spec normalised: options in declared order, only the ones given, the label last, e.g.
        ``mcts:simulations=50,name=fast``."""
        items = [_format_value(self.given[o.name]) if o.name == self.entry.positional
                 else f"{o.name}={_format_value(self.given[o.name])}"
                 for o in self.entry.options if o.name in self.given]
        if self.label is not None:
            items.append(f"{LABEL_OPTION}={self.label}")
        return self.entry.name + (":" + ",".join(items) if items else "")


def split_specs(text: str) -> list[str]:
    """Split a comma-separated list of policy specs, keeping each spec's own ``key=value`` options: a piece
    ``key=value`` (no ``:`` before its ``=``) continues the spec before it. ``ValueError`` when none is given.

    >>> split_specs("greedy,expectiminimax:depth=3,budget_ms=100,random")
    ['greedy', 'expectiminimax:depth=3,budget_ms=100', 'random']
    """
    specs: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        key = piece.partition("=")[0]
        if specs and "=" in piece and ":" not in key:
            specs[-1] += "," + piece
        elif piece:
            specs.append(piece)
    if not specs:
        raise ValueError(f"no policy specs in {quote(text)}")
    return specs


#: How many characters of each other policy's options a bad spec's message lists.
_USAGE_WIDTH = 60


def parse_spec(spec: str, game: str) -> PolicySpec:
    """Parse ``spec`` for ``game``. A bad spec is a one-line ``ValueError`` that starts with the problem,
    then names the spec (cut to a few dozen characters: ``core.text.quote``), then lists the known policies (the
    one the spec names with all its options, the others cut short).

    >>> parse_spec("greedy:points=2", "splendor").options["points"]
    2.0
    >>> parse_spec("greedy:points=2,name=g2", "splendor").label
    'g2'
    """
    policies = known_policies(game)
    try:
        return _parse(spec, policies)
    except ValueError as e:
        named = spec.partition(":")[0].strip().lower() if isinstance(spec, str) else None
        head, detail = (f"bad value for {e.key}", f": {e}") if isinstance(e, _BadValue) else (str(e), "")
        raise ValueError(f"{head} (bad policy spec {quote(spec)} for {game}{detail}). Known policies: "
                         f"{describe_policies(game, full=named, width=_USAGE_WIDTH)}; "
                         f"every policy also takes {LABEL_OPTION}=LABEL") from None


class _BadValue(ValueError):
    """An option's value that does not fit its type; ``key`` names the option."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(reason)
        self.key = key


def _value(option: Option, text: str) -> Any:
    try:
        return option.parse(text)
    except ValueError as e:
        raise _BadValue(option.name, str(e)) from None


def _parse(spec: str, policies: dict[str, PolicyEntry]) -> PolicySpec:
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("a spec is a non-empty string such as 'greedy' or 'mcts:simulations=2000'")
    if len(spec) > MAX_SPEC_CHARS:
        raise ValueError(f"a spec is at most {MAX_SPEC_CHARS} characters, this one has {len(spec)}")
    name, _, rest = spec.strip().partition(":")
    name = name.strip().lower()
    if name not in policies:
        close = difflib.get_close_matches(name, list(policies), n=1)
        raise ValueError(f"unknown policy {quote(name)}" + (f"; did you mean {close[0]!r}?" if close else ""))
    entry = policies[name]
    declared = {o.name: o for o in entry.options}
    given: dict[str, Any] = {}
    label: str | None = None
    items = [item.strip() for item in rest.split(",")] if rest.strip() else []
    if entry.positional:
        if not items or "=" in items[0]:
            raise ValueError(f"{name} needs {entry.positional.upper()}, as in {name}:{entry.positional.upper()}")
        given[entry.positional] = _value(declared[entry.positional], items.pop(0))
    for item in items:
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not key or not value:
            raise ValueError(f"option {quote(item)} is not key=value")
        if key in given or (key == LABEL_OPTION and label is not None):
            raise ValueError(f"option {quote(key)} is given twice")
        if key == LABEL_OPTION:  # every policy's label: kept in the spec, never passed to the policy
            label = value
            continue
        if key not in declared or key == entry.positional:
            raise ValueError(f"{name} has no option {quote(key)}")
        given[key] = _value(declared[key], value)
    return PolicySpec(entry, given, label)


def make_policy(spec: str, game: str, seed: int | None = None) -> Policy:
    """Build the policy a spec names for ``game``, e.g.
    ``make_policy("expectiminimax:depth=3,budget_ms=100", game="splendor")``.

    ``seed`` seeds the policy's own randomness (``None``: fresh entropy). ``ValueError`` for a bad
    spec, and for a policy whose lazily imported factory cannot be loaded.
    """
    parsed = parse_spec(spec, game)
    factory = _resolve(parsed.entry, game)
    return factory(name=parsed.text, seed=seed, **parsed.options)


def why_unavailable(spec: str, game: str) -> str | None:
    """Why ``make_policy(spec, game=game)`` would fail here, found without building the policy (no network is read,
    nothing is compiled), in the words building it would use: a bad spec (an unknown policy, an option it lacks), a
    factory whose module is not installed, or what the policy's own check finds (a model file that is not there, the
    extra its format needs). ``None`` when nothing stands in the way; a file that is there but damaged is found
    only by building.

    >>> why_unavailable("greedy", "splendor") is None
    True
    >>> why_unavailable("ppo:no-such-model.zip", "splendor")
    "ppo model 'no-such-model.zip' does not exist"
    """
    try:
        parsed = parse_spec(spec, game)
    except ValueError as e:
        return str(e)
    entry = parsed.entry
    if isinstance(entry.factory, str):
        module_name = entry.factory.partition(":")[0]
        if not installed(module_name):
            return _not_installed(entry, game, module_name)
    return entry.check(parsed.options) if entry.check is not None else None


def _not_installed(entry: PolicyEntry, game: str, module_name: str) -> str:
    return f"policy {entry.name!r} is not available for {game} ({module_name} is not installed)"


def _resolve(entry: PolicyEntry, game: str) -> Callable[..., Policy]:
    """The entry's factory, importing a ``"module:attr"`` factory on first use."""
    factory = entry.factory
    if not isinstance(factory, str):
        return factory
    module_name, _, attr = factory.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name != module_name:
            raise
        raise ValueError(_not_installed(entry, game, module_name)) from None
    if not hasattr(module, attr):
        raise ValueError(f"policy {entry.name!r} is not available for {game} ({module_name} has no {attr})")
    return getattr(module, attr)
