"""One of our Splendor policies against a published AlphaZero: cestpasphoto/alpha-zero-general's MCTS with its
shipped 2-player network, through a bridge. Prints a table; never part of the test suite.

    git clone https://github.com/cestpasphoto/alpha-zero-general PEERS/alpha-zero-general
    python benchmarks/bench_published_az.py --repo PEERS/alpha-zero-general --ours az:default --games 40

Our engine is the referee: it deals, and every move is played in it. Before each of their turns the bridge writes
their board (their ``56 x 7`` int8 array) from our state: the same market, bank, tokens, bonuses, points, nobles
(in the slots they were dealt to) and reserved cards, and as each deck the cards our deck still holds, as their
engine keeps a deck: a set whose next card is chance (their search draws it from fixed "universes"). Their search
then runs as their ``pit.py`` runs the checkpoint (its simulations, cpuct, fpu, universes, forced playouts, a
full search each move, the arg-max of the visits), its root limited to the moves that have an equal under our
rules (docs/benchmarks.md, "A published AlphaZero as a yardstick", says which and how returns and nobles are
played for their seat). After every turn, their engine plays the same move on the board written before it, and
each cell of the result is compared with the board written from our engine's new state (the card a deck dealt is
chance: their engine's draw is replaced by ours first); the table counts the turns that differ and where.

Their wrapper imports ``onnxruntime`` and ``onnx`` for its ONNX inference path, and its network module one helper
of ``torchvision``: the bench stubs the three modules (``sys.modules``) and runs the network through torch. Each
deal ``--seed + i // 2`` is played twice with the seats swapped; draws count half in the win rate (95% Wilson).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
import time
import types
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from multiprocessing.pool import Pool
from pathlib import Path
from typing import Any

import numpy as np

from tabletop_rl.core.stats import wilson_interval
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.actions import kind, move_id
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.ui.bench import print_markdown

NETWORK = "splendor/pretrained_2players.pt"
PLAYERS = 2
# Their board for two players (SplendorLogicNumba.copy_state): the first row of each part.
BANK_ROW, MARKET_ROW, DECK_ROW, NOBLE_ROW = 0, 1, 25, 31
GEMS_ROW, PLAYER_NOBLE_ROW, PLAYER_CARDS_ROW, RESERVE_ROW, BOARD_ROWS = 34, 36, 42, 44, 56
TABLE_NOBLES = PLAYERS + 1
MOVE_COUNT = (BANK_ROW, 6)  # their bank row's last cell counts the moves played
POINTS_COL, GOLD_COL = 6, 5
# Their action ids (SplendorLogicNumba's action table).
BUY_ACT, RESERVE_ACT, RESERVE_DECK_ACT, BUY_RESERVED_ACT, TAKE_ACT, TAKE2_ACT, GIVE_ACT, PASS_ACT = \
    0, 12, 24, 27, 30, 55, 60, 80
NUM_THEIR_ACTIONS = 81
REGIONS = ((MARKET_ROW, "market"), (DECK_ROW, "decks"), (NOBLE_ROW, "table nobles"), (GEMS_ROW, "tokens"),
           (PLAYER_NOBLE_ROW, "player nobles"), (PLAYER_CARDS_ROW, "bonuses/points"), (RESERVE_ROW, "reserves"))


# --- their code, loaded from the clone --------------------------------------------------------------------------
def _make_divisible(value: float, divisor: int, min_value: int | None = None) -> int:
    """The channel rounding their network module imports from torchvision: ``value`` to a multiple of ``divisor``,
    never more than 10% below it."""
    floor = divisor if min_value is None else min_value
    rounded = max(floor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def _stub_modules() -> None:
    """Empty ``onnx``/``onnxruntime`` (imported by their wrapper for a path the bench never takes) and the one
    torchvision helper their network uses, unless the real modules are installed."""
    for name in ("onnxruntime", "onnx"):
        if importlib.util.find_spec(name) is None:
            sys.modules.setdefault(name, types.ModuleType(name))
    if importlib.util.find_spec("torchvision") is None:
        helpers = types.ModuleType("torchvision.models._utils")
        helpers._make_divisible = _make_divisible  # type: ignore[attr-defined]
        sys.modules.setdefault("torchvision", types.ModuleType("torchvision"))
        sys.modules.setdefault("torchvision.models", types.ModuleType("torchvision.models"))
        sys.modules.setdefault("torchvision.models._utils", helpers)


def check_repo(repo: Path) -> str | None:
    """Why ``repo`` cannot be used (one line), or None."""
    if not (repo / "MCTS.py").is_file() or not (repo / "splendor" / "SplendorLogicNumba.py").is_file():
        return f"{repo} is not a clone of cestpasphoto/alpha-zero-general (no MCTS.py, splendor/SplendorLogicNumba.py)"
    if not (repo / NETWORK).is_file():
        return f"{repo / NETWORK} is missing: the published 2-player network"
    missing = [name for name in ("torch", "colorama", "tqdm") if importlib.util.find_spec(name) is None]
    return f"their code needs {', '.join(missing)}, not installed here" if missing else None


PEER_MODULES = ("splendor.SplendorLogic", "splendor.SplendorGame", "splendor.NNet", "MCTS", "utils")


def import_peer(repo: Path, names: Iterable[str] = PEER_MODULES) -> dict[str, Any]:
    """Their modules, imported from ``repo`` (their imports are top-level names such as ``MCTS`` and ``utils``)."""
    _stub_modules()
    root = str(repo.resolve())
    if root not in sys.path:
        sys.path.insert(0, root)
    return {name: importlib.import_module(name) for name in names}


# --- the translation tables ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tables:
    """Our card and noble ids against their rows: ``card_rows[id]`` is their (cost, gain) pair of rows,
    ``card_place[id]`` its (tier, colour group, index) in their deck bitfields, ``noble_rows[id]`` their row, and
    ``takes`` their 25 "take different gems" colour sets in their order."""

    card_rows: np.ndarray
    card_place: np.ndarray
    noble_rows: np.ndarray
    takes: tuple[frozenset[int], ...]
    place_to_card: dict[tuple[int, int, int], int] = field(default_factory=dict)


def build_tables(logic: Any) -> Tables:
    """Match every card and noble of our tables with theirs (``logic``: their ``splendor.SplendorLogic``);
    ``ValueError`` when the two card sets differ."""
    cards, nobles = R.tables()
    ours = {(int(c[R.CARD_LEVEL]), int(c[R.CARD_BONUS]), int(c[R.CARD_POINTS]), tuple(int(x) for x in c[R.CARD_COST:]))
            : card for card, c in enumerate(cards)}
    card_rows = np.zeros((R.NUM_CARDS, 2, 7), np.int8)
    card_place = np.zeros((R.NUM_CARDS, 3), np.int64)
    place_to_card = {}
    for tier, groups in enumerate(logic.all_cards):
        for group, group_cards in enumerate(groups):
            for index, (cost, gain) in enumerate(group_cards):
                card = ours.pop((tier + 1, int(np.argmax(gain[:5])), gain[POINTS_COL], tuple(cost[:5])))
                card_rows[card] = (cost, gain)
                card_place[card] = (tier, group, index)
                place_to_card[(tier, group, index)] = card
    if ours:
        raise ValueError(f"{len(ours)} of our cards have no equal in their card lists")
    noble_rows = np.zeros((R.NUM_NOBLES, 7), np.int8)
    by_cost = {tuple(int(x) for x in row): noble for noble, row in enumerate(nobles)}
    for row in logic.all_nobles:
        noble_rows[by_cost.pop(tuple(row[:5]))] = row
    takes = tuple(frozenset(np.flatnonzero(row[:5]).tolist()) for row in logic.list_different_gems_up_to_3)
    return Tables(card_rows, card_place, noble_rows, takes, place_to_card)


# --- our position as their board ------------------------------------------------------------------------------
def deck_rows(cards: Iterable[int], tables: Tables) -> np.ndarray:
    """Their two rows for one tier's deck: how many cards of each colour group are left, and which (a bitfield per
    group, their first card in the high bit, stored as int8)."""
    rows = np.zeros((2, 7), np.int64)
    for card in cards:
        _, group, index = tables.card_place[card]
        rows[0, group] += 1
        rows[1, group] |= 128 >> index
    return rows.astype(np.uint8).view(np.int8)


def deck_of(board: np.ndarray, tier: int, tables: Tables) -> set[int]:
    """Our ids of the cards their board says are left in ``tier``'s deck."""
    bits = board[DECK_ROW + 2 * tier + 1, :5].view(np.uint8)
    return {tables.place_to_card[(tier, group, index)] for group in range(5) for index in range(8)
            if bits[group] & (128 >> index)}


