"""PUCT search for Splendor guided by a policy-and-value network, over the searching seat's information set.

Each simulation re-deals the cards the seat cannot see (``determinize_state``: the deck order, the other
seats' blind reserves), so the search never reads them: two positions that differ only in hidden cards give
the same search and the same move for the same seed. A simulation descends by PUCT (the network's prior over
the moves legal in this deal, renormalised over them, and the mean value of each child), evaluates the first
position not yet in the tree with the value network, and backs the value up: each node keeps the value for the
seat that moved into it. A finished game is scored by its result instead. A node's priors are computed the first
time a simulation goes on through it, from that simulation's deal: most leaves are reached only once, and the
policy network costs three times the value network.

The network is a pair of plain MLPs (tanh hidden layers) over the seat's observation: policy logits for the
72 moves and a value in [-1, 1] for the seat to move. It is given as ``Net``: arrays, evaluated inside numba,
one position at a time.

>>> import numpy as np
>>> from tabletop_rl import SplendorGame
>>> net = random_net(hidden=(8,), seed=0)
>>> policy = PUCTPolicy(net, simulations=30, seed=1)
>>> g = SplendorGame(2, seed=3)
>>> bool(g.legal_mask()[policy.act(None, g.legal_mask(), g.policy_info(0))])
True
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from tabletop_rl.agents.search.splendor import (
    MAX_BUDGET_MS,
    MAX_C,
    MAX_ROLLOUT_DEPTH,
    result_shares,
    rewards_into,
    rollout,
)
from tabletop_rl.core.kernels import copy_into, splitmix64
from tabletop_rl.core.policy import BasePolicy
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.baselines import DEFAULT_GREEDY_WEIGHTS, game_and_seat
from tabletop_rl.games.splendor.observe import COLOUR_PERMUTATIONS, colour_gathers, encode_into, observation_size

__all__ = ["MAX_PUCT_SIMULATIONS", "Net", "PUCTPolicy", "mlp_forward", "net_from_layers", "net_from_state_dict",
           "random_net", "renamed_policy"]

_CHUNK = 16  # simulations between clock checks under a time budget
#: PUCT keeps one tree node per simulation, 904 bytes (72 child ids, 72 prior weights and five counters): 200,000
#: are about 180 MB and take about half a minute a move with the shipped network.
MAX_PUCT_SIMULATIONS = 200_000


class Net(NamedTuple):
    """A policy MLP and a value MLP: per layer a weight matrix (inputs x outputs) and a bias, float32."""

    policy_weights: tuple[np.ndarray, ...]
    policy_biases: tuple[np.ndarray, ...]
    value_weights: tuple[np.ndarray, ...]
    value_biases: tuple[np.ndarray, ...]


def net_from_layers(policy: Sequence[tuple[np.ndarray, np.ndarray]],
                    value: Sequence[tuple[np.ndarray, np.ndarray]]) -> Net:
    """A ``Net`` from (weight, bias) pairs per layer, weights as (inputs, outputs); checked for shape."""
    def side(layers: Sequence[tuple[np.ndarray, np.ndarray]], outputs: int, name: str) -> tuple[tuple, tuple]:
        weights = tuple(np.ascontiguousarray(w, np.float32) for w, _ in layers)
        biases = tuple(np.ascontiguousarray(b, np.float32) for _, b in layers)
        width = None
        for w, b in zip(weights, biases):
            if w.ndim != 2 or b.shape != (w.shape[1],) or (width is not None and w.shape[0] != width):
                raise ValueError(f"{name} network: layer shapes do not chain ({w.shape} with bias {b.shape})")
            width = w.shape[1]
        if width != outputs:
            raise ValueError(f"{name} network ends in {width} outputs, not {outputs}")
        return weights, biases

    pw, pb = side(policy, R.NUM_ACTIONS, "policy")
    vw, vb = side(value, 1, "value")
    if pw[0].shape[0] != vw[0].shape[0]:
        raise ValueError(f"policy and value networks read {pw[0].shape[0]} and {vw[0].shape[0]} inputs")
    return Net(pw, pb, vw, vb)


def net_from_state_dict(state: Mapping[str, Any]) -> Net:
    """A ``Net`` from the ``state_dict`` of the PPO network (``agents.ppo.build_network``: ``pi.K.weight``,
    ``pi.K.bias``, ``vf.K.weight``, ... as torch's Linear stores them, outputs x inputs), arrays or tensors."""
    def layers(prefix: str) -> list[tuple[np.ndarray, np.ndarray]]:
        found = sorted({int(k.split(".")[1]) for k in state if k.startswith(prefix + ".") and k.endswith(".weight")})
        if not found:
            raise ValueError(f"the model has no {prefix!r} layers: not a policy-and-value network")
        return [(np.asarray(state[f"{prefix}.{i}.weight"], np.float32).T, np.asarray(state[f"{prefix}.{i}.bias"]))
                for i in found]

    return net_from_layers(layers("pi"), layers("vf"))


def random_net(hidden: Sequence[int] = (64,), num_players: int = 2, seed: int = 0) -> Net:
    """An untrained net (small random weights): for tests and as a search's smoke test."""
    rng = np.random.default_rng(seed)
    sizes = [observation_size(num_players), *hidden]

    def layers(outputs: int) -> list[tuple[np.ndarray, np.ndarray]]:
        dims = [*sizes, outputs]
        return [(rng.normal(0, 1 / np.sqrt(a), (a, b)), np.zeros(b)) for a, b in zip(dims, dims[1:])]

    return net_from_layers(layers(R.NUM_ACTIONS), layers(1))


# --- the network inside numba ---------------------------------------------------------------------------
@njit(cache=True, inline="always", fastmath=True)
def _tanh(x):
    """tanh in float32 as a rational function of ``x`` (clamped to [-9, 9]), within 3.1e-7 of the true value
    everywhere. It has no call in it, so the loop over a layer's outputs runs in SIMD lanes: libm's ``tanhf``
    took half of a network evaluation. The coefficients are a least-squares fit of the relative error on
    [0, 9]; ``tests/agents/search/test_splendor_puct.py`` checks the bound."""
    x = min(max(x, np.float32(-9.0)), np.float32(9.0))
    u = x * x
    p = np.float32(-8.911064248385946e-14)
    p = p * u + np.float32(5.4425726019307754e-11)
    p = p * u + np.float32(-2.056783995861415e-08)
    p = p * u + np.float32(1.1239031835227265e-05)
    p = p * u + np.float32(0.0031120825052336795)
    p = p * u + np.float32(0.13091297514234976)
    p = p * u + np.float32(1.0)
    q = np.float32(0.0002557960961545055)
    q = q * u + np.float32(0.024527575495549604)
    q = q * u + np.float32(0.46424627177545125)
    q = q * u + np.float32(1.0)
    return x * p / q


@njit(cache=True, fastmath=True)
def mlp_forward(x, weights, biases):
    """The MLP's output for one input: tanh after every layer but the last. Zero inputs are skipped (an
    observation is mostly zeros), which is the cheap half of a sparse product."""
    h = x
    last = len(weights) - 1
    for i in range(len(weights)):
        w = weights[i]
        out = biases[i].copy()
        for k in range(w.shape[0]):
            hk = h[k]
            if hk != 0.0:
                for j in range(w.shape[1]):
                    out[j] += hk * w[k, j]
        if i < last:
            for j in range(out.shape[0]):
                out[j] = _tanh(out[j])
        h = out
    return h


@njit(cache=True)
def _value(state, cards, nobles, net, obs):
    """The value network at ``state`` for the seat to move, in [-1, 1]."""
    encode_into(state, state[R.CURRENT], cards, nobles, obs)
    value = mlp_forward(obs, net[2], net[3])[0]
    return min(1.0, max(-1.0, value))


@njit(cache=True)
def _priors(obs, net, weights_out):
    """The policy network at the encoded observation ``obs``: ``weights_out[a]`` = exp(logit - max) for every
    move (renormalised over the legal ones where they are used)."""
    logits = mlp_forward(obs, net[0], net[1])
    top = logits.max()
    for a in range(R.NUM_ACTIONS):
        weights_out[a] = np.exp(logits[a] - top)


# --- the search -------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _next(rng):
    rng[0], z = splitmix64(rng[0])
    return z


@njit(cache=True)
def _seat_values(state, mover, value, out):
    """Each seat's value in [0, 1]: the result of a finished game (winners share 1), else the network's value
    for ``mover`` mapped to [0, 1] and its opposite for every other seat."""
    if result_shares(state, out):
        return
    for p in range(state[R.NUM_PLAYERS_AT]):
        out[p] = (1.0 + value) / 2.0 if p == mover else (1.0 - value) / 2.0


@njit(cache=True)
def _select(tree, node, mask, c):
    """The legal move at ``node`` with the highest PUCT score; unvisited children count at the node's own
    value for its mover (first-play urgency)."""
    children, visits, value, prior, node_value = tree
    total = 0.0
    for a in range(R.NUM_ACTIONS):
        if mask[a]:
            total += prior[node, a]
    scale = c * np.sqrt(max(visits[node], 1)) / total
    best, best_score = -1, -np.inf
    for a in range(R.NUM_ACTIONS):
        if not mask[a]:
            continue
        ch = children[node, a]
        n = visits[ch] if ch >= 0 else 0
        q = value[ch] / n if n > 0 else node_value[node]
        score = q + scale * prior[node, a] / (1 + n)
        if score > best_score:
            best, best_score = a, score
    return best


@njit(cache=True)
def _blend_heuristic(state, mix, turns, cards, nobles, weights, work, rng):
    """Mix into each seat's value in ``work[3]`` the heuristic's reward (greedy's evaluation lead, squashed, as
    the MCTS scores its rollouts) after ``turns`` greedy turns from ``state`` (which it plays on):
    value = (1 - mix) * value + mix * reward."""
    _, mask, _, seat_values, scratch, reward = work
    rollout(state, turns, True, 0.0, cards, nobles, weights, mask, scratch, rng)
    rewards_into(state, cards, nobles, weights, reward)
    for p in range(state[R.NUM_PLAYERS_AT]):
        seat_values[p] = (1.0 - mix) * seat_values[p] + mix * reward[p]


@njit(cache=True)
def _simulate(tree, used, root, searcher, simulations, c, cards, nobles, net, work, path, movers, rng, mix, turns,
              weights, root_action, stop_early):
    """Up to ``simulations`` PUCT simulations from ``root`` (node 0; ``used[0]`` nodes in use), each entering the
    root by ``root_action`` when it is >= 0 (a legal move; sequential halving chooses it). With ``mix > 0`` a leaf's
    value is blended with the heuristic's after ``turns`` greedy turns (``_blend_heuristic``). With ``stop_early``
    the search ends once the simulations left cannot change the most visited root move (``_settled``). Returns
    the number of simulations run."""
    children, visits, value, prior, node_value = tree
    state, mask, obs, seat_values = work[0], work[1], work[2], work[3]
    capacity = children.shape[0]
    for done in range(simulations):
        if stop_early and _settled(children, visits, simulations - done):
            return done
        copy_into(state, root)
        R.determinize_state(state, searcher, _next(rng))
        node, length, scored = 0, 0, -1
        leaf_value, leaf_mover = 0.0, state[R.CURRENT]
        while True:
            if state[R.STATUS] != R.PLAYING:
                break
            mover = state[R.CURRENT]
            if node_value[node] < 0:  # not evaluated yet: the value network scores it
                leaf_value = _value(state, cards, nobles, net, obs)
                leaf_mover, scored = mover, node
                if node == 0:  # the root's priors are read after its first simulation (root noise, gumbel)
                    _priors(obs, net, prior[0])  # obs holds the root, encoded for its value
                break
            if node == 0 and root_action >= 0:
                action = root_action
            else:
                if prior[node, 0] < 0:  # first time through: its priors, from this deal, serve every later one
                    encode_into(state, mover, cards, nobles, obs)
                    _priors(obs, net, prior[node])
                R.legal_mask(state, cards, nobles, mask)
                action = _select(tree, node, mask, c)
            child = children[node, action]
            if child < 0:
                if used[0] == capacity:  # full: score this position without growing the tree
                    leaf_value = _value(state, cards, nobles, net, obs)
                    leaf_mover = mover
                    break
                child = used[0]
                used[0] += 1
                children[child, :] = -1
                visits[child] = 0
                value[child] = 0.0
                node_value[child] = -1.0
                prior[child, 0] = -1.0  # no priors yet
                children[node, action] = child
            R.apply_action(state, action, cards, nobles)
            path[length] = child
            movers[length] = mover
            length += 1
            node = child
        _seat_values(state, leaf_mover, leaf_value, seat_values)
        if mix > 0.0 and state[R.STATUS] == R.PLAYING:
            _blend_heuristic(state, mix, turns, cards, nobles, weights, work, rng)
        if scored >= 0:  # the node's own value (its unvisited moves start from it): the blend where there is one
            node_value[scored] = seat_values[leaf_mover]
        visits[0] += 1
        for i in range(length):
            visits[path[i]] += 1
            value[path[i]] += seat_values[movers[i]]
    return simulations


@njit(cache=True)
def _settled(children, visits, remaining):
    """True when the most visited root move leads every other by more than ``remaining`` visits: however the
    remaining simulations go, it stays the most visited, so they cannot change the move played."""
    first, second = 0, 0
    for a in range(R.NUM_ACTIONS):
        ch = children[0, a]
        n = visits[ch] if ch >= 0 else 0
        if n > first:
            first, second = n, first
        elif n > second:
            second = n
    return first - second > remaining


class _Tree:
    """The search tree in flat arrays: children[node, move] (-1: none), visits, value sums (for the seat
    that moved into the node), prior weights[node, move] (``prior[node, 0]`` -1 until a simulation has gone
    through the node) and the network's value at the node (for its mover, in [0, 1]; -1 until the network has
    scored it)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.arrays = (np.full((capacity, R.NUM_ACTIONS), -1, np.int32), np.zeros(capacity, np.int64),
                       np.zeros(capacity), np.zeros((capacity, R.NUM_ACTIONS)), np.zeros(capacity))
        self.used = np.zeros(1, np.int64)
        self.path = np.zeros(capacity, np.int64)
        self.movers = np.zeros(capacity, np.int64)

    def clear(self) -> None:
        children, visits, value, _, node_value = self.arrays
        children[0] = -1
        visits[0] = 0
        value[0] = 0.0
        node_value[0] = -1.0  # not evaluated
        self.used[0] = 1


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def renamed_policy(net: Net, observation: np.ndarray, legal: np.ndarray, renamings: np.ndarray) -> np.ndarray:
    """The network's move probabilities (zero on illegal moves) averaged over the colour renamings ``renamings``
    (rows of ``COLOUR_PERMUTATIONS``) of the position: each renamed position's moves are mapped back to the moves
    they rename. The rules do not tell the colours apart, so over all 120 renamings the average does not either:
    a renamed position gets the renamed probabilities.

    >>> net = Net((np.ones((312, 72), np.float32),), (np.zeros(72, np.float32),), (), ())
    >>> renamed_policy(net, np.zeros(312, np.float32), np.arange(72) < 4, np.arange(120)).round(2)[:5].tolist()
    [0.25, 0.25, 0.25, 0.25, 0.0]
    """
    observation_from, action_from = colour_gathers(len(observation))
    rows = np.asarray(renamings)
    renamed = _renamed_logits(np.asarray(observation, np.float32), observation_from[rows], net.policy_weights,
                              net.policy_biases)
    logits = np.empty_like(renamed)
    np.put_along_axis(logits, action_from[rows], renamed, axis=1)  # back to the moves of the position as it is
    logits = np.where(legal, logits, -np.inf)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (probs / probs.sum(axis=1, keepdims=True)).mean(axis=0)


@njit(cache=True)
def _renamed_logits(observation, gathers, weights, biases):
    """The policy MLP's logits for each renamed observation (row ``r`` gathers ``observation[gathers[r]]``), one
    at a time in numba: a batched BLAS product would start threads that fight over the cores of a busy machine
    (an arena's worker processes), where it runs 20 times slower."""
    out = np.empty((gathers.shape[0], biases[len(biases) - 1].shape[0]), np.float32)
    x = np.empty(observation.shape[0], np.float32)
    for r in range(gathers.shape[0]):
        for i in range(x.shape[0]):
            x[i] = observation[gathers[r, i]]
        out[r] = mlp_forward(x, weights, biases)
    return out


class PUCTPolicy(BasePolicy):
    """Network-guided PUCT over the seat's information set; plays the root move visited most.

    ``simulations`` per move (or ``budget_ms`` of search, checked every few simulations), ``c`` the
    exploration constant; ``simulations=0`` plays the network alone (its most probable legal move, no search),
    with ``renamings > 1`` the most probable move of its policy averaged over that many colour renamings
    (``renamed_policy``).
    ``net`` is a ``Net`` whose input size matches the game's player count. With ``stop_early`` a search of
    ``simulations`` ends as soon as the most visited root move leads the next by more than the simulations left
    (so they could not change it), and a lone legal move is played unsearched: the same move in less time.

    Self-play's knobs (all off by default): ``noise_alpha > 0`` mixes Dirichlet(alpha) noise into the root's
    priors over the legal moves, with weight ``noise_fraction``, so the search tries moves the network rules
    out; ``temperature > 0`` draws the move with probability proportional to visits^(1/temperature) instead
    of taking the most visited. Both draw from the policy's own seeded generator.

    ``root="gumbel"`` chooses at the root by sequential halving instead (Gumbel AlphaZero's root, which improves
    on the policy even with a few simulations): the ``considered`` moves with the highest logits (plus Gumbel
    noise with ``gumbel_noise``, self-play's exploration) share the simulations in rounds, each round keeping the
    better half by logit plus transformed value; the last one left is played, and ``policy_target`` is the
    softmax of logits plus the transformed values of every legal move (unsearched ones at the root's value).
    Below the root the search is PUCT as before.
    """

    def __init__(self, net: Net, name: str = "puct", seed: int | None = None, simulations: int = 200,
                 budget_ms: float | None = None, c: float = 1.5, noise_alpha: float = 0.0,
                 noise_fraction: float = 0.25, temperature: float = 0.0, mix: float = 0.0,
                 rollout_depth: int = 0, root: str = "puct", considered: int = 16, gumbel_noise: bool = False,
                 renamings: int = 1, stop_early: bool = False) -> None:
        super().__init__(name, seed)
        _check(root in ("puct", "gumbel"), f"{name} root must be puct or gumbel, got {root!r}")
        _check(root == "puct" or considered >= 2, f"{name} considered must be at least 2, got {considered}")
        _check(root == "puct" or budget_ms is None, f"{name} the gumbel root needs a number of simulations, not a "
               "time budget")
        _check(simulations >= 0, f"{name} simulations must be >= 0 (0: the network alone), got {simulations}")
        _check(simulations <= MAX_PUCT_SIMULATIONS, f"{name} simulations must be at most {MAX_PUCT_SIMULATIONS} "
               f"(a tree node each), got {simulations}")
        _check(budget_ms is None or budget_ms > 0, f"{name} budget_ms must be > 0 when given, got {budget_ms}")
        _check(budget_ms is None or budget_ms <= MAX_BUDGET_MS,
               f"{name} budget_ms must be at most {MAX_BUDGET_MS:g}, got {budget_ms}")
        _check(0 <= c <= MAX_C, f"{name} c must be >= 0 and at most {MAX_C:g}, got {c}")
        _check(noise_alpha >= 0, f"{name} noise_alpha must be >= 0 (0: no noise), got {noise_alpha}")
        _check(0 <= noise_fraction <= 1, f"{name} noise_fraction must be in [0, 1], got {noise_fraction}")
        _check(temperature >= 0, f"{name} temperature must be >= 0 (0: the most visited move), got {temperature}")
        _check(0 <= mix <= 1, f"{name} mix must be in [0, 1] (0: the network's value alone), got {mix}")
        _check(0 <= rollout_depth <= MAX_ROLLOUT_DEPTH,
               f"{name} rollout_depth must be >= 0 turns and at most {MAX_ROLLOUT_DEPTH}, got {rollout_depth}")
        _check(1 <= renamings <= len(COLOUR_PERMUTATIONS), f"{name} renamings must be in [1, "
               f"{len(COLOUR_PERMUTATIONS)}] (1: the position as it is), got {renamings}")
        _check(renamings == 1 or (simulations == 0 and budget_ms is None), f"{name} renamings average the network "
               f"alone's policy: they need simulations=0 and no budget_ms, got simulations={simulations}, "
               f"budget_ms={budget_ms}")
        _check(not stop_early or temperature == 0, f"{name} stop_early plays the most visited move: it needs "
               f"temperature 0, got {temperature}")
        self.mix, self.rollout_depth = mix, rollout_depth
        self.stop_early = stop_early
        # which colour renamings the network alone averages over: the identity first, the rest spread evenly
        self.renamings = np.unique(np.round(np.linspace(0, len(COLOUR_PERMUTATIONS) - 1, renamings)).astype(np.int64))
        self.root, self.considered, self.gumbel_noise = root, considered, gumbel_noise
        self._improved: np.ndarray | None = None  # the gumbel root's policy target of the last search
        self.net, self.simulations, self.budget_ms, self.c = net, simulations, budget_ms, c
        self._net_arrays = tuple(net)  # the plain nested tuple numba takes, built once, not per search call
        self.noise_alpha, self.noise_fraction, self.temperature = noise_alpha, noise_fraction, temperature
        self.inputs = net.policy_weights[0].shape[0]
        self.cards, self.nobles = R.tables()
        self.tree = _Tree(max(simulations, 1) + 1 if budget_ms is None else 1 << 14)
        self._work = (np.zeros(R.STATE_SIZE, R.STATE_DTYPE), np.zeros(R.NUM_ACTIONS, np.bool_),
                      np.zeros(self.inputs, np.float32), np.zeros(R.MAX_PLAYERS),
                      np.zeros(R.STATE_SIZE, R.STATE_DTYPE), np.zeros(R.MAX_PLAYERS))
        self.simulations_run = 0

    def _run(self, root: np.ndarray, seat: int, simulations: int, rng: np.ndarray, root_action: int = -1,
             stop_early: bool = False) -> None:
        simulations = min(simulations, self.tree.capacity - int(self.tree.used[0]))
        if simulations <= 0:
            return
        self.simulations_run += _simulate(
            self.tree.arrays, self.tree.used, root, seat, simulations, self.c, self.cards, self.nobles,
            self._net_arrays, self._work, self.tree.path, self.tree.movers, rng, self.mix, self.rollout_depth,
            DEFAULT_GREEDY_WEIGHTS, root_action, stop_early)

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        game, seat = game_and_seat(info, self.name)
        size = observation_size(game.num_players)
        if size != self.inputs:
            raise ValueError(f"{self.name}: the network reads {self.inputs} inputs, a {game.num_players}-player "
                             f"observation has {size}")
        if self.simulations == 0 and self.budget_ms is None:
            return self._network_move(game.state, seat, mask)
        seed = int(self.rng.integers(1 << 62))
        root = game.seat_view(seat, seed).state
        rng = np.array([seed], np.uint64)
        self.tree.clear()
        self.simulations_run = 0
        self._improved = None
        if self.root == "gumbel":
            action = self._sequential_halving(root, seat, np.asarray(mask, bool), rng)
            self.add_nodes(int(self.tree.used[0]))
            return action
        deadline = None if self.budget_ms is None else time.perf_counter() + self.budget_ms / 1000
        if self.stop_early and deadline is None and np.count_nonzero(mask) == 1:
            return int(np.argmax(mask))  # settled before any simulation
        if self.noise_alpha > 0 and self.noise_fraction > 0:
            self._run(root, seat, 1, rng)  # the first simulation scores the root: its priors exist from here on
            self._add_root_noise(mask)
        if deadline is None:
            self._run(root, seat, self.simulations - self.simulations_run, rng, stop_early=self.stop_early)
        else:
            while time.perf_counter() < deadline and self.tree.used[0] < self.tree.capacity:
                self._run(root, seat, _CHUNK, rng)
        self.add_nodes(int(self.tree.used[0]))
        return self.most_visited(mask) if self.temperature == 0 else self.sampled(mask)

    def _sequential_halving(self, root: np.ndarray, seat: int, mask: np.ndarray, rng: np.ndarray) -> int:
        """The Gumbel root: score the root, then halve the considered moves round by round, each round's
        simulations shared evenly among the moves left; returns the last move left."""
        self._run(root, seat, 1, rng)  # scores the root: its prior row and its value
        legal = np.flatnonzero(mask)
        logits = np.log(np.maximum(self.tree.arrays[3][0][legal], 1e-30))  # the row holds exp(logit - max)
        noise = self.rng.gumbel(size=len(legal)) if self.gumbel_noise else np.zeros(len(legal))
        left = np.argsort(-(noise + logits), kind="stable")[:min(self.considered, len(legal))]
        rounds = max(1, int(np.ceil(np.log2(len(left)))))
        budget = self.simulations - 1
        while len(left) > 1:
            each = max(1, budget // (rounds * len(left)))
            for i in left:
                self._run(root, seat, each, rng, int(legal[i]))
            score = noise + logits + self._transformed_values(legal)
            left = left[np.argsort(-score[left], kind="stable")[:(len(left) + 1) // 2]]
        improved = logits + self._transformed_values(legal)
        target = np.exp(improved - improved.max())
        self._improved = np.zeros(R.NUM_ACTIONS)
        self._improved[legal] = target / target.sum()
        return int(legal[left[0]])

    def _transformed_values(self, legal: np.ndarray) -> np.ndarray:
        """sigma(completed Q) of each legal root move: its mean value for the searcher where it was searched,
        ``_mixed_value`` where not, rescaled to [0, 1] over the moves and scaled by (50 + the most visits) x 0.1 (the
        Gumbel MuZero paper's transform)."""
        children, visits, value, prior, node_value = self.tree.arrays
        child = children[0][legal]
        n = np.where(child >= 0, visits[np.maximum(child, 0)], 0)
        q = np.where(n > 0, value[np.maximum(child, 0)] / np.maximum(n, 1), 0.0)
        q[n == 0] = self._mixed_value(n, q, prior[0][legal], node_value[0])
        spread = q.max() - q.min()
        scaled = (q - q.min()) / spread if spread > 1e-12 else np.zeros_like(q)
        return (50 + n.max()) * 0.1 * scaled

    @staticmethod
    def _mixed_value(n: np.ndarray, q: np.ndarray, weights: np.ndarray, root_value: float) -> float:
        """The value an unsearched root move is completed with: the network's value of the root mixed with the
        prior-weighted mean of the searched moves' values, by their simulations (the paper's v_mix)."""
        searched = n > 0
        if not searched.any():
            return root_value
        prior = weights / weights.sum()
        mean = float((prior[searched] * q[searched]).sum() / prior[searched].sum())
        return (root_value + n.sum() * mean) / (1 + n.sum())

    def policy_target(self, mask: np.ndarray) -> np.ndarray:
        """What self-play teaches the network at this root: the gumbel root's improved policy, else the root
        visits normalised over the legal moves (the first legal move where none was visited)."""
        if self._improved is not None:
            return self._improved.astype(np.float32)
        visits = np.where(np.asarray(mask, bool), self.root_visits(), 0).astype(np.float32)
        if visits.sum() == 0:
            visits[int(np.argmax(mask))] = 1.0
        return visits / visits.sum()

    def _add_root_noise(self, mask: np.ndarray) -> None:
        """Mix Dirichlet noise into the root's prior row over the legal moves (the searching seat moves at the
        root, and what it may do does not depend on the hidden cards, so the mask is every deal's)."""
        prior = self.tree.arrays[3][0]
        legal = np.flatnonzero(np.asarray(mask, bool))
        weights = prior[legal] / prior[legal].sum()  # the row holds unnormalised weights; _select renormalises
        noise = self.rng.dirichlet(np.full(len(legal), self.noise_alpha))
        prior[:] = 0.0
        prior[legal] = (1 - self.noise_fraction) * weights + self.noise_fraction * noise

    def _network_move(self, state: np.ndarray, seat: int, mask: np.ndarray) -> int:
        obs = self._work[2]
        encode_into(state, seat, self.cards, self.nobles, obs)
        legal = np.asarray(mask, bool)
        if len(self.renamings) == 1:
            logits = mlp_forward(obs, self.net.policy_weights, self.net.policy_biases)
            return int(np.argmax(np.where(legal, logits, -np.inf)))
        return int(np.argmax(renamed_policy(self.net, obs, legal, self.renamings)))

    def root_visits(self) -> np.ndarray:
        """Visits of each root move in the last search (the self-play target)."""
        children, visits = self.tree.arrays[0], self.tree.arrays[1]
        return np.where(children[0] >= 0, visits[np.maximum(children[0], 0)], 0)

    def root_value(self) -> float:
        """The searching seat's value of the root in [-1, 1] after the last search: the mean over its
        simulations through the root moves (each child's value sum is for the seat that moved into it, the
        searcher). A value target that does not wait for the game's end."""
        children, visits, value = self.tree.arrays[0], self.tree.arrays[1], self.tree.arrays[2]
        moves = children[0][children[0] >= 0]
        total = int(visits[moves].sum())
        if total == 0:
            raise ValueError(f"{self.name}: no root move was searched, so the root has no value yet")
        return 2.0 * float(value[moves].sum()) / total - 1.0

    def sampled(self, mask: np.ndarray) -> int:
        """A legal root move drawn with probability proportional to visits^(1/temperature) (the most visited
        one when no legal move was visited)."""
        counts = np.where(np.asarray(mask, bool), self.root_visits(), 0).astype(np.float64)
        if counts.max() <= 0:
            return self.most_visited(mask)
        # scaled by the largest count first, so a low temperature cannot overflow
        weights = np.where(counts > 0, (counts / counts.max()) ** (1.0 / self.temperature), 0.0)
        return int(self.rng.choice(len(weights), p=weights / weights.sum()))

    def most_visited(self, mask: np.ndarray) -> int:
        """The legal root move visited most (then the lowest id); the first legal move if none was."""
        counts = np.where(np.asarray(mask, bool), self.root_visits(), -1)
        return int(np.argmax(counts))
