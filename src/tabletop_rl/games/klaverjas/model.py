"""The local best-card model: a small numpy MLP distilled from the determinised-search teacher (inference:
features, the network, save/load; its training is ``tabletop_rl.train.klaverjas_model``).

The network scores one candidate card at a time: its input is the position as the seat to act sees it
(``_FEATURE_PARTS``) followed by the candidate card's own features (``_CARD_PARTS``: which card, its rank,
points, whether it takes the trick, whether anything unseen beats it, who may still hold its suit...),
and it outputs one number; the legal cards' numbers, through a softmax, are the card scores and the
policy plays the highest. One scorer shared by all cards learns from every position what makes a card
good, which a network with one output per card would have to learn 32 times.

Positions are seen with suits canonicalised: trump becomes suit 0 and the other three suits are ordered
by what the seat holds and has seen of them (``suit_order``), so one network serves every trump and
every relabelling of the plain suits. The features read only the seat's own hand and the public record
(its inferences about the other hands come from ``determinize``'s constraints, which read the same).

The model is saved as plain text (``save``/``load``): a header of ``key: value`` lines (format, card
ordering, input size, layer sizes, timestamp, training parameters as JSON) and then each layer's
weights and biases as rows of numbers (the first layer's rows: position inputs, then card inputs).

>>> from tabletop_rl.games.klaverjas import rules as R
>>> m = MLP.initialised([FEATURES, 8, 1], seed=0)
>>> s = R.position({0: ["AS", "7S"], 1: ["KS"], 2: ["9S"], 3: ["QS"]}, "H", leader=1, table=["KS", "9S", "QS"])
>>> scores = m.card_scores(s, [R.card_id("AS"), R.card_id("7S")])
>>> [R.card_name(c) for c in scores], round(sum(scores.values()), 6)
(['AS', '7S'], 1.0)
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from tabletop_rl.core.files import file_problem, read_regular_file, shown_path
from tabletop_rl.core.text import quote
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.determinize import hidden_constraints

__all__ = ["CARD_FEATURES", "FEATURES", "FORMAT", "MAX_MODEL_BYTES", "MLP", "STATE_FEATURES", "View", "canonical",
           "card_features", "features", "load", "load_problem", "model_file", "packaged_model_path", "played_before",
           "save", "suit_order"]

FORMAT = "tabletop_rl.klaverjas.mlp/3"
#: The largest model file ``load`` reads: the shipped model.txt is 0.5 MB.
MAX_MODEL_BYTES = 16 << 20
#: How messages about a model file name it.
_WHAT = "klaverjas model"
_CARD_ORDER = " ".join(R.card_name(c) for c in range(R.NUM_CARDS))
#: Position inputs in order: (name, size); cards are canonical (``canonical``), seats relative to the seat to act.
_FEATURE_PARTS = (
    ("hand", 32),             # cards the seat holds
    ("legal", 32),            # the cards it may play now
    ("trick", 96),            # the trick in progress: cards of the left player, partner, right player
    ("played", 32),           # cards of earlier tricks
    ("unseen", 32),           # cards neither held, played nor on the table
    ("may_hold", 96),         # for left, partner, right: unseen cards that seat may hold (voids, trump limits)
    ("led", 4),               # canonical suit led (none when leading)
    ("position", 4),          # cards already on the table
    ("holder", 4),            # who holds the trick: nobody yet, left, partner, right
    ("trick_state", 2),       # the winning card is a trump; points on the table / 60
    ("makers", 1),            # our team chose trump
    ("trick_no", 8),          # trick number one-hot
    ("deal_points", 4),       # our card points / 162, theirs, our roem / 100, theirs
    ("rules", 2),             # Amsterdam follow rules; forced undertrumping
)
#: Candidate-card inputs in order: (name, size).
_CARD_PARTS = (
    ("card", 32),             # the canonical card
    ("rank", 8),              # its rank (7 8 9 10 J Q K A), shared by the suits
    ("kind", 3),              # trump; of the led suit; a trump onto a plain lead (a ruff)
    ("points", 1),            # its card points / 20
    ("takes", 1),             # it would take over the trick in progress
    ("master", 1),            # no unseen card of its suit beats it
    ("suit_counts", 4),       # in its suit: own cards, unseen cards, unseen higher, unseen lower (each / 8)
    ("may_hold_suit", 3),     # left, partner, right may still hold a card of its suit
    ("may_hold_higher", 3),   # ... a card of its suit that beats it
)
STATE_FEATURES = sum(size for _, size in _FEATURE_PARTS)
CARD_FEATURES = sum(size for _, size in _CARD_PARTS)
FEATURES = STATE_FEATURES + CARD_FEATURES  # the network's input size
_AT = dict(zip((name for name, _ in _FEATURE_PARTS), np.cumsum([0] + [size for _, size in _FEATURE_PARTS])))
_CARD_AT = dict(zip((name for name, _ in _CARD_PARTS), np.cumsum([0] + [size for _, size in _CARD_PARTS])))


def suit_order(state: np.ndarray) -> list[int]:
    """Canonical index of each real suit for the seat to act: trump -> 0, the plain suits by (own cards,
    cards on the table, cards played, as rank bit sets) descending, ties by C D H S.

    >>> s = R.position({0: ["AS", "KS", "7D"]}, "H", leader=0)
    >>> suit_order(s)     # hearts (trump) 0, spades (two cards) 1, diamonds 2, clubs 3
    [3, 2, 0, 1]
    """
    trump, seat = int(state[R.TRUMP]), int(state[R.CURRENT])
    hand = int(state[R.HAND + seat])
    t = int(state[R.TRICK_NO])
    table = R.hand_of([int(c) for c in state[R.TRICK + 4 * t:R.TRICK + 4 * t + int(state[R.IN_TRICK])]])
    played = played_before(state)

    def key(suit: int) -> tuple[int, int, int, int]:
        bits = [(cards >> (8 * suit)) & 0xFF for cards in (hand, table, played)]
        return bin(bits[0]).count("1"), bits[0], bits[1], bits[2]

    plain = sorted((s for s in range(4) if s != trump), key=lambda s: (-np.array(key(s))).tolist())
    order = [0] * 4
    for i, s in enumerate(plain, start=1):
        order[s] = i
    order[trump] = 0
    return order


def played_before(state: np.ndarray) -> int:
    """The cards of the finished tricks of the deal (a position built mid-deal may leave them empty)."""
    t = int(state[R.TRICK_NO])
    return R.hand_of([int(c) for c in state[R.TRICK:R.TRICK + 4 * t] if c >= 0])


def canonical(card: int, order: list[int]) -> int:
    return order[card >> 3] * 8 + (card & 7)


@dataclass
class View:
    """What the seat to act knows, computed once per position for its features."""

    state: np.ndarray
    order: list[int]
    seat: int
    trump: int
    n: int
    table: np.ndarray
    hand: int
    legal: list[int]
    played: int
    unseen: int
    allowed: list[int]

    @classmethod
    def of(cls, state: np.ndarray) -> View:
        seat, t, n = int(state[R.CURRENT]), int(state[R.TRICK_NO]), int(state[R.IN_TRICK])
        table = np.array([int(c) for c in state[R.TRICK + 4 * t:R.TRICK + 4 * t + 4]], np.int64)
        hand, played = int(state[R.HAND + seat]), played_before(state)
        mask = np.zeros(R.NUM_ACTIONS, np.bool_)
        R.legal_mask(state, mask)
        unseen = R.ALL_CARDS & ~hand & ~played & ~R.hand_of(table[:n].tolist())
        return cls(state, suit_order(state), seat, int(state[R.TRUMP]), n, table, hand,
                   [int(c) for c in np.flatnonzero(mask[:R.NUM_CARDS])], played, unseen,
                   hidden_constraints(state, seat)[0])

    def beats(self, card: int, other: int) -> bool:
        """Whether ``other`` beats ``card`` within ``card``'s suit."""
        suit = card >> 3
        return R.strength(other, self.trump, suit) > R.strength(card, self.trump, suit)