def their_board(game: SplendorGame, dealt_nobles: list[int], moves: int, tables: Tables) -> np.ndarray:
    """Their board (seats as ours: player 0 is our seat 0) of ``game``'s position, ``moves`` turns into the game;
    ``dealt_nobles``: the table's nobles as dealt, whose order fixes their slots."""
    board = np.zeros((BOARD_ROWS, 7), np.int8)
    board[BANK_ROW, :6] = list(game.bank.values())
    board[MOVE_COUNT] = moves
    for level in (1, 2, 3):
        for slot, card in enumerate(game.market(level)):
            if card is not None:
                at = MARKET_ROW + 8 * (level - 1) + 2 * slot
                board[at:at + 2] = tables.card_rows[card]
        board[DECK_ROW + 2 * (level - 1):DECK_ROW + 2 * level] = deck_rows(game.deck(level), tables)
    on_table = set(game.table_nobles)
    for slot, noble in enumerate(dealt_nobles):
        if noble in on_table:
            board[NOBLE_ROW + slot] = tables.noble_rows[noble]
    for p in range(PLAYERS):
        me = game.player(p)
        board[GEMS_ROW + p, :6] = list(me["tokens"].values())
        for slot, noble in enumerate(dealt_nobles):
            if noble in me["nobles"]:
                board[PLAYER_NOBLE_ROW + TABLE_NOBLES * p + slot] = tables.noble_rows[noble]
        board[PLAYER_CARDS_ROW + p, :5] = list(me["bonuses"].values())
        board[PLAYER_CARDS_ROW + p, POINTS_COL] = me["points"] - R.NOBLE_POINTS * len(me["nobles"])
        for k, (card, _) in enumerate(me["reserved"]):
            at = RESERVE_ROW + 6 * p + 2 * k
            board[at:at + 2] = tables.card_rows[card]
    return board


