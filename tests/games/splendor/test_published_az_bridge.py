"""The bridge of benchmarks/bench_published_az.py between our Splendor and cestpasphoto/alpha-zero-general's: how
their moves become ours, and (with a clone of their repository) our position as their board, checked by their
own engine. The clone is looked for in ``$TABLETOP_AZ_GENERAL``, else ``peers/alpha-zero-general`` under the
repository root (where docs/benchmarks.md clones it); the tests that need it are skipped without it."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmark_scripts import load_benchmark
from positions import position
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.actions import move_id
from tabletop_rl.games.splendor.game import SplendorGame

ROOT = Path(__file__).resolve().parents[3]
REPO = Path(os.environ.get("TABLETOP_AZ_GENERAL", ROOT / "peers" / "alpha-zero-general"))


bench = load_benchmark("bench_published_az")
CARDS, _ = R.tables()
WHITE, BLUE, GREEN = (R.COLOURS.index(c) for c in ("white", "blue", "green"))


def game_of(**placements) -> SplendorGame:
    return SplendorGame.from_json(position(2, **placements))


# --- their moves as ours: no clone needed --------------------------------------------------------------------
def test_a_take_of_as_many_colours_as_our_rules_ask_is_that_take():
    g = game_of()
    assert bench.take_as_ours(g, frozenset({WHITE, BLUE, GREEN})) == move_id("take:white,blue,green")


def test_a_smaller_take_is_ours_only_when_it_leaves_ten_tokens():
    # ours takes three colours then returns the extra, ending where their take of two ends
    assert bench.take_as_ours(game_of(tokens={0: {"red": 4, "black": 4}}), frozenset({WHITE, BLUE})) \
        == move_id("take:white,blue,green")
    assert bench.take_as_ours(game_of(tokens={0: {"red": 3, "black": 4}}), frozenset({WHITE, BLUE})) is None


def test_their_pass_is_ours_or_a_take_given_back_at_ten_tokens():
    ten = game_of(tokens={0: {"red": 4, "black": 4, "white": 2}})
    assert bench.their_move_as_ours(ten, bench.PASS_ACT, None) == move_id("take:white,blue,green")
    assert bench.their_move_as_ours(game_of(), bench.PASS_ACT, None) is None


def test_their_give_backs_have_no_equal():
    g = game_of(tokens={0: {"red": 4}})
    assert [bench.their_move_as_ours(g, a, None) for a in range(bench.GIVE_ACT, bench.PASS_ACT)] == [None] * 20


# --- with their engine ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def peer():
    problem = bench.check_repo(REPO)
    if problem:
        pytest.skip(f"no clone of cestpasphoto/alpha-zero-general: {problem}")
    modules = bench.import_peer(REPO, ("splendor.SplendorLogic", "splendor.SplendorGame"))
    sys.path.remove(str(REPO.resolve()))  # their top-level module names (utils, Game) stay out of later imports
    return modules["splendor.SplendorGame"].SplendorGame(), bench.build_tables(modules["splendor.SplendorLogic"])


def test_every_card_and_noble_has_its_equal(peer):
    _, tables = peer
    assert len(tables.place_to_card) == R.NUM_CARDS
    assert sorted(tables.place_to_card.values()) == list(range(R.NUM_CARDS))
    assert (tables.noble_rows[:, 6] == R.NOBLE_POINTS).all()


def played(seed: int, turns: int) -> SplendorGame:
    g, rng = SplendorGame(2, seed=seed), random.Random(seed)
    for _ in range(turns):
        g.step(rng.choice(g.legal_actions()))
    return g


def test_their_engine_reads_our_position_as_we_do(peer):
    their_game, tables = peer
    g = played(3, 40)
    board = bench.their_board(g, list(g.table_nobles), 20, tables)
    assert [int(their_game.getScore(board, p)) for p in range(2)] == g.scores
    assert [bench.deck_of(board, tier, tables) for tier in range(3)] == [set(g.deck(lv)) for lv in (1, 2, 3)]
    seat = g.current_player
    theirs = their_game.getValidMoves(board, seat)
    ours = g.legal_mask()
    assert theirs[bench.BUY_ACT:bench.RESERVE_ACT].tolist() == ours[R.BUY:R.BUY + 12].tolist()
    assert theirs[bench.BUY_RESERVED_ACT:bench.TAKE_ACT].tolist() == ours[R.BUY_RESERVED:R.CHOOSE_NOBLE].tolist()


def test_random_turns_play_the_same_in_both_engines(peer):
    their_game, tables = peer
    g, rng = SplendorGame(2, seed=11), random.Random(11)
    dealt, compared = list(g.table_nobles), 0
    for turn in range(80):
        if g.is_over:
            break
        before, seat = g.clone(), g.current_player
        main = rng.choice(g.legal_actions())
        g.step(main)
        while not g.is_over and g.current_player == seat:
            g.step(rng.choice(g.legal_actions()))
        diff = bench.turn_differences(their_game, tables, before, g, main, dealt, turn)
        assert diff in (None, []), (turn, diff)
        compared += diff == []
    assert compared >= 40


def test_a_changed_cell_is_reported_by_its_part_of_the_board(peer):
    _, tables = peer
    g = played(5, 10)
    board = bench.their_board(g, list(g.table_nobles), 10, tables)
    changed = board.copy()
    changed[bench.GEMS_ROW + 1, 2] += 1
    changed[bench.MOVE_COUNT] += 1
    assert bench.differences(changed, board) == ["move count", "tokens"]


def _two_noble_position() -> SplendorGame:
    """Player 0 one blue card short of nobles 0 (4 white, 4 blue) and 5 (3 white, 3 blue, 3 green), the blue card
    in market slot 1.0 and the tokens to pay for it."""
    level1 = [c for c in range(R.LEVEL_SIZE[0]) if CARDS[c, R.CARD_POINTS] == 0]
    by_bonus = {colour: [c for c in level1 if CARDS[c, R.CARD_BONUS] == colour] for colour in (WHITE, BLUE, GREEN)}
    bought = by_bonus[WHITE][:4] + by_bonus[BLUE][:3] + by_bonus[GREEN][:3]
    card = by_bonus[BLUE][3]
    bonus = np.bincount(CARDS[bought, R.CARD_BONUS], minlength=5)
    cost = np.maximum(CARDS[card, R.CARD_COST:] - bonus, 0)
    others = [c for c in range(R.LEVEL_SIZE[0]) if c not in bought and c != card][:3]
    return game_of(bought={0: bought}, market={1: [card, *others]}, nobles=[0, 5, 9],
                   tokens={0: {R.COLOURS[c]: int(n) for c, n in enumerate(cost) if n}})


def test_two_nobles_at_once_are_the_divergence_of_the_noble_rows(peer):
    their_game, tables = peer
    g = _two_noble_position()
    before, dealt = g.clone(), list(g.table_nobles)
    g.step("buy:1.0")
    assert g.phase == "noble"
    g.step("noble:0")
    # their engine gives every noble a purchase earns, ours one a turn
    assert bench.turn_differences(their_game, tables, before, g, move_id("buy:1.0"), dealt, 0) \
        == ["table nobles", "player nobles"]


def test_a_reserve_at_ten_tokens_gives_the_gold_back_for_their_seat(peer):
    their_game, tables = peer
    g = game_of(tokens={0: {"red": 4, "black": 4, "white": 2}})
    board = bench.their_board(g, list(g.table_nobles), 0, tables)
    expected = their_game.getNextState(board, 0, bench.RESERVE_ACT, 1)[0]
    before = g.clone()
    g.step("reserve:1.0")
    assert bench.their_follow_up(g, expected) == move_id("return:gold")
    kept = g.clone()
    g.step("return:gold")
    assert bench.our_turn_as_theirs(before, g, move_id("reserve:1.0"), tables) == bench.RESERVE_ACT
    kept.step("return:white")  # keeping the gold: their engine has no such turn
    assert bench.our_turn_as_theirs(before, kept, move_id("reserve:1.0"), tables) is None