def _set_cards(x: np.ndarray, at: int, cards: int, order: list[int]) -> None:
    for c in R.cards_of(cards):
        x[at + canonical(c, order)] = 1


def features(view: View) -> np.ndarray:
    """The position inputs of the seat to act (layout ``_FEATURE_PARTS``)."""
    state, order, seat, trump, n, table = view.state, view.order, view.seat, view.trump, view.n, view.table
    x = np.zeros(STATE_FEATURES, np.float32)
    _set_cards(x, _AT["hand"], view.hand, order)
    _set_cards(x, _AT["legal"], R.hand_of(view.legal), order)
    t = int(state[R.TRICK_NO])
    leader = int(state[R.LEADER + t])
    for k in range(n):
        _set_cards(x, _AT["trick"] + 32 * ((leader + k - seat) % 4 - 1), 1 << int(table[k]), order)
    _set_cards(x, _AT["played"], view.played, order)
    _set_cards(x, _AT["unseen"], view.unseen, order)
    for rel in (1, 2, 3):
        _set_cards(x, _AT["may_hold"] + 32 * (rel - 1), view.allowed[(seat + rel) % 4], order)
    x[_AT["position"] + n] = 1
    if n:
        x[_AT["led"] + order[int(table[0]) >> 3]] = 1
        winning = R.winning_position(table, n, trump)
        x[_AT["holder"] + (leader + winning - seat) % 4] = 1
        x[_AT["trick_state"]] = float(int(table[winning]) >> 3 == trump)
        x[_AT["trick_state"] + 1] = sum(int(R.card_points(int(c), trump)) for c in table[:n]) / 60
    else:
        x[_AT["holder"]] = 1
    us = R.team_of(seat)
    x[_AT["makers"]] = float(R.team_of(int(state[R.MAKER])) == us)
    x[_AT["trick_no"] + t] = 1
    o = _AT["deal_points"]
    x[o:o + 4] = [state[R.CARD_POINTS + us] / 162, state[R.CARD_POINTS + 1 - us] / 162,
                  state[R.ROEM + us] / 100, state[R.ROEM + 1 - us] / 100]
    x[_AT["rules"]:_AT["rules"] + 2] = [state[R.RULE_SET] == R.AMSTERDAM, state[R.UNDERTRUMP] == R.UNDERTRUMP_FORCED]
    return x


