"""Splendor rules core: one game is one flat ``int16`` row, a batch is a 2-D array.

Everything here is compiled by numba with ``cache=True``. Card and noble tables are
passed in as arguments (see ``tables()``) so numba's on-disk cache can never go stale
against the data files. Randomness happens only in ``reset_state``; ``apply_action`` is
deterministic. The per-game RNG words in the row serve random playouts only, so a
game's course depends on its seed and actions, never on batch position or threads.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from importlib import resources

import numpy as np
from numba import njit, prange

from tabletop_rl.core.kernels import pick_bit, popcount, shuffle, splitmix64

# The names docs/splendor.md and docs/architecture.md show; every other offset and kernel is internal.
__all__ = ["MAX_PLIES_AT", "NUM_ACTIONS", "NUM_PLAYERS_AT", "STATE_SIZE", "apply_action", "legal_mask", "legal_set",
           "new_states", "play_random_batch", "player_base", "random_step", "reset_batch", "reset_state", "tables"]

# --- colours and set-up -------------------------------------------------------------
COLOURS = ("white", "blue", "green", "red", "black")
TOKEN_NAMES = COLOURS + ("gold",)
GOLD = 5
TOKEN_LIMIT = 10
WIN_POINTS = 15
NOBLE_POINTS = 3
MAX_RESERVED = 3
MAX_PLAYERS = 4
GEMS_PER_COLOUR = (0, 0, 4, 5, 7)  # indexed by number of players
GOLD_TOKENS = 5
NUM_CARDS = 90
NUM_NOBLES = 10
LEVEL_START = (0, 40, 70)  # card ids are grouped by level in the data file
LEVEL_SIZE = (40, 30, 20)
SLOTS_PER_LEVEL = 4
MAX_TABLE_NOBLES = 5

# --- phases and status --------------------------------------------------------------
MAIN, RETURN, NOBLE = 0, 1, 2
PHASE_NAMES = ("main", "return", "noble")
PLAYING, OVER, TRUNCATED = 0, 1, 2

# --- action table (72 fixed ids; see actions.py for names) --------------------------
NUM_ACTIONS = 72
TAKE3, TAKE2_DIFF, TAKE1, TAKE2_SAME = 0, 10, 20, 25
RESERVE, RESERVE_DECK, BUY, BUY_RESERVED = 30, 42, 45, 57
CHOOSE_NOBLE, RETURN_TOKEN, PASS = 60, 65, 71
TRIPLES = np.array([(a, b, c) for a in range(5) for b in range(a + 1, 5) for c in range(b + 1, 5)], np.int64)
PAIRS = np.array([(a, b) for a in range(5) for b in range(a + 1, 5)], np.int64)
TRIPLE_BITS = np.array([1 << a | 1 << b | 1 << c for a, b, c in TRIPLES], np.int64)  # colour sets as bits
PAIR_BITS = np.array([1 << a | 1 << b for a, b in PAIRS], np.int64)

# --- state layout (offsets into the int16 row) --------------------------------------
BANK = 0  # 6 token counts, gold last
PLAYERS = 6
# per-player block
P_TOKENS = 0  # 6
P_BONUS = 6  # 5
P_POINTS = 11
P_BOUGHT = 12  # number of cards bought
P_NOBLES = 13  # bit set of noble ids taken
P_RESERVED = 14  # 3 card ids, -1 = empty, closed up in reserve order
P_BLIND = 17  # bit i set: reserve slot i was reserved blind from a deck
P_NRESERVED = 18
P_SIZE = 19
BOUGHT_BITS = PLAYERS + MAX_PLAYERS * P_SIZE  # per player 6 words x 15 bits: which cards
BITS_PER_WORD = 15
BOUGHT_WORDS = 6
MARKET = BOUGHT_BITS + MAX_PLAYERS * BOUGHT_WORDS  # 12 card ids, level-major, -1 = empty
DECK = MARKET + 12  # 90 card ids by level; drawn entries are set to -1
DECK_DRAWN = DECK + NUM_CARDS  # 3 counts: cards already drawn from each level's deck
TABLE_NOBLES = DECK_DRAWN + 3  # 5 noble ids, -1 = empty, closed up
NUM_PLAYERS_AT = TABLE_NOBLES + MAX_TABLE_NOBLES
CURRENT = NUM_PLAYERS_AT + 1
START = NUM_PLAYERS_AT + 2
PHASE = NUM_PLAYERS_AT + 3
FINAL_ROUND = NUM_PLAYERS_AT + 4
PASSES = NUM_PLAYERS_AT + 5
PLY = NUM_PLAYERS_AT + 6  # 2 words, 15 bits each
MAX_PLIES_AT = NUM_PLAYERS_AT + 8  # 2 words, 15 bits each; -1 in both = no cap
STATUS = NUM_PLAYERS_AT + 10
RNG = NUM_PLAYERS_AT + 11  # 4 words of 16 bits: the playout RNG state
STATE_SIZE = RNG + 4
STATE_DTYPE = np.int16
DEFAULT_MAX_PLIES = 1000
MAX_PLY_VALUE = (1 << 30) - 1


# --- tables --------------------------------------------------------------------------
CARD_LEVEL, CARD_BONUS, CARD_POINTS, CARD_COST = 0, 1, 2, 3  # card table columns (cost: 3..7)


@lru_cache(maxsize=1)
def tables() -> tuple[np.ndarray, np.ndarray]:
    """Card table ``int16[90, 8]`` (level, bonus, points, cost x5) and noble table ``int16[10, 5]``.

    >>> cards, nobles = tables()
    >>> cards.shape, nobles.shape
    ((90, 8), (10, 5))
    """
    data = resources.files("tabletop_rl") / "data"
    with (data / "cards.csv").open() as f:
        rows = list(csv.DictReader(f))
    cards = np.array(
        [[int(r["level"]), COLOURS.index(r["bonus"]), int(r["points"])] + [int(r[c]) for c in COLOURS]
         for r in rows],
        dtype=np.int16,
    )
    with (data / "nobles.csv").open() as f:
        nrows = list(csv.DictReader(f))
    nobles = np.array([[int(r[c]) for c in COLOURS] for r in nrows], dtype=np.int16)
    levels = [int(np.sum(cards[:, CARD_LEVEL] == lv)) for lv in (1, 2, 3)]
    order_ok = all(
        np.all(cards[LEVEL_START[i]:LEVEL_START[i] + LEVEL_SIZE[i], CARD_LEVEL] == i + 1) for i in range(3)
    )
    if levels != list(LEVEL_SIZE) or not order_ok or nobles.shape != (NUM_NOBLES, 5):
        raise ValueError("card/noble data files do not match the base game (40/30/20 cards by level, 10 nobles)")
    cards.setflags(write=False)
    nobles.setflags(write=False)
    return cards, nobles


# --- small accessors ----------------------------------------------------------------
@njit(cache=True, inline="always")
def player_base(p):
    return PLAYERS + p * P_SIZE


@njit(cache=True, inline="always")
def get_wide(state, at):
    if state[at] < 0:
        return -1
    return np.int64(state[at + 1]) * 32768 + np.int64(state[at])


@njit(cache=True, inline="always")
def set_wide(state, at, value):
    if value < 0:
        state[at] = -1
        state[at + 1] = -1
    else:
        state[at] = value % 32768
        state[at + 1] = value // 32768


@njit(cache=True, inline="always")
def tokens_held(state, p):
    b = player_base(p) + P_TOKENS
    return state[b] + state[b + 1] + state[b + 2] + state[b + 3] + state[b + 4] + state[b + 5]


@njit(cache=True, inline="always")
def _has_bought(state, p, card):
    w = state[BOUGHT_BITS + p * BOUGHT_WORDS + card // BITS_PER_WORD]
    return (w >> (card % BITS_PER_WORD)) & 1


@njit(cache=True, inline="always")
def level_of(card):
    if card >= LEVEL_START[2]:
        return 2
    if card >= LEVEL_START[1]:
        return 1
    return 0


# Affordability in 16-bit lanes. A card's row (level, bonus, points, five costs: eight int16) is read as two
# uint64 words (``_row_word``): (level, bonus, points, white cost) and (blue .. black costs), lane 0 lowest. A
# buyer's power (tokens plus bonuses) is packed the same way, with 8 against the first three lanes, which hold
# values below 8, so those lanes owe nothing. Every lane holds a value below 0x8000. Five costs compared at once
# made the legal moves 1.5x faster than comparing them one by one.
_LANE_HIGH = np.uint64(0x8000800080008000)
_LANE_SUM = np.uint64(0x0001000100010001)  # multiplying by it adds the four lanes into the top one
_NOT_COSTS = np.uint64(0x0000000800080008)


@njit(cache=True)
def _buying_power(state, p):
    """``p``'s tokens plus bonuses per colour as the two packed words ``_affords`` compares cost rows with, and
    their gold."""
    b = player_base(p)
    t = b + P_TOKENS
    k = b + P_BONUS
    first = _NOT_COSTS | np.uint64(state[t] + state[k]) << np.uint64(48)
    second = np.uint64(0)
    for c in range(1, 5):
        second |= np.uint64(state[t + c] + state[k + c]) << np.uint64(16 * (c - 1))
    return (first, second), state[t + GOLD]


@njit(cache=True)
def _shortfall(word, power):
    """Lane by lane, ``max(word - power, 0)``: with each lane's high bit set first, the subtraction never borrows
    from the next lane, and the high bit stays set exactly where the cost is at least the power."""
    d = (word | _LANE_HIGH) - power
    high = d & _LANE_HIGH
    return d & (high - (high >> np.uint64(15)))


@njit(cache=True)
def _row_word(cards, card, at):
    """Columns ``at`` to ``at + 3`` of ``card``'s row as the lanes of one uint64 (LLVM makes it one load)."""
    return (np.uint64(np.uint16(cards[card, at])) | np.uint64(np.uint16(cards[card, at + 1])) << np.uint64(16)
            | np.uint64(np.uint16(cards[card, at + 2])) << np.uint64(32)
            | np.uint64(np.uint16(cards[card, at + 3])) << np.uint64(48))


