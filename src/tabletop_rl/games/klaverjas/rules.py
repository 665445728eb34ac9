"""Klaverjas rules core: one match is one flat ``int64`` row, a batch is a 2-D array.

Cards are ids 0..31: ``suit * 8 + rank`` with suits C D H S (0..3) and ranks in sequence
(roem) order 7 8 9 10 J Q K A (0..7). A hand is a 32-bit set of card ids. Seats 0..3 are
N E S W; N-S (even seats) are team 0, E-W team 1; play runs clockwise (seat + 1).

Everything is compiled by numba with ``cache=True`` on first use (importing compiles nothing).
Randomness happens only when a deal is shuffled or a suit is proposed, from the match's own
RNG words, so a match's course depends on its seed and the actions alone.

>>> state = new_state(seed=1)
>>> int(state[PHASE]) == BIDDING, int(state[CURRENT])    # forehand names trump
(True, 0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numba import njit, prange

from tabletop_rl.core.kernels import below, pick_legal, shuffle, splitmix64
from tabletop_rl.core.seeding import check_seed

# The names docs/klaverjas.md shows; every other offset and kernel is internal.
__all__ = ["ALL_PASS", "CARD_POINTS", "CURRENT", "DEALER", "DEAL_NO", "DEAL_SCORE", "DECLARED_STUK", "DOUBLING_TURN",
           "FIRST_LEAD", "FOLLOW_AMSTERDAM", "FOLLOW_AMSTERDAM_FORCED", "FOLLOW_ROTTERDAM", "FOREHAND", "HAND",
           "IN_TRICK", "KRAKEN", "LEADER", "MAKER", "MATCH_SCORE", "MULTIPLIER", "NUM_DEALS_AT", "PASSES", "PHASE",
           "PIT_FOR_DEFENDERS", "PROPOSALS", "PROPOSED", "QUARTETS", "RNG", "ROEM", "RULES", "RULE_SET", "SCHEME",
           "STATE_SIZE", "STUK_MODE", "TARGET", "TRICK", "TRICKS_WON", "TRICK_NO", "TRICK_ROEM", "TRUMP", "UNDERTRUMP",
           "WINNER", "apply_action", "card_id", "card_name", "checked_step", "follow_regime", "legal_cards",
           "legal_mask", "match_over", "new_state", "new_states", "open_play", "options_row", "play_random",
           "play_random_batch", "position", "quartet_table", "reset_batch", "reset_state", "score_deal", "seat_view",
           "trick_points", "trick_roem", "winning_position"]

# --- cards -----------------------------------------------------------------------------
SUITS = "CDHS"
RANKS = ("7", "8", "9", "10", "J", "Q", "K", "A")
NUM_CARDS = 32
ALL_CARDS = (1 << NUM_CARDS) - 1
TRUMP_STRENGTH = np.array([1, 2, 7, 5, 8, 3, 4, 6], np.int64)  # by rank index; 8 = J best
PLAIN_STRENGTH = np.array([1, 2, 3, 7, 4, 5, 6, 8], np.int64)  # A 10 K Q J 9 8 7
TRUMP_POINTS = np.array([0, 0, 14, 10, 20, 3, 4, 11], np.int64)
PLAIN_POINTS = np.array([0, 0, 0, 10, 2, 3, 4, 11], np.int64)
for _table in (TRUMP_STRENGTH, PLAIN_STRENGTH, TRUMP_POINTS, PLAIN_POINTS):
    _table.setflags(write=False)
KING, QUEEN = 6, 5
RUN3_STARTS = 0x3F3F3F3F  # card bits where a run of three can start inside its suit (ranks 7..Q)
RUN4_STARTS = 0x1F1F1F1F  # ... a run of four (ranks 7..J)
LAST_TRICK_BONUS = 10
PIT_BONUS = 100
STUK_ROEM = 20
#: Quartet roem by rank (7 8 9 10 J Q K A) for each ``quartet_values`` preset (docs/klaverjas.md §6; a mapping of
#: rank names to values overrides single ranks, e.g. ``{"9": 100}``).
QUARTET_PRESETS = {
    "standard": (0, 0, 0, 100, 200, 100, 100, 100),  # the docs/klaverjas.md §6 default: four 9s/8s/7s score nothing
    "low_100": (100, 100, 100, 100, 200, 100, 100, 100),  # knob low_quartets: four 9s/8s/7s score 100 too
    "all_100": (100, 100, 100, 100, 100, 100, 100, 100),  # every quartet 100, jacks included
}
DEAL_TOTAL = 162
TRICKS_PER_DEAL = 8
#: The longest match: so a match, a loaded position included, always ends, and its scores stay far from overflow.
MAX_DEALS = 10_000
MAX_TARGET = 100_000

DE_BRUIJN = 0x07EDD5E59A4E28C2  # a de Bruijn sequence: the top 6 bits of (lowest bit * it) are unique
DE_BRUIJN_INDEX = np.zeros(64, np.int64)
for _bit in range(64):
    DE_BRUIJN_INDEX[((1 << _bit) * DE_BRUIJN & (2**64 - 1)) >> 58] = _bit
DE_BRUIJN_INDEX.setflags(write=False)

# --- options (stored in the row) ----------------------------------------------------------
RULE_SETS = ("rotterdam", "amsterdam")
ROTTERDAM, AMSTERDAM = 0, 1
TRUMP_SCHEMES = ("forced_forehand", "free_with_pass", "proposed_suit")
FORCED_FOREHAND, FREE_WITH_PASS, PROPOSED_SUIT = 0, 1, 2
ALL_PASS_OPTIONS = ("forced_forehand", "redeal", "second_proposal_then_redeal")
ALL_PASS_FORCED, ALL_PASS_REDEAL, ALL_PASS_SECOND_PROPOSAL = 0, 1, 2
FIRST_LEADS = ("forehand", "maker")
LEAD_FOREHAND, LEAD_MAKER = 0, 1
STUK_MODES = ("same_trick", "declared_from_hand")
STUK_SAME_TRICK, STUK_DECLARED = 0, 1
UNDERTRUMP_OPTIONS = ("forbidden_unless_only_trumps", "forced")
UNDERTRUMP_FORBIDDEN, UNDERTRUMP_FORCED = 0, 1
#: Follow regimes passed to ``legal_cards`` (``follow_regime`` of a row): Amsterdam splits by the
#: ``amsterdam_undertrump_vs_opponent`` house rule.
FOLLOW_ROTTERDAM, FOLLOW_AMSTERDAM, FOLLOW_AMSTERDAM_FORCED = 0, 1, 2

# --- actions ---------------------------------------------------------------------------
PLAY = 0  # 0..31: play that card
NAME_TRUMP = 32  # 32..35: name suit as trump (becoming the maker)
PASS = 36  # in bidding: no trump / not this suit; in doubling: no (re)double
ACCEPT = 37  # play the proposed suit
KRAAK = 38  # a defender doubles the deal (kraken)
REKRAAK = 39  # a maker redoubles after a kraak
NUM_ACTIONS = 40

# --- phases ----------------------------------------------------------------------------
BIDDING, PLAYING, OVER, DOUBLING = 0, 1, 2, 3  # DOUBLING: kraken decisions after trump is fixed
PHASE_NAMES = ("bidding", "playing", "over", "doubling")

# --- state layout (offsets into the int64 row) --------------------------------------------
RULE_SET = 0  # the option users spell ``rules`` (rotterdam or amsterdam): ``RULE_SETS[state[RULE_SET]]``
RULES = RULE_SET  # its older name, kept for code written against it (docs/klaverjas.md)
SCHEME = 1
ALL_PASS = 2
FIRST_LEAD = 3
PIT_FOR_DEFENDERS = 4
NUM_DEALS_AT = 5
DEAL_NO = 6  # deals finished so far
DEALER = 7
MATCH_SCORE = 8  # 2: per team, summed over finished deals
RNG = 10  # 2 words of 32 bits
HAND = 12  # 4: set of cards each seat still holds
TRICK = 16  # 32: card ids by trick and play order (trick * 4 + k), -1 = not played
LEADER = 48  # 8: seat that led each trick, -1 = not started
WINNER = 56  # 8: seat that won each trick, -1 = not finished
TRICK_ROEM = 64  # 8: roem of each finished trick
TRICK_NO = 72  # index of the trick in progress
IN_TRICK = 73  # cards already on the table in that trick
PHASE = 74
CURRENT = 75
TRUMP = 76  # suit index, -1 while bidding
MAKER = 77  # seat that chose trump, -1 while bidding
PROPOSED = 78  # proposed suit (proposed_suit scheme), -1 otherwise
PROPOSALS = 79  # suits proposed so far in this deal
PASSES = 80  # passes in the current bidding round
CARD_POINTS = 81  # 2: per team in this deal (last-trick bonus included)
ROEM = 83  # 2: per team in this deal
TRICKS_WON = 85  # 2
DEAL_SCORE = 87  # 2: the score of the last finished deal
FOREHAND = 89
KRAKEN = 90  # option: defenders may double, makers redouble
TARGET = 91  # option: match to this score (0: a match of NUM_DEALS_AT deals)
STUK_MODE = 92  # option
UNDERTRUMP = 93  # option (Amsterdam only)
QUARTETS = 94  # option, 8: quartet roem by rank
MULTIPLIER = 102  # 1, 2 after a kraak, 4 after a rekraak
DOUBLING_TURN = 103  # kraken decisions already taken at the current level (0 or 1)
DECLARED_STUK = 104  # team that scored a stuk declared from hand in this deal, -1 none
STATE_SIZE = 105
STATE_DTYPE = np.int64
MASK32 = 0xFFFFFFFF


# --- card helpers (usable from Python and numba) --------------------------------------------
@njit(cache=True, inline="always")
def suit_of(card):
    return card >> 3


@njit(cache=True, inline="always")
def rank_of(card):
    return card & 7


@njit(cache=True, inline="always")
def _suit_cards(suit):
    return np.int64(0xFF) << np.int64(8 * suit)


@njit(cache=True, inline="always")
def strength(card, trump, led):
    """Trick-taking strength: trumps 9..16, cards of the led suit 1..8, other cards 0."""
    if suit_of(card) == trump:
        return 8 + TRUMP_STRENGTH[rank_of(card)]
    if suit_of(card) == led:
        return PLAIN_STRENGTH[rank_of(card)]
    return 0


@njit(cache=True, inline="always")
def card_points(card, trump):
    if suit_of(card) == trump:
        return TRUMP_POINTS[rank_of(card)]
    return PLAIN_POINTS[rank_of(card)]


@njit(cache=True, inline="always")
def team_of(seat):
    return seat & 1


@njit(cache=True, inline="always")
def _popcount(x):
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(cache=True, inline="always")
def lowest_card(x):
    """Id of the lowest card in a non-empty set (a de Bruijn multiply: no loop over the bits)."""
    return DE_BRUIJN_INDEX[((x & -x) * DE_BRUIJN >> 58) & 63]  # int64 wraps; the mask undoes the sign


# --- tricks -------------------------------------------------------------------------------
@njit(cache=True)
def winning_position(cards, n, trump):
    """Play-order index of the card currently winning the first ``n`` cards of a trick."""
    led = suit_of(cards[0])
    best = 0
    for k in range(1, n):
        if strength(cards[k], trump, led) > strength(cards[best], trump, led):
            best = k
    return best


@njit(cache=True)
def trick_points(cards, trump):
    total = 0
    for k in range(4):
        total += card_points(cards[k], trump)
    return total


@njit(cache=True)
def trick_roem(cards, trump, quartets, stuk_in_trick):
    """Roem of a complete trick (docs/klaverjas.md §6): a quartet alone (``quartets[rank]``), else the longest run
    plus, when ``stuk_in_trick`` (``stuk_mode="same_trick"``), 20 for K and Q of trump together."""
    r0 = rank_of(cards[0])
    if rank_of(cards[1]) == r0 and rank_of(cards[2]) == r0 and rank_of(cards[3]) == r0:
        return quartets[r0]
    held = np.int64(0)  # the trick as a card set: 8 bits per suit in sequence order
    for k in range(4):
        held |= np.int64(1) << cards[k]
    roem = 0
    stuk = (np.int64(1) << (8 * trump + KING)) | (np.int64(1) << (8 * trump + QUEEN))
    if stuk_in_trick and held & stuk == stuk:
        roem += STUK_ROEM
    three = held & (held >> 1) & (held >> 2) & RUN3_STARTS
    if three & (held >> 3) & RUN4_STARTS:
        return roem + 50
    return roem + 20 if three else roem


# --- legality -----------------------------------------------------------------------------
@njit(cache=True)
def legal_cards(hand, cards, n, trump, regime):
    """The set of cards of ``hand`` that may be played after the first ``n`` cards of a trick under the
    follow ``regime`` (``FOLLOW_*``; docs/klaverjas.md §5.1 Rotterdam, §5.2 Amsterdam, §5.3 forced
    undertrumping)."""
    if n == 0:
        return hand
    led = suit_of(cards[0])
    follow = hand & _suit_cards(led)
    trumps = hand & _suit_cards(trump)
    best_trump = 0
    for k in range(n):
        if suit_of(cards[k]) == trump:
            best_trump = max(best_trump, TRUMP_STRENGTH[rank_of(cards[k])])
    higher = np.int64(0)
    for r in range(8):
        if TRUMP_STRENGTH[r] > best_trump:
            higher |= (1 << (8 * trump + r)) & trumps
    if led == trump:
        if follow:
            return higher if higher else follow
        return hand
    if follow:
        return follow
    if not trumps:
        return hand
    if regime == FOLLOW_ROTTERDAM:
        return higher if higher else trumps
    plain = hand & ~trumps
    partner_winning = n >= 2 and winning_position(cards, n, trump) == n - 2
    if partner_winning:
        if best_trump == 0:
            return hand
        allowed = plain | higher
        return allowed if allowed else hand
    if higher:
        return higher
    if regime == FOLLOW_AMSTERDAM_FORCED:
        return trumps  # the house rule: undertrump an opponent's trump you cannot beat
    return plain if plain else trumps


@njit(cache=True, inline="always")
def follow_regime(state):
    """The ``legal_cards`` regime of a row: Rotterdam, Amsterdam, or Amsterdam with forced undertrumping."""
    if state[RULE_SET] == ROTTERDAM:
        return FOLLOW_ROTTERDAM
    return FOLLOW_AMSTERDAM_FORCED if state[UNDERTRUMP] == UNDERTRUMP_FORCED else FOLLOW_AMSTERDAM


@njit(cache=True)
def current_trick(state, out):
    """Copy the cards of the trick in progress into ``out``; return how many there are."""
    base = TRICK + 4 * state[TRICK_NO]
    n = state[IN_TRICK]
    for k in range(n):
        out[k] = state[base + k]
    return n


@njit(cache=True)
def legal_mask(state, mask):
    """Fill ``mask`` (bool[NUM_ACTIONS]) with the legal actions of the seat to act; return how many."""
    mask[:] = False
    phase = state[PHASE]
    if phase == OVER:
        return 0
    if phase == PLAYING:
        cards = np.empty(4, np.int64)
        n = current_trick(state, cards)
        legal = legal_cards(state[HAND + state[CURRENT]], cards, n, state[TRUMP], follow_regime(state))
        count = 0
        for c in range(NUM_CARDS):
            if (legal >> c) & 1:
                mask[PLAY + c] = True
                count += 1
        return count
    if phase == DOUBLING:
        mask[PASS] = True
        mask[KRAAK if state[MULTIPLIER] == 1 else REKRAAK] = True
        return 2
    forced = state[PASSES] >= 4  # everybody passed and forehand must now choose
    if state[SCHEME] == PROPOSED_SUIT:
        mask[ACCEPT] = True
        mask[PASS] = not forced
        return 1 if forced else 2
    for s in range(4):
        mask[NAME_TRUMP + s] = True
    if state[SCHEME] == FREE_WITH_PASS and not forced:
        mask[PASS] = True
        return 5
    return 4


# --- RNG (splitmix64, shared with the other games: tabletop_rl.core.kernels) ---------------------------
@njit(cache=True, inline="always")
def _load_rng(state):
    """The match's generator state, from its two 32-bit RNG words, as the ``uint64[1]`` the kernels take."""
    rng = np.empty(1, np.uint64)
    rng[0] = np.uint64(state[RNG]) | (np.uint64(state[RNG + 1]) << np.uint64(32))
    return rng


