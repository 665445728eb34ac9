"""Klaverjas positions as JSON, ``{"game": "klaverjas", "state": [...]}`` (the rules core's row of ``STATE_SIZE``
integers), and the checks that make loading one safe: a row is taken only if the rules could reach it
(docs/klaverjas.md, Positions). Anything else is a one-line ``ValueError`` naming the field, e.g.
``klaverjas position: in_trick (state[73]): 64 is outside 0..3``.

The options must be ones ``options_row`` takes; every cell must be in its range; the cards of the deal in
progress must each be in exactly one place (a hand or a trick of the record), every seat having held 8; the
match record (deals played, dealer, forehand, scores) must fit the options and the phase; the bidding and
kraken fields must be what the trump scheme leaves; and the tricks are replayed through the rules from the
first lead, every card legal when it was played, after which the row must equal the replay cell for cell
(leaders, winners, roem, card points, tricks won, a declared stuk, the seat to act, and for a finished match
the last deal's score).

>>> from tabletop_rl.games.klaverjas.rules import new_state
>>> row = state_from_json({"game": "klaverjas", "state": [int(v) for v in new_state(seed=1)]})
>>> row[R.IN_TRICK] = 64; check_state(row)
Traceback (most recent call last):
ValueError: klaverjas position: in_trick (state[73]): 64 is outside 0..3
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

import numpy as np

from tabletop_rl.games.klaverjas import rules as R

__all__ = ["FIELDS", "check_state", "state_from_json"]


def _names() -> list[str]:
    """The name of every cell of the row, as the error messages and docs/klaverjas.md call it."""
    names = ["rules", "trump_selection", "all_pass", "first_lead", "pit_for_defenders", "deals", "deal_no",
             "dealer", "match_score[0]", "match_score[1]", "rng[0]", "rng[1]"]
    names += [f"hand[{s}]" for s in range(4)]
    names += [f"trick[{t}][{k}]" for t in range(R.TRICKS_PER_DEAL) for k in range(4)]
    for record in ("leader", "winner", "trick_roem"):
        names += [f"{record}[{t}]" for t in range(R.TRICKS_PER_DEAL)]
    names += ["trick_no", "in_trick", "phase", "current", "trump", "maker", "proposed", "proposals", "passes"]
    for pair in ("card_points", "roem", "tricks_won", "deal_score"):
        names += [f"{pair}[{t}]" for t in range(2)]
    names += ["forehand", "kraken", "target", "stuk_mode", "amsterdam_undertrump_vs_opponent"]
    names += [f"quartet_values[{r}]" for r in range(8)]
    return [*names, "multiplier", "doubling_turn", "declared_stuk"]


#: The name of each cell of the row (``FIELDS[R.IN_TRICK] == "in_trick"``).
FIELDS = tuple(_names())
assert len(FIELDS) == R.STATE_SIZE

#: The options of ``options_row`` by cell, with the values their indices stand for (the rest are counts).
_CHOICES: dict[int, tuple[str, tuple[Any, ...]]] = {
    R.RULE_SET: ("rules", R.RULE_SETS), R.SCHEME: ("trump_selection", R.TRUMP_SCHEMES),
    R.ALL_PASS: ("all_pass", R.ALL_PASS_OPTIONS), R.FIRST_LEAD: ("first_lead", R.FIRST_LEADS),
    R.PIT_FOR_DEFENDERS: ("pit_for_defenders", (False, True)), R.KRAKEN: ("kraken", (False, True)),
    R.STUK_MODE: ("stuk_mode", R.STUK_MODES),
    R.UNDERTRUMP: ("amsterdam_undertrump_vs_opponent", R.UNDERTRUMP_OPTIONS)}


def _fail(cell: int | str, why: str) -> NoReturn:
    """Refuse the row: ``cell`` is the index of the bad cell (or the name of what is wrong), ``why`` one line."""
    field = f"{FIELDS[cell]} (state[{cell}])" if isinstance(cell, int) else cell
    raise ValueError(f"klaverjas position: {field}: {why}")


def _in_range(state: np.ndarray, cell: int, lo: int, hi: int) -> int:
    value = int(state[cell])
    if not lo <= value <= hi:
        _fail(cell, f"{value} is outside {lo}..{hi}")
    return value


# --- the options ----------------------------------------------------------------------------------------------
def _check_options(state: np.ndarray) -> None:
    """Each option cell holds the index of one of its values (or a count in range), and together they are
    options ``options_row`` takes."""
    options: dict[str, Any] = {}
    for cell, (name, choices) in _CHOICES.items():
        options[name] = choices[_in_range(state, cell, 0, len(choices) - 1)]
    options["quartet_values"] = {R.RANKS[r]: int(state[R.QUARTETS + r]) for r in range(8)}
    target = _in_range(state, R.TARGET, 0, R.MAX_TARGET)
    if target:
        _in_range(state, R.NUM_DEALS_AT, 0, 0)  # a match to a target counts no deals
    options["target"] = target or None
    options["deals"] = 1 if target else int(state[R.NUM_DEALS_AT])
    try:
        R.options_row(**options)
    except ValueError as err:
        _fail("options", str(err))


# --- every cell in its range ---------------------------------------------------------------------------------------
def _max_deal_score(state: np.ndarray) -> int:
    """A bound on one deal's score: every card point, the most roem each trick can carry, a declared stuk, pit,
    all redoubled."""
    roem_per_trick = max(int(state[R.QUARTETS:R.QUARTETS + 8].max()), 50 + R.STUK_ROEM)
    deal = R.DEAL_TOTAL + R.TRICKS_PER_DEAL * roem_per_trick + R.STUK_ROEM + R.PIT_BONUS
    return 4 * deal


def _check_ranges(state: np.ndarray) -> None:
    """Every cell outside the options within the values the rules can give it (so indexing with it is safe)."""
    most = _max_deal_score(state)
    ranges = [(R.DEAL_NO, 1, 0, R.MAX_DEALS), (R.DEALER, 1, 0, 3), (R.MATCH_SCORE, 2, 0, R.MAX_DEALS * most),
              (R.RNG, 2, 0, R.MASK32), (R.HAND, 4, 0, R.ALL_CARDS), (R.TRICK, 32, -1, R.NUM_CARDS - 1),
              (R.LEADER, 8, -1, 3), (R.WINNER, 8, -1, 3), (R.TRICK_ROEM, 8, 0, most), (R.TRICK_NO, 1, 0, 7),
              (R.IN_TRICK, 1, 0, 3), (R.PHASE, 1, 0, len(R.PHASE_NAMES) - 1), (R.CURRENT, 1, 0, 3), (R.TRUMP, 1, -1, 3),
              (R.MAKER, 1, -1, 3), (R.PROPOSED, 1, -1, 3), (R.PROPOSALS, 1, 0, 2), (R.PASSES, 1, 0, 4),
              (R.CARD_POINTS, 2, 0, R.DEAL_TOTAL), (R.ROEM, 2, 0, most), (R.TRICKS_WON, 2, 0, R.TRICKS_PER_DEAL),
              (R.DEAL_SCORE, 2, 0, most), (R.FOREHAND, 1, 0, 3), (R.MULTIPLIER, 1, 1, 4), (R.DOUBLING_TURN, 1, 0, 1),
              (R.DECLARED_STUK, 1, -1, 1)]
    for start, count, lo, hi in ranges:
        for cell in range(start, start + count):
            _in_range(state, cell, lo, hi)


# --- the match record ---------------------------------------------------------------------------------------------
def _check_match(state: np.ndarray) -> None:
    """Deals played, dealer and forehand, and the scores, against the options and the phase."""
    phase, deals_played = int(state[R.PHASE]), int(state[R.DEAL_NO])
    over = phase == R.OVER
    if over and deals_played == 0:
        _fail(R.PHASE, "'over' before any deal was played")
    if not state[R.TARGET] and deals_played > state[R.NUM_DEALS_AT]:
        _fail(R.DEAL_NO, f"{deals_played} deals played in a match of {int(state[R.NUM_DEALS_AT])}")
    if not over and R.match_over(state):
        _fail(R.PHASE, f"'{R.PHASE_NAMES[phase]}', but the match is decided (deals played or target reached)")
    dealer = (3 + deals_played - over) % 4  # seat 3 deals first; a finished match keeps its last dealer
    if state[R.DEALER] != dealer:
        _fail(R.DEALER, f"{int(state[R.DEALER])}, but after {deals_played} deals seat {dealer} deals")
    if state[R.FOREHAND] != (dealer + 1) % 4:
        _fail(R.FOREHAND, f"{int(state[R.FOREHAND])}, but seat {(dealer + 1) % 4} sits after the dealer")
    last = [int(v) for v in state[R.DEAL_SCORE:R.DEAL_SCORE + 2]]
    total = [int(v) for v in state[R.MATCH_SCORE:R.MATCH_SCORE + 2]]
    if deals_played == 0:
        if any(last) or any(total):
            _fail("match_score", "scores before any deal was played")
        return
    if not over and (sum(last) < R.DEAL_TOTAL or last[0] == last[1]):
        _fail(R.DEAL_SCORE, f"{last} is no deal's score (the two differ and add up to at least {R.DEAL_TOTAL})")
    before = [total[t] - last[t] for t in range(2)]
    if min(before) < 0 or sum(before) < R.DEAL_TOTAL * (deals_played - 1) \
            or max(before) > _max_deal_score(state) * (deals_played - 1):
        _fail("match_score", f"{total} does not hold the last deal's {last} and {deals_played - 1} deals before it")


# --- the cards of the deal ----------------------------------------------------------------------------------------
def _plays(state: np.ndarray) -> list[tuple[int, int, int]]:
    """The deal's cards on the record in play order, as (trick cell, card, seat that played it)."""
    phase = int(state[R.PHASE])
    if phase in (R.BIDDING, R.DOUBLING):
        return []
    tricks, last = (R.TRICKS_PER_DEAL, 0) if phase == R.OVER else (int(state[R.TRICK_NO]), int(state[R.IN_TRICK]))
    plays = []
    for t in range(tricks + 1):
        cards = 4 if t < tricks else last
        if cards and state[R.LEADER + t] < 0:
            _fail(R.LEADER + t, f"no leader, but trick {t} has been played to")
        for k in range(cards):
            cell = R.TRICK + 4 * t + k
            if state[cell] < 0:
                _fail(cell, f"no card, but trick_no and in_trick say {cards} were played to trick {t}")
            plays.append((cell, int(state[cell]), int(state[R.LEADER + t] + k) % 4))
    return plays


