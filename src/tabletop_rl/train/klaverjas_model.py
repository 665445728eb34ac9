"""Training the local best-card model (``games/klaverjas/model.py``) on the determinised-search teacher's
data (``train/klaverjas_teacher.py``): training rows (``Examples``), Adam on soft targets (``train``), the
agreement with the teacher, and the ``tabletop train klaverjas-model`` command (``train_model_main``).

>>> from tabletop_rl.games.klaverjas import rules as R
>>> s = R.new_state(seed=2); R.apply_action(s, R.NAME_TRUMP)
>>> values = np.full((1, 32), np.nan, np.float32); values[0, R.cards_of(int(s[R.HAND]))] = range(8)
>>> model = train(examples(s[None], values, temperature=0), hidden=(8,), epochs=1, batch=1)
>>> model.weights[0].shape == (FEATURES, 8), agreement(model, examples(s[None], values, 0)) in (0.0, 1.0)
(True, True)
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tabletop_rl.core.progress import Progress
from tabletop_rl.games.klaverjas.model import (
    CARD_FEATURES,
    FEATURES,
    MLP,
    STATE_FEATURES,
    View,
    card_features,
    features,
    save,
)
from tabletop_rl.train.klaverjas_teacher import DEFAULT_SAMPLES, deals_done, load_shards, mean_values, write_shards

__all__ = ["Examples", "agreement", "examples", "predict", "train", "train_model_main"]


@dataclass
class Examples:
    """Teacher positions as training rows: ``states[i]`` the position inputs; the candidate rows of position
    i are ``starts[i]:starts[i + 1]`` of ``cards`` (card inputs), ``target`` (soft target) and ``best`` (one
    of the teacher's best cards)."""

    states: np.ndarray
    cards: np.ndarray
    starts: np.ndarray
    target: np.ndarray
    best: np.ndarray

    def __len__(self) -> int:
        return len(self.states)

    def rows(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Candidate row indices of ``positions``, each row's index into ``positions``, and segment starts."""
        counts = self.starts[positions + 1] - self.starts[positions]
        seg = np.concatenate([[0], np.cumsum(counts)[:-1]])
        rows = np.arange(counts.sum()) + np.repeat(self.starts[positions] - seg, counts)
        return rows, np.repeat(np.arange(len(positions)), counts), seg

    @staticmethod
    def concat(a: Examples, b: Examples) -> Examples:
        return Examples(np.concatenate([a.states, b.states]), np.concatenate([a.cards, b.cards]),
                        np.concatenate([a.starts, b.starts[1:] + a.starts[-1]]), np.concatenate([a.target, b.target]),
                        np.concatenate([a.best, b.best]))

    def subset(self, mask: np.ndarray) -> Examples:
        positions = np.flatnonzero(mask)
        rows, _, seg = self.rows(positions)
        starts = np.concatenate([seg, [len(rows)]])
        return Examples(self.states[positions], self.cards[rows], starts, self.target[rows], self.best[rows])


def examples(views: np.ndarray, values: np.ndarray, temperature: float) -> Examples:
    """Training rows of teacher positions (``values``: each legal card's mean value, NaN for others). The soft
    target is ``softmax(value / temperature)`` over the legal cards (``temperature`` 0: the best cards,
    equally weighted); ``best`` marks every card of the highest value (equivalent cards tie).

    >>> from tabletop_rl.games.klaverjas import rules as R
    >>> s = R.new_state(seed=2); R.apply_action(s, R.NAME_TRUMP)
    >>> values = np.full((1, 32), np.nan, np.float32); values[0, R.cards_of(int(s[R.HAND]))] = range(8)
    >>> ex = examples(s[None], values, temperature=0)
    >>> ex.states.shape == (1, STATE_FEATURES), ex.cards.shape == (8, CARD_FEATURES), float(ex.target.sum())
    (True, True, 1.0)
    """
    states, cards, targets, best, starts = [], [], [], [], [0]
    for view, row in zip(views, values):
        legal = np.flatnonzero(~np.isnan(row))
        seen = View.of(view)
        states.append(features(seen))
        cards.append(card_features(seen, legal.tolist()))
        scaled = row[legal] - row[legal].max()
        weights = np.exp(scaled / temperature) if temperature > 0 else (scaled == 0).astype(np.float64)
        targets.append(weights / weights.sum())
        best.append(scaled == 0)
        starts.append(starts[-1] + len(legal))
    return Examples(np.array(states, np.float32).reshape(-1, STATE_FEATURES),
                    np.concatenate(cards) if cards else np.zeros((0, CARD_FEATURES), np.float32),
                    np.array(starts), np.concatenate(targets).astype(np.float32) if targets else np.zeros(0),
                    np.concatenate(best) if best else np.zeros(0, bool))


def train(ex: Examples, hidden: tuple[int, ...] = (128, 64), epochs: int = 30, lr: float = 0.002,
          batch: int = 256, seed: int = 0, log=None) -> MLP:
    """Fit an MLP with Adam on the cross-entropy between each position's soft target and the softmax of the
    scores of its legal cards; the learning rate decays linearly to zero. ``log(epoch, loss)`` is called
    after each epoch when given."""
    rng = np.random.default_rng(seed)
    model = MLP.initialised([FEATURES, *hidden, 1], seed)
    params = model.weights + model.biases
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    batches = max(1, len(ex) // batch)
    total, step = epochs * batches, 0
    for epoch in range(epochs):
        loss = 0.0
        for positions in np.array_split(rng.permutation(len(ex)), batches):
            batch_loss, grads = _gradients(model, ex, positions)
            loss += batch_loss / batches
            step += 1
            rate = lr * (1 - (step - 1) / total)
            for i, (p, g) in enumerate(zip(params, grads)):
                m[i] = 0.9 * m[i] + 0.1 * g
                v[i] = 0.999 * v[i] + 0.001 * g * g
                p -= rate * (m[i] / (1 - 0.9 ** step)) / (np.sqrt(v[i] / (1 - 0.999 ** step)) + 1e-8)
        if log:
            log(epoch, loss)
    model.meta = {"hidden": list(hidden), "epochs": epochs, "lr": lr, "batch": batch, "seed": seed,
                  "examples": len(ex)}
    return model


def _segment_log_softmax(z: np.ndarray, owner: np.ndarray, seg: np.ndarray) -> np.ndarray:
    z = z - np.maximum.reduceat(z, seg)[owner]
    return z - np.log(np.add.reduceat(np.exp(z), seg))[owner]


def _gradients(model: MLP, ex: Examples, positions: np.ndarray) -> tuple[float, list[np.ndarray]]:
    rows, owner, seg = ex.rows(positions)
    states, cards, target = ex.states[positions], ex.cards[rows], ex.target[rows]
    acts = model.forward(states, cards, owner)
    log_p = _segment_log_softmax(acts[-1], owner, seg)
    loss = float(-(target * log_p).sum() / len(positions))
    delta = ((np.exp(log_p) - target) / len(positions))[:, None]
    gw: list[np.ndarray] = []
    gb: list[np.ndarray] = []
    for i in range(len(model.weights) - 1, 0, -1):
        hidden = np.maximum(acts[i - 1], 0)
        gw.insert(0, hidden.T @ delta)
        gb.insert(0, delta.sum(0))
        delta = (delta @ model.weights[i].T) * (acts[i - 1] > 0)
    gw.insert(0, np.vstack([states.T @ np.add.reduceat(delta, seg), cards.T @ delta]))
    gb.insert(0, delta.sum(0))
    return loss, gw + gb


def predict(model: MLP, ex: Examples) -> np.ndarray:
    """For each position, the candidate row (index into ``ex.cards``) the model scores highest."""
    positions = np.arange(len(ex))
    rows, owner, seg = ex.rows(positions)
    z = model.forward(ex.states, ex.cards[rows], owner)[-1]
    top = np.flatnonzero(np.maximum.reduceat(z, seg)[owner] == z)
    _, first = np.unique(owner[top], return_index=True)  # ties: the first card
    return rows[top[first]]


def agreement(model: MLP, ex: Examples, ties: bool = True) -> float:
    """Share of positions where the model's card is one of the teacher's best (``ties``), or exactly the
    teacher's own pick (the lowest card id among its best, as ``search`` breaks ties)."""
    if not len(ex):
        return float("nan")
    chosen = predict(model, ex)
    if ties:
        return float(ex.best[chosen].mean())
    rows, owner, _ = ex.rows(np.arange(len(ex)))
    _, first = np.unique(owner[ex.best[rows]], return_index=True)
    return float((chosen == rows[ex.best[rows]][first]).mean())


def train_model_main(argv: list[str] | None = None) -> int:
    """``tabletop train klaverjas-model``: generate (or resume) teacher shards, train the MLP on soft targets;
    with ``--dagger-deals`` let that model play more deals, labelled by the teacher, and train again on all;
    report the agreement with the teacher on held-out deals and save model.txt."""
    parser = argparse.ArgumentParser(
        prog="tabletop train klaverjas-model",
        description="Generate (or resume) teacher shards and train the Klaverjas MLP on soft targets; with "
                    "--dagger-deals, let that model play more deals, labelled by the teacher, and train again on all. "
                    "Reports the agreement with the teacher on held-out deals and saves the model.")
    parser.add_argument("--data", default="runs/klaverjas-data", help="folder of teacher shards (made if missing)")
    parser.add_argument("--deals", type=int, default=3600, help="deals the teacher plays (both rule sets)")
    parser.add_argument("--dagger-deals", type=int, default=0,
                        help="deals the first model plays (teacher-labelled, in DATA/dagger) before retraining")
    parser.add_argument("--shard-deals", type=int, default=40, help="deals per shard file")
    parser.add_argument("--samples", default=",".join(map(str, DEFAULT_SAMPLES)),
                        help="teacher samples per decision for tricks 1..8, comma-separated")
    parser.add_argument("--explore", type=float, default=0.15, help="chance of a random card in the played deals")
    parser.add_argument("--hidden", default="128,64", help="hidden layer sizes, comma-separated")
    parser.add_argument("--epochs", type=int, default=30, help="passes over the examples (default 30)")
    parser.add_argument("--lr", type=float, default=0.002, help="learning rate, decaying linearly to 0 (default 0.002)")
    parser.add_argument("--batch", type=int, default=256, help="examples per gradient step (default 256)")
    parser.add_argument("--objective", choices=("score", "points"), default="points",
                        help="card values to learn: the deal score (nat counts) or the point difference")
    parser.add_argument("--temperature", type=float, default=10.0, help="soft targets: softmax(value / T); 0 = hard")
    parser.add_argument("--holdout", type=float, default=0.1, help="fraction of the teacher's deals held out")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the training (default 0)")
    parser.add_argument("--out", default="model.txt", help="where the model is saved (default model.txt)")
    args = parser.parse_args(argv)
    try:
        args.samples = tuple(int(s) for s in args.samples.split(","))
        args.hidden = tuple(int(h) for h in args.hidden.split(","))
    except ValueError:
        parser.error("--samples and --hidden take comma-separated integers")
    try:
        return _train_model(args)
    except KeyboardInterrupt:  # finished shards are whole files: the same command goes on after them
        print(f"\ninterrupted; the finished teacher shards in {args.data} are kept; go on with: tabletop train "
              f"klaverjas-model {shlex.join(sys.argv[1:] if argv is None else argv)}", file=sys.stderr)
        return 130


def _train_model(args: argparse.Namespace) -> int:
    """The command's work after its arguments are read: the shards, the fits, the report and model.txt."""
    fit, test = _teacher_examples(args, Path(args.data), args.deals, None, args.holdout)
    model = _fit(fit, test, args)
    if args.dagger_deals:
        dagger, _ = _teacher_examples(args, Path(args.data) / "dagger", args.dagger_deals, model, 0.0)
        model = _fit(Examples.concat(fit, dagger), test, args)
    agree, exact = agreement(model, test), agreement(model, test, ties=False)
    model.meta.update({"deals": args.deals, "dagger_deals": args.dagger_deals, "teacher_samples": list(args.samples),
                       "explore": args.explore, "objective": args.objective, "temperature": args.temperature,
                       "holdout_agreement": round(agree, 4), "holdout_exact_agreement": round(exact, 4),
                       "holdout_positions": len(test), "features": FEATURES})
    save(model, args.out)
    print(f"agreement with the teacher on {len(test)} held-out positions: {agree:.3f} (one of its best cards), "
          f"{exact:.3f} (its own pick); saved {args.out}")
    return 0


def _teacher_examples(args, folder: Path, deals: int, player: MLP | None,
                      holdout: float) -> tuple[Examples, Examples]:
    """Generate (or resume) the shards of ``deals`` deals in ``folder``; their examples split into training
    and held-out deals (the last ``holdout`` fraction)."""
    bar = Progress(deals, deals_done(folder, deals, args.shard_deals), label="deals")
    write_shards(folder, deals, args.shard_deals, args.samples, args.explore, args.seed, player, log=bar.note,
                 progress=bar.update)
    bar.close()
    data = load_shards(folder)
    keep = data["deal"] < deals
    held = data["deal"][keep] >= int(deals * (1 - holdout)) if holdout else np.zeros(keep.sum(), bool)
    views = data["views"][keep]
    ex = examples(views, mean_values(views, data["values"][keep], args.objective), args.temperature)
    return ex.subset(~held), ex.subset(held)


def _fit(fit: Examples, test: Examples, args) -> MLP:
    print(f"training on {len(fit)} positions", flush=True)
    bar = Progress(args.epochs, label="epochs")
    model = train(fit, args.hidden, args.epochs, args.lr, args.batch, args.seed,
                  log=lambda e, loss: bar.advance(f"loss {loss:.4f}"))
    bar.close()
    print(f"agreement with the teacher on {len(test)} held-out positions: {agreement(model, test):.3f}", flush=True)
    return model
