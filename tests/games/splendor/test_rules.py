"""One focused test per Splendor rule (docs/splendor.md §2-§8 and its §10 checklist), each built
from a hand-written position and asserting the exact resulting state."""

import json

import numpy as np
import pytest

from positions import cost, game, points, position
from tabletop_rl.games.splendor.actions import kind, move_id
from tabletop_rl.games.splendor.game import IllegalActionError, SplendorGame

COLOURS = ("white", "blue", "green", "red", "black")
TAKE_KINDS = ("take3", "take2_diff", "take1", "take2_same")
NO_GEMS_IN_BANK = {0: {"white": 4, "blue": 4, "green": 2}, 1: {"green": 2, "red": 4, "black": 4}}  # 2 players


def play(pos: dict, *actions: str) -> SplendorGame:
    g = game(pos)
    for a in actions:
        g.step(a)
    return g


def legal_names(g: SplendorGame, kinds: tuple[str, ...]) -> set[str]:
    return {g.move_name(a) for a in g.legal_actions() if kind(a) in kinds}


def tokens(**held: int) -> dict[str, int]:
    """A full token dict, e.g. ``tokens(red=2)``."""
    return {c: held.get(c, 0) for c in COLOURS + ("gold",)}


# --- set-up ------------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "gems"), [(2, 4), (3, 5), (4, 7)])
def test_setup(n, gems):
    g = SplendorGame(num_players=n, seed=11)
    assert g.bank == {c: gems for c in COLOURS} | {"gold": 5}
    assert len(g.table_nobles) == n + 1 == len(set(g.table_nobles))
    for level, ids in ((1, range(0, 40)), (2, range(40, 70)), (3, range(70, 90))):
        assert len(g.market(level)) == 4 and all(c in ids for c in g.market(level))
    assert g.deck_sizes == [36, 26, 16]
    assert (g.current_player, g.phase, g.ply, g.winners, g.is_over) == (0, "main", 0, [], False)
    for p in range(n):
        assert g.player(p) == {"tokens": tokens(), "bonuses": dict.fromkeys(COLOURS, 0), "points": 0,
                               "bought": [], "reserved": [], "nobles": []}


def test_same_seed_same_deal_and_different_seeds_differ():
    deals = {seed: SplendorGame(2, seed=seed).to_json() for seed in range(5)}
    assert SplendorGame(2, seed=3).to_json() == deals[3]
    assert len(set(deals.values())) == 5


# --- take ---------------------------------------------------------------------------------
def test_take_three_different():
    g = play(position(2), "take:white,green,black")
    assert g.bank == tokens(white=3, blue=4, green=3, red=4, black=3, gold=5)
    assert g.player(0)["tokens"] == tokens(white=1, green=1, black=1)
    assert (g.current_player, g.ply) == (1, 1)


def test_five_colours_in_stock_offer_only_take3_and_take2_same():
    g = game(position(2))
    assert legal_names(g, ("take2_diff", "take1")) == set()
    assert len(legal_names(g, ("take3",))) == 10
    with pytest.raises(IllegalActionError, match="take:white,blue.*exactly 3 colours"):
        g.step("take:white,blue")


def test_three_colours_in_stock_offer_exactly_one_take3():
    g = game(position(2, tokens={0: {"white": 4, "blue": 4}}))
    assert legal_names(g, TAKE_KINDS) == {"take:green,red,black", "take2:green", "take2:red", "take2:black"}


def test_two_colours_in_stock_offer_only_take_two_different():
    pos = position(2, tokens={0: {"white": 4, "blue": 2, "black": 3}, 1: {"blue": 2, "green": 4, "red": 2}})
    g = game(pos)
    assert legal_names(g, TAKE_KINDS) == {"take:red,black"}
    assert move_id("take:red,black") == 19
    g.step("take:red,black")
    assert g.bank == tokens(red=1, gold=5)
    assert g.player(0)["tokens"] == tokens(white=4, blue=2, red=1, black=4)