@njit(cache=True)
def _affords(cards, card, power, gold):
    """Whether ``power`` (see ``_buying_power``) pays for ``card``, gold covering the shortfall."""
    short = _shortfall(_row_word(cards, card, 0), power[0]) + _shortfall(_row_word(cards, card, 4), power[1])
    return np.int64((short * _LANE_SUM) >> np.uint64(48)) <= gold


@njit(cache=True, inline="always")
def noble_qualifies(state, p, noble, nobles):
    b = player_base(p) + P_BONUS
    for c in range(5):
        if state[b + c] < nobles[noble, c]:
            return False
    return True


# --- RNG (splitmix64, for seeding and playouts) ----------------------------------------
@njit(cache=True, inline="always")
def _load_rng(state):
    x = np.uint64(0)
    for i in range(4):
        x |= np.uint64(np.uint16(state[RNG + i])) << np.uint64(16 * i)
    return x


@njit(cache=True, inline="always")
def _store_rng(state, x):
    for i in range(4):
        state[RNG + i] = np.int16(np.uint16((x >> np.uint64(16 * i)) & np.uint64(0xFFFF)))


@njit(cache=True)
def seed_rng(state, seed):
    """Seed the playout RNG words from a 64-bit seed."""
    _, z = splitmix64(np.uint64(seed) ^ np.uint64(0xD1B54A32D192ED03))
    _store_rng(state, z)


