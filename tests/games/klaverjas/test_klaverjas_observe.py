"""The compiled Klaverjas observation against the plain-Python encoder it replaced: the same vector, bit for bit,
for every seat, in every phase, under every option that shows in it."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.observe import _OFFSETS, OBS_SIZE, observe

OPTIONS = [
    {},
    {"rules": "amsterdam", "kraken": True},
    {"trump_selection": "proposed_suit", "all_pass": "second_proposal_then_redeal", "target": 1500},
    {"trump_selection": "free_with_pass", "stuk_mode": "declared_from_hand", "deals": 4, "rules": "amsterdam",
     "amsterdam_undertrump_vs_opponent": "forced"},
]


# --- the reference: the plain-Python encoder, kept as the oracle -------------------------------------------------
def _one_hot(obs: np.ndarray, part: str, index: int) -> None:
    if index >= 0:
        obs[_OFFSETS[part] + index] = 1.0


def reference_observe(state: np.ndarray, seat: int) -> np.ndarray:
    """The observation vector of ``seat``, as the plain-Python encoder wrote it before the compiled one."""
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
    obs[_OFFSETS["amsterdam"]] = float(state[R.RULE_SET] == R.AMSTERDAM)
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
    """The fraction of the match still to play (deals, or the leader's distance to a target)."""
    target = int(state[R.TARGET])
    if target:
        return max(0, target - int(state[R.MATCH_SCORE:R.MATCH_SCORE + 2].max())) / target
    deals = int(state[R.NUM_DEALS_AT])
    return (deals - int(state[R.DEAL_NO])) / deals


# --- the tests ---------------------------------------------------------------------------------------------------
def _positions(options: dict, seed: int) -> list[np.ndarray]:
    """Every position of a random match under ``options``, from the deal to the end."""
    rng = np.random.default_rng(seed)
    state, mask, seen = R.new_state(seed=seed, **options), np.zeros(R.NUM_ACTIONS, np.bool_), []
    while True:
        seen.append(state.copy())
        R.legal_mask(state, mask)
        if not mask.any():
            return seen
        R.apply_action(state, int(rng.choice(np.flatnonzero(mask))))


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_the_compiled_observation_is_the_plain_one(options: dict) -> None:
    positions = [p for seed in range(6) for p in _positions(options, seed)]
    phases = {int(p[R.PHASE]) for p in positions}
    assert R.OVER in phases and len(phases) >= 3  # the deals were played through, to the end of the match
    for state in positions:
        for seat in range(4):
            ours = observe(state, seat)
            assert ours.dtype == np.float32 and ours.shape == (OBS_SIZE,)
            assert ours.tobytes() == reference_observe(state, seat).tobytes()
