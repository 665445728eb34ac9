"""The summary of a run: pairings with 95% intervals, per-policy figures, ratings; as JSON, a table and plots.

Scoring, everywhere: a seat scores against another seat 1 if it finished ahead, 0 behind, and 1/2
on a tie (a shared win, or a game truncated at the ply cap, where every seat ties). For two players
this is the win rate with draws counted half. Games that crashed are left out (and counted).

Policies are keyed by their full spec everywhere in the summary; ``labels`` gives each its label
(``arena/labels.py``), which the table and the plots show. A rating interval that means nothing (a
policy rated on fewer than ``MIN_RATED_GAMES`` games, or an interval of zero width) carries an
``interval_note`` saying why, and the table shows ``n/a`` with the reason instead of the numbers.

With LLM players the summary also rates the clean games alone (``ratings_clean``; ``clean_note`` says what
clean means) and names them the headline (``headline_ratings``): the table and the ratings plot show them,
the ratings over every game go on a line below. Each LLM policy's ``settings`` (its preset among them) are in
``llm``.

>>> records = [{"index": 0, "seats": ["a", "b"], "ranks": [0, 1], "scores": [15, 9], "plies": 60,
...             "error": None, "truncated": False, "decisions": [30, 30], "time_s": [0.3, 0.03],
...             "nodes": [600, 0]}]
>>> summary = summarize(records, {"players": ["a", "b"], "num_players": 2, "game": "splendor"})
>>> summary["pairings"][0]["win_rate"], summary["policies"]["a"]["time_per_move_ms"]
(1.0, 10.0)
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from tabletop_rl.arena.labels import policy_labels
from tabletop_rl.arena.llm import CLEAN_NOTE, format_llm_table, headline_ratings, is_clean, summarize_llm
from tabletop_rl.arena.plots import plot_ratings, plot_win_rates
from tabletop_rl.arena.ratings import ELO_SCALE, bootstrap_bradley_terry, bradley_terry, openskill_ratings, win_matrix
from tabletop_rl.core.stats import Z95, wilson_interval

__all__ = ["MIN_RATED_GAMES", "SUMMARY_FILE", "format_table", "summarize", "write_report"]

SUMMARY_FILE, _WINRATE_PNG, _RATINGS_PNG = "summary.json", "winrate.png", "ratings.png"
_ANCHOR = "random"
#: Fewer rated games than this give a rating interval that means nothing (a bootstrap of two games is
#: two numbers resampled); such an interval is shown as n/a.
MIN_RATED_GAMES = 10
_SCORING_NOTE = ("win rate: 1 for finishing ahead, 1/2 for a tie (shared win or truncated game), 0 behind; "
                 "95% Wilson intervals")


def _pair_results(records: list[dict[str, Any]], players: list[str]) -> list[tuple[int, int, float]]:
    """``(i, j, score of i against j)`` for every pair of seats in every valid game (policy indices)."""
    index = {p: k for k, p in enumerate(players)}
    rows = []
    for r in records:
        for s, t in combinations(range(len(r["seats"])), 2):
            a, b = r["ranks"][s], r["ranks"][t]
            rows.append((index[r["seats"][s]], index[r["seats"][t]], 1.0 if a < b else 0.5 if a == b else 0.0))
    return rows


def summarize(records: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
    """The run's summary as plain data (what ``summary.json`` holds)."""
    players = list(config["players"])
    labels = policy_labels(players)
    void = sum(1 for r in records if r.get("void"))
    valid = sorted((r for r in records if not r["error"] and not r.get("void")), key=lambda r: r["index"])
    rows = _pair_results(valid, players)
    wins = win_matrix(rows, len(players))
    summary = {
        "game": config["game"], "num_players": config["num_players"], "players": players, "labels": labels,
        "games": len(records) - void, "crashed": len(records) - void - len(valid),
        "first_crash": _first_crash(records),
        "truncated": sum(1 for r in valid if r["truncated"]), "scoring": _SCORING_NOTE,
        "pairings": _pairings(valid, players, wins),
        "policies": {p: {"label": labels[p], **_policy(p, valid, records)} for p in players},
        "win_rate_matrix": [[_rate(wins[i, j], wins[i, j] + wins[j, i]) if i != j else None
                             for j in range(len(players))] for i in range(len(players))],
        "ratings": _ratings(valid, players, rows, config["num_players"]),
    }
    llm = summarize_llm(valid)
    if llm or void:  # LLM players: accounting, and the headline ratings on the games without a fallback move
        clean = [r for r in valid if is_clean(r)]
        summary.update({"void": void, "llm": llm, "clean_games": len(clean), "clean_note": CLEAN_NOTE,
                        "headline_ratings": "ratings_clean",
                        "ratings_clean": _ratings(clean, players, _pair_results(clean, players),
                                                  config["num_players"])})
    return summary


def _first_crash(records: list[dict[str, Any]]) -> str | None:
    """``game N: <error>`` of the crashed game with the lowest index, or ``None``."""
    crashed = [r for r in records if r["error"] and not r.get("void")]
    first = min(crashed, key=lambda r: r["index"], default=None)
    return None if first is None else f"game {first['index']}: {first['error']}"