@njit(cache=True, inline="always")
def _store_rng(state, rng):
    state[RNG] = np.int64(rng[0] & np.uint64(MASK32))
    state[RNG + 1] = np.int64(rng[0] >> np.uint64(32))


@njit(cache=True)
def random_below(state, n):
    """Uniform int in [0, n) from the match's RNG words."""
    rng = _load_rng(state)
    r = below(rng, n)
    _store_rng(state, rng)
    return r


# --- dealing and bidding -------------------------------------------------------------------
@njit(cache=True)
def clear_deal(state):
    """Empty the record of the deal (tricks, trump, bidding, points) for a new one; hands, options and the match
    record stay."""
    state[TRICK:TRICK + 32] = -1
    state[LEADER:LEADER + 8] = -1
    state[WINNER:WINNER + 8] = -1
    state[TRICK_ROEM:TRICK_ROEM + 8] = 0
    state[TRICK_NO] = 0
    state[IN_TRICK] = 0
    state[TRUMP] = -1
    state[MAKER] = -1
    state[PROPOSED] = -1
    state[PROPOSALS] = 0
    state[PASSES] = 0
    state[MULTIPLIER] = 1
    state[DOUBLING_TURN] = 0
    state[DECLARED_STUK] = -1
    for t in range(2):
        state[CARD_POINTS + t] = 0
        state[ROEM + t] = 0
        state[TRICKS_WON + t] = 0


