"""Space Conquest baselines, ``random`` and ``heuristic`` (registered by ``tabletop_rl.agents.space_conquest``),
and ``play_match`` to pit two policies.

A Space Conquest policy's ``act(observation, action_mask, info)`` returns an env action: the RL
vector (``random``) or JSON orders (``heuristic``). ``info`` is the seat's view
(``SeatView``) whose game is a ``fog_copy``: only what that seat knows (``observe.policy_info``).

>>> result = play_match(HeuristicPolicy(), RandomPolicy(seed=1), seed=3)
>>> result["winner"] in (0, 1, None), result["turn"] >= 2
(True, True)
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from tabletop_rl.core.game import view_game_and_seat
from tabletop_rl.core.policy import SeededPolicy
from tabletop_rl.games.space_conquest import observe as O
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.game import SpaceConquestGame

__all__ = ["HeuristicPolicy", "MAX_HEURISTIC_MARGIN", "MAX_HEURISTIC_WEIGHT", "RandomPolicy", "SpaceConquestPolicy",
           "plan_orders", "play_match", "policy_orders"]

_UNKNOWN_RU = 2.0  # expected RU of a star never visited (NPC RU is 1-3)
_UNKNOWN_GARRISON = 3  # assume the strongest NPC garrison at a star never seen
#: The heuristic's target-score weights lie in [-MAX_HEURISTIC_WEIGHT, MAX_HEURISTIC_WEIGHT] (finite, so two
#: targets' scores always compare), its margin in 0..MAX_HEURISTIC_MARGIN extra ships (a negative margin could
#: order a fleet of no ships; more than this never leaves a star).
MAX_HEURISTIC_WEIGHT = 1e6
MAX_HEURISTIC_MARGIN = 1000


class SpaceConquestPolicy(SeededPolicy):
    """Timing and a check of the action's form; subclasses write ``decide``, which answers JSON orders or an
    RL action vector (not an index into the mask, so ``BasePolicy.act`` does not apply)."""

    def act(self, observation: Any, action_mask: Any, info: Mapping[str, Any] | None = None) -> Any:
        self._nodes = 0
        start = time.perf_counter()
        action = self.decide(observation, action_mask, {} if info is None else info)
        self.stats.record(time.perf_counter() - start, self._nodes)
        if not isinstance(action, (dict, np.ndarray)):
            raise RuntimeError(f"policy {self.name!r} returned {type(action).__name__}, not orders or an RL action")
        return action

    def decide(self, observation: Any, action_mask: Any, info: Mapping[str, Any]) -> dict[str, Any] | np.ndarray:
        raise NotImplementedError


# --- random ---------------------------------------------------------------------------------------
@njit(cache=True)
def _sample_masked(flat_mask, rng, action):
    """Per action dimension, a uniform choice among the values the mask allows."""
    start = 0
    for d in range(O.ACTION_NVEC.size):
        n = O.ACTION_NVEC[d]
        allowed = 0
        for v in range(n):
            allowed += flat_mask[start + v]
        pick = R.random_below(rng, allowed)
        for v in range(n):
            if flat_mask[start + v]:
                if pick == 0:
                    action[d] = v
                    break
                pick -= 1
        start += n


class RandomPolicy(SpaceConquestPolicy):
    """Every star of its own with ships sends a random share to a random star (or stays), uniformly
    over the mask's choices. Takes the env observation's mask (tuple or flat)."""

    def __init__(self, name: str = "random", seed: int | None = None) -> None:
        super().__init__(name, seed)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._rng = np.zeros(R.RNG + 1, np.int64)
        self._rng[R.RNG:].view(np.uint64)[0] = self.rng.integers(0, 2**63, dtype=np.uint64)

    def decide(self, observation: Any, action_mask: Any, info: Mapping[str, Any]) -> np.ndarray:
        if action_mask is None:
            game, seat = view_game_and_seat(info, self.name)
            action_mask = O.encode(game.state, seat)[1]
        if isinstance(action_mask, tuple):  # gymnasium's per-dimension form
            action_mask = np.concatenate(action_mask)
        action = np.zeros(O.ACTION_NVEC.size, np.int64)
        _sample_masked(np.asarray(action_mask, np.int8), self._rng, action)
        return action


# --- heuristic -----------------------------------------------------------------------------------
class HeuristicPolicy(SpaceConquestPolicy):
    """The scripted bot of docs/space_conquest.md §11: score targets 3 E[RU] - distance - 1.5 threat,
    keep garrisons at RU (no rebellion), keep a home reserve of min(4, ceil(ships / 6)) plus any last-seen
    threat, strike with enough to win and still hold the star, and gather idle ships at the star nearest the
    enemy."""

    def __init__(self, name: str = "heuristic", seed: int | None = None, ru_weight: float = 3.0,
                 distance_weight: float = 1.0, threat_weight: float = 1.5, margin: int = 1) -> None:
        super().__init__(name, seed)
        for key, value in (("ru_weight", ru_weight), ("distance_weight", distance_weight),
                           ("threat_weight", threat_weight)):
            if not -MAX_HEURISTIC_WEIGHT <= value <= MAX_HEURISTIC_WEIGHT:  # NaN fails both comparisons
                raise ValueError(f"heuristic {key} must be a finite number in [-{MAX_HEURISTIC_WEIGHT:g}, "
                                 f"{MAX_HEURISTIC_WEIGHT:g}], got {value}")
        if not 0 <= margin <= MAX_HEURISTIC_MARGIN:
            raise ValueError(f"heuristic margin must be in 0..{MAX_HEURISTIC_MARGIN} ships, got {margin}")
        self.weights = (ru_weight, distance_weight, threat_weight)
        self.margin = margin

    def decide(self, observation: Any, action_mask: Any, info: Mapping[str, Any]) -> dict[str, Any]:
        game, seat = view_game_and_seat(info, self.name)
        return plan_orders(O.player_view(game, seat), self.weights, self.margin)


def _dist(a: Mapping[str, Any], b: Mapping[str, Any]) -> int:
    return max(abs(a["x"] - b["x"]), abs(a["y"] - b["y"]))


def _threat(star: Mapping[str, Any], stars: list[Mapping[str, Any]]) -> float:
    """Last-seen enemy ships within 3 parsecs of ``star``, in units of 5 ships."""
    return sum((s["ships"] or 0) / 5 for s in stars if s["owner"] == "enemy" and _dist(s, star) <= 3)


def _needed(star: Mapping[str, Any], turn: int, travel: int, margin: int) -> int:
    """Ships to send so that the survivors of the fight still hold the star (survivors >= RU)."""
    ru = star["ru"] if star["ru"] is not None else _UNKNOWN_GARRISON
    if star["owner"] == "enemy":
        growth = ru * (turn - (star["seen_turn"] or turn) + travel)
        garrison = (star["ships"] or 0) + min(growth, 4 * ru)
    elif star["owner"] == "npc" and star["ships"] is not None:
        garrison = star["ships"]
    else:
        garrison = ru
    return garrison + 1 + ru + margin if star["owner"] == "enemy" else ru + (garrison + 1) // 2 + margin


def _reserve(star: Mapping[str, Any], total: int, stars: list[Mapping[str, Any]]) -> int:
    if star["is_your_home"]:
        return min(4, math.ceil(total / 6)) + int(_threat(star, stars) * 5)
    return star["ru"]


def plan_orders(view: Mapping[str, Any], weights: tuple[float, float, float] = (3.0, 1.0, 1.5),
                margin: int = 1) -> dict[str, Any]:
    """The heuristic's orders for one turn from a ``player_view``."""
    stars = view["stars"]
    mine = [s for s in stars if s["owner"] == "you"]
    total = sum(s["ships"] for s in mine) + sum(f["ships"] for f in view["fleets"])
    spare = {s["letter"]: s["ships"] - _reserve(s, total, stars) for s in mine}
    en_route = {f["to"] for f in view["fleets"]}
    ru_w, dist_w, threat_w = weights
    targets = []
    for t in stars:
        if t["owner"] == "you" or t["letter"] in en_route:
            continue
        value = 10.0 if t["ru"] == R.HOME_RU else (t["ru"] if t["ru"] is not None else _UNKNOWN_RU)
        near = min(_dist(t, s) for s in mine)
        bonus = 1.0 if t["enemy_home_candidate"] and t["ru"] is None else 0.0
        targets.append((ru_w * (value + bonus) - dist_w * near - threat_w * _threat(t, stars), t))
    targets.sort(key=lambda item: -item[0])
    moves = []
    for _, t in targets:
        sources = sorted(mine, key=lambda s: (_dist(s, t), s["letter"]))
        for s in sources:
            need = _needed(t, view["turn"], _dist(s, t), margin)
            if spare[s["letter"]] >= need:
                moves.append({"from": s["letter"], "to": t["letter"], "ships": need})
                spare[s["letter"]] -= need
                break
    moves += _gather(mine, spare, stars)
    return {"moves": moves}