def _check_cards(state: np.ndarray, plays: list[tuple[int, int, int]]) -> None:
    """Every card in exactly one hand or trick; every seat's cards in hand and played add up to 8."""
    where: dict[int, str] = {}
    for seat in range(4):
        for card in R.cards_of(int(state[R.HAND + seat])):
            where[card] = FIELDS[R.HAND + seat]
    played = [0] * 4
    for cell, card, seat in plays:
        if card in where:
            _fail(cell, f"{R.card_name(card)} is also in {where[card]}")
        where[card] = FIELDS[cell]
        played[seat] += 1
    missing = [R.card_name(c) for c in range(R.NUM_CARDS) if c not in where]
    if missing:
        _fail("cards", f"{', '.join(missing)} in no hand and no trick (each of the 32 cards is in one place)")
    for seat in range(4):
        held = int(state[R.HAND + seat]).bit_count()
        if held + played[seat] != R.TRICKS_PER_DEAL:
            _fail(R.HAND + seat, f"seat {seat} holds {held} cards and played {played[seat]}; every seat has 8")


# --- bidding and kraken ---------------------------------------------------------------------------------------------
def _bidder(state: np.ndarray) -> int:
    """The seat that bids next (in bidding) or that fixed trump (after it): forehand, passed on by each pass.
    Checks the scheme's bidding fields on the way."""
    scheme, all_pass, passes = int(state[R.SCHEME]), int(state[R.ALL_PASS]), int(state[R.PASSES])
    proposing = scheme == R.PROPOSED_SUIT
    if proposing and state[R.PROPOSED] < 0:
        _fail(R.PROPOSED, "no suit proposed under trump_selection 'proposed_suit'")
    if not proposing and state[R.PROPOSED] >= 0:
        _fail(R.PROPOSED, f"{int(state[R.PROPOSED])}, but only trump_selection 'proposed_suit' proposes a suit")
    most = 2 if all_pass == R.ALL_PASS_SECOND_PROPOSAL else 1
    if state[R.PROPOSALS] != 0 and not proposing or proposing and not 1 <= state[R.PROPOSALS] <= most:
        _fail(R.PROPOSALS, f"{int(state[R.PROPOSALS])} suits proposed; this scheme proposes {most if proposing else 0}")
    if scheme == R.FORCED_FOREHAND and passes:
        _fail(R.PASSES, f"{passes}, but nobody may pass under trump_selection 'forced_forehand'")
    if passes == 4 and all_pass != R.ALL_PASS_FORCED:
        _fail(R.PASSES, "4, but after four passes this all_pass option proposes again or deals again")
    return (int(state[R.FOREHAND]) + passes) % 4


