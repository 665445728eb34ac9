"""Property tests (hypothesis) over random Splendor games: conservation laws, legality, determinism,
JSON round trips and determinization that hides exactly what a player cannot see."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_splendor as ref
from tabletop_rl.games.splendor.game import IllegalActionError, SplendorGame
from tabletop_rl.games.splendor.observe import observe

MODEST = settings(max_examples=40, deadline=None)
SEEDS = st.integers(0, 2**31 - 1)
GAMES = st.tuples(st.sampled_from([2, 3, 4]), SEEDS, SEEDS)


def random_game(num_players: int, seed: int, choice_seed: int, max_plies: int | None = 1000
                ) -> Iterator[SplendorGame]:
    """Yield one game at every ply, including the final position, advancing it by random legal actions.

    >>> [g.ply for g in random_game(2, 1, 2, max_plies=3)]
    [0, 1, 2, 3]
    """
    rng = np.random.default_rng(choice_seed)
    game = SplendorGame(num_players, seed=seed, max_plies=max_plies)
    yield game
    while not game.is_over:
        game.step(int(rng.choice(game.legal_actions())))
        yield game


def card_places(pos: dict) -> Counter:
    """How many times each card id appears across decks, market, reserves and bought cards."""
    places: Counter = Counter()
    for lv in ref.LEVELS:
        places.update(pos["decks"][lv])
        places.update(c for c in pos["market"][lv] if c is not None)
    for pl in pos["players"]:
        places.update(pl["bought"])
        places.update(r["card"] for r in pl["reserved"])
    return places


@MODEST
@given(GAMES)
def test_tokens_are_conserved_and_never_negative(game_args: tuple[int, int, int]) -> None:
    for game in random_game(*game_args):
        pos = game.to_dict()
        n = pos["num_players"]
        for colour in ref.TOKENS:
            held = [pl["tokens"][colour] for pl in pos["players"]]
            expected = ref.GOLD_TOKENS if colour == "gold" else ref.GEMS_PER_COLOUR[n]
            assert pos["bank"][colour] + sum(held) == expected, (colour, pos)
            assert min(held + [pos["bank"][colour]]) >= 0, (colour, pos)


@MODEST
@given(GAMES)
def test_each_card_is_in_exactly_one_place(game_args: tuple[int, int, int]) -> None:
    for game in random_game(*game_args):
        pos = game.to_dict()
        assert card_places(pos) == Counter(range(len(ref.CARDS))), pos
        assert game.deck_sizes == [len(pos["decks"][lv]) for lv in ref.LEVELS]


@MODEST
@given(GAMES)
def test_points_are_card_points_plus_three_per_noble(game_args: tuple[int, int, int]) -> None:
    for game in random_game(*game_args):
        for p, pl in enumerate(game.to_dict()["players"]):
            card_points = sum(ref.CARDS[c]["points"] for c in pl["bought"])
            assert game.scores[p] == card_points + 3 * len(pl["nobles"]) >= 0
            assert game.player(p)["bonuses"] == ref.bonuses(pl)


@MODEST
@given(GAMES)
def test_only_a_mover_returning_tokens_holds_more_than_ten(game_args: tuple[int, int, int]) -> None:
    for game in random_game(*game_args):
        held = [sum(pl["tokens"].values()) for pl in game.to_dict()["players"]]
        over = [p for p, h in enumerate(held) if h > ref.TOKEN_LIMIT]
        assert over == ([game.current_player] if game.phase == "return" else []), (game.phase, held)


@MODEST
@given(GAMES)
def test_every_legal_action_applies(game_args: tuple[int, int, int]) -> None:
    for game in random_game(*game_args):
        for action in game.legal_actions():
            trial = game.clone()
            trial.step(action)
            assert trial.ply == game.ply + 1


def _assert_illegal_changes_nothing(game: SplendorGame, action: int | str) -> None:
    state, mask = game.state.tobytes(), game.legal_mask()
    name = action if isinstance(action, str) else SplendorGame.move_name(action)
    try:
        game.step(action)
    except IllegalActionError as e:
        assert name in str(e), f"the message does not name the action: {e}"
    else:
        raise AssertionError(f"illegal action {action!r} was accepted")
    assert game.state.tobytes() == state and (game.legal_mask() == mask).all(), action


@settings(max_examples=20, deadline=None)  # each game tries ~60 illegal actions per ply, with explanations
@given(GAMES)
def test_every_illegal_action_raises_and_changes_nothing(game_args: tuple[int, int, int]) -> None:
    for game in random_game(*game_args):
        before = game.to_json()
        mask = game.legal_mask()
        for action in np.flatnonzero(~mask).tolist():
            _assert_illegal_changes_nothing(game, action)
            if game.ply % 5 == 0:  # by name too, on a sample of plies to keep the test quick
                _assert_illegal_changes_nothing(game, SplendorGame.move_name(action))
        assert game.to_json() == before
    assert not game.legal_mask().any(), "a finished game must have an all-false mask"


@MODEST
@given(GAMES)
def test_same_seed_and_actions_give_the_same_game(game_args: tuple[int, int, int]) -> None:
    first = [g.to_json() for g in random_game(*game_args)]
    second = [g.to_json() for g in random_game(*game_args)]
    assert first == second


@MODEST
@given(GAMES)
def test_json_round_trips_at_every_ply(game_args: tuple[int, int, int]) -> None:
    for game in random_game(*game_args):
        text = game.to_json()
        loaded = SplendorGame.from_json(text)
        assert loaded.to_json() == text
        assert (loaded.legal_mask() == game.legal_mask()).all(), text
        assert (loaded.is_over, loaded.winners) == (game.is_over, game.winners)


# --- determinization ---------------------------------------------------------------------------
def hidden_from(pos: dict, viewer: int) -> dict[str, list[int]]:
    """Per level, the cards ``viewer`` cannot identify: the deck and other players' blind reserves."""
    hidden = {lv: list(pos["decks"][lv]) for lv in ref.LEVELS}
    for p, pl in enumerate(pos["players"]):
        for r in pl["reserved"]:
            if r["blind"] and p != viewer:
                hidden[str(ref.CARDS[r["card"]]["level"])].append(r["card"])
    return hidden