def test_one_colour_in_stock_offers_only_take_one():
    held = {0: {"white": 4, "blue": 4, "red": 1}, 1: {"green": 4, "red": 3}}
    g = game(position(2, tokens=held))
    assert g.bank["black"] == 4
    assert legal_names(g, TAKE_KINDS) == {"take:black", "take2:black"}
    held[0]["black"] = 1
    g = game(position(2, tokens=held))
    assert legal_names(g, TAKE_KINDS) == {"take:black"}
    g.step("take:black")
    assert (g.bank["black"], g.player(0)["tokens"]["black"]) == (2, 2)


def test_no_colour_in_stock_offers_no_take_even_with_gold_in_the_bank():
    g = game(position(2, tokens=NO_GEMS_IN_BANK))
    assert g.bank == tokens(gold=5)
    assert legal_names(g, TAKE_KINDS) == set()


def test_take_two_same_needs_four_before_taking():
    g = game(position(2, tokens={1: {"red": 1}}))
    assert "take2:red" not in legal_names(g, TAKE_KINDS)
    with pytest.raises(IllegalActionError, match="take2:red needs 4 red in the bank, there are 3"):
        g.step("take2:red")
    g = play(position(2), "take2:red")
    assert g.bank["red"] == 2 and g.player(0)["tokens"] == tokens(red=2)


# --- reserve -------------------------------------------------------------------------------
def test_reserve_face_up_gives_gold_and_refills_from_the_same_level():
    pos = position(2)
    g = play(pos, "reserve:2.1")
    assert g.player(0)["reserved"] == [(pos["market"]["2"][1], False)]
    assert g.player(0)["tokens"] == tokens(gold=1) and g.bank["gold"] == 4
    row = list(pos["market"]["2"])
    row[1] = pos["decks"]["2"][0]
    assert g.market(2) == row
    assert (g.market(1), g.market(3)) == (pos["market"]["1"], pos["market"]["3"])
    assert g.deck_sizes == [36, 25, 16]


def test_reserve_without_gold_in_the_bank_is_legal_and_gives_none():
    g = play(position(2, tokens={1: {"gold": 5}}), "reserve:1.0")
    assert g.player(0)["tokens"] == tokens() and g.bank["gold"] == 0
    assert len(g.player(0)["reserved"]) == 1


def test_blind_reserve_takes_the_deck_top_and_leaves_the_market():
    pos = position(2)
    g = play(pos, "reserve_deck:3")
    assert g.player(0)["reserved"] == [(pos["decks"]["3"][0], True)]
    assert [g.market(lv) for lv in (1, 2, 3)] == [pos["market"][k] for k in "123"]
    assert g.deck_sizes == [36, 26, 15] and g.player(0)["tokens"]["gold"] == 1


def test_fourth_reserve_is_refused():
    g = game(position(2, reserved={0: [40, 41, (70, True)]}))
    assert legal_names(g, ("reserve", "reserve_deck")) == set()
    with pytest.raises(IllegalActionError, match="reserve:1.0: player 0 already holds 3 reserved cards"):
        g.step("reserve:1.0")
    with pytest.raises(IllegalActionError, match="reserve_deck:1"):
        g.step("reserve_deck:1")


def level1_deck_empty(**fields) -> dict:
    """Every level-1 card out of the deck: market = black 36-39, seat 1 reserved black 32-34, the
    rest bought (seat 0 white+blue, seat 1 green+red+card 35); nobles chosen so nobody qualifies."""
    pos = position(2, bought={0: list(range(0, 16)), 1: list(range(16, 32)) + [35]},
                   reserved={1: [32, 33, 34]}, nobles=[1, 2, 4], **fields)
    assert pos["decks"]["1"] == [] and pos["market"]["1"] == [36, 37, 38, 39]
    return pos


