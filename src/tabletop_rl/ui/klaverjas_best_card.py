"""The best-card service's domain: a request (``Query``) made into the player's position, checked against the
rules, and answered with the best legal card and the ranked candidates (``BestCard``).

It imports no web framework, so it runs and is tested without the ``[serve]`` extra; ``ui/klaverjas_service.py``
is the HTTP face over it (the schema, which checks the request's shape, the app, its routes, settings and logs).
The field names are the request's JSON names, so every refusal (``RequestError``) names the field as the client
wrote it. The contract (status codes, scoring order, ``scoringMode``) is in that module's docstring.

>>> query = Query(hand=["JH", "9H", "AC", "10C"], table=[Play(3, "QD")], trump="H", playerPosition=0)
>>> answer = BestCard().choose(query)
>>> answer["legalCards"], answer["bestCard"] in answer["legalCards"], answer["model"]["name"]
(['9H', 'JH'], True, 'heuristic')
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from tabletop_rl.games.klaverjas import model as M
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.baselines import heuristic_scores
from tabletop_rl.games.klaverjas.determinize import excluded_by_play

__all__ = ["AmsterdamUndertrump", "BestCard", "Play", "Query", "QuartetValues", "RequestError", "RuleSet",
           "Scorer", "ScoringMode", "StukMode", "Trick", "position"]

ScoringMode = Literal["simple", "points", "winTrick"]
RuleSet = Literal["rotterdam", "amsterdam"]
AmsterdamUndertrump = Literal["forbidden_unless_only_trumps", "forced"]
StukMode = Literal["same_trick", "declared_from_hand"]
QuartetValues = Literal["standard", "low_100", "all_100"]
#: An external responder: ``(the request as JSON, the legal cards' names) -> (score by card name, {"name",
#: "version"})``; ``RuntimeError`` when it cannot answer.
Scorer = Callable[[dict[str, Any], list[str]], tuple[dict[str, float], dict[str, str]]]

_log = logging.getLogger(__name__)


@dataclass
class Play:
    """A card played by a named seat (``{"player": 2, "card": "AH"}``); a bare card name names no seat."""

    player: int
    card: str


@dataclass
class Trick:
    """A finished trick: its leader, the four cards in play order, and the winner and points when given."""

    leader: int
    plays: list[str | Play]
    winner: int | None = None
    points: int | None = None


@dataclass
class Query:
    """A best-card request as its schema admits it (cards are names such as ``"10H"``, seats 0..3); the defaults
    are the service's. ``history`` None: left out, the hand size says which trick it is. The fields keep the
    request's JSON names, so ``dataclasses.asdict`` is the request as JSON and every error names a field as the
    client wrote it."""

    hand: list[str]
    trump: str
    playerPosition: int
    table: list[str | Play] = field(default_factory=list)
    history: list[Trick] | None = None
    leaderPosition: int | None = None
    partnerPosition: int | None = None
    makerPosition: int | None = None
    scoringMode: ScoringMode = "simple"
    topK: int = 3
    requestId: str | None = None
    rules: RuleSet = "rotterdam"
    amsterdamUndertrump: AmsterdamUndertrump = "forbidden_unless_only_trumps"
    stukMode: StukMode = "same_trick"
    quartetValues: QuartetValues = "standard"
    allowFallback: bool = True


class RequestError(Exception):
    """A request the service refuses: ``status`` 400 (malformed or inconsistent), 422 (the position admits no
    legal card) or 503 (a model is required and none answered), and a one-line message naming the field."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _play_card(play: str | Play) -> str:
    return play if isinstance(play, str) else play.card


def _play_seat(play: str | Play) -> int | None:
    return None if isinstance(play, str) else play.player


# --- position from a request ---------------------------------------------------------------------
def _parsed(parse: Callable[[str], int], text: str, field_name: str) -> int:
    try:
        return parse(text)
    except ValueError as e:
        raise RequestError(400, f"{field_name}: {e}") from None


