"""Every policy has a unique readable label (``name=`` in any spec, or
automatic) in tables, plots and ``summary.json`` with the full spec beside it; a bad spec's one-line error
leads with the problem."""

from __future__ import annotations

import itertools
import json

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from tabletop_rl.agents import make_policy, parse_spec
from tabletop_rl.arena import format_table, run_arena, summarize
from tabletop_rl.arena.labels import policy_labels
from tabletop_rl.arena.plots import plot_ratings, plot_win_rates

LLM = "llm:model=fake,base_url=http://127.0.0.1:8080/v1"
EXPECTIMINIMAX = "expectiminimax:depth=3,budget_ms=0.0,nodes=20000"


# --- name= in any spec ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, game, text", [
    ("mcts:simulations=50,name=fast", "splendor", "mcts:simulations=50,name=fast"),
    ("random:name=coin", "splendor", "random:name=coin"),
    ("greedy: name = my greedy ", "splendor", "greedy:name=my greedy"),
    ("ppo:default,name=shipped", "splendor", "ppo:default,name=shipped"),
    ("heuristic:name=h", "klaverjas", "heuristic:name=h"),
])
def test_every_policy_takes_a_name_that_is_kept_in_the_spec_and_not_passed_on(spec, game, text):
    parsed = parse_spec(spec, game)
    assert parsed.label == text.rpartition("name=")[2] and parsed.text == text
    assert "name" not in parsed.options  # the constructor never sees it
    if not spec.startswith("ppo"):  # ppo needs the [train] extra; its parse is what matters here
        assert make_policy(spec, game=game, seed=0).name == text


def test_a_name_given_twice_is_refused():
    with pytest.raises(ValueError, match="option 'name' is given twice"):
        parse_spec("greedy:name=a,name=b", "splendor")


# --- automatic labels ------------------------------------------------------------------------------------------
def test_two_llm_specs_that_differ_only_by_temperature_get_distinct_readable_labels():
    hot = LLM + ",temperature=0.7"
    labels = policy_labels([LLM, hot, "random"])
    assert labels == {LLM: "llm", hot: "llm:temperature=0.7", "random": "random"}


def test_short_specs_are_their_own_label_long_ones_their_distinguishing_part():
    labels = policy_labels(["random", "mcts:simulations=200", EXPECTIMINIMAX,
                            "expectiminimax:depth=3,budget_ms=0.0,nodes=50000"])
    assert labels["random"] == "random" and labels["mcts:simulations=200"] == "mcts:simulations=200"
    assert labels[EXPECTIMINIMAX] == "expectiminimax:nodes=20000"
    assert labels["expectiminimax:depth=3,budget_ms=0.0,nodes=50000"] == "expectiminimax:nodes=50000"
    assert policy_labels(["random", EXPECTIMINIMAX])[EXPECTIMINIMAX] == "expectiminimax"


def test_labels_are_unique_even_when_the_distinguishing_part_is_long():
    a = "llm:model=fake,base_url=http://127.0.0.1:8080/v1/a/very/long/path"
    b = "llm:model=fake,base_url=http://127.0.0.1:8080/v1/another/long/path"
    labels = policy_labels([a, b, "greedy:name=llm#1"])
    assert len(set(labels.values())) == 3 and all(len(label) <= 28 for label in labels.values())


