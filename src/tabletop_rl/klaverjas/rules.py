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

import numpy as np
from numba import njit, prange

# --- cards -----------------------------------------------------------------------------
SUITS = "CDHS"
RANKS = ("7", "8", "9", "10", "J", "Q", "K", "A")
NUM_CARDS = 32
ALL_CARDS = (1 << NUM_CARDS) - 1
TRUMP_STRENGTH = np.array([1, 2, 7, 5, 8, 3, 4, 6], np.int64)  # by rank index; 8 = J best
PLAIN_STRENGTH = np.array([1, 2, 3, 7, 4, 5, 6, 8], np.int64)  # A 10 K Q J 9 8 7
TRUMP_POINTS = np.array([0, 0, 14, 10, 20, 3, 4, 11], np.int64)
PLAIN_POINTS = np.array([0, 0, 0, 10, 2, 3, 4, 11], np.int64)
QUARTET_ROEM = np.array([0, 0, 0, 100, 200, 100, 100, 100], np.int64)  # four 7s/8s/9s: 0 (digest default)
for _table in (TRUMP_STRENGTH, PLAIN_STRENGTH, TRUMP_POINTS, PLAIN_POINTS, QUARTET_ROEM):
    _table.setflags(write=False)
KING, QUEEN = 6, 5
LAST_TRICK_BONUS = 10
PIT_BONUS = 100
DEAL_TOTAL = 162
TRICKS_PER_DEAL = 8

# --- options (stored in the row) ----------------------------------------------------------
RULE_SETS = ("rotterdam", "amsterdam")
ROTTERDAM, AMSTERDAM = 0, 1
TRUMP_SCHEMES = ("forced_forehand", "free_with_pass", "proposed_suit")
FORCED_FOREHAND, FREE_WITH_PASS, PROPOSED_SUIT = 0, 1, 2
ALL_PASS_OPTIONS = ("forced_forehand", "redeal", "second_proposal_then_redeal")
ALL_PASS_FORCED, ALL_PASS_REDEAL, ALL_PASS_SECOND_PROPOSAL = 0, 1, 2
FIRST_LEADS = ("forehand", "maker")
LEAD_FOREHAND, LEAD_MAKER = 0, 1

# --- actions ---------------------------------------------------------------------------
PLAY = 0  # 0..31: play that card
NAME_TRUMP = 32  # 32..35: name suit as trump (becoming the maker)
PASS = 36
ACCEPT = 37  # play the proposed suit
NUM_ACTIONS = 38

# --- phases ----------------------------------------------------------------------------
BIDDING, PLAYING, OVER = 0, 1, 2
PHASE_NAMES = ("bidding", "playing", "over")

# --- state layout (offsets into the int64 row) --------------------------------------------
RULES = 0
SCHEME = 1
ALL_PASS = 2
FIRST_LEAD = 3
PIT_FOR_DEFENDERS = 4
NUM_DEALS = 5
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
STATE_SIZE = 90
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
def suit_cards(suit):
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
def popcount(x):
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(cache=True, inline="always")
def lowest_card(x):
    """Id of the lowest card in a non-empty set."""
    c = 0
    while not (x >> c) & 1:
        c += 1
    return c


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
def trick_roem(cards, trump):
    """Roem of a complete trick (digest §6): a quartet alone, else stuk plus the longest run."""
    r0 = rank_of(cards[0])
    if rank_of(cards[1]) == r0 and rank_of(cards[2]) == r0 and rank_of(cards[3]) == r0:
        return QUARTET_ROEM[r0]
    by_suit = np.zeros(4, np.int64)
    for k in range(4):
        by_suit[suit_of(cards[k])] |= 1 << rank_of(cards[k])
    roem = 0
    stuk = (1 << KING) | (1 << QUEEN)
    if by_suit[trump] & stuk == stuk:
        roem += 20
    longest = 0
    for s in range(4):
        run = 0
        for r in range(8):
            run = run + 1 if (by_suit[s] >> r) & 1 else 0
            longest = max(longest, run)
    if longest == 4:
        roem += 50
    elif longest == 3:
        roem += 20
    return roem


# --- legality -----------------------------------------------------------------------------
@njit(cache=True)
def legal_cards(hand, cards, n, trump, amsterdam):
    """The set of cards of ``hand`` that may be played after the first ``n`` cards of a trick
    (digest §5.1 Rotterdam, §5.2 Amsterdam)."""
    if n == 0:
        return hand
    led = suit_of(cards[0])
    follow = hand & suit_cards(led)
    trumps = hand & suit_cards(trump)
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
    if not amsterdam:
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
    return plain if plain else trumps


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
    """Fill ``mask`` (bool[38]) with the legal actions of the seat to act; return how many."""
    mask[:] = False
    phase = state[PHASE]
    if phase == OVER:
        return 0
    if phase == PLAYING:
        cards = np.empty(4, np.int64)
        n = current_trick(state, cards)
        legal = legal_cards(state[HAND + state[CURRENT]], cards, n, state[TRUMP], state[RULES] == AMSTERDAM)
        count = 0
        for c in range(NUM_CARDS):
            if (legal >> c) & 1:
                mask[PLAY + c] = True
                count += 1
        return count
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


