"""Games a person plays in the browser against policies, saved after every move and resumable.

A game is a ``terminal.Table`` (the person's player, each other player's policy spec, the deal seed) saved in
the terminal's format (``terminal.SAVE_FORMAT``), so ``tabletop play --load`` resumes a game begun in the
browser and the browser resumes one saved by ``tabletop play``. Every policy is one of the desk's menu
(``menu.PolicyMenu``): a new game naming another spec is refused, and so is a save naming one. A game's id is
the save file's name without ``.json``, in the desk's folder. In Klaverjas the person plays a partnership, both
its seats, seeing the hand of the seat to act (as a policy in the arena does); in Space Conquest the person's
move is a turn's orders (JSON), played with the policy's orders of the same turn, which the person never sees.

>>> import tempfile
>>> desk = PlayDesk(Path(tempfile.mkdtemp()))
>>> view = desk.start("splendor", vs=["random"], seat=1, seed=3, name="demo")
>>> view["id"], view["your_turn"], len(view["log"])
('demo', True, 2)
>>> desk.move("demo", "take2:red")
Traceback (most recent call last):
tabletop_rl.core.game.IllegalActionError: take2:red needs 4 red in the bank, there are 3
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from tabletop_rl.agents import make_policy
from tabletop_rl.arena.schedule import derive_seed
from tabletop_rl.core.game import IllegalActionError, policy_answer
from tabletop_rl.core.policy import Policy
from tabletop_rl.games import game_class
from tabletop_rl.ui.terminal import Table, load_table, new_table, save_table, to_you
from tabletop_rl.ui.web.menu import PolicyMenu
from tabletop_rl.ui.web.views import position_view

__all__ = ["MAX_OPEN_GAMES", "MAX_POLICY_MOVES", "PlayDesk"]

#: Policy moves one request may play before the person's turn comes back (a game ends long before).
MAX_POLICY_MOVES = 10_000
#: Games kept in memory at once; the least recently used is dropped and reloaded from its save file when asked for
#: again. Few, because an open game holds its policies: a Klaverjas search's transposition table is 48 MB.
MAX_OPEN_GAMES = 8
#: Log lines a view carries (the most recent).
_LOG_LINES = 200
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_SUFFIX = ".json"


@dataclass
class _OpenGame:
    """One open game: its table, the policies of the other players, the save file, what has been played."""

    table: Table
    policies: dict[int, Policy]
    path: Path
    log: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _offered(table: Table, menu: PolicyMenu) -> Table:
    """``table`` with each policy's spec as ``menu`` spells it; ``ValueError`` for a spec the menu does not offer."""
    return replace(table, specs=[None if spec is None else menu.check(table.game, spec) for spec in table.specs])


def _policies(table: Table) -> dict[int, Policy]:
    """The policy of each player but the person, seeded as ``tabletop play`` seeds them."""
    game = table.game
    return {
        p: make_policy(spec, game=game, seed=derive_seed(table.seed, p))
        for p, spec in enumerate(table.specs)
        if spec is not None
    }


