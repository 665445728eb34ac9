"""What a Klaverjas seat sees: its observation vector (``observe``), and the zero-sum end rewards.

Seats are numbered from the observer (1 = left, 2 = partner, 3 = right); the layout is ``OBS_PARTS``.
Only the seat's own hand and the public record go in: the other hands never do.
"""

from __future__ import annotations

import numpy as np

from tabletop_rl.games.klaverjas import rules as R

__all__ = ["OBS_PARTS", "OBS_SIZE", "end_rewards", "observe"]

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


def _one_hot(obs: np.ndarray, part: str, index: int) -> None:
    if index >= 0:
        obs[_OFFSETS[part] + index] = 1.0


def observe(state: np.ndarray, seat: int) -> np.ndarray:
    """The observation vector of ``seat``: its own hand and public information only.

    >>> s = R.new_state(seed=2); o = observe(s, 1)
    >>> int(o[:32].sum()), o.dtype
    (8, dtype('float32'))
    """
    obs = np.zeros(OBS_SIZE, np.float32)
    obs[:32] = [(int(state[R.HAND + seat]) >> c) & 1 for c in range(32)]
    rel = lambda s: (int(s) - seat) % 4  # noqa: E731  (seat numbering from the observer)
    t = int(state[R.TRICK_NO])
    for trick in range(t + 1):
        leader = int(state[R.LEADER + trick])
        part = "trick" if trick == t else "played"
        for k in range(4):
            card = int(state[R.TRICK + 4 * trick + k])
            if card >= 0 and leader >= 0:
                obs[_OFFSETS[part] + 32 * rel(leader + k) + card] = 1.0
    _one_hot(obs, "trump", int(state[R.TRUMP]))
    _one_hot(obs, "proposed", int(state[R.PROPOSED]))
    _one_hot(obs, "maker", rel(state[R.MAKER]) if state[R.MAKER] >= 0 else -1)
    _one_hot(obs, "leader", rel(state[R.LEADER + t]) if state[R.LEADER + t] >= 0 else -1)
    _one_hot(obs, "phase", int(state[R.PHASE]))
    _one_hot(obs, "forehand", rel(state[R.FOREHAND]))
    us, them = R.team_of(seat), 1 - R.team_of(seat)
    o = _OFFSETS["deal_points"]
    obs[o:o + 4] = [state[R.CARD_POINTS + us] / 162, state[R.CARD_POINTS + them] / 162,
                    state[R.ROEM + us] / 200, state[R.ROEM + them] / 200]
    o = _OFFSETS["match"]
    obs[o:o + 3] = [state[R.MATCH_SCORE + us] / 1000, state[R.MATCH_SCORE + them] / 1000, _match_left(state)]
    obs[_OFFSETS["amsterdam"]] = float(state[R.RULES] == R.AMSTERDAM)
    obs[_OFFSETS["passes"]] = min(int(state[R.PASSES]), 4) / 4
    _one_hot(obs, "multiplier", {1: 0, 2: 1, 4: 2}.get(int(state[R.MULTIPLIER]), -1))
    declared = int(state[R.DECLARED_STUK])
    _one_hot(obs, "declared_stuk", -1 if declared < 0 else int(declared != us))
    o = _OFFSETS["knobs"]
    obs[o:o + 4] = [state[R.KRAKEN] != 0, state[R.TARGET] > 0, state[R.STUK_MODE] == R.STUK_DECLARED,
                    state[R.UNDERTRUMP] == R.UNDERTRUMP_FORCED]
    o = _OFFSETS["quartets"]
    obs[o:o + 8] = state[R.QUARTETS:R.QUARTETS + 8] / 200
    return obs


def _match_left(state: np.ndarray) -> float:
    """The fraction of the match still to play: deals left / deals, or for a target match the leading
    team's distance to the target / target.

    >>> _match_left(R.new_state(deals=4)), _match_left(R.new_state(target=1500))
    (1.0, 1.0)
    """
    target = int(state[R.TARGET])
    if target:
        return max(0, target - int(state[R.MATCH_SCORE:R.MATCH_SCORE + 2].max())) / target
    deals = int(state[R.NUM_DEALS_AT])
    return (deals - int(state[R.DEAL_NO])) / deals


def end_rewards(state: np.ndarray, mode: str = "win") -> list[float]:
    """Per seat, zero-sum: ``win``: +1 for the team with the higher match score, -1 for the other, 0 on a
    tie; ``score``: (own - other match score) / (162 x deals played).

    >>> s = R.new_state(seed=1); _ = R.play_random(s); sorted(set(end_rewards(s)))
    [-1.0, 1.0]
    """
    diff = float(state[R.MATCH_SCORE] - state[R.MATCH_SCORE + 1])
    team0 = np.sign(diff) if mode == "win" else diff / (R.DEAL_TOTAL * max(1, int(state[R.DEAL_NO])))
    return [float(team0) if seat % 2 == 0 else -float(team0) for seat in range(4)]