# --- RNG (splitmix64) ------------------------------------------------------------------------
@njit(cache=True, inline="always")
def splitmix64(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@njit(cache=True)
def random_below(state, n):
    """Uniform int in [0, n) from the match's RNG words."""
    x = np.uint64(state[RNG]) | (np.uint64(state[RNG + 1]) << np.uint64(32))
    x, z = splitmix64(x)
    state[RNG] = np.int64(x & np.uint64(MASK32))
    state[RNG + 1] = np.int64(x >> np.uint64(32))
    return np.int64(z % np.uint64(n))


# --- dealing and bidding -------------------------------------------------------------------
@njit(cache=True)
def _clear_deal(state):
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
def deal(state):
    """Shuffle and deal 8 cards to each seat for the current dealer; open the bidding."""
    _clear_deal(state)
    order = np.arange(NUM_CARDS)
    for i in range(NUM_CARDS - 1, 0, -1):
        j = random_below(state, i + 1)
        order[i], order[j] = order[j], order[i]
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
def start_play(state, trump, maker):
    """Fix trump and the maker; the first lead goes to forehand (or the maker, by option)."""
    state[TRUMP] = trump
    state[MAKER] = maker
    state[PHASE] = PLAYING
    leader = maker if state[FIRST_LEAD] == LEAD_MAKER else state[FOREHAND]
    state[CURRENT] = leader
    state[LEADER] = leader


@njit(cache=True)
def _bid(state, action):
    seat = state[CURRENT]
    if action == ACCEPT:
        start_play(state, state[PROPOSED], seat)
        return
    if action != PASS:
        start_play(state, action - NAME_TRUMP, seat)
        return
    state[PASSES] += 1
    state[CURRENT] = (seat + 1) % 4
    if state[PASSES] < 4:
        return
    option = state[ALL_PASS]
    if option == ALL_PASS_REDEAL or (option == ALL_PASS_SECOND_PROPOSAL and state[PROPOSALS] >= 2):
        deal(state)  # thrown in: the same dealer deals again
    elif option == ALL_PASS_SECOND_PROPOSAL:
        _propose_suit(state)
    # ALL_PASS_FORCED: PASSES stays 4 and forehand (next after the fourth pass) must choose


# --- scoring ---------------------------------------------------------------------------
@njit(cache=True)
def score_deal(card_points_by_team, roem_by_team, tricks_by_team, maker_team, pit_for_defenders, out):
    """Write the recorded deal score of each team into ``out`` (digest §7): pit adds 100 roem,
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
    roem = trick_roem(cards, trump)
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
    """Record the deal's score; deal the next one (dealer moves on) or end the match."""
    out = np.zeros(2, np.int64)
    score_deal(state[CARD_POINTS:CARD_POINTS + 2], state[ROEM:ROEM + 2], state[TRICKS_WON:TRICKS_WON + 2],
               team_of(state[MAKER]), state[PIT_FOR_DEFENDERS] != 0, out)
    for t in range(2):
        state[DEAL_SCORE + t] = out[t]
        state[MATCH_SCORE + t] += out[t]
    state[DEAL_NO] += 1
    if state[DEAL_NO] >= state[NUM_DEALS]:
        state[PHASE] = OVER
        return
    state[DEALER] = (state[DEALER] + 1) % 4
    deal(state)


@njit(cache=True)
def apply_action(state, action):
    """Apply a legal ``action`` for the seat to act (the caller guarantees legality)."""
    if state[PHASE] == BIDDING:
        _bid(state, action)
        return
    seat = state[CURRENT]
    state[HAND + seat] &= ~(np.int64(1) << action)
    state[TRICK + 4 * state[TRICK_NO] + state[IN_TRICK]] = action
    state[IN_TRICK] += 1
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
def reset_state(state, seed, num_deals, rules, scheme, all_pass, first_lead, pit_for_defenders):
    """Start a match of ``num_deals`` deals from ``seed``; seat 3 deals first, so seat 0 is forehand."""
    state[:] = 0
    state[RULES] = rules
    state[SCHEME] = scheme
    state[ALL_PASS] = all_pass
    state[FIRST_LEAD] = first_lead
    state[PIT_FOR_DEFENDERS] = pit_for_defenders
    state[NUM_DEALS] = num_deals
    state[DEALER] = 3
    _, z = splitmix64(np.uint64(seed) ^ np.uint64(0xD1B54A32D192ED03))
    state[RNG] = np.int64(z & np.uint64(MASK32))
    state[RNG + 1] = np.int64(z >> np.uint64(32))
    deal(state)


@njit(cache=True)
def pick_legal(mask, k):
    """The ``k``-th legal action of ``mask``."""
    for a in range(NUM_ACTIONS):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return -1


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


# --- batch API -----------------------------------------------------------------------------
def new_states(batch: int) -> np.ndarray:
    """An uninitialised batch ``int64[batch, STATE_SIZE]`` to pass to ``reset_batch``."""
    return np.zeros((batch, STATE_SIZE), STATE_DTYPE)


@njit(cache=True, parallel=True)
def reset_batch(states, seeds, num_deals, rules, scheme, all_pass, first_lead, pit_for_defenders):
    for i in prange(states.shape[0]):
        reset_state(states[i], seeds[i], num_deals, rules, scheme, all_pass, first_lead, pit_for_defenders)


@njit(cache=True, parallel=True)
def legal_masks_batch(states, masks):
    for i in prange(states.shape[0]):
        legal_mask(states[i], masks[i])


@njit(cache=True, parallel=True)
def step_batch(states, actions, masks):
    """Apply ``actions[i]`` to match ``i`` where ``masks[i]`` allows it; return how many were illegal."""
    bad = 0
    for i in prange(states.shape[0]):
        if not checked_step(states[i], actions[i], masks[i]):
            bad += 1
    return bad


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


def option_index(value: str, name: str, choices: tuple[str, ...]) -> int:
    """Index of ``value`` in ``choices``; ``ValueError`` naming the option otherwise."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return choices.index(value)


def new_state(seed: int = 0, deals: int = 1, rules: str = "rotterdam", trump_selection: str = "forced_forehand",
              all_pass: str = "forced_forehand", first_lead: str = "forehand",
              pit_for_defenders: bool = True) -> np.ndarray:
    """A freshly dealt match row (options as in the digest §10; checked, ``ValueError`` naming the bad one).

    >>> s = new_state(seed=3, rules="amsterdam"); int(s[RULES]) == AMSTERDAM, int(s[NUM_DEALS])
    (True, 1)
    """
    if isinstance(deals, bool) or not isinstance(deals, (int, np.integer)) or deals < 1:
        raise ValueError(f"deals must be a positive integer, got {deals!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    scheme = option_index(trump_selection, "trump_selection", TRUMP_SCHEMES)
    passing = option_index(all_pass, "all_pass", ALL_PASS_OPTIONS)
    if passing == ALL_PASS_SECOND_PROPOSAL and scheme != PROPOSED_SUIT:
        raise ValueError("all_pass='second_proposal_then_redeal' needs trump_selection='proposed_suit'")
    state = np.zeros(STATE_SIZE, STATE_DTYPE)
    reset_state(state, int(seed) & ((1 << 63) - 1), int(deals), option_index(rules, "rules", RULE_SETS), scheme,
                passing, option_index(first_lead, "first_lead", FIRST_LEADS), int(bool(pit_for_defenders)))
    return state


def position(hands: dict[int, list[str]], trump: str, leader: int, table: list[str] = (),
             maker: int | None = None, rules: str = "rotterdam", trick_no: int | None = None) -> np.ndarray:
    """A row in the middle of a deal: the hands each seat still holds, trump, the seat that led the
    trick in progress and the cards already on the table (played in order from ``leader``).
    ``trick_no`` defaults to 8 minus the largest hand (earlier tricks are left empty).

    >>> s = position({0: ["AS"], 1: ["7S"], 2: ["9H"], 3: ["8S"]}, "H", leader=0)
    >>> int(s[CURRENT]), int(s[TRICK_NO])
    (0, 7)
    """
    state = new_state()
    state[HAND:HAND + 4] = [hand_of([card_id(c) for c in hands.get(s, [])]) for s in range(4)]
    state[TRUMP] = suit_id(trump)
    state[MAKER] = leader if maker is None else maker
    state[PHASE] = PLAYING
    sizes = [len(hands.get(s, [])) + int((s - leader) % 4 < len(table)) for s in range(4)]
    t = TRICKS_PER_DEAL - max(sizes) if trick_no is None else trick_no
    state[TRICK_NO] = t
    state[LEADER + t] = leader
    state[RULES] = option_index(rules, "rules", RULE_SETS)
    for k, text in enumerate(table):
        state[TRICK + 4 * t + k] = card_id(text)
    state[IN_TRICK] = len(table)
    state[CURRENT] = (leader + len(table)) % 4
    return state