def test_empty_deck_leaves_the_slot_empty_and_blind_reserve_from_it_is_illegal():
    g = game(level1_deck_empty())
    assert "reserve_deck:1" not in legal_names(g, ("reserve_deck",))
    with pytest.raises(IllegalActionError, match="reserve_deck:1: the level 1 deck is empty"):
        g.step("reserve_deck:1")
    g.step("reserve:1.2")
    assert g.market(1) == [36, 37, None, 39] and g.deck_sizes[0] == 0
    g.step("take:white,blue,green")
    assert not ({"reserve:1.2", "buy:1.2"} & legal_names(g, ("reserve", "buy")))
    with pytest.raises(IllegalActionError, match="buy:1.2: market slot 1.2 is empty"):
        g.step("buy:1.2")


# --- buy -------------------------------------------------------------------------------------
def test_buy_pays_coloured_tokens_first_then_gold_for_the_shortfall():
    assert cost(16) == {"white": 0, "blue": 0, "green": 0, "red": 3, "black": 0}
    pos = position(2, tokens={0: {"red": 2, "gold": 2}}, market={1: [16, 0, 1, 2]})
    g = play(pos, "buy:1.0")
    assert g.player(0)["tokens"] == tokens(gold=1)
    assert g.bank == tokens(white=4, blue=4, green=4, red=4, black=4, gold=4)
    assert g.player(0)["bought"] == [16] and g.player(0)["bonuses"]["green"] == 1
    assert g.market(1) == [pos["decks"]["1"][0], 0, 1, 2]


def test_buy_keeps_gold_when_the_colour_is_held():
    g = play(position(2, tokens={0: {"red": 3, "gold": 1}}, market={1: [16, 0, 1, 2]}), "buy:1.0")
    assert g.player(0)["tokens"] == tokens(gold=1)
    assert g.bank["red"] == 4 and g.bank["gold"] == 4


def test_buy_adds_points_and_bonus():
    assert cost(71) == {"white": 0, "blue": 0, "green": 0, "red": 0, "black": 7}
    pos = position(2, tokens={0: {"black": 4}}, bought={0: [32, 33, 34]}, market={3: [72, 71, 73, 74]})
    g = play(pos, "buy:3.1")
    me = g.player(0)
    assert me["points"] == points(71) == 4
    assert me["bonuses"] == {"white": 1, "blue": 0, "green": 0, "red": 0, "black": 3}
    assert me["bought"] == [32, 33, 34, 71] and me["tokens"] == tokens()
    assert g.bank["black"] == 4


def test_surplus_bonus_does_not_pay_for_another_colour():
    assert cost(22) == {"white": 2, "blue": 1, "green": 0, "red": 0, "black": 0}
    pos = position(2, bought={0: [0, 1, 2]}, market={1: [22, 16, 17, 18]})
    g = game(pos)
    assert g.player(0)["bonuses"]["white"] == 3
    assert "buy:1.0" not in legal_names(g, ("buy",))
    with pytest.raises(IllegalActionError, match="buy:1.0: card 22 costs 1 more"):
        g.step("buy:1.0")
    pos["players"][0]["tokens"]["gold"] = 1
    pos["bank"]["gold"] = 4
    g = play(pos, "buy:1.0")
    assert g.player(0)["tokens"] == tokens() and g.bank["gold"] == 5 and g.bank["white"] == 4


def test_buy_reserved_closes_up_the_reserve_and_leaves_the_market():
    pos = position(2, tokens={0: {"red": 3}}, reserved={0: [(70, True), 16, (80, True)]})
    g = play(pos, "buy_reserved:1")
    me = g.player(0)
    assert me["reserved"] == [(70, True), (80, True)]
    assert me["bought"] == [16] and me["tokens"] == tokens() and g.bank["red"] == 4
    assert [g.market(lv) for lv in (1, 2, 3)] == [pos["market"][k] for k in "123"]
    assert g.deck_sizes == [len(pos["decks"][k]) for k in "123"]