def card_features(view: View, cards: list[int]) -> np.ndarray:
    """The candidate-card inputs (layout ``_CARD_PARTS``) of each of ``cards``."""
    trump, n, table = view.trump, view.n, view.table
    led = int(table[0]) >> 3 if n else -1
    winning = R.winning_position(table, n, trump) if n else 0
    x = np.zeros((len(cards), CARD_FEATURES), np.float32)
    for row, card in zip(x, cards):
        suit, rank = card >> 3, card & 7
        row[_CARD_AT["card"] + canonical(card, view.order)] = 1
        row[_CARD_AT["rank"] + rank] = 1
        row[_CARD_AT["kind"]:_CARD_AT["kind"] + 3] = [suit == trump, suit == led, suit == trump and 0 <= led != trump]
        row[_CARD_AT["points"]] = R.card_points(card, trump) / 20
        if n:
            row[_CARD_AT["takes"]] = R.strength(card, trump, led) > R.strength(int(table[winning]), trump, led)
        in_suit = [c for c in R.cards_of(view.unseen) if c >> 3 == suit]
        higher = [c for c in in_suit if view.beats(card, c)]
        row[_CARD_AT["master"]] = not higher
        own = sum(1 for c in R.cards_of(view.hand) if c >> 3 == suit)
        o = _CARD_AT["suit_counts"]
        row[o:o + 4] = [own / 8, len(in_suit) / 8, len(higher) / 8, (len(in_suit) - len(higher)) / 8]
        for rel in (1, 2, 3):
            allowed = view.allowed[(view.seat + rel) % 4]
            row[_CARD_AT["may_hold_suit"] + rel - 1] = any((allowed >> c) & 1 for c in in_suit)
            row[_CARD_AT["may_hold_higher"] + rel - 1] = any((allowed >> c) & 1 for c in higher)
    return x


