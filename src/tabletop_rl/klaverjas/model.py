"""The local best-card model: a small numpy MLP distilled from the determinised-search teacher.

Positions are seen from the seat to act with suits canonicalised (trump first, then the other suits
in C D H S order), so one network serves every trump. ``features`` reads only the seat's own hand
and the public record. The model is saved as plain text (``save``/``load``): a header of
``key: value`` lines (format, card ordering, input size, layer sizes, timestamp, training
parameters as JSON) and then each layer's weights and biases as rows of numbers.

>>> from tabletop_rl.klaverjas import rules as R
>>> m = MLP.initialised([FEATURES, 8, 32], seed=0)
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

from . import rules as R

FORMAT = "tabletop_rl.klaverjas.mlp/1"
FEATURES = 32 + 96 + 32 + 4 + 4 + 1 + 2
CARD_ORDER = " ".join(R.card_name(c) for c in range(R.NUM_CARDS))


def suit_order(trump: int) -> list[int]:
    """Canonical position of each real suit: trump -> 0, the others keep their C D H S order."""
    others = [s for s in range(4) if s != trump]
    order = [0] * 4
    for i, s in enumerate(others, start=1):
        order[s] = i
    order[trump] = 0
    return order


def canonical(card: int, order: list[int]) -> int:
    return order[card >> 3] * 8 + (card & 7)


def features(state: np.ndarray) -> np.ndarray:
    """Input vector for the seat to act: own hand, trick so far by relative seat, cards played in
    earlier tricks, led suit, position in the trick, whether our team made trump, tricks done, points."""
    seat, trump, t = int(state[R.CURRENT]), int(state[R.TRUMP]), int(state[R.TRICK_NO])
    order = suit_order(trump)
    x = np.zeros(FEATURES, np.float32)
    for c in R.cards_of(int(state[R.HAND + seat])):
        x[canonical(c, order)] = 1
    n = int(state[R.IN_TRICK])
    leader = int(state[R.LEADER + t])
    for k in range(n):
        rel = (leader + k - seat) % 4  # 1 left, 2 partner, 3 right
        x[32 + 32 * (rel - 1) + canonical(int(state[R.TRICK + 4 * t + k]), order)] = 1
    for c in state[R.TRICK:R.TRICK + 4 * t]:
        if c >= 0:
            x[128 + canonical(int(c), order)] = 1
    if n:
        x[160 + order[int(state[R.TRICK + 4 * t]) >> 3]] = 1
    x[164 + n] = 1
    x[168] = float(R.team_of(int(state[R.MAKER])) == R.team_of(seat))
    us = R.team_of(seat)
    x[169] = t / 8
    x[170] = (state[R.CARD_POINTS + us] - state[R.CARD_POINTS + 1 - us]) / 162
    return x


@dataclass
class MLP:
    """ReLU hidden layers, linear output of 32 canonical card logits."""

    weights: list[np.ndarray]
    biases: list[np.ndarray]
    meta: dict = field(default_factory=dict)

    @classmethod
    def initialised(cls, sizes: list[int], seed: int = 0) -> MLP:
        """He-initialised layers of ``sizes`` (input first, 32 last)."""
        rng = np.random.default_rng(seed)
        weights = [rng.normal(0, np.sqrt(2 / a), (a, b)).astype(np.float32) for a, b in zip(sizes, sizes[1:])]
        return cls(weights, [np.zeros(b, np.float32) for b in sizes[1:]])

    def forward(self, x: np.ndarray) -> list[np.ndarray]:
        """Activations of every layer (the last: logits)."""
        acts = [x]
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            z = acts[-1] @ w + b
            acts.append(np.maximum(z, 0) if i < len(self.weights) - 1 else z)
        return acts

    def card_scores(self, state: np.ndarray, legal: list[int]) -> dict[int, float]:
        """Softmax probability over the ``legal`` cards of the seat to act."""
        logits = self.forward(features(state)[None])[-1][0]
        order = suit_order(int(state[R.TRUMP]))
        chosen = np.array([logits[canonical(c, order)] for c in legal], np.float64)
        p = np.exp(chosen - chosen.max())
        return dict(zip(legal, (p / p.sum()).tolist()))


def train(x: np.ndarray, targets: np.ndarray, legal: np.ndarray, hidden: int = 128, epochs: int = 30,
          lr: float = 0.003, batch: int = 128, seed: int = 0) -> MLP:
    """Fit an MLP with Adam on softmax cross-entropy restricted to the legal cards.

    ``x``: features, ``targets``: canonical index of the teacher's card, ``legal``: bool[N, 32] canonical.
    """
    rng = np.random.default_rng(seed)
    model = MLP.initialised([x.shape[1], hidden, hidden, 32], seed)
    params = model.weights + model.biases
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    step = 0
    for _ in range(epochs):
        for idx in np.array_split(rng.permutation(len(x)), max(1, len(x) // batch)):
            grads = _gradients(model, x[idx], targets[idx], legal[idx])
            step += 1
            for i, (p, g) in enumerate(zip(params, grads)):
                m[i] = 0.9 * m[i] + 0.1 * g
                v[i] = 0.999 * v[i] + 0.001 * g * g
                p -= lr * (m[i] / (1 - 0.9 ** step)) / (np.sqrt(v[i] / (1 - 0.999 ** step)) + 1e-8)
    model.meta = {"hidden": hidden, "epochs": epochs, "lr": lr, "batch": batch, "seed": seed, "examples": len(x)}
    return model


def _gradients(model: MLP, x: np.ndarray, targets: np.ndarray, legal: np.ndarray) -> list[np.ndarray]:
    acts = model.forward(x)
    logits = np.where(legal, acts[-1], -1e9)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(len(x)), targets] -= 1
    delta = p / len(x)
    gw, gb = [], []
    for i in range(len(model.weights) - 1, -1, -1):
        gw.insert(0, acts[i].T @ delta)
        gb.insert(0, delta.sum(0))
        if i:
            delta = (delta @ model.weights[i].T) * (acts[i] > 0)
    return gw + gb


def predict(model: MLP, x: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Canonical index of the best legal card for each row."""
    return np.where(legal, model.forward(x)[-1], -np.inf).argmax(1)


