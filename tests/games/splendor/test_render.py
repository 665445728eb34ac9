"""Rendering: the text board and the image show the position, and only what the viewer may see."""

from __future__ import annotations

import re

import numpy as np
import pytest

from extra_skips import needs
from positions import game, position
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.picture import HEIGHT, WIDTH, render_rgb
from tabletop_rl.games.splendor.render import LETTERS, move_text, render_ansi

BLIND = 45  # a level 2 card that the default position() keeps out of the market
OTHER = 46  # another level 2 card, in the deck


def _played(seed: int, moves: int, num_players: int = 2) -> SplendorGame:
    g = SplendorGame(num_players=num_players, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        g.step(int(rng.choice(g.legal_actions())))
    return g


def _blind_reserve(card: int, deck_top: list[int]) -> SplendorGame:
    """P1 holds ``card`` reserved blind from the level 2 deck, whose top is ``deck_top``."""
    return game(position(2, reserved={1: [(card, True), 72]}, decks={2: deck_top}, tokens={1: {"gold": 2}}))


def _ids(text: str) -> set[int]:
    return {int(m) for m in re.findall(r"#(\d+)", text)}


def test_ansi_shows_bank_counts_and_every_market_card():
    g = _played(seed=11, moves=30)
    text = render_ansi(g, color=False)
    bank_line = next(line for line in text.splitlines() if line.startswith("Bank"))
    assert bank_line.split()[1:] == [f"{LETTERS[c]}{n}" for c, n in enumerate(g.bank.values())]
    market = [c for level in (1, 2, 3) for c in g.market(level) if c is not None]
    for card in market:
        assert f"[#{card} " in text


def test_market_cards_reserves_and_nobles_are_labelled_as_the_moves_name_them():
    g = _blind_reserve(BLIND, [])
    text = render_ansi(g, viewer=None, color=False)
    for level in (1, 2, 3):
        for slot, card in enumerate(g.market(level)):
            assert f"{level}.{slot} [#{card} " in text  # buy:<level>.<slot> and reserve:<level>.<slot>
            assert move_text(g, f"buy:{level}.{slot}").startswith(f"buy:{level}.{slot} [#{card} ")
    assert "reserved 0 [hidden L2] 1 [#72 " in text  # buy_reserved:0, buy_reserved:1
    nobles = text.splitlines()[2]
    assert all(f"{i} [N{nb} " in nobles for i, nb in enumerate(g.table_nobles))


def test_move_text_names_only_what_the_move_makes_public():
    g = _blind_reserve(BLIND, [])
    g.step("take:w,b,g")  # P1, the owner of the blind reserve, to act
    assert move_text(g, "buy_reserved:0").startswith(f"buy_reserved:0 [#{BLIND} ")  # a purchase shows it
    assert move_text(g, "reserve_deck:2") == "reserve_deck:2"
    assert move_text(g, "take:white,blue,green") == "take:white,blue,green"
    assert move_text(g, "noble:0").startswith(f"noble:0 [N{g.table_nobles[0]} 3p | ")
    assert g.describe_move("reserve:2.0") == move_text(g, "reserve:2.0") and "\x1b" not in move_text(g, 50)


def test_color_false_has_no_escape_codes_and_color_true_has_them():
    g = _played(seed=5, moves=10)
    assert "\x1b[" in render_ansi(g)
    assert "\x1b" not in render_ansi(g, color=False)


def test_blind_reserve_hidden_from_spectator_and_opponent_shown_to_owner():
    g = _blind_reserve(BLIND, [])
    for viewer in (None, 0):
        text = render_ansi(g, viewer=viewer, color=False)
        assert BLIND not in _ids(text)
        assert "[hidden L2]" in text
        assert "[#72 " in text  # a face-up reserve is public
    owner = render_ansi(g, viewer=1, color=False)
    assert f"[#{BLIND} " in owner and "[hidden" not in owner


def test_ansi_never_shows_deck_cards():
    g = _played(seed=3, moves=40)
    deck = {c for level in (1, 2, 3) for c in g.to_dict()["decks"][str(level)]}
    for viewer in (None, 0, 1):
        assert not _ids(render_ansi(g, viewer=viewer)) & deck


def test_ansi_marks_the_player_to_act_and_the_end():
    text = render_ansi(game(position(3, current_player=1)), color=False)
    marked = [line.split()[1] for line in text.splitlines() if line.startswith(">")]
    assert marked == ["P1"]
    over = render_ansi(game(position(2, passes_in_a_row=2)), color=False)
    assert "game over, winners: P0, P1" in over
    assert not any(line.startswith(">") for line in over.splitlines())


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_rgb_is_a_fixed_size_uint8_image(num_players):
    frame = render_rgb(_played(seed=num_players, moves=20, num_players=num_players))
    assert frame.dtype == np.uint8
    assert frame.shape == (HEIGHT, WIDTH, 3)


def test_rgb_differs_between_positions_and_repeats_for_the_same_one():
    g = _played(seed=8, moves=12)
    before = render_rgb(g)
    assert np.array_equal(before, render_rgb(g.clone()))
    g.step(g.legal_actions()[0])
    assert not np.array_equal(before, render_rgb(g))


def test_hidden_information_does_not_change_what_a_viewer_sees():
    # same public position; the blind card and the level 2 deck order differ
    a = _blind_reserve(BLIND, [OTHER])
    b = _blind_reserve(OTHER, [BLIND])
    for viewer in (None, 0):
        assert np.array_equal(render_rgb(a, viewer), render_rgb(b, viewer))
        assert render_ansi(a, viewer) == render_ansi(b, viewer)
    assert not np.array_equal(render_rgb(a, 1), render_rgb(b, 1))


@pytest.mark.parametrize("viewer", [2, -1, "0", True])
def test_bad_viewer_is_refused(viewer):
    g = SplendorGame(seed=1)
    for render in (render_ansi, render_rgb):
        with pytest.raises(ValueError, match="viewer"):
            render(g, viewer)


def test_gymnasium_record_video_writes_a_video_of_an_episode(tmp_path):
    needs("moviepy")
    import gymnasium
    from gymnasium.wrappers import RecordVideo

    env = gymnasium.make("tabletop_rl/Splendor-v0", opponent="greedy", render_mode="rgb_array", max_plies=20)
    env = RecordVideo(env, str(tmp_path / "videos"), episode_trigger=lambda episode: True, disable_logger=True)
    _obs, info = env.reset(seed=4)
    ended = False
    while not ended:
        _obs, _r, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        ended = terminated or truncated
    env.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 10_000


def _columns(text: str) -> int:
    return max(len(re.sub(r"\x1b\[[0-9;]*m", "", line)) for line in text.splitlines())


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_the_text_board_fits_80_columns_for_every_viewer(num_players):
    widest = 0
    for seed in range(3):
        g, rng = SplendorGame(num_players=num_players, seed=seed), np.random.default_rng(seed)
        while not g.is_over:
            legal = g.legal_actions()
            reserves = [a for a in legal if move_text(g, int(a)).startswith("reserve")]
            g.step(int(rng.choice(reserves if reserves and rng.random() < 0.3 else legal)))
            if g.ply % 7 == 0 or g.is_over:
                widest = max(widest, *(_columns(render_ansi(g, viewer, color))
                                       for viewer in (None, *range(num_players)) for color in (False, True)))
    crowded = game(position(num_players, reserved={p: [82 - 3 * p, 78 - 3 * p, 62 - p] for p in range(num_players)},
                            current_player=num_players - 1))
    widest = max(widest, *(_columns(render_ansi(crowded, viewer)) for viewer in (None, *range(num_players))))
    assert widest <= 80
