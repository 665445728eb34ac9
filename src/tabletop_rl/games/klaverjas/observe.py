"""What a Klaverjas seat sees: its observation vector (``observe``), and the zero-sum end rewards.

Seats are numbered from the observer (1 = left, 2 = partner, 3 = right); the layout is ``OBS_PARTS``.
Only the seat's own hand and the public record go in: the other hands never do.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabletop_rl.games.klaverjas import rules as R

__all__ = ["OBS_PARTS", "OBS_SIZE", "encode_into", "end_rewards", "observe", "step_observe",
           "step_vs_random_observe"]

#: Observation parts in order: (name, size). Seats are relative to the observer.
OBS_PARTS = (
    ("hand", 32),                 # cards the observer holds
    ("trick", 128),               # the trick in progress: 4 relative seats x 32 cards
    ("played", 128),              # earlier tricks of this deal: who played which card
    ("trump", 4),                 # one-hot suit (all zero while bidding)
    ("proposed", 4),              # proposed suit (proposed_suit scheme)
    ("maker", 4),                 # relative seat of the maker
    ("leader", 4),                # relative seat that led the trick in progress
    ("phase", 4),                 # bidding, playing, over, doubling
    ("forehand", 4),              # relative seat of forehand
    ("deal_points", 4),           # our card points /162, theirs, our roem /200, theirs
    ("match", 3),                 # our match score /1000, theirs, fraction of the match left (deals or target)
    ("amsterdam", 1),             # 1 under Amsterdam follow rules
    ("passes", 1),                # passes in the current bidding round / 4
    ("multiplier", 3),            # kraken: deal x1, x2 (kraak), x4 (rekraak)
    ("declared_stuk", 2),         # a stuk declared from hand this deal: by us, by them
    ("knobs", 4),                 # kraken on, target match, stuk declared from hand, forced undertrumping
    ("quartets", 8),              # quartet roem by rank (7 8 9 10 J Q K A) / 200
)
OBS_SIZE = sum(size for _, size in OBS_PARTS)
_OFFSETS = dict(zip((name for name, _ in OBS_PARTS), np.cumsum([0] + [size for _, size in OBS_PARTS])))


# Where each part starts (the layout's offsets, as constants the compiled encoder folds in).
(_HAND, _TRICK, _PLAYED, _TRUMP, _PROPOSED, _MAKER, _LEADER, _PHASE, _FOREHAND, _DEAL_POINTS, _MATCH, _AMSTERDAM,
 _PASSES, _MULTIPLIER, _DECLARED_STUK, _KNOBS, _QUARTETS) = (int(x) for x in _OFFSETS.values())


@njit(cache=True, inline="always")
def _one_hot(out, at, index):
    if index >= 0:
        out[at + index] = 1.0


@njit(cache=True)
def encode_into(state, seat, out):
    """Write ``seat``'s observation of ``state`` into ``out`` (``float32[OBS_SIZE]``, zero-filled here)."""
    out[:] = 0.0
    hand = state[R.HAND + seat]
    for c in range(32):
        out[_HAND + c] = (hand >> c) & 1
    t = state[R.TRICK_NO]
    for trick in range(t + 1):  # the earlier tricks of the deal, then the one in progress
        leader = state[R.LEADER + trick]
        at = _TRICK if trick == t else _PLAYED
        for k in range(4):
            card = state[R.TRICK + 4 * trick + k]
            if card >= 0 and leader >= 0:
                out[at + 32 * ((leader + k - seat) % 4) + card] = 1.0
    _one_hot(out, _TRUMP, state[R.TRUMP])
    _one_hot(out, _PROPOSED, state[R.PROPOSED])
    if state[R.MAKER] >= 0:
        out[_MAKER + (state[R.MAKER] - seat) % 4] = 1.0
    if state[R.LEADER + t] >= 0:
        out[_LEADER + (state[R.LEADER + t] - seat) % 4] = 1.0
    _one_hot(out, _PHASE, state[R.PHASE])
    out[_FOREHAND + (state[R.FOREHAND] - seat) % 4] = 1.0
    us = R.team_of(seat)
    them = 1 - us
    out[_DEAL_POINTS] = state[R.CARD_POINTS + us] / 162
    out[_DEAL_POINTS + 1] = state[R.CARD_POINTS + them] / 162
    out[_DEAL_POINTS + 2] = state[R.ROEM + us] / 200
    out[_DEAL_POINTS + 3] = state[R.ROEM + them] / 200
    out[_MATCH] = state[R.MATCH_SCORE + us] / 1000
    out[_MATCH + 1] = state[R.MATCH_SCORE + them] / 1000
    out[_MATCH + 2] = _match_left(state)
    out[_AMSTERDAM] = state[R.RULE_SET] == R.AMSTERDAM
    out[_PASSES] = min(state[R.PASSES], 4) / 4
    multiplier = state[R.MULTIPLIER]  # kraken: x1, x2 (kraak), x4 (rekraak)
    _one_hot(out, _MULTIPLIER, 0 if multiplier == 1 else 1 if multiplier == 2 else 2 if multiplier == 4 else -1)
    declared = state[R.DECLARED_STUK]
    if declared >= 0:
        out[_DECLARED_STUK + (declared != us)] = 1.0
    out[_KNOBS] = state[R.KRAKEN] != 0
    out[_KNOBS + 1] = state[R.TARGET] > 0
    out[_KNOBS + 2] = state[R.STUK_MODE] == R.STUK_DECLARED
    out[_KNOBS + 3] = state[R.UNDERTRUMP] == R.UNDERTRUMP_FORCED
    for r in range(8):
        out[_QUARTETS + r] = state[R.QUARTETS + r] / 200