def test_buy_reserved_index_refers_to_the_reserve_as_it_is_now():
    pos = position(2, tokens={0: {"red": 3, "black": 3}}, reserved={0: [16, 8, 70]})
    g = play(pos, "buy_reserved:0", "take:white,blue,green")
    assert g.player(0)["reserved"] == [(8, False), (70, False)]
    g.step("buy_reserved:0")
    assert g.player(0)["bought"] == [8, 16] and g.player(0)["reserved"] == [(70, False)]


def test_unaffordable_card_is_illegal_with_a_message():
    g = game(position(2, market={2: [45, 40, 41, 42]}))
    with pytest.raises(IllegalActionError, match="buy:2.0: card 45 costs 6 more than player 0's"):
        g.step("buy:2.0")


# --- token limit -------------------------------------------------------------------------------
def test_over_ten_tokens_the_same_player_returns_one_token_per_step():
    pos = position(2, tokens={0: {"white": 3, "blue": 3, "gold": 3}})
    g = play(pos, "take:green,red,black")
    assert (g.current_player, g.phase, g.ply) == (0, "return", 1)
    assert legal_names(g, ("return",)) == {f"return:{c}" for c in COLOURS + ("gold",)}
    g.step("return:gold")
    assert (g.current_player, g.phase, g.ply) == (0, "return", 2)
    assert g.bank["gold"] == 3
    g.step("return:green")
    assert (g.current_player, g.phase, g.ply) == (1, "main", 3)
    assert g.player(0)["tokens"] == tokens(white=3, blue=3, red=1, black=1, gold=2)
    assert g.bank == tokens(white=1, blue=1, green=4, red=3, black=3, gold=3)


def test_gold_counts_toward_the_limit():
    g = play(position(2, tokens={0: {"white": 3, "gold": 5}}), "take:blue,green,red")
    assert (g.phase, g.current_player) == ("return", 0)
    g = play(position(2, tokens={0: {"white": 2, "gold": 5}}), "take:blue,green,red")
    assert (g.phase, g.current_player) == ("main", 1)
    assert g.player(0)["tokens"] == tokens(white=2, blue=1, green=1, red=1, gold=5)


def test_reserving_at_ten_tokens_may_return_the_gold_just_taken():
    g = play(position(2, tokens={0: {"white": 4, "blue": 4, "green": 2}}), "reserve:1.0")
    assert g.phase == "return" and g.player(0)["tokens"]["gold"] == 1
    g.step("return:gold")
    assert (g.current_player, g.bank["gold"], g.player(0)["tokens"]["gold"]) == (1, 5, 0)


def test_return_of_a_colour_not_held_is_illegal():
    pos = position(2, tokens={0: {"white": 4, "blue": 4, "green": 2, "red": 1}}, phase="return")
    g = game(pos)
    with pytest.raises(IllegalActionError, match="return:black: player 0 has no black token"):
        g.step("return:black")
    with pytest.raises(IllegalActionError, match="must first return tokens"):
        g.step("take:green,red,black")


# --- nobles ------------------------------------------------------------------------------------
FOUR_WHITE_FOUR_BLUE = [0, 1, 2, 3, 8, 9, 10, 11]  # bonuses meeting noble 0 (4 white, 4 blue)


@pytest.mark.parametrize("action", ["take:green,red,black", "take2:red", "reserve:2.0", "reserve_deck:3"])
def test_noble_visits_whatever_the_action(action):
    g = play(position(2, bought={0: FOUR_WHITE_FOUR_BLUE}, nobles=[2, 0, 3]), action)
    assert g.player(0)["nobles"] == [0] and g.player(0)["points"] == 3
    assert g.table_nobles == [2, 3]
    assert (g.current_player, g.phase, g.ply) == (1, "main", 1)


def test_tokens_never_count_toward_nobles():
    g = play(position(2, tokens={0: {"white": 3, "blue": 3}}, nobles=[0, 1, 2]), "take:white,blue,green")
    assert g.player(0)["tokens"] == tokens(white=4, blue=4, green=1)
    assert g.table_nobles == [0, 1, 2] and g.player(0)["nobles"] == []