def _check_doubling(state: np.ndarray) -> None:
    """Multiplier and doubling turn as the kraken decisions leave them in this phase."""
    phase, level, turn = int(state[R.PHASE]), int(state[R.MULTIPLIER]), int(state[R.DOUBLING_TURN])
    if not state[R.KRAKEN]:
        if phase == R.DOUBLING:
            _fail(R.PHASE, "'doubling' needs the kraken option")
        possible = {(1, 0)}
    elif phase == R.DOUBLING:
        possible = {(1, 0), (1, 1), (2, 0), (2, 1)}
    else:
        possible = {(1, 1), (2, 1), (4, 0), (4, 1)}
    if (level, turn) not in possible:
        _fail(R.MULTIPLIER, f"{level} with doubling_turn {turn} cannot follow the kraken decisions of this phase")


# --- the expected row -----------------------------------------------------------------------------------------------
def _expected(state: np.ndarray, plays: list[tuple[int, int, int]]) -> np.ndarray:
    """The row the rules hold for this deal's bidding and plays: the deal's record cleared, the bidding and
    kraken fields set as the scheme leaves them, and the plays replayed from the first lead."""
    expected = state.copy()
    R.clear_deal(expected)
    phase, bidder = int(state[R.PHASE]), _bidder(state)
    expected[R.PROPOSED:R.PASSES + 1] = state[R.PROPOSED:R.PASSES + 1]
    if phase == R.BIDDING:
        expected[R.CURRENT] = bidder
        return expected
    _check_doubling(state)
    if state[R.SCHEME] == R.PROPOSED_SUIT and state[R.TRUMP] != state[R.PROPOSED]:
        _fail(R.TRUMP, f"{int(state[R.TRUMP])}, but trump_selection 'proposed_suit' plays the proposed suit")
    expected[R.TRUMP], expected[R.MAKER] = state[R.TRUMP], bidder
    expected[R.MULTIPLIER:R.DOUBLING_TURN + 1] = state[R.MULTIPLIER:R.DOUBLING_TURN + 1]
    if int(state[R.TRUMP]) < 0:
        _fail(R.TRUMP, f"no trump in phase '{R.PHASE_NAMES[phase]}'")
    if phase == R.DOUBLING:
        expected[R.PHASE] = R.DOUBLING
        steps = {(1, 0): 1, (1, 1): 3, (2, 0): 0, (2, 1): 2}  # from the maker: defenders, then maker and partner
        expected[R.CURRENT] = (bidder + steps[int(state[R.MULTIPLIER]), int(state[R.DOUBLING_TURN])]) % 4
        return expected
    for _, card, seat in plays:
        expected[R.HAND + seat] |= 1 << card
    if phase == R.OVER:  # replay the last deal from the match record before it
        expected[R.DEAL_NO] -= 1
        expected[R.MATCH_SCORE:R.MATCH_SCORE + 2] -= state[R.DEAL_SCORE:R.DEAL_SCORE + 2]
    R.open_play(expected)
    _replay(state, expected, plays)
    if phase == R.OVER and expected[R.PHASE] != R.OVER:
        _fail(R.PHASE, "'over', but the match goes on after this deal (deals or target not reached)")
    return expected