@njit(cache=True)
def _propose_suit(state):
    """Propose a random suit different from the one proposed before (if any)."""
    previous = state[PROPOSED]
    suit = random_below(state, 4 if previous < 0 else 3)
    if previous >= 0 and suit >= previous:
        suit += 1
    state[PROPOSED] = suit
    state[PROPOSALS] += 1
    state[PASSES] = 0
    state[CURRENT] = state[FOREHAND]


@njit(cache=True)
def _deal(state):
    """Shuffle and deal 8 cards to each seat for the current dealer; open the bidding."""
    clear_deal(state)
    order = np.arange(NUM_CARDS)
    rng = _load_rng(state)
    shuffle(order, rng)
    _store_rng(state, rng)
    for s in range(4):
        hand = np.int64(0)
        for i in range(8 * s, 8 * s + 8):
            hand |= np.int64(1) << order[i]
        state[HAND + s] = hand
    state[FOREHAND] = (state[DEALER] + 1) % 4
    state[CURRENT] = state[FOREHAND]
    state[PHASE] = BIDDING
    if state[SCHEME] == PROPOSED_SUIT:
        _propose_suit(state)


@njit(cache=True)
def _start_play(state, trump, maker):
    """Fix trump and the maker; with kraken the defenders may first double, else play starts."""
    state[TRUMP] = trump
    state[MAKER] = maker
    if state[KRAKEN]:
        state[PHASE] = DOUBLING
        state[CURRENT] = (maker + 1) % 4
        return
    open_play(state)