def test_two_qualifying_nobles_the_player_chooses_one_and_the_other_waits():
    bought = FOUR_WHITE_FOUR_BLUE + [32, 33, 34, 35]  # also 4 black: noble 1 (4 white, 4 black)
    g = play(position(2, bought={0: bought}, nobles=[2, 0, 1]), "take:green,red,black")
    assert (g.current_player, g.phase, g.ply) == (0, "noble", 1)
    assert legal_names(g, ("noble",)) == {"noble:1", "noble:2"}
    with pytest.raises(IllegalActionError, match="noble:0: no qualifying noble"):
        g.step("noble:0")
    g.step("noble:2")
    assert g.player(0)["nobles"] == [1] and g.player(0)["points"] == 3
    assert g.table_nobles == [2, 0]
    assert (g.current_player, g.phase, g.ply) == (1, "main", 2)
    g.step("take:white,blue,green")
    assert g.table_nobles == [2, 0]
    g.step("take:white,blue,green")
    assert g.player(0)["nobles"] == [0, 1] and g.player(0)["points"] == 6
    assert g.table_nobles == [2] and g.current_player == 1


def test_noble_after_buy_from_reserve():
    bought = [0, 1, 2, 3, 8, 9, 10]  # one blue short of noble 0
    g = play(position(2, bought={0: bought}, reserved={0: [11]}, tokens={0: {"white": 1, "black": 2}},
                      nobles=[0, 1, 2]), "buy_reserved:0")
    assert g.player(0)["nobles"] == [0] and g.table_nobles == [1, 2]


# --- end of the game ----------------------------------------------------------------------------
FOURTEEN = [71, 73, 77]  # 4 + 5 + 5 points
FOURTEEN_TOO = [81, 83, 85]  # 5 + 4 + 5 points


def test_start_seat_reaching_15_lets_the_others_finish_the_round():
    pos = position(2, bought={0: FOURTEEN}, tokens={0: {"green": 4}}, market={1: [7, 0, 1, 2]})
    g = play(pos, "buy:1.0")
    assert g.scores == [15, 0]
    assert (g.is_over, g.current_player, g.to_dict()["final_round"]) == (False, 1, True)
    g.step("take:white,blue,green")
    assert (g.is_over, g.is_truncated, g.current_player, g.phase) == (True, False, 0, "main")
    assert g.winners == [0]


def test_last_seat_reaching_15_ends_the_game_at_once():
    pos = position(2, bought={1: FOURTEEN}, tokens={1: {"green": 4}}, market={1: [7, 0, 1, 2]},
                   current_player=1)
    g = play(pos, "buy:1.0")
    assert (g.is_over, g.current_player, g.winners) == (True, 0, [1])


def test_three_players_trigger_by_middle_seat_the_last_seat_still_plays():
    pos = position(3, bought={1: FOURTEEN}, tokens={1: {"green": 4}}, market={1: [7, 0, 1, 2]},
                   current_player=1)
    g = play(pos, "buy:1.0")
    assert (g.is_over, g.current_player) == (False, 2)
    g.step("take:white,blue,green")
    assert (g.is_over, g.current_player, g.winners) == (True, 0, [1])


def test_start_seat_other_than_zero_decides_the_last_turn():
    pos = position(3, bought={0: FOURTEEN}, tokens={0: {"green": 4}}, market={1: [7, 0, 1, 2]},
                   start_player=1)
    g = play(pos, "buy:1.0")
    assert (g.is_over, g.current_player, g.winners) == (True, 1, [0])


def test_a_noble_can_trigger_the_final_round():
    bought = [0, 1, 2, 3, 8, 9, 10, 11, 72, 75, 76]  # 12 points, noble 0 met
    g = play(position(2, bought={0: bought}, nobles=[0, 1, 2]), "take:green,red,black")
    assert g.scores == [15, 0] and g.to_dict()["final_round"] and not g.is_over


