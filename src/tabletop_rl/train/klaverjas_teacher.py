"""Teacher data for the local model: deals played by the perfect-information Monte Carlo teacher
(``agents.search.klaverjas.pimc_card_samples``, the ``search`` policy's objective ``score``), every decision with two
or more legal cards recorded as the acting seat's view (other hands and the RNG blanked) and the exact
value of each legal card in each of the teacher's sampled deals (so a training objective can be
chosen later: the deal score with nat, or plain points).

Decisions early in a deal get more teacher samples than late ones (``samples`` per trick): the hidden
cards matter most there. With probability ``explore`` a random legal card is played instead of the
teacher's best, so the data also covers positions after weaker moves. A ``player`` (a trained model)
can play the deals instead, the teacher still labelling every decision (DAgger: the positions the
model itself reaches). Deals alternate between the
Rotterdam and Amsterdam rule sets, trump is chosen by the ``heuristic`` bid, other options are the
defaults.

Shards of ``shard_deals`` deals are written as ``OUT/shard_00000.npz`` ... (views ``int64[N, STATE_SIZE]``;
values ``float32[N, max(samples), 32]``, NaN for cards that are not legal and for unused samples; deal
index ``int64[N]``); a shard's deals follow from its index, so an interrupted run resumes at the first
missing shard and gives the same data.

>>> views, values = _play_labelled_deal(3, "amsterdam", (1,) * 8, 0.0, new_table(12))
>>> len(views) == len(values) > 10, values.shape[1:], bool(np.isnan(values[:, 0]).any(axis=1).all())
(True, (1, 32), True)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tabletop_rl.agents.search.klaverjas import card_means, pimc_card_samples
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.baselines import bid_action
from tabletop_rl.games.klaverjas.solver import new_table

__all__ = ["DEFAULT_SAMPLES", "deals_done", "load_shards", "mean_values", "write_shards"]

DEFAULT_SAMPLES = (4, 6, 6, 6, 6, 6, 6, 6)


def _play_labelled_deal(seed: int, rule_set: str, samples: tuple[int, ...], explore: float, table: np.ndarray,
                        player: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Play one deal with the teacher, or with ``player`` (an object with ``card_scores(view, legal)``, such as
    a model being trained: its positions, the teacher's labels), random cards with probability ``explore``;
    return the recorded views and per-sample card values (``float32[N, max(samples), 32]``, NaN padded)."""
    state = R.new_state(seed=seed, rules=rule_set)
    rng = np.random.default_rng(seed)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    views, values = [], []
    while int(state[R.PHASE]) != R.OVER:
        R.legal_mask(state, mask)
        legal = np.flatnonzero(mask)
        if int(state[R.PHASE]) != R.PLAYING:
            action = bid_action(state, mask)
        elif len(legal) == 1:
            action = int(legal[0])
        else:
            seat, n = int(state[R.CURRENT]), samples[int(state[R.TRICK_NO])]
            view = R.seat_view(state, seat)
            cards = [int(c) for c in legal]
            sampled = pimc_card_samples(view, seat, n, rng, table)
            padded = np.full((max(samples), R.NUM_CARDS), np.nan, np.float32)
            padded[:n] = sampled
            views.append(view)
            values.append(padded)
            means = card_means(view, seat, sampled, "score") if player is None else player.card_scores(view, cards)
            best = max(means, key=lambda c: (means[c], -c))
            action = int(rng.choice(cards)) if rng.random() < explore else best
        R.apply_action(state, action)
    return (np.array(views, np.int64).reshape(-1, R.STATE_SIZE),
            np.array(values, np.float32).reshape(-1, max(samples), R.NUM_CARDS))


def _shard_path(out: Path, index: int) -> Path:
    return out / f"shard_{index:05d}.npz"


def write_shards(out: str | Path, deals: int, shard_deals: int = 20, samples: tuple[int, ...] = DEFAULT_SAMPLES,
                 explore: float = 0.15, seed: int = 0, player: Any = None, log=print,
                 progress: Callable[[int], None] | None = None) -> None:
    """Generate ``deals`` labelled deals into shards under ``out``, skipping shards already there. Deal ``d``
    has the seed ``seed * 1_000_003 + d`` (the teacher's own play) or ``seed * 1_000_003 + 500_000 + d``
    (``player``'s play), the Rotterdam rules for even ``d``, Amsterdam for odd. ``progress(deals_done)`` is
    called after each new shard (resumed shards counted too)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if len(samples) != R.TRICKS_PER_DEAL or min(samples) < 1:
        raise ValueError(f"samples must give 8 positive sample counts (one per trick), got {samples!r}")
    first = seed * 1_000_003 + (0 if player is None else 500_000)
    table = new_table()
    for index in range((deals + shard_deals - 1) // shard_deals):
        path = _shard_path(out, index)
        if path.exists():
            continue
        start = time.perf_counter()
        parts, deal_ids = [], []
        for d in range(index * shard_deals, min(deals, (index + 1) * shard_deals)):
            part = _play_labelled_deal(first + d, R.RULE_SETS[d % 2], samples, explore, table, player)
            parts.append(part)
            deal_ids.append(np.full(len(part[0]), d, np.int64))
        views, values = (np.concatenate(column) for column in zip(*parts))
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, views=views, values=values, deal=np.concatenate(deal_ids))
        tmp.rename(path)  # a shard is there whole or not at all
        log(f"{path.name}: {len(views)} positions from deals {index * shard_deals}..{d} "
            f"in {time.perf_counter() - start:.0f} s")
        if progress:
            progress(deals_done(out, deals, shard_deals))


def deals_done(out: str | Path, deals: int, shard_deals: int) -> int:
    """How many of ``deals`` the shards already under ``out`` hold (a resumed run does not play them again)."""
    return sum(min(deals, (index + 1) * shard_deals) - index * shard_deals
               for index in range((deals + shard_deals - 1) // shard_deals) if _shard_path(Path(out), index).exists())


def load_shards(out: str | Path) -> dict[str, np.ndarray]:
    """All shards under ``out`` concatenated (``views``, ``values``, ``deal``); ``ValueError`` when there
    are none."""
    paths = sorted(Path(out).glob("shard_*[0-9].npz"))
    if not paths:
        raise ValueError(f"no teacher shards (shard_*.npz) under {out}")
    data = [np.load(p) for p in paths]
    return {key: np.concatenate([d[key] for d in data]) for key in ("views", "values", "deal")}


def mean_values(views: np.ndarray, values: np.ndarray, objective: str) -> np.ndarray:
    """``float32[N, 32]``: each position's mean card value over its samples for ``objective`` (``score`` or
    ``points``, see ``agents.search.klaverjas.card_means``), NaN for cards that are not legal."""
    means = np.full((len(views), R.NUM_CARDS), np.nan, np.float32)
    for i, (view, sampled) in enumerate(zip(views, values)):
        used = sampled[~np.isnan(sampled).all(axis=1)]
        for card, mean in card_means(view, int(view[R.CURRENT]), used, objective).items():
            means[i, card] = mean
    return means
