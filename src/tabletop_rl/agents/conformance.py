"""The game contract's conformance check: what anyone adding a game runs, as PettingZoo's ``api_test`` is run on
an env. ``check_game(name)`` plays whole matches through the contract alone (``core.game.Game``) with the game's
registered ``random`` policy and, at every step, checks:

- **same seed, same game**: a second match from the same seed, given the same moves, stays equal to the first;
- **a JSON round trip**: ``from_json(to_json())`` gives the same position, pending seats, masks and observations;
- **illegal moves are refused**: answers outside the mask (and ids out of range) raise ``ValueError`` (the
  contract's ``IllegalActionError`` is one) and leave the match as it was;
- **the view is a copy, free of hidden information**: ``policy_info(seat)`` is a ``SeatView`` of that seat and
  player whose game is not the live one; a match whose hidden parts are re-dealt (``seat_view(seat, seed)``) or
  whose random stream is reseeded gives an equal view and observation;
- **a policy cannot reach the match through its view**: one that plays moves on its view's game and scribbles
  over its arrays leaves the match as it was.

Each failure is an ``AssertionError`` naming the game, the match's seed and ply and what differed.

>>> check_game("splendor", matches=1, max_steps=40)
"""

from __future__ import annotations

import numpy as np

from tabletop_rl.agents.registry import make_policy
from tabletop_rl.core.game import Game, SeatView, policy_answer
from tabletop_rl.games import game_class

__all__ = ["check_game"]

#: Answers that no game accepts as a move id: below zero, and past any action table.
_OUT_OF_RANGE = (-1, -(2**63), 2**63)


def check_game(name: str, matches: int = 2, seed: int = 0, max_steps: int = 5000) -> None:
    """Play ``matches`` matches of game ``name`` (for each of its player counts, from seeds ``seed``,
    ``seed + 1``, ...) through the contract, checking each step (the module docstring lists what);
    ``max_steps`` bounds each match (a longer one stops there, checked so far). ``AssertionError`` names
    what failed."""
    cls = game_class(name)
    for num_players in cls.player_counts:
        for k in range(matches):
            _check_match(cls, name, seed + k, num_players, max_steps)


def _check_match(cls: type[Game], name: str, seed: int, num_players: int, max_steps: int) -> None:
    game, twin = cls.new(seed, num_players), cls.new(seed, num_players)
    policies = [make_policy("random", game=name, seed=seed * 8 + s) for s in range(game.num_seats)]
    for step in range(max_steps):
        where = f"{name}, seed {seed}, {num_players} players, step {step}"
        _expect(game.to_json() == twin.to_json(), where, "two matches from one seed given the same moves differ")
        _check_round_trip(cls, game, where)
        if game.is_over:
            _check_result(game, where)
            return
        for seat in game.pending_seats():
            _check_view(game, seat, seed + step, where)
        moves = {seat: policy_answer(game, seat, policies[seat]) for seat in game.pending_seats()}
        for seat in moves:
            _check_refusals(game, seat, moves, where)
        game.step_joint(moves)
        twin.step_joint(moves)


def _expect(ok: bool, where: str, what: str) -> None:
    if not ok:
        raise AssertionError(f"{where}: {what}")


def _snapshot(game: Game) -> tuple[str, list[int], list[bytes], list[bytes]]:
    """What a match shows through the contract: its JSON, pending seats, and each seat's mask and observation."""
    seats = range(game.num_seats)
    return (game.to_json(), game.pending_seats(), [np.asarray(game.seat_mask(s)).tobytes() for s in seats],
            [np.asarray(game.observe(s)).tobytes() for s in seats])


def _check_round_trip(cls: type[Game], game: Game, where: str) -> None:
    _expect(_snapshot(cls.from_json(game.to_json())) == _snapshot(game), where,
            "from_json(to_json()) is not the same position")