def their_move_count(turns: int, cap: int) -> int:
    """The move count written on their board: the turns played, or, past their engine's move cap (where it would
    call the game over), the highest count below the cap with the same parity (the parity tells whose round)."""
    return turns if turns < cap - 1 else cap - 2 + turns % 2


# --- moves across the two rule sets ----------------------------------------------------------------------------
def _take_id(colours: Iterable[int]) -> int:
    return move_id("take:" + ",".join(R.COLOURS[c] for c in sorted(colours)))


def take_as_ours(game: SplendorGame, colours: frozenset[int]) -> int | None:
    """Our move for their "take these different colours" (none: their pass): our rules take exactly
    min(3, colours in stock) colours and then return down to 10 tokens, so a smaller take has an equal only when
    it leaves the player at exactly 10 (our take of more colours, then the extra tokens back)."""
    stock = [c for c, n in enumerate(list(game.bank.values())[:5]) if n > 0]
    size = min(3, len(stock))
    held = sum(game.player(game.current_player)["tokens"].values())
    if size == 0:
        return None
    if len(colours) == size:
        return _take_id(colours)
    if held + len(colours) != R.TOKEN_LIMIT:
        return None
    extra = [c for c in stock if c not in colours][:size - len(colours)]
    return _take_id([*colours, *extra])


