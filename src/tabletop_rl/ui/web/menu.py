"""The policies the browser's play table offers, and the only ones it builds.

A request names an opponent by a spec of the menu; it sets nothing else, so no request can make the server read
a file, send a key to a host, write a cache or search with a budget of its own choosing. The menu is the built-in
policies this installation can load (``default_policies()``, from the game records, asked of the registry without
building them: none reads a file but the package's own, none reads a key, every search has a small fixed budget)
and each spec the operator adds with
``tabletop web --allow SPEC`` (``GAME:SPEC`` for one game only), checked by building it before the page listens.
Specs are kept in their canonical spelling (``agents.parse_spec``), so a spec written another way (options in
another order) is the same entry of the menu.

>>> menu = PolicyMenu({"splendor": ("random", "mcts:simulations=200")})
>>> menu.check("splendor", "mcts: simulations=200")
'mcts:simulations=200'
>>> menu.check("splendor", "mcts:simulations=3000000")  # doctest: +ELLIPSIS
Traceback (most recent call last):
ValueError: 'mcts:simulations=3000000' is not a policy this server offers for splendor (it offers: random, ...
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tabletop_rl.agents import make_policy, parse_spec, why_unavailable
from tabletop_rl.games import GAMES, entries

__all__ = ["MAX_SPEC_CHARS", "PolicyMenu", "default_policies"]

#: The longest spec a request may send; a longer one in a save is no entry (it is not parsed to be spelled canonically).
MAX_SPEC_CHARS = 1000
#: How much of a refused spec an error repeats.
_SHOWN_CHARS = 80


def default_policies() -> dict[str, tuple[str, ...]]:
    """The built-in menu, per game: its record's ``web_policies`` (else its arena line-up), the baselines and the
    searches at the arena's default node budgets (a node budget, not a time budget, so a move costs the same on
    any machine). ``az:default`` (the shipped network) reads plain arrays, so it builds without torch."""
    return {record.name: record.menu for record in entries()}


@dataclass(frozen=True)
class PolicyMenu:
    """Per game (the ``games.GAMES`` names), the canonical specs the play table offers, in the page's order."""

    policies: Mapping[str, tuple[str, ...]]

    @classmethod
    def build(cls, allow: Sequence[str] = ()) -> PolicyMenu:
        """The built-in policies this installation can build, then each ``allow`` spec (``GAME:SPEC`` for one game,
        else every game with such a policy); ``ValueError`` in one line for a spec no game builds."""
        policies = {game: [spec for spec in map(functools.partial(_available_by_default, game), specs)
                           if spec is not None]
                    for game, specs in default_policies().items()}
        for text in allow:
            for game, spec in _allowed(text):
                policies[game].append(spec)
        return cls({game: tuple(dict.fromkeys(specs)) for game, specs in policies.items()})

    def offered(self, game: str) -> list[str]:
        """The specs offered for ``game``, in order."""
        return list(self.policies.get(game, ()))

    def check(self, game: str, spec: str) -> str:
        """The menu's spelling of ``spec`` for ``game``; ``ValueError`` naming what is offered when it is not."""
        offered = self.policies.get(game, ())
        if spec in offered:
            return spec
        canonical = _canonical(game, spec)
        if canonical in offered:
            return canonical
        shown = spec if len(spec) <= _SHOWN_CHARS else spec[:_SHOWN_CHARS] + "..."
        raise ValueError(f"{shown!r} is not a policy this server offers for {game} (it offers: {', '.join(offered)})"
                         "; the operator adds one with tabletop web --allow SPEC")


def _canonical(game: str, spec: str) -> str | None:
    """``spec`` spelled canonically for ``game``, or None when it is no spec of that game (nothing is built)."""
    if len(spec) > MAX_SPEC_CHARS:
        return None
    try:
        return parse_spec(spec, game).text
    except ValueError:
        return None


def _built(game: str, spec: str) -> str:
    """The canonical spelling of ``spec`` after building it once for ``game``; ``ValueError`` when it does not build
    (a bad spec, a file that is not there, an extra that is not installed)."""
    text = parse_spec(spec, game).text
    make_policy(text, game=game, seed=0)
    return text


def _available_by_default(game: str, spec: str) -> str | None:
    """A built-in spec, canonically spelled, when the registry says it loads here (asked without building it: a
    game's first move builds it), else None."""
    return None if why_unavailable(spec, game) is not None else parse_spec(spec, game).text


def _allowed(text: str) -> list[tuple[str, str]]:
    """The (game, canonical spec) entries of one ``--allow`` text: ``GAME:SPEC`` for that game, a bare spec for every
    game that builds it; ``ValueError`` naming the problem when none does."""
    head, colon, rest = text.partition(":")
    games, spec = ([head.strip()], rest) if colon and head.strip() in GAMES else (sorted(GAMES), text)
    found: list[tuple[str, str]] = []
    errors: dict[str, str] = {}
    for game in games:
        try:
            found.append((game, _built(game, spec)))
        except ValueError as e:
            errors[game] = str(e)
    if found:
        return found
    named = [error for error in errors.values() if not error.startswith("unknown policy")]
    if len(games) > 1 and not named:
        raise ValueError(f"--allow {text!r}: no game has a policy {spec.partition(':')[0].strip().lower()!r}")
    raise ValueError(f"--allow {text!r}: {(named or list(errors.values()))[0]}")