def _check_places(query: Query) -> tuple[list[int], list[list[int]], list[int]]:
    """Card ids of the hand, history tricks and table; 400 for a card in two places."""
    seen: dict[int, str] = {}

    def place(text: str, where: str) -> int:
        card = _parsed(R.card_id, text, where)
        if card in seen:
            raise RequestError(400, f"{where}: card {R.card_name(card)} already appears in {seen[card]}")
        seen[card] = where
        return card

    hand = [place(c, f"hand[{i}]") for i, c in enumerate(query.hand)]
    history = []
    for i, trick in enumerate(query.history or []):
        cards = []
        for k, play in enumerate(trick.plays):
            seat = _play_seat(play)
            if seat is not None and seat != (trick.leader + k) % 4:
                raise RequestError(400, f"history[{i}].plays[{k}].player: expected seat {(trick.leader + k) % 4} "
                                        f"(clockwise from leader {trick.leader})")
            cards.append(place(_play_card(play), f"history[{i}].plays[{k}]"))
        history.append(cards)
    table = [place(_play_card(p), f"table[{k}]") for k, p in enumerate(query.table)]
    return hand, history, table


def _leader(query: Query) -> int:
    """The seat that led the trick in progress: ``leaderPosition``, else the seat ``table[0]`` names, else (an
    empty table) the player; 400 when the table's first card names no seat and ``leaderPosition`` is missing."""
    if query.leaderPosition is not None:
        return query.leaderPosition
    if not query.table:
        return query.playerPosition
    seat = _play_seat(query.table[0])
    if seat is None:
        raise RequestError(400, "leaderPosition: required when table[0] is a bare card "
                                "(or give it as {\"player\": seat, \"card\": ...})")
    return seat


def _check_seats(query: Query) -> int:
    """The leader of the trick in progress; 400 for seat inconsistencies."""
    if len(query.table) > 3:
        raise RequestError(400, f"table: at most 3 cards can lie on the table, got {len(query.table)}")
    if query.partnerPosition is not None and query.partnerPosition != (query.playerPosition + 2) % 4:
        raise RequestError(400, f"partnerPosition: the partner sits opposite seat {query.playerPosition}, "
                                f"at {(query.playerPosition + 2) % 4}")
    leader = _leader(query)
    for k, play in enumerate(query.table):
        seat = _play_seat(play)
        if seat is not None and seat != (leader + k) % 4:
            raise RequestError(400, f"table[{k}].player: expected seat {(leader + k) % 4} "
                                    f"(clockwise from leaderPosition {leader})")
    return leader


def _trick_number(query: Query, hand: list[int], history: list[list[int]]) -> int:
    """Tricks finished before this one: the history's length when it is given (the hand must then hold the
    rest), else what the hand size says (the history is optional)."""
    if query.history is None:
        return R.TRICKS_PER_DEAL - len(hand)
    if len(hand) != R.TRICKS_PER_DEAL - len(history):
        raise RequestError(422, f"no legal card: after {len(history)} tricks the hand must hold "
                                f"{R.TRICKS_PER_DEAL - len(history)} cards, got {len(hand)} "
                                f"(leave history out to have the hand size say which trick it is)")
    return len(history)


def position(query: Query) -> np.ndarray:
    """The state row of the player's view (other hands empty); ``RequestError`` 400/422 otherwise.

    Without a history the earlier tricks stay empty in the row: their cards count as unseen, so the model,
    the heuristic and determinisation treat them as possibly in any other hand, and the points and roem
    scored so far count as 0."""
    hand, history, table = _check_places(query)
    leader = _check_seats(query)
    trump = _parsed(R.suit_id, query.trump, "trump")
    if (leader + len(table)) % 4 != query.playerPosition:
        raise RequestError(422, f"no legal card: seat {(leader + len(table)) % 4} is to act, "
                                f"not playerPosition {query.playerPosition}")
    t = _trick_number(query, hand, history)
    state = _rules_state(query)
    first_leader = query.history[0].leader if query.history else leader
    state[R.TRUMP], state[R.PHASE] = trump, R.PLAYING
    state[R.MAKER] = first_leader if query.makerPosition is None else query.makerPosition
    state[R.HAND:R.HAND + 4] = 0
    state[R.HAND + query.playerPosition] = R.hand_of(hand)
    _replay_history(state, query, history)
    if query.history and leader != int(state[R.WINNER + t - 1]):
        raise RequestError(422, f"no legal card: leaderPosition {leader} did not win the last trick "
                                f"(seat {int(state[R.WINNER + t - 1])} did)")
    state[R.LEADER + t] = leader
    state[R.TRICK + 4 * t:R.TRICK + 4 * t + len(table)] = table
    state[R.TRICK_NO], state[R.IN_TRICK], state[R.CURRENT] = t, len(table), query.playerPosition
    _declared_stuk(state)
    _check_voids(state, query.playerPosition, len(history))
    return state