def their_move_as_ours(game: SplendorGame, action: int, tables: Tables) -> int | None:
    """Our main-phase move for their ``action`` in ``game``'s position, or None when our rules have no equal (their
    give-backs, a take our rules would not allow); the move is not checked against our legal moves here."""
    if action < RESERVE_ACT:
        return R.BUY + action - BUY_ACT
    if action < RESERVE_DECK_ACT:
        return R.RESERVE + action - RESERVE_ACT
    if action < BUY_RESERVED_ACT:
        return R.RESERVE_DECK + action - RESERVE_DECK_ACT
    if action < TAKE_ACT:
        return R.BUY_RESERVED + action - BUY_RESERVED_ACT
    if action < TAKE2_ACT:
        return take_as_ours(game, tables.takes[action - TAKE_ACT])
    if action < GIVE_ACT:
        return R.TAKE2_SAME + action - TAKE2_ACT
    if action == PASS_ACT:
        return R.PASS if game.legal_mask()[R.PASS] else take_as_ours(game, frozenset())
    return None


def allowed_moves(game: SplendorGame, valid: np.ndarray, tables: Tables) -> np.ndarray:
    """``bool[81]``: their valid moves whose equal under our rules is legal in ``game``'s position."""
    mask = game.legal_mask()
    allowed = np.zeros(NUM_THEIR_ACTIONS, np.bool_)
    for action in np.flatnonzero(valid):
        ours = their_move_as_ours(game, int(action), tables)
        allowed[action] = ours is not None and bool(mask[ours])
    return allowed


def _tokens(game: SplendorGame, seat: int) -> np.ndarray:
    return np.array(list(game.player(seat)["tokens"].values()))


def our_turn_as_theirs(before: SplendorGame, after: SplendorGame, main: int, tables: Tables) -> int | None:
    """Their action equal to our turn (``main`` and the returns and noble that followed, ``before`` to ``after``),
    or None when their rules have none: a take with returns of other colours or of more than was taken, a reserve
    whose gold did not end as their engine's does (it gives gold only to a player holding 9 tokens or fewer)."""
    seat = before.current_player
    net = _tokens(after, seat) - _tokens(before, seat)
    family = kind(main)
    if family.startswith("take"):
        if net.min() < 0 or net[R.GOLD] != 0:
            return None
        if net.max() == 2:
            return TAKE2_ACT + int(np.argmax(net))
        gained = frozenset(np.flatnonzero(net).tolist())
        return PASS_ACT if not gained else TAKE_ACT + tables.takes.index(gained)
    if family in ("reserve", "reserve_deck"):
        gold = int(before.bank["gold"] > 0 and _tokens(before, seat).sum() < R.TOKEN_LIMIT)
        if net[:R.GOLD].any() or net[R.GOLD] != gold:
            return None
        return RESERVE_ACT + main - R.RESERVE if family == "reserve" else RESERVE_DECK_ACT + main - R.RESERVE_DECK
    if family == "buy":
        return BUY_ACT + main - R.BUY
    if family == "buy_reserved":
        return BUY_RESERVED_ACT + main - R.BUY_RESERVED
    return PASS_ACT