@dataclass
class MLP:
    """ReLU hidden layers and one linear output: the score of a candidate card; the first layer's input is
    the position inputs followed by the card inputs."""

    weights: list[np.ndarray]
    biases: list[np.ndarray]
    meta: dict = field(default_factory=dict)

    @classmethod
    def initialised(cls, sizes: list[int], seed: int = 0) -> MLP:
        """He-initialised layers of ``sizes`` (``FEATURES`` first, 1 last)."""
        rng = np.random.default_rng(seed)
        weights = [rng.normal(0, np.sqrt(2 / a), (a, b)).astype(np.float32) for a, b in zip(sizes, sizes[1:])]
        return cls(weights, [np.zeros(b, np.float32) for b in sizes[1:]])

    def forward(self, states: np.ndarray, cards: np.ndarray, owner: np.ndarray) -> list[np.ndarray]:
        """Activations of every layer for candidate rows ``cards`` of positions ``states[owner]`` (the first
        layer's position part is computed once per position); the last: the scores, ``float[len(cards)]``."""
        w0 = self.weights[0]
        z = (states @ w0[:STATE_FEATURES])[owner] + cards @ w0[STATE_FEATURES:] + self.biases[0]
        acts = [z]
        for w, b in zip(self.weights[1:], self.biases[1:]):
            acts.append(np.maximum(acts[-1], 0) @ w + b)
        acts[-1] = acts[-1][:, 0]
        return acts

    def card_scores(self, state: np.ndarray, legal: list[int]) -> dict[int, float]:
        """Softmax probability over the ``legal`` cards of the seat to act."""
        view = View.of(state)
        z = self.forward(features(view)[None], card_features(view, legal), np.zeros(len(legal), np.int64))[-1]
        p = np.exp(z - z.max())
        return dict(zip(legal, (p / p.sum()).tolist()))


def save(model: MLP, path: str | Path) -> None:
    """Write ``model`` as plain text (see the module docstring)."""
    sizes = [model.weights[0].shape[0]] + [w.shape[1] for w in model.weights]
    lines = [f"format: {FORMAT}", f"cards: {_CARD_ORDER}", f"input_size: {sizes[0]}",
             f"layers: {' '.join(map(str, sizes))}", f"created: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
             f"training: {json.dumps(model.meta, sort_keys=True)}"]
    for i, (w, b) in enumerate(zip(model.weights, model.biases)):
        lines.append(f"weights {i}: {w.shape[0]} {w.shape[1]}")
        lines += [" ".join(f"{value:.4g}" for value in row) for row in w]
        lines.append(f"biases {i}: {b.shape[0]}")
        lines.append(" ".join(f"{value:.4g}" for value in b))
    Path(path).write_text("\n".join(lines) + "\n")


def load(path: str | Path) -> MLP:
    """Read a model written by ``save``; ``ValueError`` naming the file and the problem, also for a file that
    is not a regular file or is larger than ``MAX_MODEL_BYTES`` (refused before it is read)."""
    data = read_regular_file(path, MAX_MODEL_BYTES, _WHAT)
    try:
        lines = data.decode().splitlines()
        header = dict(line.split(": ", 1) for line in lines[:6])
        if header.get("format") != FORMAT or header.get("cards") != _CARD_ORDER:
            raise ValueError("not a klaverjas MLP of this version (format/cards header)")
        sizes = [int(s) for s in header["layers"].split()]
        if sizes[0] != FEATURES or sizes[-1] != 1:
            raise ValueError(f"layer sizes {sizes} do not fit {FEATURES} inputs and one card score")
        weights, biases, at = [], [], 6
        for a, b in zip(sizes, sizes[1:]):
            weights.append(np.array([row.split() for row in lines[at + 1:at + 1 + a]], np.float32).reshape(a, b))
            at += 1 + a
            biases.append(np.array(lines[at + 1].split(), np.float32).reshape(b))
            at += 2
        meta = {"created": header["created"], **json.loads(header["training"])}
        return MLP(weights, biases, meta)
    except (OSError, KeyError, IndexError, ValueError) as e:
        raise ValueError(f"cannot load model {shown_path(path)}: {quote(str(e))}") from None


def load_problem(path: str | Path) -> str | None:
    """Why ``load`` would refuse ``path`` before reading it (no such file, not a regular file, too large), in its
    words; ``None`` when it is worth reading."""
    return file_problem(path, MAX_MODEL_BYTES, _WHAT)


def model_file(path: str) -> str | Path:
    """The file the ``model`` policy's ``path`` names: ``packaged`` is the shipped model; ``ValueError`` when none
    was shipped."""
    if path != "packaged":
        return path
    packaged = packaged_model_path()
    if packaged is None:
        raise ValueError("model: no packaged model.txt; pass model:path=FILE")
    return packaged


def packaged_model_path() -> Path | None:
    """The model shipped in the package, if any."""
    path = Path(str(resources.files("tabletop_rl.games.klaverjas") / "model.txt"))
    return path if path.exists() else None