@njit(cache=True)
def open_play(state):
    """Start the card play of a deal whose trump is fixed: the first lead goes to forehand (or the
    maker, by option). A search can call it on a copy in the doubling phase to look ahead."""
    maker = state[MAKER]
    state[PHASE] = PLAYING
    leader = maker if state[FIRST_LEAD] == LEAD_MAKER else state[FOREHAND]
    state[CURRENT] = leader
    state[LEADER] = leader


@njit(cache=True)
def _double(state, action):
    """Kraken: the defenders decide in turn from the maker's left; after a kraak the maker, then the
    maker's partner, may redouble. A (re)double or the second pass at a level ends the doubling."""
    maker = state[MAKER]
    if action == KRAAK:
        state[MULTIPLIER] = 2
        state[DOUBLING_TURN] = 0
        state[CURRENT] = maker
        return
    if action == REKRAAK:
        state[MULTIPLIER] = 4
        open_play(state)
        return
    if state[DOUBLING_TURN] == 1:
        open_play(state)
        return
    state[DOUBLING_TURN] = 1
    state[CURRENT] = (state[CURRENT] + 2) % 4  # the other defender, or the maker's partner


@njit(cache=True)
def _bid(state, action):
    seat = state[CURRENT]
    if action == ACCEPT:
        _start_play(state, state[PROPOSED], seat)
        return
    if action != PASS:
        _start_play(state, action - NAME_TRUMP, seat)
        return
    state[PASSES] += 1
    state[CURRENT] = (seat + 1) % 4
    if state[PASSES] < 4:
        return
    option = state[ALL_PASS]
    if option == ALL_PASS_REDEAL or (option == ALL_PASS_SECOND_PROPOSAL and state[PROPOSALS] >= 2):
        _deal(state)  # thrown in: the same dealer deals again
    elif option == ALL_PASS_SECOND_PROPOSAL:
        _propose_suit(state)
    # ALL_PASS_FORCED: PASSES stays 4 and forehand (next after the fourth pass) must choose


