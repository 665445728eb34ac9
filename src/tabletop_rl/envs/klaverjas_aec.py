"""PettingZoo AEC environment for Klaverjas: ``klaverjas_env()`` (wrapped) and ``raw_env`` (raises).

Agents ``player_0 .. player_3`` sit N E S W; ``player_0``/``player_2`` are one team. An episode is a
match of ``deals`` deals or to a ``target`` score (bidding, with kraken the doubling, then 8 tricks
each). Each observation is ``{"observation": float32[OBS_SIZE], "action_mask": int8[40]}`` from the
observer's seat, with the other seats numbered relative to it (1 = left, 2 = partner, 3 = right); the
layout is ``OBS_PARTS``. Actions 0..31 play a card (``rules.card_name``), 32..35 name trump C D H S,
36 passes (no trump, not this suit, no (re)double), 37 accepts the proposed suit, 38 kraak (a defender
doubles), 39 rekraak (a maker redoubles). Only the seat to act has a non-zero mask.

>>> env = klaverjas_env()
>>> env.reset(seed=1)
>>> obs, reward, terminated, truncated, info = env.last()
>>> obs["observation"].shape, int(obs["action_mask"].sum()), env.agent_selection
((338,), 4, 'player_0')
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from tabletop_rl.envs.episode import start_episode
from tabletop_rl.games.klaverjas import rules as R

RENDER_MODES = ("ansi", "human")
REWARD_MODES = ("win", "points")
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
    obs[o:o + 3] = [state[R.MATCH_SCORE + us] / 1000, state[R.MATCH_SCORE + them] / 1000, match_left(state)]
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


def match_left(state: np.ndarray) -> float:
    """The fraction of the match still to play: deals left / deals, or for a target match the leading
    team's distance to the target / target.

    >>> match_left(R.new_state(deals=4)), match_left(R.new_state(target=1500))
    (1.0, 1.0)
    """
    target = int(state[R.TARGET])
    if target:
        return max(0, target - int(state[R.MATCH_SCORE:R.MATCH_SCORE + 2].max())) / target
    deals = int(state[R.NUM_DEALS])
    return (deals - int(state[R.DEAL_NO])) / deals


def end_rewards(state: np.ndarray, mode: str = "win") -> list[float]:
    """Per seat, zero-sum: ``win``: +1 for the team with the higher match score, -1 for the other, 0 on a
    tie; ``points``: (own - other match score) / (162 x deals played).

    >>> s = R.new_state(seed=1); _ = R.play_random(s); sorted(set(end_rewards(s)))
    [-1.0, 1.0]
    """
    diff = float(state[R.MATCH_SCORE] - state[R.MATCH_SCORE + 1])
    team0 = np.sign(diff) if mode == "win" else diff / (R.DEAL_TOTAL * max(1, int(state[R.DEAL_NO])))
    return [float(team0) if seat % 2 == 0 else -float(team0) for seat in range(4)]


def render_text(state: np.ndarray, viewer: int | None = None) -> str:
    """The match as text for ``viewer`` (a seat sees its own hand; ``None``, a spectator, sees none)."""
    names = "NESW"
    trump = int(state[R.TRUMP])
    deals, deal = int(state[R.NUM_DEALS]), int(state[R.DEAL_NO]) + 1
    match = f"deal {deal} (to {int(state[R.TARGET])})" if state[R.TARGET] else f"deal {min(deal, deals)}/{deals}"
    lines = [f"{match}  rules {R.RULE_SETS[int(state[R.RULES])]}  phase {R.PHASE_NAMES[int(state[R.PHASE])]}"
             f"  match N-S {int(state[R.MATCH_SCORE])} E-W {int(state[R.MATCH_SCORE + 1])}"]
    if trump >= 0:
        doubled = {2: "  kraak x2", 4: "  rekraak x4"}.get(int(state[R.MULTIPLIER]), "")
        lines.append(f"trump {R.SUITS[trump]}  maker {names[int(state[R.MAKER])]}{doubled}  tricks N-S "
                     f"{int(state[R.TRICKS_WON])} E-W {int(state[R.TRICKS_WON + 1])}  points N-S "
                     f"{int(state[R.CARD_POINTS])}+{int(state[R.ROEM])} E-W "
                     f"{int(state[R.CARD_POINTS + 1])}+{int(state[R.ROEM + 1])}")
        if state[R.DECLARED_STUK] >= 0:
            lines.append(f"stuk declared by {('N-S', 'E-W')[int(state[R.DECLARED_STUK])]}")
    elif int(state[R.PROPOSED]) >= 0:
        lines.append(f"proposed trump {R.SUITS[int(state[R.PROPOSED])]}")
    t = int(state[R.TRICK_NO])
    for trick in range(t + 1):
        leader = int(state[R.LEADER + trick])
        cards = [int(c) for c in state[R.TRICK + 4 * trick:R.TRICK + 4 * trick + 4] if c >= 0]
        if leader >= 0 and cards:
            plays = " ".join(f"{names[(leader + k) % 4]}:{R.card_name(c)}" for k, c in enumerate(cards))
            won = int(state[R.WINNER + trick])
            lines.append(f"trick {trick + 1}: {plays}" + (f"  -> {names[won]}" if won >= 0 else ""))
    for seat in range(4):
        hand = int(state[R.HAND + seat])
        shown = (" ".join(R.card_name(c) for c in R.cards_of(hand)) if seat == viewer
                 else f"{bin(hand).count('1')} cards")
        marker = "*" if seat == int(state[R.CURRENT]) and state[R.PHASE] != R.OVER else " "
        lines.append(f"{marker}{names[seat]} player_{seat}: {shown}")
    return "\n".join(lines)


def klaverjas_env(render_mode: str | None = None, **options: Any) -> AECEnv:
    """The AEC env in PettingZoo's classic wrappers: an illegal move ends the match with -1 for the mover.

    ``options``: see ``raw_env`` (``reward``, ``render_viewer`` and the match options of
    ``rules.options_row``: ``deals`` or ``target``, ``rules``, ``trump_selection``, ``all_pass``, ``first_lead``,
    ``pit_for_defenders``, ``kraken``, ``quartet_values``, ``stuk_mode``, ``amsterdam_undertrump_vs_opponent``).

    >>> klaverjas_env(rules="amsterdam").possible_agents
    ['player_0', 'player_1', 'player_2', 'player_3']
    """
    env = raw_env(render_mode=render_mode, **options)
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


class IllegalActionError(ValueError):
    """An action the rules do not allow now; the env is left unchanged."""


class raw_env(AECEnv):
    """Four-seat Klaverjas as a PettingZoo ``AECEnv`` that raises ``IllegalActionError`` on illegal moves.

    ``reward``: ``"win"`` (+-1 by match score) or ``"points"`` (see ``end_rewards``); handed out when the
    match ends. ``render_viewer``: the seat whose hand ``render`` shows (``None``: no hand shown).
    ``options``: the match options of ``rules.options_row`` (checked here, a ``ValueError`` naming a bad one).
    """

    metadata = {"name": "klaverjas_v0", "render_modes": list(RENDER_MODES), "is_parallelizable": False,
                "render_fps": 2}

    def __init__(self, render_mode: str | None = None, reward: str = "win", render_viewer: int | None = None,
                 **options: Any) -> None:
        super().__init__()
        self._options = options
        R.options_row(**options)  # checks the options
        R.option_index(render_mode, "render_mode", (None, *RENDER_MODES))
        R.option_index(reward, "reward", REWARD_MODES)
        if render_viewer is not None and render_viewer not in range(4):
            raise ValueError(f"render_viewer must be None or a seat 0..3, got {render_viewer!r}")
        self.render_mode, self.render_viewer, self.reward_mode = render_mode, render_viewer, reward
        self.possible_agents = [f"player_{p}" for p in range(4)]
        self._seat = {agent: p for p, agent in enumerate(self.possible_agents)}
        obs_space = spaces.Dict({"observation": spaces.Box(0.0, np.inf, (OBS_SIZE,), np.float32),
                                 "action_mask": spaces.Box(0, 1, (R.NUM_ACTIONS,), np.int8)})
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {agent: spaces.Discrete(R.NUM_ACTIONS) for agent in self.possible_agents}
        self.state_row: np.ndarray | None = None
        self._mask = np.zeros(R.NUM_ACTIONS, np.bool_)

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new match; ``seed`` None draws one from the previous match's RNG (or fresh entropy)."""
        if options:
            warnings.warn(f"ignoring reset options {sorted(options)}; the env takes its options at construction",
                          stacklevel=2)
        if seed is None:
            seed = (int(R.random_below(self.state_row, 1 << 62)) if self.state_row is not None
                    else int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(2)))
        self.state_row = R.new_state(seed=seed, **self._options)
        R.legal_mask(self.state_row, self._mask)
        start_episode(self)
        self.agent_selection = self.possible_agents[int(self.state_row[R.CURRENT])]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Fresh arrays: ``agent``'s observation and its legal moves (all zeros unless it is to act)."""
        if agent not in self._seat:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        seat = self._seat[agent]
        to_act = seat == int(self.state_row[R.CURRENT]) and self.state_row[R.PHASE] != R.OVER
        mask = self._mask.astype(np.int8) if to_act else np.zeros(R.NUM_ACTIONS, np.int8)
        return {"observation": observe(self.state_row, seat), "action_mask": mask}

    def step(self, action: int) -> None:
        """Play ``action`` for ``agent_selection`` (``None`` once it is done)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if not R.checked_step(self.state_row, int(action), self._mask):
            raise IllegalActionError(f"{agent}: action {action} is not legal now "
                                     f"(legal: {np.flatnonzero(self._mask).tolist()})")
        self._clear_rewards()
        if self.state_row[R.PHASE] == R.OVER:
            for agent_name, reward in zip(self.possible_agents, end_rewards(self.state_row, self.reward_mode)):
                self.rewards[agent_name] = reward
                self.terminations[agent_name] = True
            self._accumulate_rewards()
        self.agent_selection = self.possible_agents[int(self.state_row[R.CURRENT])]
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        """``ansi``: the text of ``render_text``; ``human``: printed."""
        if self.render_mode is None:
            warnings.warn("render() called without a render_mode; pass render_mode=... to the env", stacklevel=2)
            return None
        if self.state_row is None:
            raise RuntimeError("call reset() before render()")
        text = render_text(self.state_row, self.render_viewer)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""