def final_turn(bought0: list[int], bought1: list[int], **kw) -> SplendorGame:
    """Seat 1 plays the last turn of a 2-player final round (a plain take), then the game is over."""
    kw.setdefault("nobles", [4, 8, 9])
    g = play(position(2, bought={0: bought0, 1: bought1}, final_round=True, current_player=1, **kw),
             "take:white,blue,green")
    assert g.is_over and not g.is_truncated
    return g


def test_most_points_wins():
    assert final_turn(FOURTEEN + [7], FOURTEEN_TOO).winners == [0]


def test_tie_on_points_fewest_bought_cards_wins():
    assert final_turn(FOURTEEN + [7, 0], FOURTEEN_TOO + [15]).winners == [1]


def test_remaining_tie_is_a_shared_win():
    assert final_turn(FOURTEEN + [7, 0], FOURTEEN_TOO + [15, 8]).winners == [0, 1]


def test_reserved_cards_do_not_count_in_the_tie_break():
    g = final_turn(FOURTEEN + [7, 0], FOURTEEN_TOO + [15], reserved={1: [40, 41, 42]})
    assert g.winners == [1]


def test_nobles_are_not_cards_in_the_tie_break():
    seat0 = FOUR_WHITE_FOUR_BLUE + [72, 75, 76]  # 12 points + noble 0: 15 points, 11 cards
    seat1 = [16, 17, 18, 19, 24, 25, 26, 27, 73, 77, 81]  # 15 points, 11 cards
    g = final_turn(seat0, seat1, player_nobles={0: [0]}, nobles=[4, 8])
    assert g.scores == [15, 15] and g.winners == [0, 1]


# --- pass -----------------------------------------------------------------------------------
def stuck(**fields) -> dict:
    """Both seats stuck: no gems in the bank, 3 reserved each, nothing either can afford."""
    return position(
        2, tokens=NO_GEMS_IN_BANK,
        bought={0: [7]}, reserved={0: [0, 8, 16], 1: [5, 30, 22]},
        market={1: [1, 2, 4, 6], 2: [40, 41, 46, 47], 3: [70, 74, 78, 82]}, **fields)


def test_pass_only_when_nothing_else_is_legal():
    assert game(stuck()).legal_actions() == [move_id("pass")]
    g = game(position(2))
    with pytest.raises(IllegalActionError, match="pass: pass is legal only when no other action is"):
        g.step("pass")


def test_full_round_of_passes_ends_the_game_scored_normally():
    g = play(stuck(), "pass")
    assert (g.is_over, g.current_player, g.to_dict()["passes_in_a_row"]) == (False, 1, 1)
    assert g.legal_actions() == [move_id("pass")]
    g.step("pass")
    assert (g.is_over, g.is_truncated, g.winners, g.ply) == (True, False, [0], 2)


def test_other_main_action_resets_passes_in_a_row():
    g = play(position(2, passes_in_a_row=1), "take:white,blue,green")
    assert g.to_dict()["passes_in_a_row"] == 0


def test_return_and_noble_sub_steps_leave_passes_in_a_row():
    # Hand-written sub-step positions with a pass pending, to see the counter in isolation.
    held = {"white": 4, "blue": 4, "green": 2, "red": 1}
    g = play(position(2, tokens={0: held}, phase="return", passes_in_a_row=1), "return:red")
    assert (g.current_player, g.to_dict()["passes_in_a_row"]) == (1, 1)
    bought = FOUR_WHITE_FOUR_BLUE + [32, 33, 34, 35]
    g = play(position(2, bought={0: bought}, nobles=[0, 1, 2], phase="noble", passes_in_a_row=1), "noble:0")
    assert (g.current_player, g.to_dict()["passes_in_a_row"]) == (1, 1)


# --- ply cap ----------------------------------------------------------------------------------
def test_reaching_the_cap_truncates():
    g = play(position(2, ply=4, max_plies=5), "take:white,blue,green")
    assert (g.ply, g.is_over, g.is_truncated, g.winners) == (5, True, True, [])
    assert not g.legal_mask().any()
    with pytest.raises(IllegalActionError, match="the game is over"):
        g.step("take:white,blue,green")