# --- comparing boards ------------------------------------------------------------------------------------------
def align_draws(predicted: np.ndarray, before: np.ndarray, actual: np.ndarray, tables: Tables) -> np.ndarray:
    """``predicted`` (their engine's board after a move) with each card their engine dealt from a deck replaced by
    the card our engine dealt, in the market or reserve and in the deck: which card comes is chance."""
    out = predicted.copy()
    for tier in range(3):
        left = deck_of(before, tier, tables)
        theirs, ours = left - deck_of(predicted, tier, tables), left - deck_of(actual, tier, tables)
        if theirs == ours or len(theirs) != 1 or len(ours) != 1:
            continue
        (their_card,), (our_card,) = theirs, ours
        for row in [*range(MARKET_ROW, DECK_ROW, 2), *range(RESERVE_ROW, BOARD_ROWS, 2)]:
            if np.array_equal(out[row:row + 2], tables.card_rows[their_card]):
                out[row:row + 2] = tables.card_rows[our_card]
        out[DECK_ROW + 2 * tier:DECK_ROW + 2 * tier + 2] = deck_rows(left - ours, tables)
    return out


def region(row: int, col: int) -> str:
    """The part of their board a cell is in."""
    if row == BANK_ROW:
        return "move count" if col == MOVE_COUNT[1] else "bank"
    return next(name for start, name in reversed(REGIONS) if row >= start)


def differences(predicted: np.ndarray, actual: np.ndarray) -> list[str]:
    """The parts of the board in which the two boards differ, each once, in board order."""
    return list(dict.fromkeys(region(int(r), int(c)) for r, c in zip(*np.nonzero(predicted != actual))))


# --- their player --------------------------------------------------------------------------------------------
class _RootLimited:
    """Their game, with the root position's valid moves limited to ``allowed`` (their MCTS asks the game for a
    node's valid moves when it first expands it)."""

    def __init__(self, game: Any) -> None:
        self._game = game
        self.root: bytes | None = None
        self.allowed = np.ones(NUM_THEIR_ACTIONS, np.bool_)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._game, name)

    def getValidMoves(self, board: np.ndarray, player: int) -> np.ndarray:  # noqa: N802 (their interface)
        valid = self._game.getValidMoves(board, player)
        return valid & self.allowed if board.tobytes() == self.root else valid


@dataclass
class Peer:
    """Their game, network and search settings as ``pit.py`` builds them from the checkpoint."""

    modules: dict[str, Any]
    game: Any
    net: Any
    settings: dict[str, Any]
    half_life: float
    tables: Tables
    max_moves: int

    @classmethod
    def load(cls, repo: Path, sims: int | None) -> Peer:
        modules = import_peer(repo)
        game = modules["splendor.SplendorGame"].SplendorGame()
        net = modules["splendor.NNet"].NNetWrapper(game, dict(lr=None, dropout=0., epochs=None, batch_size=None,
                                                              nn_version=-1))
        keys = net.load_checkpoint(str(repo / "splendor"), Path(NETWORK).name)
        if keys is None:
            raise SystemExit(f"{repo / NETWORK}: their loader could not read the network")
        net.device["inference"] = "cpu"  # torch, not their ONNX export
        cpuct = keys.get("cpuct")
        settings = {"numMCTSSims": sims or keys.get("numMCTSSims", 100), "fpu": keys.get("fpu", 0.),
                    "universes": keys.get("universes", 1), "cpuct": float(cpuct[0]) if isinstance(cpuct, list)
                    else cpuct, "prob_fullMCTS": 1., "forced_playouts": keys.get("forced_playouts", False),
                    "no_mem_optim": False}
        half_life = (keys["temperature"][2:3] or [10])[0]
        return cls(modules, game, net, settings, half_life, build_tables(modules["splendor.SplendorLogic"]),
                   int(game.board.max_moves))

    def new_search(self) -> tuple[Any, _RootLimited]:
        limited = _RootLimited(self.game)
        return self.modules["MCTS"].MCTS(limited, self.net, self.modules["utils"].dotdict(self.settings)), limited

    def temperature(self, move: int) -> float:
        """``pit.py``'s temperature at the game's ``move``-th move (1-based); its player takes the arg-max of the
        visit shares, which the temperature changes only in its ties below 0.02."""
        return 0.5 * 0.5 ** (move / self.half_life)


