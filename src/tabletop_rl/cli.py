"""The ``tabletop`` command: ``arena``, ``llm-match``, ``play``, ``replay``, ``web``, ``bench`` and ``train``
(``tabletop <command> --help`` for each). ``tabletop play space-conquest --help`` has that game's own options.

>>> main(["replay", "no-such-file.jsonl"])
2
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import importlib
import os
import shlex
import sys
import warnings
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from tabletop_rl.agents import split_specs, why_unavailable
from tabletop_rl.agents.llm.client import API_KEY_ENV, LLMError
from tabletop_rl.arena import default_out_dir, format_table, load_games, run_arena
from tabletop_rl.arena.results import read_config
from tabletop_rl.arena.runner import BACKENDS
from tabletop_rl.core.extras import TRAIN_MODULES, missing_extra
from tabletop_rl.games import entries, entry, game_class, names
from tabletop_rl.games.registry import resolve
from tabletop_rl.train import splendor_az, splendor_cleanrl_ppo, splendor_distill, splendor_ppo
from tabletop_rl.train.selfplay import TrainConfig, add_arguments
from tabletop_rl.ui.bench import main as bench_main
from tabletop_rl.ui.terminal import play_terminal, replay_terminal, write_game_logs
from tabletop_rl.ui.web.menu import default_policies

__all__ = ["main", "split_specs"]

_DEFAULT_GAMES = 12  # per pairing: 6 deals with seats swapped; docs/arena.md says how long the default takes
_DEFAULT_JOBS = 2


def _cli_name(name: str) -> str:
    """A game's name (or a delegated command's subject) as the command line shows it: ``space-conquest``.

    >>> _cli_name("space_conquest"), _cli_name("splendor")
    ('space-conquest', 'splendor')
    """
    return name.replace("_", "-")


def _game_name(text: str) -> str:
    """The argument type of a game on the command line, which takes ``-`` for ``_``: ``space-conquest`` is the
    game ``space_conquest``."""
    return text.replace("-", "_")


class _GameChoices(tuple[str, ...]):
    """Games as the command line shows them (``_cli_name``: help, errors, suggestions), holding a game's name in
    either spelling."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and tuple.__contains__(self, _cli_name(name))


def _add_game(parser: argparse.ArgumentParser, games: Sequence[str]) -> None:
    """The ``game`` argument, one of ``games``: typed with ``-`` or ``_``, read as the game's one name."""
    parser.add_argument("game", type=_game_name, choices=_GameChoices(_cli_name(game) for game in games))


def _delegated() -> dict[tuple[str, str], str]:
    """Commands whose game parses its own arguments, from the game records (``GameEntry.commands``):
    ``(command, subject) -> "module:function(argv) -> int"``."""
    return {command: target for record in entries() for command, target in record.commands.items()}


def _played_in_terminal() -> list[str]:
    """The games ``tabletop play`` runs: in the package's terminal table (``GameEntry.terminal``: one seat, seeing
    only that seat), or with their own arguments."""
    return [record.name for record in entries() if record.terminal or ("play", record.name) in record.commands]


class _UsageError(ValueError):
    """Bad command-line arguments found after parsing (exit status 2, like argparse's own errors)."""


def _check_games(games: int | None) -> None:
    """Refuse a non-positive ``--games`` (0 would otherwise fall back to a default count)."""
    if games is not None and games <= 0:
        raise _UsageError(f"--games must be positive, got {games}")


def _missing_train_extra(error: ModuleNotFoundError) -> str | None:
    """The one-line message for a module of the [train] extra that is not installed, else None."""
    name = (error.name or "").split(".")[0]
    return missing_extra(name, "tabletop train", "train") if name in TRAIN_MODULES else None


def _parse_game_options(text: str) -> dict[str, object]:
    """``key=value,...`` game options: whole numbers become ``int``, ``true``/``false`` ``bool``, the rest stays text.

    >>> _parse_game_options("rules=amsterdam,deals=16,kraken=true")
    {'rules': 'amsterdam', 'deals': 16, 'kraken': True}
    """
    options: dict[str, object] = {}
    for item in (piece.strip() for piece in text.split(",") if piece.strip()):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not key or not value:
            raise _UsageError(f"game option {item!r} is not key=value")
        if key in options:
            raise _UsageError(f"game option {key!r} is given twice")
        lowered = value.lower()
        if lowered in ("true", "false"):
            options[key] = lowered == "true"
        else:
            options[key] = int(value) if value.lstrip("-").isdigit() else value
    return options