def test_sub_steps_count_toward_the_cap():
    g = play(position(2, tokens={0: {"white": 3, "blue": 3, "gold": 3}}, ply=3, max_plies=5),
             "take:green,red,black")
    assert (g.phase, g.is_over) == ("return", False)
    g.step("return:gold")
    assert (g.ply, g.is_truncated, g.current_player) == (5, True, 0)


def test_cap_does_not_truncate_a_game_the_same_action_ended():
    g = final_turn(FOURTEEN + [7], FOURTEEN_TOO, ply=9, max_plies=10)
    assert (g.ply, g.is_over, g.is_truncated, g.winners) == (10, True, False, [0])


def test_finished_game_has_an_empty_mask_and_step_raises():
    g = final_turn(FOURTEEN + [7], FOURTEEN_TOO)
    before = g.to_json()
    assert g.legal_mask().shape == (72,) and not g.legal_mask().any()
    with pytest.raises(IllegalActionError, match="take:white,blue,green: the game is over"):
        g.step("take:white,blue,green")
    assert g.to_json() == before


# --- illegal actions -------------------------------------------------------------------------------
@pytest.mark.parametrize(("action", "message"), [
    ("take2:red", "take2:red needs 4 red in the bank, there are 3"),
    ("buy:1.0", "buy:1.0: card"),
    ("buy_reserved:0", "buy_reserved:0: player 0 has only 0 reserved card"),
    ("noble:0", "noble:0: only allowed in the noble phase"),
    ("return:white", "return:white: only allowed in the return phase"),
    ("take:red,black", "take:red,black: 5 colours are in stock"),
])
def test_illegal_action_raises_and_leaves_the_game_unchanged(action, message):
    g = game(position(2, tokens={1: {"red": 1}}, market={1: [7, 0, 1, 2]}))
    before = g.to_json()
    with pytest.raises(IllegalActionError, match=message) as err:
        g.step(action)
    assert isinstance(err.value, ValueError)
    assert g.to_json() == before and g.legal_mask().any()


@pytest.mark.parametrize("action", [-1, 72, True, 2.0, "take:gold", "buy:0.0", "nonsense"])
def test_out_of_range_ids_and_unknown_names_raise_value_error(action):
    g = game(position(2))
    before = g.to_json()
    with pytest.raises(ValueError):
        g.step(action)
    assert g.to_json() == before


def test_numpy_integer_ids_are_accepted():
    g = game(position(2))
    g.step(np.int64(move_id("take:white,blue,green")))
    g.step(np.int16(move_id("take2:black")))
    assert g.bank == tokens(white=3, blue=3, green=3, red=4, black=2, gold=5)


def test_json_is_identical_after_a_refused_step_from_a_mid_game_position():
    g = play(stuck(), "pass")
    before = json.loads(g.to_json())
    with pytest.raises(IllegalActionError):
        g.step("reserve_deck:2")
    assert json.loads(g.to_json()) == before


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_play_draws_the_kth_legal_move_in_action_order(players: int) -> None:
    """Random opponents (and the engine's random play) pick move ``k`` of the legal moves in id order, ``k`` drawn
    below their count from the game's RNG: recorded games against random opponents depend on exactly this."""
    from tabletop_rl.core.kernels import pick_legal
    from tabletop_rl.games.splendor import rules as R

    cards, nobles = R.tables()
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    phases = set()
    for seed in range(12):
        state = SplendorGame(players, seed=seed).state.copy()
        while True:
            twin = state.copy()
            n = R.legal_mask(state, cards, nobles, mask)
            expected = pick_legal(mask, R.random_below(twin, n)) if n else -1
            if n:
                R.apply_action(twin, expected, cards, nobles)
            phases.add(int(state[R.PHASE]))
            assert R.random_step(state, cards, nobles) == expected
            assert np.array_equal(state, twin)
            if expected < 0:
                break
    assert phases == {R.MAIN, R.RETURN, R.NOBLE}  # the games reach every phase's moves
