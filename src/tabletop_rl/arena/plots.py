"""PNG charts of a summary: the win-rate matrix as a heat map and the ratings with their intervals.

The charts are drawn on matplotlib ``Figure`` objects, not through pyplot, so no backend is chosen or
changed: no display is needed and nothing outside this module is affected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

__all__ = ["plot_ratings", "plot_win_rates"]


def plot_win_rates(summary: dict[str, Any], path: Path) -> None:
    """Heat map: row policy's win rate against the column policy (blank where they never met)."""
    players = summary["players"]
    matrix = [[float("nan") if v is None else v for v in row] for row in summary["win_rate_matrix"]]
    size = 1.2 + 0.9 * len(players)
    fig = Figure(figsize=(size + 2, size))
    ax = fig.subplots()
    image = ax.imshow(matrix, vmin=0, vmax=1, cmap="RdYlGn")
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            if value == value:  # not NaN
                ax.text(j, i, f"{100 * value:.0f}%", ha="center", va="center", fontsize=9)
    ax.set_xticks(range(len(players)), [_short(p) for p in players], rotation=30, ha="right")
    ax.set_yticks(range(len(players)), [_short(p) for p in players])
    ax.set_xlabel("opponent")
    ax.set_title(f"{summary['game']} win rate of row vs column ({summary['games']} games)", fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def plot_ratings(summary: dict[str, Any], path: Path) -> None:
    """Horizontal bars: each policy's rating with its 95% interval, best on top."""
    values = summary["ratings"]["values"]
    if not values:
        return
    order = sorted(values, key=lambda p: values[p]["rating"])
    ratings = [values[p]["rating"] for p in order]
    errors = [[values[p]["rating"] - values[p]["low"] for p in order],
              [values[p]["high"] - values[p]["rating"] for p in order]]
    fig = Figure(figsize=(7, 1.2 + 0.6 * len(order)))
    ax = fig.subplots()
    ax.barh(range(len(order)), ratings, xerr=errors, color="#4c78a8", capsize=4)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_yticks(range(len(order)), [_short(p) for p in order])
    ax.set_xlabel(f"rating ({summary['ratings']['anchor']} = 0)")
    ax.set_title(f"{summary['game']}: {summary['ratings']['method']} ratings, 95% intervals "
                 f"({summary['games']} games)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def _short(spec: str, width: int = 28) -> str:
    return spec if len(spec) <= width else spec[:width - 1] + "~"