# --- scoring ---------------------------------------------------------------------------
@njit(cache=True)
def score_deal(card_points_by_team, roem_by_team, tricks_by_team, maker_team, pit_for_defenders, out):
    """Write the recorded deal score of each team into ``out`` (docs/klaverjas.md §7): pit adds 100 roem,
    the makers need strictly more than the defenders or go nat (defenders get 162 + all roem)."""
    roem = roem_by_team.copy()
    for t in range(2):
        if tricks_by_team[t] == TRICKS_PER_DEAL and (t == maker_team or pit_for_defenders):
            roem[t] += PIT_BONUS
    defenders = 1 - maker_team
    makers_total = card_points_by_team[maker_team] + roem[maker_team]
    defenders_total = card_points_by_team[defenders] + roem[defenders]
    if makers_total > defenders_total:
        out[maker_team] = makers_total
        out[defenders] = defenders_total
    else:
        out[maker_team] = 0
        out[defenders] = DEAL_TOTAL + roem[0] + roem[1]


@njit(cache=True)
def _finish_trick(state):
    t = state[TRICK_NO]
    cards = state[TRICK + 4 * t:TRICK + 4 * t + 4]
    trump = state[TRUMP]
    winner = (state[LEADER + t] + winning_position(cards, 4, trump)) % 4
    team = team_of(winner)
    roem = trick_roem(cards, trump, state[QUARTETS:QUARTETS + 8], state[STUK_MODE] == STUK_SAME_TRICK)
    state[WINNER + t] = winner
    state[TRICK_ROEM + t] = roem
    state[CARD_POINTS + team] += trick_points(cards, trump) + (LAST_TRICK_BONUS if t == 7 else 0)
    state[ROEM + team] += roem
    state[TRICKS_WON + team] += 1
    state[IN_TRICK] = 0
    state[CURRENT] = winner
    if t < 7:
        state[TRICK_NO] = t + 1
        state[LEADER + t + 1] = winner
        return
    _finish_deal(state)