def save(model: MLP, path: str | Path) -> None:
    """Write ``model`` as plain text (see the module docstring)."""
    sizes = [model.weights[0].shape[0]] + [w.shape[1] for w in model.weights]
    lines = [f"format: {FORMAT}", f"cards: {CARD_ORDER}", f"input_size: {sizes[0]}",
             f"layers: {' '.join(map(str, sizes))}", f"created: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
             f"training: {json.dumps(model.meta, sort_keys=True)}"]
    for i, (w, b) in enumerate(zip(model.weights, model.biases)):
        lines.append(f"weights {i}: {w.shape[0]} {w.shape[1]}")
        lines += [" ".join(f"{value:.6g}" for value in row) for row in w]
        lines.append(f"biases {i}: {b.shape[0]}")
        lines.append(" ".join(f"{value:.6g}" for value in b))
    Path(path).write_text("\n".join(lines) + "\n")


def load(path: str | Path) -> MLP:
    """Read a model written by ``save``; ``ValueError`` naming the file and the problem."""
    try:
        lines = Path(path).read_text().splitlines()
        header = dict(line.split(": ", 1) for line in lines[:6])
        if header.get("format") != FORMAT or header.get("cards") != CARD_ORDER:
            raise ValueError("not a klaverjas MLP of this version (format/cards header)")
        sizes = [int(s) for s in header["layers"].split()]
        if sizes[0] != FEATURES or sizes[-1] != R.NUM_CARDS:
            raise ValueError(f"layer sizes {sizes} do not fit {FEATURES} inputs and 32 cards")
        weights, biases, at = [], [], 6
        for a, b in zip(sizes, sizes[1:]):
            weights.append(np.array([row.split() for row in lines[at + 1:at + 1 + a]], np.float32).reshape(a, b))
            at += 1 + a
            biases.append(np.array(lines[at + 1].split(), np.float32).reshape(b))
            at += 2
        meta = {"created": header["created"], **json.loads(header["training"])}
        return MLP(weights, biases, meta)
    except (OSError, KeyError, IndexError, ValueError) as e:
        raise ValueError(f"cannot load model {path}: {e}") from None