def _gather(mine: list[Mapping[str, Any]], spare: dict[str, int], stars: list[Mapping[str, Any]]) -> list[dict]:
    """Idle ships of the back stars move to the own star nearest the enemy's corner (the front)."""
    block = [s for s in stars if s["enemy_home_candidate"]]
    front = min(mine, key=lambda s: (min(_dist(s, b) for b in block), s["letter"]))
    return [{"from": s["letter"], "to": front["letter"], "ships": spare[s["letter"]]}
            for s in mine if s is not front and spare[s["letter"]] > 0 and not s["is_your_home"]]


# --- matches -------------------------------------------------------------------------------------
def play_match(policy_0: Any, policy_1: Any, seed: int, max_turns: int = R.DEFAULT_MAX_TURNS) -> dict[str, Any]:
    """Play one game between two policies (seat 0 first); returns ``game.result()``."""
    game = SpaceConquestGame(seed, max_turns)
    policies = (policy_0, policy_1)
    for p, policy in enumerate(policies):
        if hasattr(policy, "reset"):
            policy.reset(seed * 2 + p)
    while not game.is_over:
        game.step(*(policy_orders(policy, game, p) for p, policy in enumerate(policies)))
    return game.result()


def policy_orders(policy: Any, game: SpaceConquestGame, player: int) -> dict[str, Any] | str:
    """Ask ``policy`` for ``player``'s orders this turn, as JSON orders whatever form it answers in."""
    obs, mask = O.encode(game.state, player)
    return O.as_orders(game, player, policy.act(obs, mask, O.policy_info(game, player)))