@njit(cache=True)
def _finish_deal(state):
    """Record the deal's score (times the kraken multiplier); deal the next one (dealer moves on) or end."""
    out = np.zeros(2, np.int64)
    score_deal(state[CARD_POINTS:CARD_POINTS + 2], state[ROEM:ROEM + 2], state[TRICKS_WON:TRICKS_WON + 2],
               team_of(state[MAKER]), state[PIT_FOR_DEFENDERS] != 0, out)
    for t in range(2):
        state[DEAL_SCORE + t] = out[t] * state[MULTIPLIER]
        state[MATCH_SCORE + t] += state[DEAL_SCORE + t]
    state[DEAL_NO] += 1
    if match_over(state):
        state[PHASE] = OVER
        return
    state[DEALER] = (state[DEALER] + 1) % 4
    _deal(state)


@njit(cache=True)
def match_over(state):
    """After a deal: ``deals`` deals played, or (target match) a team has reached the target and the scores
    differ — when both pass it in the same deal the higher score wins; equal scores play another deal."""
    target = state[TARGET]
    if target == 0:
        return state[DEAL_NO] >= state[NUM_DEALS_AT]
    ours, theirs = state[MATCH_SCORE], state[MATCH_SCORE + 1]
    return max(ours, theirs) >= target and ours != theirs


@njit(cache=True)
def player_of(state, card):
    """The seat that played ``card`` in this deal, -1 if it is still in a hand."""
    for t in range(state[TRICK_NO] + 1):
        for k in range(4):
            if state[TRICK + 4 * t + k] == card:
                return (state[LEADER + t] + k) % 4
    return -1


@njit(cache=True)
def _declare_stuk(state, seat, card):
    """``stuk_mode="declared_from_hand"``: a seat playing the second of K and Q of trump, having played
    the other one earlier (so it held both), scores 20 roem for its team at once."""
    trump = state[TRUMP]
    if suit_of(card) != trump or rank_of(card) not in (KING, QUEEN):
        return
    other = 8 * trump + (KING + QUEEN - rank_of(card))
    if player_of(state, other) == seat:
        state[ROEM + team_of(seat)] += STUK_ROEM
        state[DECLARED_STUK] = team_of(seat)


@njit(cache=True)
def apply_action(state, action):
    """Apply a legal ``action`` for the seat to act (the caller guarantees legality)."""
    if state[PHASE] == BIDDING:
        _bid(state, action)
        return
    if state[PHASE] == DOUBLING:
        _double(state, action)
        return
    seat = state[CURRENT]
    state[HAND + seat] &= ~(np.int64(1) << action)
    state[TRICK + 4 * state[TRICK_NO] + state[IN_TRICK]] = action
    state[IN_TRICK] += 1
    if state[STUK_MODE] == STUK_DECLARED:
        _declare_stuk(state, seat, action)
    if state[IN_TRICK] == 4:
        _finish_trick(state)
    else:
        state[CURRENT] = (seat + 1) % 4


@njit(cache=True)
def checked_step(state, action, mask):
    """Apply ``action`` if ``mask`` (the current legal mask) allows it, then refresh ``mask``;
    return whether it was legal (the state is untouched when not)."""
    if action < 0 or action >= NUM_ACTIONS or not mask[action]:
        return False
    apply_action(state, action)
    legal_mask(state, mask)
    return True


# --- reset and random play --------------------------------------------------------------------
@njit(cache=True)
def reset_state(state, seed):
    """Start the match whose options the row holds (``options_row``) from ``seed``: every other slot is
    cleared; seat 3 deals first, so seat 0 is forehand."""
    for i in range(STATE_SIZE):
        if not (RULE_SET <= i <= NUM_DEALS_AT or KRAKEN <= i < QUARTETS + 8):
            state[i] = 0
    state[DEALER] = 3
    seed_rng(state, seed)
    _deal(state)


@njit(cache=True)
def seed_rng(state, seed):
    """Seed the match's RNG words (later deals and random play) from a 64-bit seed."""
    _, z = splitmix64(np.uint64(seed) ^ np.uint64(0xD1B54A32D192ED03))
    state[RNG] = np.int64(z & np.uint64(MASK32))
    state[RNG + 1] = np.int64(z >> np.uint64(32))


@njit(cache=True)
def play_random(state):
    """Play the match to its end with uniformly random legal actions; return the action count."""
    mask = np.zeros(NUM_ACTIONS, np.bool_)
    steps = 0
    while state[PHASE] != OVER:
        count = legal_mask(state, mask)
        apply_action(state, pick_legal(mask, random_below(state, count)))
        steps += 1
    return steps


@njit(cache=True)
def play_random_until(state, seat, mask):
    """Uniformly random legal moves (the match's RNG) for every seat but ``seat`` until ``seat`` is to act or the
    match ends; ``mask`` is left as the legal mask of the seat to act. The draws are ``play_random``'s: the k-th
    legal move in id order, k from ``random_below``, so a match plays as the contract's Python default plays it."""
    count = legal_mask(state, mask)
    while state[PHASE] != OVER and state[CURRENT] != seat:
        apply_action(state, pick_legal(mask, random_below(state, count)))
        count = legal_mask(state, mask)


