"""Splendor as a TextArena env (needs the ``[textarena]`` extra): ``textarena.make("Splendor-v0")``.

Importing this module registers ``Splendor-v0`` (``import tabletop_rl`` alone loads no framework). The env
follows TextArena's loop (``reset(num_players, seed)``, ``get_observation()``, ``step(action)``, ``close()``)
for 2-4 players:

- the observation is the rules, what happened since the player's last turn and the board from the player's
  seat (``SplendorGame.render``) with the legal moves, not a chat log that grows all game;
- a move is a move name in square brackets, ``[buy:1.3]`` (the last bracketed name of the reply counts; a reply
  without brackets is bracketed whole by TextArena's ``ActionFormattingWrapper``);
- returning tokens and choosing a noble are further turns of the same player;
- an invalid move is re-prompted with our reason (the ``IllegalActionError`` or move-reader message) up to
  ``error_allowance`` times (TextArena's default, 1), then the player loses.

Rewards are ours: winners share +1, losers share -1; 0 each after the ply cap. A player who forfeits gets -1
and the others share +1.

>>> import textarena as ta                                   # doctest: +SKIP
>>> import tabletop_rl.envs.textarena                        # doctest: +SKIP
>>> env = ta.make("Splendor-v0"); env.reset(num_players=2, seed=7)   # doctest: +SKIP
"""

from __future__ import annotations

import re
from typing import Any

import textarena as ta
from textarena.envs.registration import ENV_REGISTRY, register
from textarena.wrappers import ActionFormattingWrapper

from tabletop_rl.agents.llm.splendor import SYSTEM_PROMPT
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.game import SplendorGame

__all__ = ["ENV_ID", "SplendorTextArenaEnv", "SplendorObservationWrapper"]

ENV_ID = "Splendor-v0"
_BRACKETED = re.compile(r"\[([^\[\]]*)\]")
#: The rules and move names of our LLM prompt; its reply format (JSON) is not TextArena's, so it stops there.
_RULES = SYSTEM_PROMPT.partition("\n\nTHE POSITION")[0]


class SplendorTextArenaEnv(ta.Env):
    """One TextArena game of Splendor over a ``SplendorGame``.

    ``FFAMultiPlayerState`` keeps the turn for every player count: TextArena's ``TwoPlayerState.set_winners``
    raises ``AttributeError`` (it writes ``self.info``, which the state never has), and a shared win or a
    forfeit needs a reward per player, which ``set_game_outcome`` takes.
    """

    def __init__(self, max_plies: int | None = R.DEFAULT_MAX_PLIES, error_allowance: int = 1,
                 show_legal_moves: bool = True) -> None:
        self.max_plies = max_plies
        self.error_allowance = error_allowance
        self.show_legal_moves = show_legal_moves
        self.game: SplendorGame | None = None

    def reset(self, num_players: int, seed: int | None = None) -> None:
        self.game = SplendorGame(num_players, seed=seed, max_plies=self.max_plies)
        self.state = ta.FFAMultiPlayerState(num_players=num_players, seed=seed, error_allowance=self.error_allowance)
        self.state.reset(player_prompt_function=self._prompt)
        self._show_board()

    def _prompt(self, player_id: int, game_state: Any = None) -> str:
        return (f"{_RULES}\n\nYou are Player {player_id} of {self.state.num_players}. On your turn write your move "
                "name in square brackets, e.g. [take:white,blue,green] or [buy:1.3]; returning tokens and "
                "choosing a noble are further turns of yours.")

    def _show_board(self) -> None:
        game = self._game()
        seat = game.current_player
        legal = " ".join(f"[{game.move_name(a)}]" for a in game.legal_actions()) if self.show_legal_moves else ""
        board = f"{game.render(viewer=seat)}\nPlayer {seat} to move ({game.phase})."
        self.state.add_observation(message=f"{board}\nLegal moves: {legal}" if legal else board, to_id=seat,
                                   observation_type=ta.ObservationType.GAME_BOARD)

    def _game(self) -> SplendorGame:
        if self.game is None:
            raise RuntimeError("call reset(num_players, seed) before playing")
        return self.game

    def step(self, action: str) -> tuple[bool, ta.Info]:
        game, seat = self._game(), self.state.current_player_id
        try:
            move = _read_move(action)
            text = game.describe_move(move)  # before the move: it names the card the move takes
            game.step(move)
        except ValueError as error:  # IllegalActionError too: its message is the reason
            if self.state.set_invalid_move(reason=str(error)):
                self._forfeit(seat, str(error))
            return self.state.step(rotate_player=False)
        self.state.add_observation(message=f"Player {seat}: {text}",
                                   observation_type=ta.ObservationType.GAME_ACTION_DESCRIPTION)
        if game.is_over:
            self._finish(game)
            return self.state.step(rotate_player=False)
        done, info = self.state.step(rotate_player=False)
        self.state.manually_set_current_player_id(game.current_player)  # a sub-step keeps the same player
        self._show_board()
        return done, info

    def _finish(self, game: SplendorGame) -> None:
        winners = game.winners
        if not winners:
            reason = "The ply cap was reached: a draw."
        else:
            reason = f"Player(s) {', '.join(map(str, winners))} won with scores {game.scores}."
        self.state.set_game_outcome(dict(enumerate(game.end_rewards())), reason)

    def _forfeit(self, seat: int, reason: str) -> None:
        others = self.state.num_players - 1
        rewards = {p: -1.0 if p == seat else 1.0 / others for p in range(self.state.num_players)}
        self.state.set_game_outcome(rewards, f"Player {seat} loses: no valid move within the allowance ({reason})")


def _read_move(reply: str) -> str:
    """The last bracketed move name of ``reply``; ``ValueError`` saying how to write one."""
    found = _BRACKETED.findall(reply)
    if not found:
        raise ValueError("no move in square brackets: write e.g. [take:white,blue,green] or [buy:1.3]")
    return found[-1]


class SplendorObservationWrapper(ta.ObservationWrapper):
    """The observation as one string: the rules, the messages since the player's last turn (others' moves,
    the reason a move was refused) and the player's latest board. TextArena's ``LLMObservationWrapper``
    would instead resend the whole game's messages every turn."""

    def __init__(self, env: ta.Env) -> None:
        super().__init__(env)
        self._prompts: dict[int, str] = {}
        self._boards: dict[int, str] = {}

    def observation(self, player_id: int, observation: Any) -> str:
        news = []
        for _, message, kind in observation or []:
            if kind == ta.ObservationType.PROMPT:
                self._prompts[player_id] = message
            elif kind == ta.ObservationType.GAME_BOARD:
                self._boards[player_id] = message
            else:
                news.append(message)
        parts = [self._prompts.get(player_id, ""), "\n".join(news), self._boards.get(player_id, "")]
        return "\n\n".join(part for part in parts if part)


if ENV_ID not in ENV_REGISTRY:
    register(id=ENV_ID, entry_point=SplendorTextArenaEnv,
             default_wrappers=[SplendorObservationWrapper, ActionFormattingWrapper])