def _replay(state: np.ndarray, expected: np.ndarray, plays: list[tuple[int, int, int]]) -> None:
    """Play ``plays`` on ``expected``, each card legal for its seat and each trick led by the seat the rules say."""
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    for cell, card, seat in plays:
        t, k = divmod(cell - R.TRICK, 4)
        if k == 0 and expected[R.LEADER + t] != state[R.LEADER + t]:
            _fail(R.LEADER + t, f"{int(state[R.LEADER + t])}, but seat {int(expected[R.LEADER + t])} leads trick {t}")
        R.legal_mask(expected, mask)
        if not mask[card]:
            _fail(cell, f"{R.card_name(card)} is not a card seat {seat} may play there")
        R.apply_action(expected, card)


# --- loading ------------------------------------------------------------------------------------------------------
def check_state(state: np.ndarray) -> None:
    """``ValueError`` naming the first cell of ``state`` (an ``int64[STATE_SIZE]`` row) that no play of the
    rules could give it; the module docstring lists the checks."""
    _check_options(state)
    _check_ranges(state)
    _check_match(state)
    plays = _plays(state)
    _check_cards(state, plays)
    expected = _expected(state, plays)
    differs = np.flatnonzero(expected != state)
    if differs.size:
        cell = int(differs[0])
        _fail(cell, f"{int(state[cell])}, but the bidding and the tricks played give {int(expected[cell])}")


def state_from_json(text: str | dict) -> np.ndarray:
    """The row of a position ``KlaverjasGame.to_json`` wrote (text or its parsed dict), checked by
    ``check_state``; ``ValueError`` naming the problem otherwise."""
    try:
        data = json.loads(text) if isinstance(text, str) else text
    except (ValueError, RecursionError):
        raise ValueError("klaverjas position: not valid JSON") from None
    row = data.get("state") if isinstance(data, dict) else None
    if not isinstance(row, list) or len(row) != R.STATE_SIZE \
            or not all(type(v) is int and -(2**63) <= v < 2**63 for v in row):
        raise ValueError(f"klaverjas position: 'state' must be a list of {R.STATE_SIZE} 64-bit integers")
    state = np.array(row, R.STATE_DTYPE)
    check_state(state)
    return state