# --- arena ------------------------------------------------------------------------------------------
def _add_arena(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "arena", help="a tournament between policies, with win rates, ratings and charts",
        description="Play every pairing of the policies (all-seats tables for 3-4 players) with seats rotated "
                    "on shared seeds, in parallel. Results go to OUT/games.jsonl as each game ends; "
                    "OUT/summary.json, winrate.png and ratings.png at the end. With no options: a short "
                    "tournament of the built-in baselines (" + "; ".join(
                        f"{_cli_name(record.name)}: {', '.join(record.players)}" for record in entries())
                    + "); one this installation cannot build is left out, named with the reason.")
    _add_game(p, names())
    p.add_argument("--players", metavar="SPECS", help="comma-separated policy specs, e.g. "
                   "greedy,mcts:simulations=500,random (default: the built-in baselines); name=LABEL in a spec "
                   "sets its label in the tables and plots")
    p.add_argument("--games", type=int, metavar="N", help=f"games per pairing (default {_DEFAULT_GAMES}; "
                   "a multiple of the player count keeps seats balanced)")
    p.add_argument("--seed", type=int, metavar="S", help="run seed; every game's seed derives from it (default 0)")
    p.add_argument("--jobs", type=int, default=_DEFAULT_JOBS, metavar="J",
                   help=f"games played at once: worker processes, or Ray tasks with --backend ray (default "
                        f"{_DEFAULT_JOBS})")
    p.add_argument("--out", type=Path, metavar="DIR", help="run folder (default runs/arena-<game>-<time>)")
    p.add_argument("--resume", action="store_true",
                   help="continue the run in --out; arguments left out are taken from its config.json")
    p.add_argument("--backend", choices=BACKENDS, default="process",
                   help="where games are played: worker processes here (default), or tasks on a Ray cluster "
                        "(needs the [ray] extra; docs/arena.md)")
    p.add_argument("--address", metavar="HOST:PORT", help="with --backend ray: the cluster to join (what 'ray start "
                   "--head' printed, or auto); default a new local Ray instance")
    p.add_argument("--num-players", type=int, metavar="N", help="players per game (default 2)")
    p.add_argument("--options", metavar="KEY=VALUE,...", help="game options: " + "; ".join(
        f"{_cli_name(name)}: {', '.join(game_class(name).option_names)}" for name in names()
        if game_class(name).option_names)
        + " (e.g. klaverjas --options rules=amsterdam,deals=16,kraken=true; docs/arena.md)")
    p.set_defaults(func=_arena, prog=p.prog)


def _arena(args: argparse.Namespace) -> int:
    _check_games(args.games)
    given = {"players": split_specs(args.players) if args.players else None, "games": args.games,
             "seed": args.seed, "num_players": args.num_players,
             "options": _parse_game_options(args.options) if args.options else None}
    chosen = _run_arguments(args, given, {"games": _DEFAULT_GAMES, "seed": 0, "num_players": 2, "options": {}})
    if args.address is not None and args.backend != "ray":
        raise _UsageError("--address needs --backend ray")
    if chosen["players"] is None:  # only now: asking whether each default policy can load reads its model's file
        chosen["players"] = _default_players(args.game)
    out = args.out or default_out_dir(args.game)
    go_on = f"tabletop arena {_cli_name(args.game)} --out {shlex.quote(str(out))} --resume"
    summary = _run_until_interrupted(go_on, game=args.game, jobs=args.jobs, out=out, resume=args.resume,
                                     backend=args.backend, address=args.address, **chosen)
    if summary is None:
        return 130
    print(format_table(summary))
    print(f"\nresults in {out}: {_written(summary)}")
    return _played_status(summary, go_on, args.prog)