def limit_root(search: Any, limited: _RootLimited, root: np.ndarray, allowed: np.ndarray) -> None:
    """Search ``root`` over ``allowed`` only: for a new root, through the game's valid moves; for a root already in
    the kept tree, by dropping the other moves' visits and renormalising the prior over the rest."""
    limited.root, limited.allowed = root.tobytes(), allowed
    node = search.nodes_data.get(limited.root)
    if node is None or node[2] is None:
        return
    es, vs, ps, _, qsa, nsa, r, qs = node
    ps = np.where(allowed, ps, 0).astype(ps.dtype)
    ps /= ps.sum() if ps.sum() > 0 else 1
    nsa, qsa = np.where(allowed, nsa, 0), np.where(allowed, qsa, search.Qsa_default)
    search.nodes_data[limited.root] = (es, vs & allowed, ps, int(nsa.sum()), qsa, nsa, r, qs)


# --- one game ----------------------------------------------------------------------------------------------------
_PEER: Peer | None = None


def _peer(repo: Path, sims: int | None) -> Peer:
    global _PEER
    if _PEER is None:
        _PEER = Peer.load(repo, sims)
    return _PEER


@dataclass
class Record:
    """What one game tells: the result from our side, times, and the divergence count per mover."""

    outcome: float = 0.0
    points: tuple[int, int] = (0, 0)
    turns: int = 0
    time_s: dict[str, float] = field(default_factory=lambda: {"ours": 0.0, "theirs": 0.0})
    moves: Counter = field(default_factory=Counter)  # mover -> turns played
    compared: Counter = field(default_factory=Counter)  # mover -> turns compared
    diverged: Counter = field(default_factory=Counter)  # mover -> turns that differed
    where: Counter = field(default_factory=Counter)  # "mover: region" -> turns
    unmapped: Counter = field(default_factory=Counter)  # mover -> turns their engine cannot play
    fallbacks: int = 0
    final_agrees: bool = True
    settings: dict[str, Any] = field(default_factory=dict)  # their search's, as the table's caption


def their_main_move(peer: Peer, search: Any, limited: _RootLimited, game: SplendorGame, board: np.ndarray,
                    move: int) -> tuple[int, int]:
    """Their chosen action and our move for it; a fallback (our first legal move, action -1) when no move of
    theirs has an equal, or their engine calls the position over."""
    seat = game.current_player
    allowed = allowed_moves(game, peer.game.getValidMoves(board, seat), peer.tables)
    canonical = peer.game.getCanonicalForm(board, seat)
    if not allowed.any() or peer.game.getGameEnded(canonical, 0).any():
        return -1, game.legal_actions()[0]
    limit_root(search, limited, canonical, allowed)
    probs = search.getActionProb(canonical, temp=peer.temperature(move), force_full_search=True)[0]
    action = int(np.argmax(np.where(allowed, probs, -1.0)))
    ours = their_move_as_ours(game, action, peer.tables)
    assert ours is not None
    return action, ours


def their_follow_up(game: SplendorGame, expected: np.ndarray) -> int:
    """Their seat's return or noble choice: return a token their engine's move would not have left them
    (``expected``: their board after it), else our first legal move (the first qualifying noble, in dealt order)."""
    seat, legal = game.current_player, game.legal_mask()
    if game.phase == "return":
        excess = _tokens(game, seat) - expected[GEMS_ROW + seat, :6]
        for colour in np.flatnonzero(excess > 0):
            if legal[R.RETURN_TOKEN + colour]:
                return R.RETURN_TOKEN + int(colour)
    return int(np.flatnonzero(legal)[0])