@njit(cache=True, inline="always")
def _seat_view(state, seat, mask, obs, seat_mask):
    """``seat``'s observation into ``obs`` and its legal moves (``mask``, the seat to act's, if it is to act, else
    none) into ``seat_mask``."""
    encode_into(state, seat, obs)
    to_act = state[R.CURRENT] == seat
    for a in range(R.NUM_ACTIONS):
        seat_mask[a] = to_act and mask[a]


@njit(cache=True)
def step_observe(state, action, obs, seat_mask):
    """One compiled call for a Python-facing step: ``action`` checked and played, then the observation and legal
    moves of the seat to act next. False, with nothing changed or written, when ``action`` is illegal."""
    mask = np.empty(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    if not R.checked_step(state, action, mask):
        return False
    _seat_view(state, state[R.CURRENT], mask, obs, seat_mask)
    return True


@njit(cache=True)
def step_vs_random_observe(state, action, seat, obs, seat_mask):
    """``step_observe`` against random opponents: ``action``, then random moves for the other seats until ``seat``
    is to act or the match ends (``rules.play_random_until``), then ``seat``'s observation and legal moves."""
    mask = np.empty(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    if not R.checked_step(state, action, mask):
        return False
    R.play_random_until(state, seat, mask)
    _seat_view(state, seat, mask, obs, seat_mask)
    return True


def observe(state: np.ndarray, seat: int) -> np.ndarray:
    """The observation vector of ``seat``: its own hand and public information only.

    >>> s = R.new_state(seed=2); o = observe(s, 1)
    >>> int(o[:32].sum()), o.dtype
    (8, dtype('float32'))
    """
    out = np.empty(OBS_SIZE, np.float32)
    encode_into(state, int(seat), out)
    return out


@njit(cache=True)
def _match_left(state):
    """The fraction of the match still to play: deals left / deals, or for a target match the leading
    team's distance to the target / target.

    >>> _match_left(R.new_state(deals=4)), _match_left(R.new_state(target=1500))
    (1.0, 1.0)
    """
    target = state[R.TARGET]
    if target:
        return max(0, target - max(state[R.MATCH_SCORE], state[R.MATCH_SCORE + 1])) / target
    deals = state[R.NUM_DEALS_AT]
    return (deals - state[R.DEAL_NO]) / deals


def end_rewards(state: np.ndarray, mode: str = "win") -> list[float]:
    """Per seat, zero-sum: ``win``: +1 for the team with the higher match score, -1 for the other, 0 on a
    tie; ``score``: (own - other match score) / (162 x deals played).

    >>> s = R.new_state(seed=1); _ = R.play_random(s); sorted(set(end_rewards(s)))
    [-1.0, 1.0]
    """
    diff = float(state[R.MATCH_SCORE] - state[R.MATCH_SCORE + 1])
    team0 = np.sign(diff) if mode == "win" else diff / (R.DEAL_TOTAL * max(1, int(state[R.DEAL_NO])))
    return [float(team0) if seat % 2 == 0 else -float(team0) for seat in range(4)]