def _run_arguments(args: argparse.Namespace, given: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """A run's arguments: each one ``given`` (``None``: not typed), else with ``--resume`` the run's config.json's,
    else its default (``None`` without one)."""
    if args.resume and args.out is None:
        raise _UsageError("--resume needs --out DIR, the run to continue")
    old = (read_config(args.out) or {}) if args.resume else {}
    return {key: value if value is not None else old.get(key, defaults.get(key)) for key, value in given.items()}


def _run_until_interrupted(go_on: str, **arguments: Any) -> dict[str, Any] | None:
    """``run_arena(**arguments)``'s summary; ``None`` after a Ctrl-C, which stops the run at once: the finished games
    stay in its folder, and stderr says so with ``go_on``, the command that plays the rest."""
    try:
        return run_arena(**arguments)
    except KeyboardInterrupt:
        print(f"\ninterrupted; finished games are kept. Continue with: {go_on}", file=sys.stderr)
        return None


def _written(summary: dict) -> str:
    """The run folder's files this run wrote: games.jsonl and what the report wrote (no plot it skipped)."""
    return ", ".join(["games.jsonl", *summary.get("files", ["summary.json"])])


def _played_status(summary: dict, resume: str, prog: str) -> int:
    """0, or 1 with the reason on stderr when not one game could be played (every match void: the LLM server
    stayed unavailable) or every game crashed (the first crash is named)."""
    void, games, crashed = summary.get("void", 0), summary.get("games", 0), summary.get("crashed", 0)
    if games == 0 and void:
        print(f"no game could be played: {void} void match(es), the LLM server stayed unavailable (see the "
              f"messages above); play them again with: {resume}", file=sys.stderr)
        return 1
    if games and crashed == games:
        print(f"{prog}: error: every game crashed ({crashed} of {games}); the first: {summary.get('first_crash')}",
              file=sys.stderr)
        return 1
    return 0


def _default_players(game: str) -> list[str]:
    """The default lineup, less any policy the registry says cannot load here (asked without building it: the run
    builds each once); each one left out is named on stderr with the reason (its error names the fix)."""
    available = []
    for spec in entry(game).players:
        reason = why_unavailable(spec, game)
        if reason is not None:
            print(f"{spec} is left out of the default line-up: {reason}", file=sys.stderr)
            continue
        available.append(spec)
    return available


# --- llm-match --------------------------------------------------------------------------------------
def _add_llm_match(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "llm-match", help="LLMs against each other (or any policies), with readable game logs",
        description="Play the policies given for seats 0.. (usually llm:model=... specs, which must differ) with "
                    "every reply checked against the legal moves, seats rotated on shared seeds. Writes the "
                    "arena's results (OUT/games.jsonl, summary.json, plots) and OUT/logs/game-NNNN.txt: each "
                    "move with the model's reasoning, the board after it, and the accounting. docs/llm.md has "
                    "the llm options.")
    _add_game(p, names())
    for seat in range(4):
        p.add_argument(f"--p{seat}", metavar="SPEC",
                       help=f"policy spec of seat {seat}" + (" (optional)" if seat >= 2 else " (required, but with "
                                                              "--resume)"))
    p.add_argument("--games", type=int, metavar="N", help="games (default: one per seat, so each sits everywhere)")
    p.add_argument("--seed", type=int, metavar="S", help="run seed (default 0)")
    p.add_argument("--jobs", type=int, default=4, metavar="J", help="games played at once (default 4)")
    p.add_argument("--out", type=Path, metavar="DIR", help="run folder (default runs/llm-match-<game>-<time>)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out (replays void games); "
                   "arguments left out are taken from its config.json")
    p.add_argument("--api-key", metavar="KEY", help="API key for the llm seats' server (sets "
                   "$TABLETOP_LLM_API_KEY; default: the variable named by api_key_env=, else $TABLETOP_LLM_API_KEY, "
                   "else $OPENROUTER_API_KEY / $OPENAI_API_KEY for their own hosts only; docs/llm.md. A flag shows "
                   "in shell history, so prefer the variables)")
    p.set_defaults(func=_llm_match, prog=p.prog)


def _llm_match(args: argparse.Namespace) -> int:
    _check_games(args.games)
    if args.p3 and not args.p2:
        raise _UsageError("--p3 needs --p2 (seats are filled in order)")
    if (args.p0 is None) != (args.p1 is None) or (args.p0 is None and not args.resume):
        raise _UsageError("--p0 and --p1 are required (with --resume they may come from the run's config.json)")
    typed = [spec for spec in (args.p0, args.p1, args.p2, args.p3) if spec] or None
    chosen = _run_arguments(args, {"players": typed, "games": args.games, "seed": args.seed}, {"seed": 0})
    seats = chosen["players"]
    if seats is None:
        raise _UsageError(f"nothing to resume in {args.out}: it has no config.json; start it with --p0 and --p1")
    if args.api_key:
        os.environ[API_KEY_ENV] = args.api_key  # read by every llm seat, in this process and its workers
    out = args.out or Path("runs") / f"llm-match-{args.game}-{datetime.now():%Y%m%d-%H%M%S}"
    go_on = f"tabletop llm-match {_cli_name(args.game)} --out {shlex.quote(str(out))} --resume"
    summary = _run_until_interrupted(go_on, game=args.game, players=seats, games=chosen["games"] or len(seats),
                                     seed=chosen["seed"], jobs=args.jobs, out=out, resume=args.resume,
                                     num_players=len(seats))
    if summary is None:
        return 130
    logs = write_game_logs(out, load_games(out))
    print(format_table(summary))
    print(f"\nresults in {out}: {_written(summary)}; {len(logs)} game logs in {out / 'logs'} "
          f"(or: tabletop replay {out} --game N)")
    return _played_status(summary, go_on, args.prog)


# --- play -------------------------------------------------------------------------------------------
def _add_play(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "play", help="play a game in the terminal against policies",
        description="You play one seat; policies play the others. Each turn shows the board from your seat and "
                    "the legal moves, numbered: answer with a number or a move name. help, board, quit "
                    "(saves the game for --load). Space Conquest has its own options (by default you against the "
                    "heuristic bot, offline): tabletop play space-conquest --help.")
    _add_game(p, _played_in_terminal())
    p.add_argument("--vs", metavar="SPECS", help="opponent policy spec, or one per opponent seat, comma-separated "
                   "(default greedy)")
    p.add_argument("--players", type=int, metavar="N", help="players in the game (default 2)")
    p.add_argument("--seat", type=int, metavar="S", help="your seat, 0 moves first (default 0)")
    p.add_argument("--seed", type=int, metavar="S", help="deal seed (default: a random one)")
    p.add_argument("--load", type=Path, metavar="FILE", help="resume a game saved by quit")
    p.add_argument("--save", type=Path, default=Path("tabletop-save.json"), metavar="FILE",
                   help="where quit saves the game (default tabletop-save.json)")
    p.set_defaults(func=_play, prog=p.prog)


def _play(args: argparse.Namespace) -> int:
    if ("play", args.game) in _delegated():  # reached only with an option before the game's name
        game = _cli_name(args.game)
        raise _UsageError(f"{game} takes its own options after its name: tabletop play {game} [options] "
                          f"(tabletop play {game} --help)")
    if args.load is not None:
        clash = [flag for flag, value in (("--vs", args.vs), ("--players", args.players), ("--seat", args.seat),
                                          ("--seed", args.seed)) if value is not None]
        if clash:
            raise _UsageError(f"--load resumes a saved game with its own seats; drop {', '.join(clash)}")
        return play_terminal(load=args.load, save=args.save)
    return play_terminal(args.game, vs=split_specs(args.vs or "greedy"), num_players=args.players or 2,
                         seat=args.seat or 0, seed=args.seed, save=args.save)


# --- replay -----------------------------------------------------------------------------------------
def _add_replay(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "replay", help="step through a recorded game from an arena's games.jsonl",
        description="Rebuild a recorded game from its seed and moves and show it as a spectator sees it, or as "
                    "one seat saw it (--seat): Enter or n for the next move (a turn of orders in Space Conquest), "
                    "p for the previous, a number to jump, q to stop. With input from a pipe or file, every "
                    "position is printed.")
    p.add_argument("file", type=Path, metavar="FILE", help="games.jsonl (or the run folder holding it)")
    p.add_argument("--game", type=int, metavar="N", help="game index in the file (default: the first)")
    p.add_argument("--seat", type=int, metavar="S", help="show only what seat S saw: its fog of war, its hand, "
                   "its own orders and LLM notes (default: the spectator's view)")
    p.set_defaults(func=_replay, prog=p.prog)


def _replay(args: argparse.Namespace) -> int:
    return replay_terminal(args.file, args.game, seat=args.seat)


# --- web --------------------------------------------------------------------------------------------
#: The page's default port and where games played in it are saved (``tabletop_rl.ui.web.app`` has the same;
#: repeated here so the help works without the [web] extra).
_WEB_PORT, _WEB_SAVES = 8765, Path("tabletop-saves")
_WEB_MODULES = ("fastapi", "uvicorn", "starlette", "pydantic")


def _add_web(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "web", help="see arena runs and play in the browser (needs the [web] extra)",
        description="Serve a local web page: the games of an arena run (a run folder or its games.jsonl) drawn as "
                    "boards, stepped move by move as a spectator or as one player saw them, with the LLM players' "
                    "reasoning and costs; the run's summary; and a table where you play policies, saved after every "
                    "move. The table offers only the policies you allow: the built-in ones (" + "; ".join(
                        f"{_cli_name(game)}: {', '.join(specs)}" for game, specs in default_policies().items())
                    + "; those this installation can build) and each --allow SPEC; a request "
                      "picks one of them and sets nothing else. docs/web.md.")
    p.add_argument("run", type=Path, nargs="?", metavar="RUN", help="an arena run folder or games.jsonl (default: "
                   "none, play only)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=_WEB_PORT, metavar="P", help=f"port (default {_WEB_PORT}; 0: any free)")
    p.add_argument("--saves", type=Path, default=_WEB_SAVES, metavar="DIR",
                   help=f"folder for the games played in the page (default ./{_WEB_SAVES})")
    p.add_argument("--allow-remote", action="store_true", help="let --host be an address other machines reach "
                   "(the page has no login)")
    p.add_argument("--allow", action="append", default=[], metavar="SPEC",
                   help="offer this policy spec too, in every game that has the policy, or in one game as GAME:SPEC "
                        "(e.g. splendor:llm:model=openai/gpt-4o-mini,api_key_env=MY_KEY: the host and key are "
                        "yours to fix, a request cannot change them); checked by building it before the page "
                        "listens; repeatable")
    p.set_defaults(func=_web, prog=p.prog)


def _web(args: argparse.Namespace) -> int:
    try:
        app = importlib.import_module("tabletop_rl.ui.web.app")
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in _WEB_MODULES:
            raise
        print(f"{args.prog}: error: {missing_extra(e.name or 'fastapi', 'tabletop web', 'web')}", file=sys.stderr)
        return 1
    status: int = app.serve(args.run, saves=args.saves, host=args.host, port=args.port, allow_remote=args.allow_remote,
                            allow=args.allow)
    return status


# --- bench ------------------------------------------------------------------------------------------
def _add_bench(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "bench", help="throughput table of the rules core and every env interface",
        description="Times random legal play through the numba core, the Python API, the AEC, Gymnasium "
                    "and vector envs, and prints a table (benchmarks/ has the longer scripts). Its options "
                    "(--seconds, --games, --num-envs) follow the game: tabletop bench splendor --help.")
    p.add_argument("game", choices=["splendor"])
    p.add_argument("options", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)  # the game's own, parsed there
    p.set_defaults(func=_bench, prog=p.prog)


def _bench(args: argparse.Namespace) -> int:
    bench_main(args.options)
    return 0


# --- train ------------------------------------------------------------------------------------------
#: ``tabletop train splendor --algo NAME``: (the trainer's knobs, its train function).
_TRAINERS: dict[str, tuple[type, Callable[[Any], Path]]] = {
    "ppo": (splendor_cleanrl_ppo.Args, splendor_cleanrl_ppo.train),
    "sb3": (TrainConfig, splendor_ppo.train),
    "az": (splendor_az.Args, splendor_az.train),
    "distill": (splendor_distill.Args, splendor_distill.train)}

#: What each trainer's final model plays as, for the last line of ``tabletop train``.
_SEARCH_TRAINERS = ("az", "distill")
#: The checkpoints in OUT/checkpoints that ``--resume`` continues from, by trainer (distill resumes by running
#: again: the games it labelled are kept).
_RESUMABLE = {"ppo": "step_*.pt", "sb3": "step_*.zip", "az": "iter_*.pt"}


def _add_train(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "train", help="PPO self-play against a pool of past selves, random and greedy; self-play with search; or a "
                      "network taught by a search",
        description="Train a Splendor agent with PPO self-play on SplendorVectorEnv (needs the [train] extra). The "
                    "learner plays one random seat per game; opponents are drawn per game from --mix. Evaluations "
                    "go to OUT/eval.csv and TensorBoard (OUT/logs); checkpoints to OUT/checkpoints; the final model "
                    "to OUT/final.pt, loadable as the policy ppo:OUT/final.pt. --algo sb3 trains with sb3-contrib's "
                    "MaskablePPO instead (the flags below less --vf-coef, --max-grad-norm, --norm-adv, "
                    "--anneal-lr and --target-kl; OUT/final.zip). --algo az trains by self-play with search "
                    "(expert iteration: PUCT games, targets the visit counts and the results, a replay buffer) with "
                    "its own flags (its group below); --algo distill teaches a network to play alone from a "
                    "search's choices (its group below). Their OUT/final.pt plays as az:OUT/final.pt (a search) or "
                    "ppo:OUT/final.pt (the network alone).")
    p.add_argument("game", choices=["splendor"])
    p.add_argument("--algo", choices=sorted(_TRAINERS), default="ppo",
                   help="ppo: the CleanRL-style PPO loop (default); sb3: sb3-contrib's MaskablePPO; az: self-play "
                        "with PUCT search (expert iteration); distill: a network taught by a search's choices")
    added = {f.name: f for f in dataclasses.fields(_TRAINERS["ppo"][0])}
    add_arguments(p, _TRAINERS["ppo"][0], unset=True)
    notes = {"az": "; --eval-every and --checkpoint-every count iterations.",
             "distill": "; it evaluates and writes a checkpoint after each round."}
    for algo, note in notes.items():
        fields = dataclasses.fields(_TRAINERS[algo][0])
        shared = [f for f in fields if f.name in added]
        differ = ", ".join(f"--{f.name.replace('_', '-')} {f.default}" for f in shared
                           if f.default != added[f.name].default)
        group = p.add_argument_group(
            f"--algo {algo}", f"Also takes {', '.join('--' + f.name.replace('_', '-') for f in shared)} from above, "
                              f"with these defaults: {differ}{note}")
        add_arguments(group, _TRAINERS[algo][0], skip=added, unset=True)
        added.update({f.name: f for f in fields if f.name not in added})
    p.set_defaults(func=_train, prog=p.prog)


def _train(args: argparse.Namespace) -> int:
    config_class, train = _TRAINERS[args.algo]
    own = {f.name for f in dataclasses.fields(config_class)}
    flags = {f.name for config, _ in _TRAINERS.values() for f in dataclasses.fields(config)}
    given = {name: value for name, value in vars(args).items() if name in flags}  # only the flags typed
    for name in given:
        if name not in own:
            raise _UsageError(f"--{name.replace('_', '-')} is not a setting of --algo {args.algo}")
    config = config_class(**given)
    try:
        final = train(config)
    except ModuleNotFoundError as e:
        message = _missing_train_extra(e)
        if message is None:
            raise
        print(f"{args.prog}: error: {message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\ninterrupted; {_train_resume_hint(args.algo, given, Path(config.out))}", file=sys.stderr)
        return 130
    spec = (f"az:{final} (the search) or ppo:{final} (the network alone)" if args.algo in _SEARCH_TRAINERS
            else f"ppo:{final}")
    print(f"final model: {final} (play it with the policy spec {spec})")
    return 0


def _train_resume_hint(algo: str, given: dict[str, Any], out: Path) -> str:
    """How to go on after an interrupt: the command typed, with ``--resume`` of the latest checkpoint in
    ``out`` (else the one it resumed from; distill: the same command, which labels only the games not yet
    labelled).

    >>> _train_resume_hint("distill", {"games": 400, "progress": False}, Path("runs/d"))
    'the games labelled so far are kept in runs/d/data; go on with: tabletop train splendor --algo distill \
--games 400 --no-progress --out runs/d (it labels only the rest, then fits and evaluates again)'
    """
    flags = {name: value for name, value in given.items() if name not in ("out", "resume")}
    command = " ".join(["tabletop train splendor", *([f"--algo {algo}"] if algo != "ppo" else []),
                        *(_flag(name, value) for name, value in flags.items()), f"--out {shlex.quote(str(out))}"])
    if algo not in _RESUMABLE:
        return (f"the games labelled so far are kept in {out / 'data'}; go on with: {command} (it labels only the "
                f"rest, then fits and evaluates again)")
    latest = _latest_checkpoint(out / "checkpoints", _RESUMABLE[algo]) or (
        Path(given["resume"]) if given.get("resume") else None)
    if latest is None:
        return f"no checkpoint was written yet (see --checkpoint-every); start again with: {command}"
    return f"go on from its latest checkpoint with: {command} --resume {shlex.quote(str(latest))}"


def _flag(name: str, value: object) -> str:
    """A typed setting as a flag again: ``--steps 2000``, ``--no-progress``."""
    flag = "--" + name.replace("_", "-")
    if isinstance(value, bool):
        return flag if value else "--no-" + flag[2:]
    return f"{flag} {shlex.quote(str(value))}"


def _latest_checkpoint(folder: Path, pattern: str) -> Path | None:
    """The checkpoint matching ``pattern`` (``step_*.pt``) with the highest count in its name, if any."""
    counts = {int(path.stem.rpartition("_")[2]): path for path in folder.glob(pattern)
              if path.stem.rpartition("_")[2].isdigit()}
    return counts[max(counts)] if counts else None


# --- serve ------------------------------------------------------------------------------------------
def _add_serve(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "serve", help="an HTTP service for a game (Klaverjas's best-card service; needs the [serve] extra)",
        description="Run a game's HTTP service. Its options: tabletop serve klaverjas --help.")
    _add_game(p, [game for command, game in _delegated() if command == "serve"])
    p.set_defaults(func=_serve, prog=p.prog)


def _serve(args: argparse.Namespace) -> int:  # reached only without arguments after the game: delegate
    status: int = resolve(_delegated()[("serve", args.game)])([])
    return status


# Each entry adds one sub-command.
_SUBCOMMANDS: tuple[Callable[[argparse._SubParsersAction], None], ...] = (
    _add_arena, _add_llm_match, _add_play, _add_replay, _add_web, _add_bench, _add_train, _add_serve)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose refusal of a name that is not among the choices (a command, a game) suggests the
    closest one."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as e:
            close = difflib.get_close_matches(str(value), [str(choice) for choice in action.choices or ()], n=1)
            if not close:
                raise
            raise argparse.ArgumentError(action, f"{e.message}; did you mean {close[0]!r}?") from None


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tabletop", description="Tabletop games for reinforcement learning: tournaments, terminal play, "
                                     "replays. Run 'tabletop <command> --help' for a command's options.",
        epilog="Games with their own options: " + ", ".join(f"tabletop {c} {_cli_name(g)}" for c, g in _delegated())
               + " (each with --help).")
    commands = parser.add_subparsers(title="commands", metavar="<command>")
    for add in _SUBCOMMANDS:
        add(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``tabletop`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    Errors in the arguments (a bad policy spec, a run that cannot resume, ...) print one line and
    return 2; no traceback.
    """
    warnings.formatwarning = lambda message, *_, **__: f"tabletop: warning: {message}\n"
    argv = list(sys.argv[1:] if argv is None else argv)
    command = (argv[0], _game_name(argv[1])) if len(argv) >= 2 else None
    if command is not None and command in _delegated():
        return resolve(_delegated()[command])(argv[2:])
    parser = _build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except ValueError as e:  # our own checks raise ValueError with a one-line message
        print(f"{args.prog}: error: {e}", file=sys.stderr)
        return 2
    except LLMError as e:  # a server refused an LLM player's request (bad key, unknown model, ...)
        print(f"{args.prog}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\n{args.prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (tabletop replay ... | head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit flush cannot fail again
        return 141


if __name__ == "__main__":
    sys.exit(main())