def visible_to(pos: dict, viewer: int) -> dict:
    """The position with the cards ``viewer`` cannot identify blanked out (their levels stay)."""
    seen = {k: v for k, v in pos.items() if k != "decks"}
    seen["deck_sizes"] = [len(pos["decks"][lv]) for lv in ref.LEVELS]
    seen["players"] = [
        {**pl, "reserved": [{"level": ref.CARDS[r["card"]]["level"]} if r["blind"] and p != viewer else r
                            for r in pl["reserved"]]}
        for p, pl in enumerate(pos["players"])
    ]
    return seen


def redeal_hidden(pos: dict, viewer: int, rng: np.random.Generator) -> dict:
    """A copy of ``pos`` whose hidden cards (for ``viewer``) are permuted within each level."""
    hidden = {lv: [int(c) for c in rng.permutation(cards)] for lv, cards in hidden_from(pos, viewer).items()}
    out = {**pos, "decks": {lv: [hidden[lv].pop() for _ in pos["decks"][lv]] for lv in ref.LEVELS}}
    out["players"] = [
        {**pl, "reserved": [
            {"card": hidden[str(ref.CARDS[r["card"]]["level"])].pop(), "blind": True}
            if r["blind"] and p != viewer else r for r in pl["reserved"]
        ]}
        for p, pl in enumerate(pos["players"])
    ]
    return out


def sampled_positions(game_args: tuple[int, int, int], every: int = 10) -> Iterator[SplendorGame]:
    """Every ``every``-th position of a random game, to keep the determinization tests quick."""
    for game in random_game(*game_args):
        if game.ply % every == 0:
            yield game


@MODEST
@given(GAMES, SEEDS)
def test_seat_view_keeps_everything_the_seat_sees(game_args: tuple[int, int, int], seed: int) -> None:
    for game in sampled_positions(game_args):
        pos = game.to_dict()
        for viewer in range(game.num_players):
            dealt = game.seat_view(viewer, seed)
            dealt_pos = dealt.to_dict()
            assert visible_to(dealt_pos, viewer) == visible_to(pos, viewer)
            assert {lv: sorted(c) for lv, c in hidden_from(dealt_pos, viewer).items()} == \
                   {lv: sorted(c) for lv, c in hidden_from(pos, viewer).items()}
            assert (observe(dealt.state, viewer) == observe(game.state, viewer)).all()
            if viewer == game.current_player:
                assert (dealt.legal_mask() == game.legal_mask()).all()
            assert SplendorGame.from_json(dealt.to_json()).to_json() == dealt.to_json()
            if len(pos["decks"]["1"]) >= 10:  # a re-deal leaving 10+ cards in order is a 1 in 10! chance
                assert dealt_pos["decks"]["1"] != pos["decks"]["1"], "seat_view did not re-deal the deck"


@MODEST
@given(GAMES, SEEDS)
def test_seat_view_ignores_the_hidden_cards(game_args: tuple[int, int, int], seed: int) -> None:
    """Two positions that differ only in what ``viewer`` cannot see give the same seat_view."""
    rng = np.random.default_rng(seed)
    for game in sampled_positions(game_args):
        for viewer in range(game.num_players):
            twin = SplendorGame.from_json(redeal_hidden(game.to_dict(), viewer, rng))
            assert visible_to(twin.to_dict(), viewer) == visible_to(game.to_dict(), viewer)
            assert twin.seat_view(viewer, seed).to_json() == game.seat_view(viewer, seed).to_json()