# --- batch API -----------------------------------------------------------------------------
def new_states(batch: int, **options) -> np.ndarray:
    """A batch ``int64[batch, STATE_SIZE]`` holding ``options`` (those of ``new_state``), to deal with
    ``reset_batch``.

    >>> states = new_states(3, rules="amsterdam"); reset_batch(states, np.arange(3))
    >>> states[:, PHASE].tolist(), int(states[0, RULE_SET]) == AMSTERDAM
    ([0, 0, 0], True)
    """
    return np.tile(options_row(**options), (batch, 1))


@njit(cache=True, parallel=True)
def reset_batch(states, seeds):
    for i in prange(states.shape[0]):
        reset_state(states[i], seeds[i])


@njit(cache=True, parallel=True)
def play_random_batch(states, steps):
    """Play every match to its end with random legal actions; ``steps[i]`` gets its action count."""
    for i in prange(states.shape[0]):
        steps[i] = play_random(states[i])


# --- Python helpers ----------------------------------------------------------------------------
def card_id(text: str) -> int:
    """``"10H"`` -> 26; ``ValueError`` naming the bad text.

    >>> card_id("JH"), card_id("7C"), card_id("as")
    (20, 0, 31)
    """
    if not isinstance(text, str) or len(text) < 2:
        raise ValueError(f"bad card {text!r}: expected rank+suit such as '10H' or 'JS'")
    rank, suit = text[:-1].upper(), text[-1].upper()
    if rank not in RANKS or suit not in SUITS:
        raise ValueError(f"bad card {text!r}: rank must be one of {' '.join(RANKS)} and suit one of C D H S")
    return SUITS.index(suit) * 8 + RANKS.index(rank)


def card_name(card: int) -> str:
    """26 -> ``"10H"``."""
    return RANKS[card & 7] + SUITS[card >> 3]


def suit_id(text: str) -> int:
    """``"H"`` -> 2; ``ValueError`` for anything but one of C D H S."""
    if not isinstance(text, str) or text.upper() not in tuple(SUITS):
        raise ValueError(f"bad suit {text!r}: expected one of C D H S")
    return SUITS.index(text.upper())


def cards_of(hand: int) -> list[int]:
    """Card ids in a hand set, ascending."""
    return [c for c in range(NUM_CARDS) if (int(hand) >> c) & 1]


def hand_of(cards: list[int]) -> int:
    """The hand set holding ``cards``."""
    hand = 0
    for c in cards:
        hand |= 1 << int(c)
    return hand


def seat_view(state: np.ndarray, seat: int) -> np.ndarray:
    """A copy of ``state`` holding only what ``seat`` may see: its own hand and the public record (the other
    hands and the dealing RNG, which would let a policy recompute the deal, are blanked).

    >>> view = seat_view(new_state(seed=1), 0); [bool(view[HAND + s]) for s in range(4)], int(view[RNG])
    ([True, False, False, False], 0)
    """
    view = state.copy()
    view[HAND:HAND + 4] = [state[HAND + s] if s == seat else 0 for s in range(4)]
    view[RNG:RNG + 2] = 0
    return view