def _rate(score: float, games: float) -> float | None:
    return float(score / games) if games else None


def _pairings(valid: list[dict[str, Any]], players: list[str], wins: np.ndarray) -> list[dict[str, Any]]:
    out = []
    for i, j in combinations(range(len(players)), 2):
        a, b = players[i], players[j]
        met = [r for r in valid if a in r["seats"] and b in r["seats"]]
        n = len(met)
        low, high = wilson_interval(wins[i, j], n)
        out.append({
            "a": a, "b": b, "games": n, "score_a": float(wins[i, j]), "win_rate": _rate(wins[i, j], n),
            "ci_low": low, "ci_high": high,
            "mean_points_a": _mean([r["scores"][r["seats"].index(a)] for r in met]),
            "mean_points_b": _mean([r["scores"][r["seats"].index(b)] for r in met]),
            "mean_plies": _mean([r["plies"] for r in met]),
        })
    return out


def _policy(name: str, valid: list[dict[str, Any]], records: list[dict[str, Any]]) -> dict[str, Any]:
    mine = [(r, r["seats"].index(name)) for r in valid if name in r["seats"]]
    share = sum(1 / r["ranks"].count(0) for r, s in mine if r["ranks"][s] == 0)
    low, high = wilson_interval(share, len(mine))
    decisions = sum(r["decisions"][s] for r, s in mine)
    seconds = sum(r["time_s"][s] for r, s in mine)
    nodes = sum(r["nodes"][s] for r, s in mine)
    return {
        "games": len(mine), "wins": share, "win_share": _rate(share, len(mine)), "ci_low": low, "ci_high": high,
        "mean_points": _mean([r["scores"][s] for r, s in mine]), "decisions": decisions,
        "time_per_move_ms": 1000 * seconds / decisions if decisions else None,
        "nodes_per_move": nodes / decisions if decisions else None,
        "crashes": sum(1 for r in records if r["error"] and r["seats"][r["error_seat"]] == name),
    }


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _ratings(valid: list[dict[str, Any]], players: list[str], rows: list[tuple[int, int, float]],
             num_players: int) -> dict[str, Any]:
    """Bradley-Terry (Elo scale, bootstrap 95% interval) for two players, OpenSkill for more; shifted so
    ``random`` is 0 when it plays, else so the mean is 0."""
    k = len(players)
    anchor = players.index(_ANCHOR) if _ANCHOR in players else None
    if not valid:
        return _no_ratings()
    if num_players == 2:
        fit = ELO_SCALE * bradley_terry(win_matrix(rows, k))
        boots = ELO_SCALE * bootstrap_bradley_terry(rows, k)
        shift = fit[anchor] if anchor is not None else 0.0
        rel = boots - (boots[:, [anchor]] if anchor is not None else 0.0)
        low, high = np.quantile(rel, 0.025, axis=0), np.quantile(rel, 0.975, axis=0)
        method, detail = "Bradley-Terry", "MM fit, Elo scale (400 log10 of strength), 95% bootstrap interval"
        values = fit - shift
    else:
        mu, sigma = openskill_ratings([(_seat_policies(r, players), r["ranks"]) for r in valid], k)
        values = mu - (mu[anchor] if anchor is not None else mu.mean())
        low, high = values - Z95 * sigma, values + Z95 * sigma
        method, detail = "OpenSkill", "Plackett-Luce mu, interval mu +- 1.96 sigma, games rated in index order"
    rated = [sum(1 for r in valid if p in r["seats"]) for p in players]
    return {"method": method, "detail": detail, "anchor": players[anchor] if anchor is not None else "mean",
            "values": {p: {"rating": float(values[i]), "low": float(low[i]), "high": float(high[i]),
                           "interval_note": _interval_note(i == anchor, rated[i], float(high[i] - low[i]))}
                       for i, p in enumerate(players)}}


def _interval_note(anchor: bool, games: int, width: float) -> str | None:
    """Why a rating interval means nothing, or ``None`` when it is worth reading.

    >>> _interval_note(False, 2, 0.0), _interval_note(False, 40, 0.0), _interval_note(False, 40, 120.0)
    ('too few games (2, fewer than 10)', 'zero width (every resample gives the same rating)', None)
    """
    if anchor:
        return "anchor: 0 by definition"
    if games < MIN_RATED_GAMES:
        return f"too few games ({games}, fewer than {MIN_RATED_GAMES})"
    if width < 1e-9:
        return "zero width (every resample gives the same rating)"
    return None


def _no_ratings() -> dict[str, Any]:
    return {"method": None, "detail": None, "anchor": None, "values": {}}


def _seat_policies(record: dict[str, Any], players: list[str]) -> list[int]:
    return [players.index(s) for s in record["seats"]]