@njit(cache=True)
def random_below(state, n):
    """Uniform int in [0, n) from the game's own RNG words (used by random playouts)."""
    x = _load_rng(state)
    x, z = splitmix64(x)
    _store_rng(state, x)
    return np.int64(z % np.uint64(n))


# --- reset ---------------------------------------------------------------------------
@njit(cache=True)
def reset_state(state, seed, num_players, max_plies):
    """Deal a new game into ``state`` from ``seed``: shuffled decks, revealed nobles, set-up bank."""
    state[:] = 0
    rng = np.empty(1, np.uint64)
    rng[0] = np.uint64(seed)
    gems = GEMS_PER_COLOUR[num_players]
    for c in range(5):
        state[BANK + c] = gems
    state[BANK + GOLD] = GOLD_TOKENS
    for p in range(MAX_PLAYERS):
        b = player_base(p)
        for i in range(MAX_RESERVED):
            state[b + P_RESERVED + i] = -1
    for lv in range(3):
        start = DECK + LEVEL_START[lv]
        size = LEVEL_SIZE[lv]
        for i in range(size):
            state[start + i] = LEVEL_START[lv] + i
        shuffle(state[start:start + size], rng)
        for s in range(SLOTS_PER_LEVEL):
            state[MARKET + lv * SLOTS_PER_LEVEL + s] = state[start + s]
            state[start + s] = -1
        state[DECK_DRAWN + lv] = SLOTS_PER_LEVEL
    order = np.arange(NUM_NOBLES)
    shuffle(order, rng)
    for i in range(MAX_TABLE_NOBLES):
        state[TABLE_NOBLES + i] = order[i] if i < num_players + 1 else -1
    state[NUM_PLAYERS_AT] = num_players
    set_wide(state, PLY, 0)
    set_wide(state, MAX_PLIES_AT, max_plies)
    seed_rng(state, rng[0])


# --- legal moves ---------------------------------------------------------------------
def _take_bits() -> np.ndarray:
    """``uint64[32]``: for each set of colours in stock (bit c: colour c), the take moves it allows (take 3
    different when 3 or more colours are in stock, else take 2 different, else take 1), as action bits."""
    table = np.zeros(32, np.uint64)
    for stock in range(32):
        in_stock = bin(stock).count("1")
        if in_stock >= 3:
            moves = [TAKE3 + i for i, bits in enumerate(TRIPLE_BITS) if stock & bits == bits]
        elif in_stock == 2:
            moves = [TAKE2_DIFF + i for i, bits in enumerate(PAIR_BITS) if stock == bits]
        else:
            moves = [TAKE1 + c for c in range(5) if stock >> c & 1]
        table[stock] = sum(1 << a for a in moves)
    return table


_TAKE_BITS = _take_bits()


@njit(cache=True)
def legal_set(state, cards, nobles):
    """The legal moves of the player to act as ``(bits, base)``: move ``base + i`` is legal when bit ``i`` of the
    ``uint64`` ``bits`` is set (no bits once the game is over).

    A phase's moves are contiguous ids that fit in 64 bits: the main phase's 60 (base 0), the noble choices, the
    token returns, or the pass alone when nothing else is legal. Each family is made as bits at once (the take
    moves from a table indexed by the colours in stock), so random play draws its move with ``pick_bit`` and no
    mask is written or scanned.
    """
    none = np.uint64(0)
    if state[STATUS] != PLAYING:
        return none, 0
    p = state[CURRENT]
    b = player_base(p)
    phase = state[PHASE]
    if phase == RETURN:
        held = 0
        for c in range(6):
            held |= np.int64(state[b + P_TOKENS + c] > 0) << c
        return np.uint64(held), RETURN_TOKEN
    if phase == NOBLE:
        due = 0
        for i in range(MAX_TABLE_NOBLES):
            nb = state[TABLE_NOBLES + i]
            if nb >= 0 and noble_qualifies(state, p, nb, nobles):
                due |= 1 << i
        return np.uint64(due), CHOOSE_NOBLE
    stock = 0  # bit c: colour c is in the bank
    four = 0  # bit c: 4 or more of colour c (take 2 of it)
    for c in range(5):
        k = state[BANK + c]
        stock |= np.int64(k > 0) << c
        four |= np.int64(k >= 4) << c
    power, gold = _buying_power(state, p)
    shown = 0  # bit s: a card in market slot s
    afford = 0  # bit s: it can be bought
    for s in range(12):
        card = state[MARKET + s]
        if card >= 0:
            shown |= 1 << s
            afford |= np.int64(_affords(cards, card, power, gold)) << s
    decks = 0  # bit lv: level lv's deck has a card
    for lv in range(3):
        decks |= np.int64(state[DECK_DRAWN + lv] < LEVEL_SIZE[lv]) << lv
    reserved = state[b + P_NRESERVED]
    own = 0  # bit i: reserved card i can be bought
    for i in range(reserved):
        own |= np.int64(_affords(cards, state[b + P_RESERVED + i], power, gold)) << i
    moves = four << TAKE2_SAME | afford << BUY | own << BUY_RESERVED
    if reserved < MAX_RESERVED:
        moves |= shown << RESERVE | decks << RESERVE_DECK
    bits = _TAKE_BITS[stock] | np.uint64(moves)
    if bits == none:
        return np.uint64(1), PASS
    return bits, 0


@njit(cache=True)
def legal_mask(state, cards, nobles, mask):
    """Write the legal-action mask of the player to act into ``mask[72]``; return how many are legal."""
    bits, base = legal_set(state, cards, nobles)
    mask[:] = 0
    rest = bits
    while rest:
        mask[base + pick_bit(rest, 0)] = 1
        rest &= rest - np.uint64(1)
    return popcount(bits)


# --- applying an action --------------------------------------------------------------
@njit(cache=True, inline="always")
def _draw(state, lv):
    """Top card of level ``lv``'s deck (removed from the deck), or -1 when it is empty."""
    drawn = state[DECK_DRAWN + lv]
    if drawn >= LEVEL_SIZE[lv]:
        return -1
    at = DECK + LEVEL_START[lv] + drawn
    card = state[at]
    state[at] = -1
    state[DECK_DRAWN + lv] = drawn + 1
    return card


@njit(cache=True, inline="always")
def _take(state, b, colour, count):
    state[BANK + colour] -= count
    state[b + P_TOKENS + colour] += count


@njit(cache=True)
def _reserve(state, p, card, blind):
    b = player_base(p)
    k = state[b + P_NRESERVED]
    state[b + P_RESERVED + k] = card
    if blind:
        state[b + P_BLIND] |= 1 << k
    state[b + P_NRESERVED] = k + 1
    if state[BANK + GOLD] > 0:
        _take(state, b, GOLD, 1)


@njit(cache=True)
def _buy(state, p, card, cards):
    b = player_base(p)
    gold = 0
    for c in range(5):
        need = cards[card, CARD_COST + c] - state[b + P_BONUS + c]
        if need > 0:
            own = min(need, state[b + P_TOKENS + c])
            _take(state, b, c, -own)
            gold += need - own
    _take(state, b, GOLD, -gold)
    state[b + P_BONUS + cards[card, CARD_BONUS]] += 1
    state[b + P_POINTS] += cards[card, CARD_POINTS]
    state[b + P_BOUGHT] += 1
    state[BOUGHT_BITS + p * BOUGHT_WORDS + card // BITS_PER_WORD] |= 1 << (card % BITS_PER_WORD)


@njit(cache=True)
def _remove_reserved(state, p, i):
    b = player_base(p)
    k = state[b + P_NRESERVED]
    blind = state[b + P_BLIND]
    low = blind & ((1 << i) - 1)
    high = (blind >> (i + 1)) << i
    state[b + P_BLIND] = low | high
    for j in range(i, k - 1):
        state[b + P_RESERVED + j] = state[b + P_RESERVED + j + 1]
    state[b + P_RESERVED + k - 1] = -1
    state[b + P_NRESERVED] = k - 1


@njit(cache=True)
def _take_noble(state, p, i):
    noble = state[TABLE_NOBLES + i]
    b = player_base(p)
    state[b + P_NOBLES] |= 1 << noble
    state[b + P_POINTS] += NOBLE_POINTS
    for j in range(i, MAX_TABLE_NOBLES - 1):
        state[TABLE_NOBLES + j] = state[TABLE_NOBLES + j + 1]
    state[TABLE_NOBLES + MAX_TABLE_NOBLES - 1] = -1


@njit(cache=True)
def _end_turn(state):
    n = state[NUM_PLAYERS_AT]
    for q in range(n):
        if state[player_base(q) + P_POINTS] >= WIN_POINTS:
            state[FINAL_ROUND] = 1
    nxt = (state[CURRENT] + 1) % n
    state[CURRENT] = nxt
    state[PHASE] = MAIN
    if (state[FINAL_ROUND] == 1 and nxt == state[START]) or state[PASSES] >= n:
        state[STATUS] = OVER


@njit(cache=True)
def _after_tokens(state, nobles):
    """End-of-turn steps once the action (and any returns) are done: token limit, noble, next seat."""
    p = state[CURRENT]
    if tokens_held(state, p) > TOKEN_LIMIT:
        state[PHASE] = RETURN
        return
    first = -1
    count = 0
    for i in range(MAX_TABLE_NOBLES):
        nb = state[TABLE_NOBLES + i]
        if nb >= 0 and noble_qualifies(state, p, nb, nobles):
            count += 1
            if first < 0:
                first = i
    if count >= 2:
        state[PHASE] = NOBLE
        return
    if count == 1:
        _take_noble(state, p, first)
    _end_turn(state)


@njit(cache=True)
def apply_action(state, action, cards, nobles):
    """Apply a legal ``action`` for the player to act. The caller guarantees legality."""
    p = state[CURRENT]
    b = player_base(p)
    if action >= RETURN_TOKEN and action < PASS:
        _take(state, b, action - RETURN_TOKEN, -1)
        _after_tokens(state, nobles)
    elif action >= CHOOSE_NOBLE and action < RETURN_TOKEN:
        _take_noble(state, p, action - CHOOSE_NOBLE)
        _end_turn(state)
    else:
        state[PASSES] = state[PASSES] + 1 if action == PASS else 0
        if action < TAKE2_DIFF:
            for k in range(3):
                _take(state, b, TRIPLES[action - TAKE3, k], 1)
        elif action < TAKE1:
            for k in range(2):
                _take(state, b, PAIRS[action - TAKE2_DIFF, k], 1)
        elif action < TAKE2_SAME:
            _take(state, b, action - TAKE1, 1)
        elif action < RESERVE:
            _take(state, b, action - TAKE2_SAME, 2)
        elif action < RESERVE_DECK:
            s = action - RESERVE
            _reserve(state, p, state[MARKET + s], False)
            state[MARKET + s] = _draw(state, s // SLOTS_PER_LEVEL)
        elif action < BUY:
            _reserve(state, p, _draw(state, action - RESERVE_DECK), True)
        elif action < BUY_RESERVED:
            s = action - BUY
            _buy(state, p, state[MARKET + s], cards)
            state[MARKET + s] = _draw(state, s // SLOTS_PER_LEVEL)
        elif action < CHOOSE_NOBLE:
            i = action - BUY_RESERVED
            _buy(state, p, state[b + P_RESERVED + i], cards)
            _remove_reserved(state, p, i)
        _after_tokens(state, nobles)
    ply = get_wide(state, PLY) + 1
    set_wide(state, PLY, ply)
    cap = get_wide(state, MAX_PLIES_AT)
    if state[STATUS] == PLAYING and cap >= 0 and ply >= cap:
        state[STATUS] = TRUNCATED


@njit(cache=True, inline="always")
def _allowed(action, mask):
    return action >= 0 and action < NUM_ACTIONS and mask[action]


@njit(cache=True)
def checked_step(state, action, cards, nobles, mask):
    """Apply ``action`` if ``mask`` (the current legal mask) allows it, then refresh ``mask``.

    Returns False, leaving ``state`` and ``mask`` untouched, when the action is illegal.
    """
    if not _allowed(action, mask):
        return False
    apply_action(state, action, cards, nobles)
    legal_mask(state, cards, nobles, mask)
    return True


# --- outcome -------------------------------------------------------------------------
@njit(cache=True)
def winners_into(state, out):
    """Set ``out[p] = 1`` for each winner (most points, then fewest cards bought; ties share)."""
    out[:] = 0
    if state[STATUS] != OVER:
        return
    n = state[NUM_PLAYERS_AT]
    best_pts = -1
    best_cards = 1 << 20
    for p in range(n):
        b = player_base(p)
        pts = state[b + P_POINTS]
        nc = state[b + P_BOUGHT]
        if pts > best_pts or (pts == best_pts and nc < best_cards):
            best_pts = pts
            best_cards = nc
    for p in range(n):
        b = player_base(p)
        if state[b + P_POINTS] == best_pts and state[b + P_BOUGHT] == best_cards:
            out[p] = 1


@njit(cache=True)
def end_reward(state, seat):
    """Zero-sum end reward of ``seat``: winners share +1, losers share -1; 0 while playing, after a
    truncation, and when every player won."""
    if state[STATUS] != OVER:
        return 0.0
    n = state[NUM_PLAYERS_AT]
    won = np.zeros(MAX_PLAYERS, np.int8)
    winners_into(state, won)
    k = 0
    for p in range(n):
        k += won[p]
    if k == n:
        return 0.0
    return 1.0 / k if won[seat] else -1.0 / (n - k)


# --- random play ---------------------------------------------------------------------
@njit(cache=True, inline="always")  # inlined: a call took 17 of a random decision's 135 ns
def random_step(state, cards, nobles):
    """One uniformly random legal action from the game's own RNG; returns the action or -1 if over."""
    bits, base = legal_set(state, cards, nobles)
    n = popcount(bits)
    if n == 0:
        return -1
    a = base + pick_bit(bits, random_below(state, n))
    apply_action(state, a, cards, nobles)
    return a


@njit(cache=True)
def play_random_until(state, seat, cards, nobles, mask):
    """Uniformly random moves (from the game's playout RNG) for every seat but ``seat`` until
    ``seat`` is to act or the game ends; ``mask`` is left as the legal mask of the player to act."""
    while state[STATUS] == PLAYING and state[CURRENT] != seat:
        random_step(state, cards, nobles)
    legal_mask(state, cards, nobles, mask)


@njit(cache=True)
def step_vs_random(state, action, seat, cards, nobles, mask):
    """The learner's ``action`` (checked against ``mask``, as ``checked_step`` does) then random opponents, in one
    call; False (nothing applied) if illegal."""
    if not _allowed(action, mask):
        return False
    apply_action(state, action, cards, nobles)
    play_random_until(state, seat, cards, nobles, mask)
    return True


@njit(cache=True)
def _play_random(state, cards, nobles):
    """Play uniformly random legal moves until the game ends; return the number of actions."""
    steps = 0
    while random_step(state, cards, nobles) >= 0:
        steps += 1
    return steps


# --- batch API -----------------------------------------------------------------------
def new_states(batch: int) -> np.ndarray:
    """An uninitialised batch ``int16[batch, STATE_SIZE]`` to pass to ``reset_batch``."""
    return np.zeros((batch, STATE_SIZE), STATE_DTYPE)


# Batch kernels: one compiled kernel each, ``parallel`` picks numba's threads (prange) or one thread.
@njit(cache=True, parallel=True)
def reset_batch(states, seeds, num_players, max_plies, parallel=True):
    """Deal game ``i`` of ``states`` from ``seeds[i]``."""
    if parallel:
        for i in prange(states.shape[0]):
            reset_state(states[i], seeds[i], num_players, max_plies)
    else:
        for i in range(states.shape[0]):
            reset_state(states[i], seeds[i], num_players, max_plies)


@njit(cache=True, parallel=True)
def play_random_batch(states, cards, nobles, steps, parallel=True):
    """Play every game to its end with random legal moves; ``steps[i]`` gets game ``i``'s action count."""
    if parallel:
        for i in prange(states.shape[0]):
            steps[i] = _play_random(states[i], cards, nobles)
    else:
        for i in range(states.shape[0]):
            steps[i] = _play_random(states[i], cards, nobles)


# --- hidden information ----------------------------------------------------------------
@njit(cache=True)
def determinize_state(state, player, seed):
    """Re-deal, from ``seed``, every card ``player`` cannot see: the deck orders and the other
    players' blind reserves, level by level. The unseen cards are sorted before shuffling, so two
    states that differ only in hidden information give the same result for the same seed."""
    rng = np.empty(1, np.uint64)
    rng[0] = np.uint64(seed)
    _deal_unseen(state, player, rng, True)


@njit(cache=True)
def hide_state(state, player):
    """Make ``state`` ``player``'s information-set copy: every card it cannot see dealt back in order of id
    (level by level, the deck before the other players' blind reserves), and the playout RNG words cleared.
    Two states that differ only in what ``player`` cannot see become equal."""
    _deal_unseen(state, player, np.zeros(1, np.uint64), False)
    state[RNG:RNG + 4] = 0


@njit(cache=True)
def _deal_unseen(state, player, rng, shuffled):
    """Gather the cards ``player`` cannot see, sort them, shuffle them from ``rng`` when ``shuffled``, and deal
    them back into the same places."""
    n = state[NUM_PLAYERS_AT]
    pool = np.empty(NUM_CARDS, np.int16)
    for lv in range(3):
        for write in range(2):  # pass 0 gathers the unseen cards, pass 1 deals them back
            k = 0
            start = DECK + LEVEL_START[lv]
            for i in range(state[DECK_DRAWN + lv], LEVEL_SIZE[lv]):
                if write:
                    state[start + i] = pool[k]
                else:
                    pool[k] = state[start + i]
                k += 1
            for q in range(n):
                if q == player:
                    continue
                b = player_base(q)
                for i in range(state[b + P_NRESERVED]):
                    at = b + P_RESERVED + i
                    if (state[b + P_BLIND] >> i) & 1 and level_of(state[at]) == lv:
                        if write:
                            state[at] = pool[k]
                        else:
                            pool[k] = state[at]
                        k += 1
            if not write:
                pool[:k].sort()  # in place: no sorted copy to allocate and copy back
                if shuffled:
                    shuffle(pool[:k], rng)
