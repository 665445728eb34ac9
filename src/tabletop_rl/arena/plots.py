"""PNG charts of a summary: the win-rate matrix as a heat map and the ratings with their intervals.

Policies are shown by their labels (``summary["labels"]``), whole; each figure is made wide enough for
its longest label and its title, and laid out by matplotlib's constrained layout, so no text is cut.
The charts are drawn on matplotlib ``Figure`` objects, not through pyplot, so no backend is chosen or
changed: no display is needed and nothing outside this module is affected. matplotlib is imported by the first
chart, not with the package: it took about half a second of every start (each command, each arena worker).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tabletop_rl.arena.labels import policy_labels
from tabletop_rl.arena.llm import headline_ratings

__all__ = ["plot_ratings", "plot_win_rates"]

#: Inches per character of 10-point text (DejaVu Sans runs about 0.07; a margin on top).
_INCH_PER_CHAR = 0.085
_TITLE_SIZE = 10


def _labels(summary: dict[str, Any]) -> dict[str, str]:
    return summary.get("labels") or policy_labels(summary["players"])


def _text_width(text: str) -> float:
    return _INCH_PER_CHAR * len(text)


def _figure(width: float, height: float) -> Any:
    """A matplotlib ``Figure`` of ``width`` x ``height`` inches with constrained layout."""
    from matplotlib.figure import Figure
    return Figure(figsize=(width, height), layout="constrained")


def plot_win_rates(summary: dict[str, Any], path: Path) -> bool:
    """Heat map: row policy's win rate against the column policy (blank where they never met). True: written."""
    labels = _labels(summary)
    names = [labels[p] for p in summary["players"]]
    matrix = [[float("nan") if v is None else v for v in row] for row in summary["win_rate_matrix"]]
    title = f"{summary['game']} win rate of row vs column ({summary['games']} games)"
    longest = max(map(_text_width, names))
    cells = 0.9 * len(names)
    width = max(cells + longest + 2.0, _text_width(title) + 0.6)
    fig = _figure(width, cells + 0.5 * longest + 1.4)
    ax = fig.subplots()
    image = ax.imshow(matrix, vmin=0, vmax=1, cmap="RdYlGn")
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            if value == value:  # not NaN
                ax.text(j, i, f"{100 * value:.0f}%", ha="center", va="center", fontsize=9)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("opponent")
    fig.suptitle(title, fontsize=_TITLE_SIZE)  # centred on the figure, which is as wide as the title needs
    fig.colorbar(image, ax=ax, fraction=0.046)
    fig.savefig(path, dpi=100)
    return True


def plot_ratings(summary: dict[str, Any], path: Path) -> bool:
    """Horizontal bars: each policy's headline rating (``headline_ratings``: on the clean games with LLM
    players) with its 95% interval, best on top; an interval that means
    nothing (``interval_note``) gets no error bar. Nothing is drawn (False) when there are no ratings."""
    rating = headline_ratings(summary)
    values = rating["values"]
    if not values:
        return False
    labels = _labels(summary)
    order = sorted(values, key=lambda p: values[p]["rating"])
    notes = [values[p].get("interval_note") for p in order]
    shown = [note is None or note.startswith("anchor") for note in notes]  # the anchor's [0, 0] is a bar of 0
    ratings = [values[p]["rating"] for p in order]
    errors = [[values[p]["rating"] - values[p]["low"] if ok else 0.0 for p, ok in zip(order, shown)],
              [values[p]["high"] - values[p]["rating"] if ok else 0.0 for p, ok in zip(order, shown)]]
    anchor = rating["anchor"]
    xlabel = f"rating ({labels.get(anchor, anchor)} = 0)"
    if not all(shown):
        xlabel += "; no bar: interval n/a (too few games or zero width)"
    games = f"{summary['clean_games']} clean games" if "clean_games" in summary else f"{summary['games']} games"
    title = f"{summary['game']}: {rating['method']} ratings, 95% intervals ({games})"
    names = [labels[p] for p in order]
    width = max(5.0 + max(map(_text_width, names)), _text_width(title) + 0.6, _text_width(xlabel) + 0.6)
    fig = _figure(width, 1.4 + 0.6 * len(order))
    ax = fig.subplots()
    ax.barh(range(len(order)), ratings, xerr=errors, color="#4c78a8", capsize=4)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_yticks(range(len(order)), names)
    ax.set_xlabel(xlabel)
    fig.suptitle(title, fontsize=_TITLE_SIZE)
    fig.savefig(path, dpi=100)
    return True