def _rules_state(query: Query) -> np.ndarray:
    """A row with the request's rule knobs; 400 for the one combination the rules refuse (forced undertrumping
    without Amsterdam rules)."""
    try:
        return R.new_state(rules=query.rules, stuk_mode=query.stukMode, quartet_values=query.quartetValues,
                           amsterdam_undertrump_vs_opponent=query.amsterdamUndertrump)
    except ValueError as e:
        raise RequestError(400, f"amsterdamUndertrump: {e}") from None


def _declared_stuk(state: np.ndarray) -> None:
    """``stukMode: declared_from_hand``: 20 roem to the team of a seat that played both K and Q of trump."""
    trump = int(state[R.TRUMP])
    seats = {R.player_of(state, 8 * trump + rank) for rank in (R.KING, R.QUEEN)}
    if int(state[R.STUK_MODE]) == R.STUK_DECLARED and len(seats) == 1 and -1 not in seats:
        team = R.team_of(seats.pop())
        state[R.ROEM + team] += R.STUK_ROEM
        state[R.DECLARED_STUK] = team


def _replay_history(state: np.ndarray, query: Query, history: list[list[int]]) -> None:
    """Fill the finished tricks; 422 when leaders, winners or points contradict the rules."""
    trump = int(state[R.TRUMP])
    for i, (trick, cards) in enumerate(zip(query.history or [], history)):
        if i and trick.leader != int(state[R.WINNER + i - 1]):
            raise RequestError(422, f"no legal card: history[{i}].leader is {trick.leader} but seat "
                                    f"{int(state[R.WINNER + i - 1])} won the trick before")
        row = np.array(cards, np.int64)
        winner = (trick.leader + R.winning_position(row, 4, trump)) % 4
        points = int(R.trick_points(row, trump))
        if trick.winner is not None and trick.winner != winner:
            raise RequestError(422, f"no legal card: history[{i}].winner is {trick.winner}, the rules say {winner}")
        if trick.points is not None and trick.points not in (points, points + R.LAST_TRICK_BONUS * (i == 7)):
            raise RequestError(422, f"no legal card: history[{i}].points is {trick.points}, the cards make {points}")
        state[R.TRICK + 4 * i:R.TRICK + 4 * i + 4] = cards
        state[R.LEADER + i], state[R.WINNER + i] = trick.leader, winner
        state[R.TRICK_ROEM + i] = R.trick_roem(row, trump, state[R.QUARTETS:R.QUARTETS + 8],
                                               state[R.STUK_MODE] == R.STUK_SAME_TRICK)
        state[R.CARD_POINTS + R.team_of(winner)] += points
        state[R.ROEM + R.team_of(winner)] += state[R.TRICK_ROEM + i]


def _check_voids(state: np.ndarray, seat: int, known: int) -> None:
    """422 when the player's own hand contradicts what the player's plays in the ``known`` tricks showed."""
    trump, regime = int(state[R.TRUMP]), int(R.follow_regime(state))
    hand = int(state[R.HAND + seat])
    for t in range(known):
        cards = [int(c) for c in state[R.TRICK + 4 * t:R.TRICK + 4 * t + 4]]
        k = (seat - int(state[R.LEADER + t])) % 4
        if hand & excluded_by_play(cards[:k], cards[k], trump, regime):
            raise RequestError(422, f"no legal card: history[{t}] shows seat {seat} could not hold "
                                    f"what its hand now holds (an illegal play or a wrong hand)")


def _legal_cards(state: np.ndarray) -> list[int]:
    """The cards the seat to act may play; 422 when there is none."""
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    if R.legal_mask(state, mask) == 0:
        raise RequestError(422, "no legal card in this position")
    return [int(c) for c in np.flatnonzero(mask)]


# --- scoring and ranking -------------------------------------------------------------------------
def _immediate_swing(state: np.ndarray, card: int) -> tuple[bool, float]:
    """Whether ``card`` would take over the trick in progress, and the point swing for our side."""
    trump, seat = int(state[R.TRUMP]), int(state[R.CURRENT])
    table = np.zeros(4, np.int64)
    n = R.current_trick(state, table)
    points = float(sum(R.card_points(int(c), trump) for c in table[:n]) + R.card_points(card, trump))
    if n == 0:
        return True, 0.0
    table[n] = card
    holder = (int(state[R.LEADER + int(state[R.TRICK_NO])]) + R.winning_position(table, n + 1, trump)) % 4
    takes = holder == seat
    return takes, points if R.team_of(holder) == R.team_of(seat) else -points