class PlayDesk:
    """The browser's games, each saved as ``<folder>/<id>.json`` after every move, against the policies of ``menu``
    (default: the built-in menu)."""

    def __init__(self, folder: Path, menu: PolicyMenu | None = None) -> None:
        self.folder = Path(folder)
        self.menu = menu or PolicyMenu.build()
        self._open: OrderedDict[str, _OpenGame] = OrderedDict()
        self._lock = threading.Lock()

    # --- opening -------------------------------------------------------------------------------
    def start(
        self,
        game: str,
        vs: list[str],
        seat: int = 0,
        num_players: int = 2,
        seed: int | None = None,
        name: str | None = None,
    ) -> dict[str, Any]:
        """A new game of ``game``: the person is player ``seat``, ``vs`` plays the others (one spec for all, or
        one per other player), each a spec of the menu. ``ValueError`` for a spec the menu does not offer, a bad seat,
        player count or name, or a name taken."""
        game_class(game)  # an unknown game is refused before a name is made from it
        name = name or f"{game}-{datetime.now():%Y%m%d-%H%M%S-%f}"
        path = self._path(name)
        if path.exists():
            raise ValueError(f"a saved game named {name!r} exists; resume it or choose another name")
        table = _offered(new_table(game, vs, num_players, seat, seed), self.menu)
        opened = _OpenGame(table, _policies(table), path, [f"new {game} game, seed {table.seed}; you are P{seat}"])
        self.folder.mkdir(parents=True, exist_ok=True)
        save_table(table, path)
        self._keep(name, opened)
        return self._advance(name, opened)

    def resume(self, name: str) -> dict[str, Any]:
        """Reopen the saved game ``name`` (a file of the desk's folder); ``ValueError`` for a damaged file or one
        whose policies the menu does not offer (none of them is built)."""
        path = self._path(name)
        if not path.is_file():
            raise LookupError(f"no saved game named {name!r} in {self.folder}")
        table = load_table(path)
        try:
            table = _offered(table, self.menu)
        except ValueError as e:
            raise ValueError(f"saved game {name!r}: {e}") from None
        opened = _OpenGame(table, _policies(table), path, [f"resumed from {path}"])
        self._keep(name, opened)
        return self._advance(name, opened)

    def saves(self) -> list[dict[str, Any]]:
        """The saved games of the folder, newest first: id, game, file and when it was last saved."""
        files = sorted(self.folder.glob(f"*{_SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True)
        return [
            {"id": p.stem, "file": str(p), "saved": datetime.fromtimestamp(p.stat().st_mtime).isoformat(" ", "seconds")}
            for p in files
            if _NAME.match(p.stem)
        ]

    # --- playing -------------------------------------------------------------------------------
    def view(self, name: str) -> dict[str, Any]:
        """The game ``name`` as the person sees it, with their legal moves when it is their turn."""
        opened = self._get(name)
        with opened.lock:
            return self._view(name, opened)

    def move(self, name: str, move: str) -> dict[str, Any]:
        """Play the person's ``move`` (a move name; in a game of simultaneous moves the orders, as JSON text) with
        the other seats' answers of the same step, then the policies up to the person's next turn, saving after
        each step. ``IllegalActionError`` (or ``ValueError`` for no move at all) leaves the game as it was; its
        reason is said to the person ("your tokens"), without the game and seat they know."""
        opened = self._get(name)
        with opened.lock:
            state = opened.table.state
            seat = self._person_seat(opened)
            if seat is None:
                raise ValueError("the game is over" if state.is_over else "it is not your turn")
            others = [s for s in state.pending_seats() if s != seat]  # seats ordering with the person, unseen
            try:
                self._step(opened, {seat: move, **self._answers(opened, others)})
            except IllegalActionError as e:
                raise IllegalActionError(to_you(e.reason, opened.table.seat)) from None
        return self._advance(name, opened)

    # --- the parts -----------------------------------------------------------------------------
    def _advance(self, name: str, opened: _OpenGame) -> dict[str, Any]:
        """The policies' moves until the person is to act or the game ends (at most ``MAX_POLICY_MOVES``)."""
        with opened.lock:
            state = opened.table.state
            for _ in range(MAX_POLICY_MOVES):
                if state.is_over or self._person_seat(opened) is not None:
                    break
                self._step(opened, self._answers(opened, state.pending_seats()))
            return self._view(name, opened)

    @staticmethod
    def _answers(opened: _OpenGame, seats: list[int]) -> dict[int, Any]:
        """Each seat's policy's move, as the results files record it, from what that seat may see."""
        state = opened.table.state
        return {seat: policy_answer(state, seat, opened.policies[state.player_of(seat)]) for seat in seats}

    @staticmethod
    def _step(opened: _OpenGame, moves: dict[int, Any]) -> None:
        """Play one step's moves, log what the person may know of them and save the game."""
        table, state = opened.table, opened.table.state
        texts = {seat: state.describe_move(move) for seat, move in moves.items()}  # before: the card is still there
        state.step_joint(moves)
        for seat, text in texts.items():
            player = state.player_of(seat)
            if player == table.seat:
                opened.log.append(f"P{player} (you) played {text}")
            else:  # another seat's simultaneous orders stay its own, as in the replay of the person's seat
                opened.log.append(
                    f"P{player} ({table.specs[player]}) "
                    + ("gave its orders" if state.simultaneous else f"played {text}")
                )
        save_table(table, opened.path)

    @staticmethod
    def _person_seat(opened: _OpenGame) -> int | None:
        """The seat the person moves now, None when only policies are to move or the game is over."""
        state = opened.table.state
        return next((s for s in state.pending_seats() if state.player_of(s) == opened.table.seat), None)

    def _view(self, name: str, opened: _OpenGame) -> dict[str, Any]:
        table, state = opened.table, opened.table.state
        seat = self._person_seat(opened)
        listed = seat is not None and not state.simultaneous  # orders are many: the page builds them on the map
        legal = [state.move_record(seat, int(a)) for a in np.flatnonzero(state.seat_mask(seat))] if listed else []
        return {
            "id": name,
            "game": table.game,
            "seat": table.seat,
            "seed": table.seed,
            "save": str(opened.path),
            "players": ["you" if spec is None else spec for spec in table.specs],
            "your_turn": seat is not None,
            "acting_seat": seat,
            "legal": [{"move": move, "text": state.describe_move(move)} for move in legal],
            "log": opened.log[-_LOG_LINES:],
            **position_view(state, table.seat),
        }

    def _path(self, name: str) -> Path:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(
                f"a game's name is 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit; got {name!r}"
            )
        return self.folder / f"{name}{_SUFFIX}"

    def _keep(self, name: str, opened: _OpenGame) -> None:
        with self._lock:
            self._open[name] = opened
            self._open.move_to_end(name)
            while len(self._open) > MAX_OPEN_GAMES:
                self._open.popitem(last=False)

    def _get(self, name: str) -> _OpenGame:
        """The open game ``name``, reopened from its save file when it was dropped from memory."""
        with self._lock:
            if name in self._open:
                self._open.move_to_end(name)
                return self._open[name]
        self.resume(name)
        return self._open[name]