def test_an_explicit_name_wins_and_a_clash_is_refused_before_any_game(tmp_path):
    assert policy_labels([LLM + ",name=cold", LLM + ",temperature=0.7,name=hot"]) == {
        LLM + ",name=cold": "cold", LLM + ",temperature=0.7,name=hot": "hot"}
    with pytest.raises(ValueError, match="label 'greedy' would name two policies"):
        run_arena(players=["greedy", "random:name=greedy"], games=2, jobs=1, out=tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists()


# --- the labels in the table, summary.json and the plots --------------------------------------------------------
def _records(a: str, b: str, games: int = 12) -> list[dict]:
    return [{"index": i, "seats": [a, b] if i % 2 else [b, a], "ranks": [0, 1], "scores": [15, 9], "plies": 60,
             "error": None, "truncated": False, "decisions": [30, 30], "time_s": [0.03, 0.03], "nodes": [0, 0]}
            for i in range(games)]


def test_the_table_and_summary_use_labels_with_the_full_spec_beside_them():
    hot = LLM + ",temperature=0.7"
    summary = summarize(_records(LLM, hot), {"players": [LLM, hot], "num_players": 2, "game": "splendor"})
    assert summary["labels"] == {LLM: "llm", hot: "llm:temperature=0.7"}
    assert summary["policies"][hot]["label"] == "llm:temperature=0.7"
    table = format_table(summary)
    assert "llm vs llm:temperature=0.7" in table and "~" not in table
    row = next(line for line in table.splitlines() if line.startswith("llm:temperature=0.7 "))
    assert row.rstrip().endswith(hot), "the full spec beside the label"


def _drawn_figures(monkeypatch) -> list[Figure]:
    """The figures the plot functions save, kept for a look at their texts."""
    drawn: list[Figure] = []
    save = Figure.savefig

    def keep(self, *args, **kwargs):
        drawn.append(self)
        return save(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    return drawn


@pytest.mark.parametrize("game, players, labels", [
    ("splendor", [LLM, LLM + ",temperature=0.7", EXPECTIMINIMAX], {"llm", "llm:temperature=0.7", "expectiminimax"}),
    ("space_conquest", ["random", "heuristic"], {"random", "heuristic"}),  # a long title over two short names
])
def test_plots_show_whole_labels_and_clip_no_text(tmp_path, monkeypatch, game, players, labels):
    records = [record for a, b in itertools.combinations(players, 2) for record in _records(a, b, games=200)]
    for index, record in enumerate(records):
        record["index"] = index
    summary = summarize(records, {"players": players, "num_players": 2, "game": game})
    drawn = _drawn_figures(monkeypatch)
    plot_win_rates(summary, tmp_path / "w.png")
    plot_ratings(summary, tmp_path / "r.png")
    assert len(drawn) == 2
    for fig in drawn:
        canvas = FigureCanvasAgg(fig)
        canvas.draw()  # lays the figure out as it was saved
        renderer = canvas.get_renderer()
        shown = {t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text()}
        assert labels <= shown, shown
        box, (width, height) = fig.get_tightbbox(renderer), fig.get_size_inches()  # all that is drawn, in inches
        assert box.x0 >= -0.01 and box.y0 >= -0.01 and box.x1 <= width + 0.01 and box.y1 <= height + 0.01, \
            f"text runs off the figure: {box} in {width} x {height}"


def test_an_old_summary_without_labels_in_its_config_still_formats():
    summary = summarize(_records("random", "greedy"), {"players": ["random", "greedy"], "num_players": 2,
                                                      "game": "splendor"})
    assert summary["labels"] == {"random": "random", "greedy": "greedy"}
    assert "random vs greedy" in format_table(summary)
    json.dumps(summary)


# --- bad specs: the problem first ----------------------------------------------------------------------------
@pytest.mark.parametrize("spec, problem", [
    ("nobody", "unknown policy 'nobody'"),
    ("greedy:depth=3", "greedy has no option 'depth'"),
    ("mcts:simulations=lots", "bad value for simulations"),
])
def test_a_bad_spec_leads_with_the_problem_and_lists_the_choices_shortened(spec, problem):
    """The problem first, then the spec (and for a bad value, why), then the policies, each cut short
    except the one the spec names."""
    with pytest.raises(ValueError) as err:
        make_policy(spec, game="splendor")
    message = str(err.value)
    assert message.startswith(problem), message
    assert f"bad policy spec {spec!r} for splendor" in message and "\n" not in message
    assert "Known policies: random" in message
    assert "name=LABEL" in message and len(message) < 600, len(message)