def play_game(task: tuple[str, int, bool, int | None, str]) -> Record:
    """One game of our ``spec`` against theirs on deal ``seed``; ``swap``: theirs sits first."""
    from tabletop_rl.agents import make_policy

    spec, seed, swap, sims, repo = task
    peer = _peer(Path(repo), sims)
    our_seat = 1 if swap else 0
    policy = make_policy(spec, game="splendor", seed=seed * 2 + our_seat)
    search, limited = peer.new_search()
    np.random.seed(seed)  # their player's ties among equal visit counts
    game = SplendorGame(PLAYERS, seed=seed)
    dealt = list(game.table_nobles)
    rec = Record(settings=peer.settings)

    def ours(seat: int) -> int:  # our policy sees its seat's view, never the live game
        return policy.act(game.observe(seat), game.legal_mask(), game.policy_info(seat))

    while not game.is_over:
        seat, mover = game.current_player, "ours" if game.current_player == our_seat else "theirs"
        before, move_count = game.clone(), their_move_count(rec.turns, peer.max_moves)
        board = their_board(before, dealt, move_count, peer.tables)
        start, action = time.perf_counter(), -1
        if mover == "theirs":
            action, main = their_main_move(peer, search, limited, game, board, rec.turns + 1)
            rec.fallbacks += action < 0
        else:
            main = ours(seat)
        expected = peer.game.getNextState(board, seat, action, 1)[0].copy() if action >= 0 else board
        game.step(main)
        while not game.is_over and game.current_player == seat:
            game.step(their_follow_up(game, expected) if mover == "theirs" else ours(seat))
        rec.time_s[mover] += time.perf_counter() - start
        rec.moves[mover] += 1
        rec.turns += 1
        compare_turn(peer, rec, mover, before, game, main, dealt, move_count)
    winners = game.winners
    rec.outcome = 0.5 if len(winners) != 1 else float(winners == [our_seat])
    rec.points = (game.scores[our_seat], game.scores[1 - our_seat])
    rec.final_agrees = final_agrees(peer, game, dealt, rec.turns)
    search.nodes_data.clear()
    return rec


def turn_differences(their_game: Any, tables: Tables, before: SplendorGame, after: SplendorGame, main: int,
                     dealt: list[int], moves: int) -> list[str] | None:
    """Where their engine's board after our turn (``main`` and what followed it, ``before`` to ``after``), played
    on the board written before it (``moves`` turns into the game), differs from the board written after it;
    None when their rules have no equal of the turn."""
    seat = before.current_player
    board = their_board(before, dealt, moves, tables)
    action = our_turn_as_theirs(before, after, main, tables)
    if action is None or not their_game.getValidMoves(board, seat)[action]:
        return None
    predicted = their_game.getNextState(board, seat, action, 1)[0].copy()
    actual = their_board(after, dealt, moves + 1, tables)
    return differences(align_draws(predicted, board, actual, tables), actual)


def compare_turn(peer: Peer, rec: Record, mover: str, before: SplendorGame, after: SplendorGame, main: int,
                 dealt: list[int], moves: int) -> None:
    diff = turn_differences(peer.game, peer.tables, before, after, main, dealt, moves)
    if diff is None:
        rec.unmapped[mover] += 1
        return
    rec.compared[mover] += 1
    if diff:
        rec.diverged[mover] += 1
        rec.where.update(f"{mover}: {name}" for name in diff)


def final_agrees(peer: Peer, game: SplendorGame, dealt: list[int], turns: int) -> bool:
    """Whether their engine, on the final position, scores both seats and names the winners as ours does."""
    board = their_board(game, dealt, their_move_count(turns, peer.max_moves), peer.tables)
    scores = [int(peer.game.getScore(board, p)) for p in range(PLAYERS)]
    ended = peer.game.getGameEnded(board, 0)
    their_winners = np.flatnonzero(ended == 1).tolist() if ended.any() else []
    ours = game.winners if not game.is_truncated else []
    return scores == game.scores and (their_winners == ours or (len(ours) > 1 and not their_winners))


# --- the table -----------------------------------------------------------------------------------------------------
def _share(counts: Counter, totals: Counter, mover: str) -> str:
    return f"{counts[mover]}/{totals[mover]}"


def summarise(spec: str, records: list[Record]) -> list[str]:
    n = len(records)
    outcomes = [r.outcome for r in records]
    wins, draws = outcomes.count(1.0), outcomes.count(0.5)
    low, high = wilson_interval(sum(outcomes), n)
    total: dict[str, Counter] = {k: sum((getattr(r, k) for r in records), Counter())
                                 for k in ("moves", "compared", "diverged", "unmapped")}
    ms = {m: 1000 * sum(r.time_s[m] for r in records) / max(1, total["moves"][m]) for m in ("ours", "theirs")}
    return [f"`{spec}`", str(n), f"{wins}/{draws}/{n - wins - draws}",
            f"{100 * sum(outcomes) / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]",
            f"{np.mean([r.points[0] for r in records]):.1f}-{np.mean([r.points[1] for r in records]):.1f}",
            f"{np.mean([r.turns for r in records]):.0f}", f"{ms['ours']:.1f} / {ms['theirs']:.0f}",
            _share(total["diverged"], total["compared"], "ours") + " / "
            + _share(total["diverged"], total["compared"], "theirs"),
            f"{total['unmapped']['ours']} / {total['unmapped']['theirs']}",
            f"{sum(r.final_agrees for r in records)}/{n}", str(sum(r.fallbacks for r in records))]


HEADER = ["ours", "games", "ours W/D/L", "ours win rate [95%]", "points ours-theirs", "turns", "ms/turn ours / theirs",
          "diverged turns ours / theirs", "turns with no equal ours / theirs", "final scores agree", "fallbacks"]


def play_all(args: argparse.Namespace, pool: Pool | None) -> list[Record]:
    """Every game, each reported on stderr as it ends (a long run shows its progress)."""
    tasks = [(args.ours, args.seed + i // 2, i % 2 == 1, args.sims, str(args.repo)) for i in range(args.games)]
    records = []
    for rec in (pool.imap(play_game, tasks, chunksize=1) if pool else map(play_game, tasks)):
        records.append(rec)
        print(f"game {len(records)}/{args.games}: ours {rec.outcome:g}, points {rec.points[0]}-{rec.points[1]}, "
              f"{rec.turns} turns", file=sys.stderr, flush=True)
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path("PEERS/alpha-zero-general"),
                        help="a clone of cestpasphoto/alpha-zero-general")
    parser.add_argument("--ours", default="az:default", help="our policy spec (tabletop_rl.agents registry)")
    parser.add_argument("--games", type=int, default=40, help="games (even: each deal twice, seats swapped)")
    parser.add_argument("--seed", type=int, default=0, help="first deal's seed")
    parser.add_argument("--sims", type=int, default=None, help="their simulations a move (default: pit.py's, "
                        "the checkpoint's numMCTSSims)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    args = parser.parse_args()
    from tabletop_rl.agents import parse_spec

    try:
        parse_spec(args.ours, "splendor")  # a bad spec fails here, before their network loads
    except ValueError as e:
        raise SystemExit(str(e)) from None
    problem = check_repo(args.repo)
    if problem:
        raise SystemExit(problem)
    start = time.perf_counter()
    if args.jobs > 1:
        with Pool(args.jobs) as pool:
            records = play_all(args, pool)
    else:
        records = play_all(args, None)
    print(f"{args.games} games in {time.perf_counter() - start:.0f} s; theirs: {NETWORK}, "
          + ", ".join(f"{k}={v}" for k, v in records[0].settings.items()))
    print_markdown(HEADER, [summarise(args.ours, records)])
    where = sum((r.where for r in records), Counter())
    print("divergences (turns): " + (", ".join(f"{k} {v}" for k, v in sorted(where.items())) or "none"))


if __name__ == "__main__":
    main()