def _rank(mode: str, state: np.ndarray, legal: list[int], scores: dict[int, float]) -> dict[int, float]:
    """Scores of the legal cards after the ``scoringMode`` re-ranking (non-finite scores count as lowest)."""
    finite = {c: (s if np.isfinite(s) else -1e9) for c, s in scores.items() if c in legal}
    if mode == "simple":
        return finite
    swing = {c: _immediate_swing(state, c) for c in legal}
    if mode == "winTrick":
        return {c: finite[c] + (1e6 if swing[c][0] else 0.0) for c in legal}
    return {c: swing[c][1] + finite[c] / 1000 for c in legal}


class BestCard:
    """Chooses a card for a request: the position, then the responders in order (the local ``model``, else the
    ``external`` scorer, else the heuristic when the request allows a fallback), then the ``scoringMode``
    re-ranking. Whatever a responder says, the best card is a legal one."""

    def __init__(self, model: M.MLP | None = None, external: Scorer | None = None) -> None:
        self.model, self.external = model, external

    @property
    def model_info(self) -> dict[str, str] | None:
        """The local model's name and version, None without one."""
        return None if self.model is None else {"name": "klaverjas-mlp",
                                                "version": str(self.model.meta.get("created", "unknown"))}

    def warm_up(self, queries: Iterable[Query]) -> None:
        """Score and rank ``queries`` once with every local responder and mode, so that numba compiles (or loads
        from its cache) every kernel a request needs now rather than in the first request, which took seconds.
        The external scorer is not called."""
        for query in queries:
            state = position(query)
            legal = _legal_cards(state)
            scores = {c: s for c, (s, _) in heuristic_scores(state, legal).items()}
            if self.model is not None:
                scores = self.model.card_scores(state, legal)
            for mode in ("simple", "points", "winTrick"):
                _rank(mode, state, legal, scores)

    def choose(self, query: Query) -> dict[str, Any]:
        """The answer to ``query``: ``bestCard``, ``candidates`` (the hand, legal cards first by score, cut to
        ``topK``), ``legalCards``, ``model`` and ``requestId``; ``RequestError`` 400/422/503."""
        state = position(query)
        legal = _legal_cards(state)
        scores, reasons, info = self._score(query, state, legal)
        ranked = _rank(query.scoringMode, state, legal, scores)
        hand = R.cards_of(int(state[R.HAND + query.playerPosition]))
        candidates = [{"card": R.card_name(c), "score": round(float(ranked.get(c, scores.get(c, 0.0))), 4),
                       "legal": c in ranked, "reason": reasons.get(c, "not legal")}
                      for c in sorted(hand, key=lambda c: (c not in ranked, -ranked.get(c, 0.0), c))]
        best = max(ranked, key=lambda c: (ranked[c], -c))
        return {"bestCard": R.card_name(best), "candidates": candidates[:query.topK],
                "legalCards": [R.card_name(c) for c in legal], "model": info, "requestId": query.requestId}

    def _score(self, query: Query, state: np.ndarray,
               legal: list[int]) -> tuple[dict[int, float], dict[int, str], dict[str, str]]:
        """Scores and reasons by card id, and the responder's name and version."""
        if self.model is not None:
            return self.model.card_scores(state, legal), dict.fromkeys(legal, "local model"), self.model_info or {}
        if self.external is not None:
            try:
                by_name, info = self.external(asdict(query), [R.card_name(c) for c in legal])
                return ({c: by_name.get(R.card_name(c), float("-inf")) for c in legal},
                        dict.fromkeys(legal, "external model"), info)
            except RuntimeError as e:
                _log.warning(json.dumps({"event": "external_failed", "requestId": query.requestId, "error": str(e)}))
        if not query.allowFallback:
            raise RequestError(503, "allowFallback: a model is required but none is available "
                                    "(no local model loaded and the external API did not answer)")
        heuristic = heuristic_scores(state, legal)
        return ({c: s for c, (s, _) in heuristic.items()}, dict.fromkeys(legal, "fallback"),
                {"name": "heuristic", "version": "1"})