def option_index(value: Any, name: str, choices: tuple[Any, ...]) -> int:
    """Index of ``value`` in ``choices``; ``ValueError`` naming the option otherwise."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return choices.index(value)


def quartet_table(values: str | Mapping[str, int]) -> tuple[int, ...]:
    """Quartet roem by rank index from a ``QUARTET_PRESETS`` name or a ``{rank: value}`` mapping over
    the standard preset; ``ValueError`` naming a bad rank or value.

    >>> quartet_table({"9": 100, "J": 100})
    (0, 0, 100, 100, 100, 100, 100, 100)
    """
    if isinstance(values, str):
        if values not in QUARTET_PRESETS:
            raise ValueError(f"quartet_values must be one of {', '.join(map(repr, QUARTET_PRESETS))} or a "
                             f"{{rank: value}} mapping, got {values!r}")
        return QUARTET_PRESETS[values]
    if not isinstance(values, Mapping):
        raise ValueError(f"quartet_values must be a preset name or a {{rank: value}} mapping, got {values!r}")
    table = list(QUARTET_PRESETS["standard"])
    for rank, value in values.items():
        if str(rank).upper() not in RANKS:
            raise ValueError(f"quartet_values: unknown rank {rank!r} (ranks are {' '.join(RANKS)})")
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= 1000:
            raise ValueError(f"quartet_values[{rank!r}] must be an integer 0..1000, got {value!r}")
        table[RANKS.index(str(rank).upper())] = int(value)
    return tuple(table)


def _count(value: Any, name: str, most: int, allow_none: bool = False) -> int:
    if allow_none and value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= most:
        raise ValueError(f"{name} must be an integer 1..{most}{' or None' if allow_none else ''}, got {value!r}")
    return int(value)


def options_row(deals: int = 1, rules: str = "rotterdam", trump_selection: str = "forced_forehand",
                all_pass: str = "forced_forehand", first_lead: str = "forehand", pit_for_defenders: bool = True,
                kraken: bool = False, target: int | None = None,
                quartet_values: str | Mapping[str, int] = "standard", stuk_mode: str = "same_trick",
                amsterdam_undertrump_vs_opponent: str = "forbidden_unless_only_trumps") -> np.ndarray:
    """A row holding the match options (docs/klaverjas.md §10), not yet dealt (``reset_state`` deals it); every option
    is checked and a bad one is a ``ValueError`` naming it. ``target`` (first team to reach it at the end
    of a deal wins) replaces ``deals``; the two cannot be combined.

    >>> row = options_row(kraken=True, target=1500); int(row[KRAKEN]), int(row[TARGET]), int(row[NUM_DEALS_AT])
    (1, 1500, 0)
    """
    state = np.zeros(STATE_SIZE, STATE_DTYPE)
    state[TARGET] = _count(target, "target", MAX_TARGET, allow_none=True)
    if state[TARGET] and deals != 1:
        raise ValueError(f"give deals or target, not both (deals={deals!r}, target={target!r})")
    state[NUM_DEALS_AT] = 0 if state[TARGET] else _count(deals, "deals", MAX_DEALS)
    state[RULE_SET] = option_index(rules, "rules", RULE_SETS)
    state[SCHEME] = option_index(trump_selection, "trump_selection", TRUMP_SCHEMES)
    state[ALL_PASS] = option_index(all_pass, "all_pass", ALL_PASS_OPTIONS)
    if state[ALL_PASS] == ALL_PASS_SECOND_PROPOSAL and state[SCHEME] != PROPOSED_SUIT:
        raise ValueError("all_pass='second_proposal_then_redeal' needs trump_selection='proposed_suit'")
    state[FIRST_LEAD] = option_index(first_lead, "first_lead", FIRST_LEADS)
    state[PIT_FOR_DEFENDERS] = option_index(pit_for_defenders, "pit_for_defenders", (False, True))
    state[KRAKEN] = option_index(kraken, "kraken", (False, True))
    state[QUARTETS:QUARTETS + 8] = quartet_table(quartet_values)
    state[STUK_MODE] = option_index(stuk_mode, "stuk_mode", STUK_MODES)
    state[UNDERTRUMP] = option_index(amsterdam_undertrump_vs_opponent, "amsterdam_undertrump_vs_opponent",
                                     UNDERTRUMP_OPTIONS)
    if state[UNDERTRUMP] == UNDERTRUMP_FORCED and state[RULE_SET] != AMSTERDAM:
        raise ValueError("amsterdam_undertrump_vs_opponent='forced' needs rules='amsterdam'")
    return state


def new_state(seed: int = 0, **options: Any) -> np.ndarray:
    """A freshly dealt match row; ``options`` are those of ``options_row`` (docs/klaverjas.md §10).

    >>> s = new_state(seed=3, rules="amsterdam"); int(s[RULE_SET]) == AMSTERDAM, int(s[NUM_DEALS_AT])
    (True, 1)
    """
    seed = check_seed(seed)
    state = options_row(**options)
    reset_state(state, seed)
    return state


def position(hands: dict[int, list[str]], trump: str, leader: int, table: Sequence[str] = (),
             maker: int | None = None, trick_no: int | None = None, **options: Any) -> np.ndarray:
    """A row in the middle of a deal: the hands each seat still holds, trump, the seat that led the
    trick in progress and the cards already on the table (played in order from ``leader``).
    ``trick_no`` defaults to 8 minus the largest hand (earlier tricks are left empty); ``options`` are
    those of ``options_row`` (``rules=``, ``stuk_mode=``, ...).

    >>> s = position({0: ["AS"], 1: ["7S"], 2: ["9H"], 3: ["8S"]}, "H", leader=0)
    >>> int(s[CURRENT]), int(s[TRICK_NO])
    (0, 7)
    """
    state = new_state(**options)
    state[HAND:HAND + 4] = [hand_of([card_id(c) for c in hands.get(s, [])]) for s in range(4)]
    state[TRUMP] = suit_id(trump)
    state[MAKER] = leader if maker is None else maker
    state[PHASE] = PLAYING
    sizes = [len(hands.get(s, [])) + int((s - leader) % 4 < len(table)) for s in range(4)]
    t = TRICKS_PER_DEAL - max(sizes) if trick_no is None else trick_no
    state[TRICK_NO] = t
    state[LEADER + t] = leader
    for k, text in enumerate(table):
        state[TRICK + 4 * t + k] = card_id(text)
    state[IN_TRICK] = len(table)
    state[CURRENT] = (leader + len(table)) % 4
    return state