def format_table(summary: dict[str, Any]) -> str:
    """The summary as aligned text for the terminal: policies by label, the full spec beside each label
    that differs from it."""
    n = summary["num_players"]
    labels = _labels(summary)
    head = (f"{summary['game']}: {summary['games']} games, {n} players, {summary['crashed']} crashed, "
            f"{summary['truncated']} truncated\n{summary['scoring']}")
    vs = "vs" if n == 2 else "ahead of"
    pairs = [f"{labels[p['a']]} {vs} {labels[p['b']]}" for p in summary["pairings"]]
    wide = max([len("pairing"), *map(len, pairs)]) + 2
    lines = [head, "", f"{'pairing':<{wide}}{'games':>6}{'win rate':>10}  {'95% CI':<15}{'points':>13}{'plies':>8}"]
    for pair, p in zip(pairs, summary["pairings"]):
        rate = f"{100 * p['win_rate']:.1f}%" if p["win_rate"] is not None else "-"
        lines.append(f"{pair:<{wide}}{p['games']:>6}{rate:>10}  {_ci(p['ci_low'], p['ci_high']):<15}"
                     f"{_pair(p['mean_points_a'], p['mean_points_b']):>13}{_num(p['mean_plies'], 1):>8}")
    rating = headline_ratings(summary)
    wide = max([len("policy"), *map(len, labels.values())]) + 2
    specs = any(label != spec for spec, label in labels.items())
    lines += ["", f"{'policy':<{wide}}{'rating':>8}  {'95% CI':<21}{'win share':>10}{'points':>8}"
                  f"{'ms/move':>9}{'nodes/move':>11}{'crashes':>8}" + ("  spec" if specs else "")]
    for name, p in sorted(summary["policies"].items(),
                          key=lambda kv: -rating["values"].get(kv[0], {}).get("rating", 0.0)):
        r = rating["values"].get(name)
        share = f"{100 * p['win_share']:.1f}%" if p["win_share"] is not None else "-"
        beside = f"  {name}" if specs and labels[name] != name else ""
        lines.append(f"{labels[name]:<{wide}}{_num(r and r['rating'], 0):>8}  "
                     f"{_bounds(r):<21}{share:>10}{_num(p['mean_points'], 1):>8}"
                     f"{_num(p['time_per_move_ms'], 2):>9}{_num(p['nodes_per_move'], 0):>11}{p['crashes']:>8}{beside}")
    if rating["method"]:
        unshown = any(_bounds(r).startswith("n/a") for r in rating["values"].values())
        lines.append(f"ratings: {rating['method']} ({rating['detail']}); {labels.get(rating['anchor'], 'mean')} = 0"
                     + (f"; n/a: an interval from fewer than {MIN_RATED_GAMES} games, or of zero width, means nothing"
                        if unshown else ""))
    if "llm" in summary:
        lines += ["", format_llm_table(summary["llm"], labels), _all_ratings_line(summary, labels)]
    return "\n".join(lines)


def _labels(summary: dict[str, Any]) -> dict[str, str]:
    """The summary's labels; a summary written before labels existed gets them worked out now."""
    return summary.get("labels") or policy_labels(summary["players"])


def _all_ratings_line(summary: dict[str, Any], labels: dict[str, str]) -> str:
    """The ratings the table does not lead with: over every game when it leads with the clean ones."""
    clean = summary.get("headline_ratings") == "ratings_clean"
    values = summary["ratings" if clean else "ratings_clean"]["values"]
    shown = ", ".join(f"{labels[name]} {r['rating']:.0f} {_bounds(r)}" for name, r in values.items())
    head = (f"ratings above: the {summary['clean_games']} clean games (no LLM fallback move; forfeits count); "
            f"on all {summary['games'] - summary['crashed']} games" if clean
            else f"on the {summary['clean_games']} clean games (no LLM fallback move)")
    return f"{head}: {shown or '-'}; {summary['void']} void game(s) left to replay with --resume"


def _ci(low: float, high: float) -> str:
    return f"[{100 * low:.1f}, {100 * high:.1f}]"


def _bounds(r: dict[str, Any] | None) -> str:
    """``[low, high]``, or why the interval is not shown (``n/a (too few games)``, ``anchor``)."""
    if not r:
        return "-"
    note = r.get("interval_note")
    if note is None:
        return f"[{r['low']:.0f}, {r['high']:.0f}]"
    return "anchor" if note.startswith("anchor") else f"n/a ({note.split(' (')[0]})"


def _num(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _pair(a: float | None, b: float | None) -> str:
    return "-" if a is None else f"{a:.1f}-{b:.1f}"


def write_report(out: Path, records: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
    """Write the two plots (the ratings one only when there are ratings) and ``summary.json`` into ``out``;
    return the summary, whose ``files`` names exactly the files written."""
    summary = summarize(records, config)
    files = [SUMMARY_FILE]
    for name, plot in ((_WINRATE_PNG, plot_win_rates), (_RATINGS_PNG, plot_ratings)):
        if plot(summary, Path(out) / name):
            files.append(name)
        else:  # a plot left from an earlier write of this run would no longer match the summary
            (Path(out) / name).unlink(missing_ok=True)
    summary["files"] = files
    (Path(out) / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary
