"""Space Conquest rules core (numba): one game is one flat ``int64`` row plus an event log.

The row holds the board (16 stars), each player's fog-of-war knowledge, the fleets in hyperspace
and the game's own random generator (splitmix64), so a game's course depends only on its seed
and the orders given. ``advance`` plays the second half of one turn and the first half of the next,
in the phase order of docs/space_conquest.md §4:

    orders (turn t) -> rebellions -> production -> [turn cap] -> movement (turn t+1) -> combat -> victory

so after ``new_game`` and after every ``advance`` the game waits for the orders of ``state[TURN]``.
Every jitted function uses ``cache=True``; importing this module compiles nothing.

>>> state, log = new_game(seed=3)
>>> int(state[TURN]), int(state[STATUS]) == PLAYING, int(state[STARS + S_SHIPS + home(state, 0) * S_SIZE])
(1, True, 4)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabletop_rl.core.kernels import splitmix64

# The names docs/space_conquest.md, docs/architecture.md and this docstring show; every other offset is internal.
__all__ = ["MAX_TURNS_AT", "NUM_FLEETS_AT", "NUM_PLAYERS", "advance", "fight", "new_game"]

# --- board --------------------------------------------------------------------------
WIDTH, HEIGHT = 12, 10
NUM_STARS = 16
NUM_PLAYERS = 2
HOME_RU = 4
HOME_BLOCK = 4  # a home lies within Chebyshev distance 3 of its corner: a 4 x 4 block
LETTERS = "ABCDEFGHIJKLMNOP"
STAR_NAMES = ("Altair", "Bellatrix", "Capella", "Deneb", "Enif", "Fomalhaut", "Gienah", "Hadar",
              "Izar", "Jabbah", "Kochab", "Lesath", "Mira", "Nunki", "Okab", "Polaris")
# NPC stars per quadrant (NW, NE, SW, SE): x range, y range, and the RU of each star (docs/space_conquest.md §2)
QUADRANTS = np.array([[0, 5, 0, 4], [6, 11, 0, 4], [0, 5, 5, 9], [6, 11, 5, 9]], np.int64)
QUADRANT_RU = np.array([[1, 2, 2, 3], [1, 2, 3, 0], [1, 2, 3, 0], [1, 2, 2, 3]], np.int64)  # 0 = no star
DEFAULT_MAX_TURNS = 100
FLAT_LOSS = 0.02
FLAT, NLOGN = 0, 1  # hyperspace loss models
LOSS_MODELS = ("flat", "nlogn")
MAX_ORDERS = 32  # orders one player may give in one turn; more are skipped
MAX_FLEETS = 768  # >= 2 players x MAX_ORDERS x 11 turns (the longest journey): never full

# --- status -------------------------------------------------------------------------
PLAYING, OVER = 0, 1
NO_WINNER, DRAW = -1, 2  # WINNER holds a seat, DRAW, or NO_WINNER while playing
END_NONE, END_CAPTURE, END_TURN_CAP = 0, 1, 2
NOBODY = -1  # owner of an NPC or unowned star
UNKNOWN = -2  # last-seen owner of a star never seen

# --- state layout (offsets into the int64 row) --------------------------------------
TURN = 0  # the turn whose orders are awaited (1-based)
STATUS = 1
WINNER = 2
MAX_TURNS_AT = 3
NUM_FLEETS_AT = 4
RNG = 5  # splitmix64 state (its bits, read as uint64)
LOSS_MODEL = 6
END_REASON = 7
HOMES = 8  # star index of each player's home
STARS = 16
S_X, S_Y, S_RU, S_OWNER, S_SHIPS, S_HOME = range(6)  # S_HOME: the seat whose home it is, or -1
S_SIZE = 6
KNOW = STARS + NUM_STARS * S_SIZE  # what each player knows of each star
K_VISITED, K_OWNER, K_SHIPS, K_TURN = range(4)  # K_OWNER: last-seen owner (UNKNOWN if never seen)
K_SIZE = 4
TALLY = KNOW + NUM_PLAYERS * NUM_STARS * K_SIZE  # per-player running totals
T_LOST_SHIPS, T_LOST_FLEETS, T_REBELLIONS, T_CAPTURES = range(4)
T_SIZE = 4
FLEETS = TALLY + NUM_PLAYERS * T_SIZE
F_OWNER, F_ORIGIN, F_DEST, F_SHIPS, F_LEFT, F_DIST, F_LAUNCHED = range(7)
F_SIZE = 7
STATE_SIZE = FLEETS + MAX_FLEETS * F_SIZE

# --- event log: one row per event of the last ``advance`` (row 0 col 0 holds the count) ----
EV_LAUNCH, EV_LOST, EV_ARRIVE, EV_COMBAT, EV_REBELLION, EV_PRODUCTION = range(6)
EVENT_KINDS = ("launch", "lost", "arrive", "combat", "rebellion", "production")
# columns: kind, turn, player, star, then four values whose meaning depends on the kind:
#   launch/lost/arrive: origin, destination, ships, distance
#   combat (player = owner before): player-0 force (-1: not there), player-1 force,
#               NPC garrison (-1: none), owner after, ships after
#   rebellion:  garrison, rebels, rebels left      production: ships added
E_KIND, E_TURN, E_PLAYER, E_STAR, E_A, E_B, E_C, E_D, E_E = range(9)
E_SIZE = 9
MAX_EVENTS = 1 + 2 * MAX_ORDERS + 2 * MAX_FLEETS + 3 * NUM_STARS


def new_game(seed: int = 0, max_turns: int = DEFAULT_MAX_TURNS, loss_model: int = FLAT
             ) -> tuple[np.ndarray, np.ndarray]:
    """A freshly generated game: ``(state row, empty event log)``.

    >>> s, _ = new_game(seed=1); s.shape == (STATE_SIZE,) and int(s[MAX_TURNS_AT]) == 100
    True
    """
    state = np.zeros(STATE_SIZE, np.int64)
    log = np.zeros((MAX_EVENTS, E_SIZE), np.int64)
    _reset_state(state, log, np.uint64(seed & 0xFFFFFFFFFFFFFFFF), max_turns, loss_model)
    return state, log


# --- random generator -----------------------------------------------------------------
@njit(cache=True)
def _next_u64(state):
    """splitmix64: advance the game's generator and return 64 random bits."""
    word = state[RNG:RNG + 1].view(np.uint64)
    word[0], z = splitmix64(word[0])
    return z