def packaged_model_path() -> Path | None:
    """The model shipped in the package, if any."""
    path = Path(str(resources.files("tabletop_rl.klaverjas") / "model.txt"))
    return path if path.exists() else None


# --- teacher data and the training command -------------------------------------------------------
def teacher_examples(deals: int, samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions from deals played by ``heuristic`` seats with 30% random moves (for variety), each
    labelled with the ``search`` teacher's card: (features, canonical target, canonical legal mask)."""
    from .policies import HeuristicPolicy, SearchPolicy

    rng = np.random.default_rng(seed)
    teacher, player = SearchPolicy(samples=samples, seed=seed), HeuristicPolicy("heuristic")
    xs, ys, legals = [], [], []
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    for d in range(deals):
        state = R.new_state(seed=seed * 1_000_003 + d, rules=R.RULE_SETS[d % 2])
        while int(state[R.PHASE]) != R.OVER:
            R.legal_mask(state, mask)
            seat = int(state[R.CURRENT])
            info = {"state": state, "player": seat}
            if int(state[R.PHASE]) == R.PLAYING and mask.sum() > 1:
                order = suit_order(int(state[R.TRUMP]))
                legal = np.zeros(32, bool)
                legal[[canonical(int(c), order) for c in np.flatnonzero(mask)]] = True
                xs.append(features(state))
                ys.append(canonical(teacher.act(None, mask, info), order))
                legals.append(legal)
            action = (int(rng.choice(np.flatnonzero(mask))) if rng.random() < 0.3
                      else player.act(None, mask, info))
            R.apply_action(state, action)
    return np.array(xs), np.array(ys), np.array(legals)


def train_model_main(argv: list[str] | None = None) -> int:
    """``tabletop train klaverjas-model``: label positions with the search teacher, train, save model.txt,
    and print the agreement with the teacher on held-out positions."""
    import argparse

    parser = argparse.ArgumentParser(prog="tabletop train klaverjas-model", description=train_model_main.__doc__)
    parser.add_argument("--deals", type=int, default=400, help="deals to take positions from")
    parser.add_argument("--samples", type=int, default=6, help="teacher: determinised deals per decision")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--holdout", type=float, default=0.2, help="fraction of deals' positions held out")
    parser.add_argument("--out", default="model.txt")
    parser.add_argument("--data", help="an .npz of (x, y, legal) to train from instead of generating")
    args = parser.parse_args(argv)
    if args.data:
        data = np.load(args.data)
        x, y, legal = data["x"], data["y"], data["legal"]
    else:
        x, y, legal = teacher_examples(args.deals, args.samples, args.seed)
    cut = int(len(x) * (1 - args.holdout))
    model = train(x[:cut], y[:cut], legal[:cut], hidden=args.hidden, epochs=args.epochs, seed=args.seed)
    agreement = float((predict(model, x[cut:], legal[cut:]) == y[cut:]).mean()) if cut < len(x) else float("nan")
    model.meta.update({"teacher_samples": args.samples, "holdout_agreement": round(agreement, 4),
                       "holdout_examples": len(x) - cut})
    save(model, args.out)
    print(f"trained on {cut} positions; agreement with the teacher on {len(x) - cut} held-out: {agreement:.3f}; "
          f"saved {args.out}")
    return 0