def _check_result(game: Game, where: str) -> None:
    _expect(game.pending_seats() == [], where, "a match that is over still has pending seats")
    for field in ("scores", "winners", "ranks"):
        values = getattr(game, field)
        _expect(len(values) == game.num_players if field != "winners" else
                all(0 <= p < game.num_players for p in values), where, f"{field} {values} do not fit the players")


def _view_key(game: Game, seat: int) -> tuple[int, int, str, bytes]:
    view = game.policy_info(seat)
    return view.seat, view.player, view.game.to_json(), np.asarray(game.observe(seat)).tobytes()


def _check_view(game: Game, seat: int, seed: int, where: str) -> None:
    view = game.policy_info(seat)
    _expect(isinstance(view, SeatView) and view.seat == seat and view.player == game.player_of(seat), where,
            f"policy_info({seat}) is not the SeatView of seat {seat}")
    _expect(view.game is not game and isinstance(view.game, type(game)), where,
            f"seat {seat}'s view holds the live game, or no game of its kind")
    key = _view_key(game, seat)
    for other in _hidden_twins(game, seat, seed):
        _expect(_view_key(other, seat) == key, where,
                f"seat {seat}'s view or observation changes with what it cannot see")
    before = _snapshot(game)
    _vandalise(view.game, seed)
    _expect(_snapshot(game) == before, where, f"what a policy did to seat {seat}'s view reached the match")


def _hidden_twins(game: Game, seat: int, seed: int) -> list[Game]:
    """Matches that differ from ``game`` only in what ``seat`` cannot see: its hidden parts re-dealt, and (a
    turn-based game) its random stream reseeded."""
    twins = [game.seat_view(seat, seed), game.seat_view(seat, seed + 1)]
    reseed = getattr(game, "reseed", None)
    if reseed is not None:
        twin = type(game).from_json(game.to_json())
        twin.reseed(seed * 7919 + 1)  # type: ignore[attr-defined]
        twins.append(twin)
    return twins


def _vandalise(view_game: Game, seed: int) -> None:
    """What a hostile policy might do to its view: play its moves on it, then scribble over its arrays."""
    rng = np.random.default_rng(seed)
    for _ in range(3):
        if view_game.is_over or not view_game.pending_seats():
            break
        try:
            view_game.step_joint({s: view_game.move_record(s, _some_answer(view_game, s, rng))
                                  for s in view_game.pending_seats()})
        except ValueError:  # a view may refuse play (a fog copy holds no hidden cards to play with)
            break
    for value in vars(view_game).values() if hasattr(view_game, "__dict__") else ():
        if isinstance(value, np.ndarray) and value.flags.writeable:
            value.fill(1)
    for slot in getattr(type(view_game), "__slots__", ()):
        value = getattr(view_game, slot, None)
        if isinstance(value, np.ndarray) and value.flags.writeable:
            value.fill(1)


def _some_answer(game: Game, seat: int, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(np.asarray(game.seat_mask(seat)))
    return int(rng.choice(legal)) if legal.size else 0


def _check_refusals(game: Game, seat: int, moves: dict[int, object], where: str) -> None:
    """``seat``'s answers outside its mask, and ids out of range, raise ``ValueError`` and change nothing, the
    other pending seats answering ``moves``. A game of simultaneous moves answers with orders, not move ids (its
    mask is not over ids): only the ids out of range apply to it."""
    mask = np.asarray(game.seat_mask(seat))
    illegal = [] if game.simultaneous else np.flatnonzero(~mask.astype(bool)).tolist()[:8]
    before = _snapshot(game)
    for answer in [*illegal, *_OUT_OF_RANGE]:
        try:
            game.step_joint({**moves, seat: game.move_record(seat, answer)})
        except ValueError:
            _expect(_snapshot(game) == before, where, f"a refused answer {answer!r} of seat {seat} changed the match")
            continue
        raise AssertionError(f"{where}: seat {seat}'s answer {answer!r}, not a legal move, was played")