@njit(cache=True)
def random_below(state, n):
    """A uniform integer in [0, n) (n small, so the modulo bias is negligible: < 2**-32)."""
    return np.int64((_next_u64(state) >> np.uint64(32)) % np.uint64(n))


@njit(cache=True)
def random_unit(state):
    """A uniform float in [0, 1) with 53 random bits."""
    return np.float64(_next_u64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


# --- small helpers --------------------------------------------------------------------
@njit(cache=True, inline="always")
def star_at(s):
    return STARS + s * S_SIZE


@njit(cache=True, inline="always")
def know_at(p, s):
    return KNOW + (p * NUM_STARS + s) * K_SIZE


@njit(cache=True, inline="always")
def fleet_at(i):
    return FLEETS + i * F_SIZE


@njit(cache=True)
def home(state, p):
    """Star index of seat ``p``'s home."""
    return state[HOMES + p]


@njit(cache=True)
def distance(state, a, b):
    """Chebyshev distance between stars ``a`` and ``b`` (= travel time in turns)."""
    dx = abs(state[star_at(a) + S_X] - state[star_at(b) + S_X])
    dy = abs(state[star_at(a) + S_Y] - state[star_at(b) + S_Y])
    return max(dx, dy)


@njit(cache=True)
def fight(a, b):
    """Deterministic combat: the larger force wins and loses half the smaller (rounded up); equal
    forces wipe each other out. Returns the survivors ``(a_left, b_left)``; one of them is 0."""
    if a > b:
        return a - (b + 1) // 2, 0
    if b > a:
        return 0, b - (a + 1) // 2
    return 0, 0


@njit(cache=True)
def loss_chance(model, dist):
    """Per-turn chance that a fleet on a journey of ``dist`` turns is lost (all its ships)."""
    if model == FLAT or dist <= 1:
        return FLAT_LOSS
    risk = min(0.99, FLAT_LOSS * dist * np.log2(dist))  # the reference implementation's n log n model
    return 1.0 - (1.0 - risk) ** (1.0 / dist)


def route_risk(loss_model: int, distance: int) -> float:
    """The chance that a fleet sent ``distance`` turns is lost on the way: each turn rolls the model's
    per-turn chance (flat: ``route_risk(0, 3) == 1 - 0.98 ** 3``)."""
    return 1 - (1 - loss_chance(loss_model, distance)) ** distance


@njit(cache=True)
def log_event(log, kind, turn, player, star, a, b, c, d, e):
    n = log[0, 0] + 1
    log[0, 0] = n
    log[n, E_KIND] = kind
    log[n, E_TURN] = turn
    log[n, E_PLAYER] = player
    log[n, E_STAR] = star
    log[n, E_A] = a
    log[n, E_B] = b
    log[n, E_C] = c
    log[n, E_D] = d
    log[n, E_E] = e


@njit(cache=True)
def _see(state, p, s):
    """Seat ``p`` witnesses star ``s`` now: remember its owner and ships as they are."""
    k = know_at(p, s)
    state[k + K_OWNER] = state[star_at(s) + S_OWNER]
    state[k + K_SHIPS] = state[star_at(s) + S_SHIPS]
    state[k + K_TURN] = state[TURN]


# --- map generation ---------------------------------------------------------------------
@njit(cache=True)
def _place(state, taken, x0, x1, y0, y1):
    """A random free cell of the rectangle, by rejection sampling; marks it taken."""
    while True:
        x = x0 + random_below(state, x1 - x0 + 1)
        y = y0 + random_below(state, y1 - y0 + 1)
        if not taken[y, x]:
            taken[y, x] = True
            return x, y


@njit(cache=True)
def _reset_state(state, log, seed, max_turns, loss_model):
    """Generate the map from ``seed`` (uint64) and set up turn 1 (see the module doc)."""
    state[:] = 0
    log[0, 0] = 0
    state[RNG:RNG + 1].view(np.uint64)[0] = seed
    state[MAX_TURNS_AT] = max_turns
    state[LOSS_MODEL] = loss_model
    state[WINNER] = NO_WINNER
    state[TURN] = 1
    taken = np.zeros((HEIGHT, WIDTH), np.bool_)
    xs = np.zeros(NUM_STARS, np.int64)
    ys = np.zeros(NUM_STARS, np.int64)
    rus = np.zeros(NUM_STARS, np.int64)
    first_corner = random_below(state, 2)  # seat that gets corner (0, 0)
    for p in range(NUM_PLAYERS):
        if p == first_corner:
            xs[p], ys[p] = _place(state, taken, 0, HOME_BLOCK - 1, 0, HOME_BLOCK - 1)
        else:
            xs[p], ys[p] = _place(state, taken, WIDTH - HOME_BLOCK, WIDTH - 1, HEIGHT - HOME_BLOCK, HEIGHT - 1)
        rus[p] = HOME_RU
    n = NUM_PLAYERS
    for q in range(4):
        count = 0
        for j in range(4):
            if QUADRANT_RU[q, j] > 0:
                count += 1
        values = QUADRANT_RU[q, :count].copy()
        for j in range(count - 1, 0, -1):  # shuffle the quadrant's RU multiset
            k = random_below(state, j + 1)
            values[j], values[k] = values[k], values[j]
        for j in range(count):
            xs[n], ys[n] = _place(state, taken, QUADRANTS[q, 0], QUADRANTS[q, 1], QUADRANTS[q, 2], QUADRANTS[q, 3])
            rus[n] = values[j]
            n += 1
    letters = np.arange(NUM_STARS)
    for j in range(NUM_STARS - 1, 0, -1):
        k = random_below(state, j + 1)
        letters[j], letters[k] = letters[k], letters[j]
    for g in range(NUM_STARS):  # generation order g gets letter letters[g]: the star index is the letter
        b = star_at(letters[g])
        state[b + S_X] = xs[g]
        state[b + S_Y] = ys[g]
        state[b + S_RU] = rus[g]
        state[b + S_SHIPS] = rus[g]
        state[b + S_OWNER] = g if g < NUM_PLAYERS else NOBODY
        state[b + S_HOME] = g if g < NUM_PLAYERS else -1
        if g < NUM_PLAYERS:
            state[HOMES + g] = letters[g]
    for p in range(NUM_PLAYERS):
        for s in range(NUM_STARS):
            state[know_at(p, s) + K_OWNER] = UNKNOWN
            state[know_at(p, s) + K_SHIPS] = -1
            state[know_at(p, s) + K_TURN] = -1
        state[know_at(p, home(state, p)) + K_VISITED] = 1
        _see(state, p, home(state, p))


# --- phases ------------------------------------------------------------------------------
@njit(cache=True)
def _launch(state, log, p, origin, dest, ships):
    """Seat ``p`` sends ``ships`` from ``origin`` to ``dest`` (the caller has validated the order)."""
    i = state[NUM_FLEETS_AT]
    state[NUM_FLEETS_AT] = i + 1
    d = distance(state, origin, dest)
    f = fleet_at(i)
    state[f + F_OWNER] = p
    state[f + F_ORIGIN] = origin
    state[f + F_DEST] = dest
    state[f + F_SHIPS] = ships
    state[f + F_LEFT] = d
    state[f + F_DIST] = d
    state[f + F_LAUNCHED] = state[TURN]
    state[star_at(origin) + S_SHIPS] -= ships
    log_event(log, EV_LAUNCH, state[TURN], p, origin, origin, dest, ships, d, 0)


@njit(cache=True)
def _give_orders(state, log, orders, counts):
    """Launch validated orders: ``orders[p, j] = (origin, destination, ships)`` for ``j < counts[p]``."""
    for p in range(NUM_PLAYERS):
        for j in range(counts[p]):
            _launch(state, log, p, orders[p, j, 0], orders[p, j, 1], orders[p, j, 2])


@njit(cache=True)
def _rebellions(state, log, rebelled):
    """Every owned non-home star with fewer ships than its RU rebels on a d6 roll of 4-6; the rebels
    (RU ships) always win, so the star reverts to NPC with RU - ceil(garrison / 2) ships."""
    for s in range(NUM_STARS):
        b = star_at(s)
        p = state[b + S_OWNER]
        ru = state[b + S_RU]
        garrison = state[b + S_SHIPS]
        if p == NOBODY or state[b + S_HOME] >= 0 or garrison >= ru:
            continue
        if random_below(state, 6) < 3:  # rolled 1-3
            continue
        left = fight(garrison, ru)[1]
        state[b + S_OWNER] = NOBODY
        state[b + S_SHIPS] = left
        rebelled[s] = True
        state[TALLY + p * T_SIZE + T_REBELLIONS] += 1
        _see(state, p, s)
        log_event(log, EV_REBELLION, state[TURN], p, s, garrison, ru, left, 0, 0)


@njit(cache=True)
def _production(state, log, rebelled):
    """Every owned star that did not rebel this turn adds its RU in ships (a home: 4)."""
    for s in range(NUM_STARS):
        b = star_at(s)
        p = state[b + S_OWNER]
        if p == NOBODY or rebelled[s]:
            continue
        state[b + S_SHIPS] += state[b + S_RU]
        log_event(log, EV_PRODUCTION, state[TURN], p, s, state[b + S_RU], 0, 0, 0, 0)


@njit(cache=True)
def _movement(state, log, arrivals):
    """Each fleet rolls hyperspace survival, then survivors advance one parsec; arrivals are summed
    per star and seat in ``arrivals``."""
    model = state[LOSS_MODEL]
    kept = 0
    for i in range(state[NUM_FLEETS_AT]):
        f = fleet_at(i)
        p = state[f + F_OWNER]
        dest = state[f + F_DEST]
        ships = state[f + F_SHIPS]
        if random_unit(state) < loss_chance(model, state[f + F_DIST]):
            state[TALLY + p * T_SIZE + T_LOST_SHIPS] += ships
            state[TALLY + p * T_SIZE + T_LOST_FLEETS] += 1
            log_event(log, EV_LOST, state[TURN], p, dest, state[f + F_ORIGIN], dest, ships, state[f + F_DIST], 0)
            continue
        state[f + F_LEFT] -= 1
        if state[f + F_LEFT] == 0:
            arrivals[dest, p] += ships
            log_event(log, EV_ARRIVE, state[TURN], p, dest, state[f + F_ORIGIN], dest, ships, state[f + F_DIST], 0)
            continue
        if kept != i:  # close up the fleet list, keeping launch order
            state[fleet_at(kept):fleet_at(kept) + F_SIZE] = state[f:f + F_SIZE]
        kept += 1
    state[fleet_at(kept):fleet_at(state[NUM_FLEETS_AT])] = 0  # freed slots read as empty (a canonical row)
    state[NUM_FLEETS_AT] = kept


@njit(cache=True)
def _take(state, s, new_owner, ships):
    b = star_at(s)
    if new_owner != NOBODY and state[b + S_OWNER] != new_owner:
        state[TALLY + new_owner * T_SIZE + T_CAPTURES] += 1
    state[b + S_OWNER] = new_owner
    state[b + S_SHIPS] = ships


@njit(cache=True)
def resolve_star(state, log, s, arrived):
    """Combat (or a peaceful merge) at star ``s`` after ``arrived[p]`` ships of each seat came in."""
    b = star_at(s)
    owner = state[b + S_OWNER]
    garrison = state[b + S_SHIPS]
    force = np.full(NUM_PLAYERS, -1, np.int64)
    for p in range(NUM_PLAYERS):
        if arrived[p] > 0:  # a visit: the star's RU is known to p from now on
            force[p] = arrived[p]
            state[know_at(p, s) + K_VISITED] = 1
    npc = -1
    if owner != NOBODY:
        enemy = 1 - owner
        force[owner] = garrison + max(arrived[owner], 0)
        if arrived[enemy] == 0:  # reinforcements only
            state[b + S_SHIPS] = force[owner]
            _see(state, owner, s)
            return
        attack, defend = fight(arrived[enemy], force[owner])
        if attack > 0:
            _take(state, s, enemy, attack)
        else:
            _take(state, s, owner if defend > 0 else NOBODY, defend)
    else:
        npc = garrison
        winner, left = NOBODY, 0
        if arrived[0] > 0 and arrived[1] > 0:
            left0, left1 = fight(arrived[0], arrived[1])
            if left0 > 0:
                winner, left = 0, left0
            elif left1 > 0:
                winner, left = 1, left1
        else:
            winner = 0 if arrived[0] > 0 else 1
            left = arrived[winner]
        if winner != NOBODY:
            attack, defend = fight(left, garrison)
            if attack > 0:
                _take(state, s, winner, attack)
            else:
                state[b + S_SHIPS] = defend
    for p in range(NUM_PLAYERS):
        if force[p] >= 0:
            _see(state, p, s)
    log_event(log, EV_COMBAT, state[TURN], owner, s, force[0], force[1], npc, state[b + S_OWNER], state[b + S_SHIPS])


@njit(cache=True)
def _combat(state, log, arrivals):
    for s in range(NUM_STARS):
        if arrivals[s, 0] > 0 or arrivals[s, 1] > 0:
            resolve_star(state, log, s, arrivals[s])


@njit(cache=True)
def owned_ru(state, p):
    total = 0
    for s in range(NUM_STARS):
        if state[star_at(s) + S_OWNER] == p:
            total += state[star_at(s) + S_RU]
    return total


@njit(cache=True)
def total_ships(state, p):
    """Ships seat ``p`` has: garrisons of its stars plus its fleets in hyperspace."""
    total = 0
    for s in range(NUM_STARS):
        if state[star_at(s) + S_OWNER] == p:
            total += state[star_at(s) + S_SHIPS]
    for i in range(state[NUM_FLEETS_AT]):
        if state[fleet_at(i) + F_OWNER] == p:
            total += state[fleet_at(i) + F_SHIPS]
    return total


@njit(cache=True)
def check_victory(state):
    """A seat owning the other's home wins at once; both homes taken in the same turn is a draw."""
    took0 = state[star_at(home(state, 1)) + S_OWNER] == 0
    took1 = state[star_at(home(state, 0)) + S_OWNER] == 1
    if took0 or took1:
        state[STATUS] = OVER
        state[END_REASON] = END_CAPTURE
        state[WINNER] = DRAW if took0 and took1 else (0 if took0 else 1)


@njit(cache=True)
def _score_turn_cap(state):
    """At the turn cap: more RU owned wins, then more ships (garrisons + fleets), else a draw."""
    state[STATUS] = OVER
    state[END_REASON] = END_TURN_CAP
    keys = np.zeros(NUM_PLAYERS, np.int64)
    for p in range(NUM_PLAYERS):
        keys[p] = owned_ru(state, p) * (1 << 40) + total_ships(state, p)
    state[WINNER] = DRAW if keys[0] == keys[1] else (0 if keys[0] > keys[1] else 1)


@njit(cache=True)
def advance(state, log, orders, counts):
    """Play from the orders of ``state[TURN]`` to the next orders (or the end); the event log is
    refilled with what happened. ``orders``/``counts`` as in ``_give_orders`` (already validated)."""
    log[0, 0] = 0
    if state[STATUS] != PLAYING:
        return
    _give_orders(state, log, orders, counts)
    rebelled = np.zeros(NUM_STARS, np.bool_)
    _rebellions(state, log, rebelled)
    _production(state, log, rebelled)
    if state[TURN] >= state[MAX_TURNS_AT]:
        _score_turn_cap(state)
        return
    state[TURN] += 1
    arrivals = np.zeros((NUM_STARS, NUM_PLAYERS), np.int64)
    _movement(state, log, arrivals)
    _combat(state, log, arrivals)
    check_victory(state)

