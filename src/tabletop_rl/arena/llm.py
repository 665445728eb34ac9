"""LLM players in the arena: per-move notes and per-game accounting in game records, forfeits, void
matches, the LLM part of the summary, and the readable game logs of ``tabletop llm-match``.

A game record of a match with an LLM seat gains ``llm`` (per seat: the game's accounting, or ``None``
for a seat that is not an LLM), ``llm_settings`` (per seat: the player's ``settings``, its preset among
them, or ``None``) and ``llm_notes`` (per step, like ``moves``: the mover's reasoning and what the move
cost, or ``None``; in a game of simultaneous moves a list with one such note per seat). Policies are
recognised by duck typing: an ``accounting`` dict and ``moves`` records.

A game is **clean** (``CLEAN_NOTE``) when no LLM move in it was made by a fallback policy: its result is
the models' own. A forfeit keeps a game clean (the model lost by its own unusable replies, as benchmarks
score it); a server fault never causes one (the match is void and played again).

>>> acc = {"clean": True, "attempts": 3, "modes": {"json_schema": 3}}
>>> summarize_llm([{"seats": ["llm:model=m", "random"], "llm": [acc, None]}])
{'llm:model=m': {'games': 1, 'clean_games': 1, 'settings': None, 'attempts': 3, 'modes': {'json_schema': 3}}}
"""

from __future__ import annotations

from typing import Any

__all__ = ["CLEAN_NOTE", "VOID_RERUNS", "accounting_lines", "add_llm_outcome", "format_llm_table", "headline_ratings",
           "is_clean", "is_llm", "move_note", "note_lines", "note_problem", "summarize_llm"]

#: A match whose LLM server stayed unavailable is played again this many times before it is left void.
VOID_RERUNS = 2
#: What the summary's clean games are (its headline ratings come from them).
CLEAN_NOTE = ("clean game: no LLM move made by a fallback policy; a forfeit (the model's unusable replies) "
              "is a loss and stays clean; void games (server unavailable) are never scored")
#: Per-move fields kept in ``llm_notes`` when the move record has them (``tool_calls``: tool-using players);
#: the rest of a move record is in the game's moves and seats.
_NOTE_FIELDS = ("source", "reasoning", "attempts", "parse_failures", "illegal_replies", "truncated", "rejected",
                "fallback_reason", "plan_note", "prompt_tokens", "completion_tokens", "cached_tokens", "cost",
                "latency_s", "time_s", "mode", "tool_calls")
#: Accounting fields averaged per move in the table.
_NOT_SUMMED = ("clean", "modes")


def is_llm(policy: Any) -> bool:
    return hasattr(policy, "accounting") and hasattr(policy, "moves")


def move_note(policy: Any) -> dict[str, Any] | None:
    """The decision ``policy`` just made, for ``llm_notes`` (``None`` for a policy that is not an LLM)."""
    if not is_llm(policy) or not policy.moves:
        return None
    record = policy.moves[-1].as_dict()
    return {name: record[name] for name in _NOTE_FIELDS if name in record}


def _per_llm_seat(policies: list[Any], field: str) -> list[Any] | None:
    """Per seat, the LLM policy's ``field`` (``None`` for other seats); ``None`` when no seat is an LLM."""
    if not any(is_llm(p) for p in policies):
        return None
    return [getattr(p, field, None) if is_llm(p) else None for p in policies]


def add_llm_outcome(record: dict[str, Any], policies: list[Any], notes: list[dict[str, Any] | None],
                    forfeit: int | None, void: str | None) -> None:
    """Complete a game record: LLM accounting, settings and notes (when a seat is an LLM), a forfeit (that
    seat loses, the others share first place; ``forfeit_reason`` says why), or ``void`` (why the server
    stayed unavailable; not scored).

    >>> record = {"seats": ["a", "b"], "winners": [], "ranks": None, "error": None}
    >>> add_llm_outcome(record, [], [], forfeit=0, void=None); record["winners"], record["ranks"]
    ([1], [1, 0])
    """
    accounting = _per_llm_seat(policies, "accounting")
    if accounting is not None:
        record["llm"], record["llm_notes"] = accounting, notes
        record["llm_settings"] = _per_llm_seat(policies, "settings")
    if forfeit is not None:
        n = len(record["seats"])
        record["forfeit"] = forfeit
        record["forfeit_reason"] = getattr(policies[forfeit], "forfeit_reason", None) if policies else None
        record["forfeit_note"] = move_note(policies[forfeit]) if policies else None  # the decision that forfeited
        record["ranks"] = [1 if s == forfeit else 0 for s in range(n)]
        record["winners"] = [s for s in range(n) if s != forfeit]
    if void is not None:
        record["void"] = void


def is_clean(record: dict[str, Any]) -> bool:
    """True when no LLM seat of the game fell back (``CLEAN_NOTE``)."""
    return all(acc is None or acc["clean"] for acc in record.get("llm") or [])


def headline_ratings(summary: dict[str, Any]) -> dict[str, Any]:
    """The ratings a run's summary leads with: ``ratings_clean`` with LLM players, else ``ratings`` (also in a
    summary written before ``headline_ratings`` existed)."""
    return summary[summary.get("headline_ratings", "ratings")]


def summarize_llm(valid: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per LLM policy: games, clean games, its settings (as its first game records them; ``None`` in a run
    older than the settings), each accounting counter summed over its games, and ``modes``: replies per reply
    format (``json_schema``, ``json_object_schema``, ...) over its games."""
    out: dict[str, dict[str, Any]] = {}
    for record in valid:
        settings = record.get("llm_settings") or [None] * len(record["seats"])
        for name, acc, mine_settings in zip(record["seats"], record.get("llm") or [], settings):
            if acc is None:
                continue
            mine = out.setdefault(name, {"games": 0, "clean_games": 0, "settings": mine_settings})
            mine["games"] += 1
            mine["clean_games"] += acc["clean"]
            for key, value in acc.items():
                if key not in _NOT_SUMMED and value is not None:
                    mine[key] = mine.get(key, 0) + value
            modes = mine.setdefault("modes", {})
            for mode, replies in (acc.get("modes") or {}).items():
                modes[mode] = modes.get(mode, 0) + replies
    return out


def format_llm_table(llm: dict[str, dict[str, Any]], labels: dict[str, str] | None = None) -> str:
    """The LLM policies' accounting as aligned text (empty when there is none); policies by their
    ``labels`` (spec: label) where given. Tokens are per decision (move): prompt, of them cached by the server,
    and completion."""
    if not llm:
        return ""
    labels = labels or {}
    names = {spec: labels.get(spec, spec) for spec in llm}
    wide = max([len("LLM policy"), *map(len, names.values())]) + 2
    lines = [f"{'LLM policy':<{wide}}{'preset':>10}{'listed':>7}{'games':>6}{'clean':>6}{'moves':>7}{'fallback':>9}"
             f"{'forfeit':>8}{'illegal':>8}{'parse':>6}{'cut':>5}{'tok in/move':>12}{'cached/move':>12}"
             f"{'tok out/move':>13}{'cost $':>9}{'s/call':>8}{'tools/move':>11}"]
    for name, acc in sorted(llm.items(), key=lambda item: names[item[0]]):
        moves, calls = acc.get("moves", 0), acc.get("attempts", 0)
        cost = f"{acc['cost']:.4f}" if "cost" in acc else "-"
        tools = _per(acc["tool_calls"], moves, 1) if "tool_calls" in acc else "-"  # tool-using players only
        settings = acc.get("settings") or {}  # none in a run older than the settings
        listed = {True: "yes", False: "no", None: "-"}[settings.get("legal_list")]
        lines.append(f"{names[name]:<{wide}}{settings.get('preset') or '-':>10}{listed:>7}{acc['games']:>6}"
                     f"{acc['clean_games']:>6}{moves:>7}{acc.get('fallback_moves', 0):>9}"
                     f"{acc.get('forfeit_moves', 0):>8}{acc.get('illegal_replies', 0):>8}"
                     f"{acc.get('parse_failures', 0):>6}{acc.get('truncated', 0):>5}"
                     f"{_per(acc.get('prompt_tokens', 0), moves):>12}{_per(acc.get('cached_tokens', 0), moves):>12}"
                     f"{_per(acc.get('completion_tokens', 0), moves):>13}"
                     f"{cost:>9}{_per(acc.get('latency_s', 0.0), calls, 2):>8}{tools:>11}")
    return "\n".join(lines)


def _per(total: float, count: int, digits: int = 0) -> str:
    return f"{total / count:.{digits}f}" if count else "-"


#: What ``note_lines`` reads of a note, with the type each field must have (a number: int or float).
_NOTE_TYPES: dict[str, Any] = {"source": str, "attempts": int, "prompt_tokens": int, "completion_tokens": int,
                               "latency_s": (int, float), "reasoning": str}
#: Fields a note may have, and their types: the decision's wall time and why a move was not the model's (records
#: before them have neither), the rejected replies (``{"kind", "reason", "reply"}`` each), or in records before
#: them only the reasons, ``errors``.
_NOTE_OPTIONAL: dict[str, Any] = {"time_s": (int, float), "fallback_reason": str, "plan_note": str,
                                  "cost": (int, float, type(None)),
                                  "cached_tokens": int, "rejected": list, "errors": list}


def note_problem(note: Any) -> str | None:
    """What keeps ``note`` (one seat's entry of a record's ``llm_notes``, or its ``forfeit_note``) from being shown,
    or ``None`` (a note, or ``None`` for a move that was not an LLM's).

    >>> note_problem({"source": "llm"})
    'lacks "attempts" (int)'
    """
    if note is None:
        return None
    if not isinstance(note, dict):
        return f"is {type(note).__name__}, not an object"
    for key, kind in _NOTE_TYPES.items():
        if not _typed(note.get(key), kind):
            return f'lacks "{key}" ({_kind_name(kind)})'
    for key, kind in _NOTE_OPTIONAL.items():
        if key in note and not _typed(note[key], kind):
            return f'"{key}" must be {_kind_name(kind)}'
    if "rejected" not in note and "errors" not in note:
        return 'lacks "rejected" (list)'
    if not all(isinstance(error, str) for error in note.get("errors", ())):
        return '"errors" must be a list of texts'
    if not all(isinstance(r, dict) and all(isinstance(r.get(k), str) for k in ("kind", "reason", "reply"))
               for r in note.get("rejected", ())):
        return '"rejected" must be a list of objects with the texts "kind", "reason" and "reply"'
    return None


def _typed(value: Any, kind: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, kind)


def _kind_name(kind: Any) -> str:
    if isinstance(kind, type):
        return kind.__name__
    return "a number or null" if type(None) in kind else "a number"


def note_lines(note: dict[str, Any] | None) -> str:
    """A move's reasoning, cost and time, why it was not the model's (a fallback or a forfeit), and each rejected reply
    with the reason, indented, for replays and game logs (empty for a non-LLM move). The time is the decision's
    (``time_s``: failed calls, retries and waits included) with the calls' own beside it; a record from before
    ``time_s`` has only the calls'."""
    if note is None:
        return ""
    cost = f", ${note['cost']:.5f}" if note.get("cost") is not None else ""
    tools = f", {note['tool_calls']} tool call(s)" if "tool_calls" in note else ""
    took = (f"{note['time_s']:.2f} s (calls {note['latency_s']:.2f} s)" if "time_s" in note
            else f"{note['latency_s']:.2f} s")
    lines = [f"    [{note['source']}; {note['attempts']} call(s){tools}, {note['prompt_tokens']}+"
             f"{note['completion_tokens']} tokens{cost}, {took}]"]
    if note.get("fallback_reason"):
        lines.append(f"    {note['source']}: {note['fallback_reason']}")
    if note["reasoning"]:
        lines.append(f"    reasoning: {note['reasoning']}")
    for rejected in note.get("rejected", ()):
        lines.append(f"    rejected ({rejected['kind']}): {rejected['reason']}")
        lines += [f"      | {line}" for line in (rejected["reply"] or "(empty reply)").splitlines()]
    lines += [f"    rejected: {error}" for error in note.get("errors", ())]
    return "\n".join(lines) + "\n"


def accounting_lines(record: dict[str, Any]) -> str:
    """Per LLM seat, the game's totals, for the end of a game log."""
    lines = []
    for seat, acc in enumerate(record.get("llm") or []):
        if acc is not None:
            shown = {k: v for k, v in acc.items() if k != "modes"}
            lines.append(f"P{seat} {record['seats'][seat]}: " + ", ".join(
                f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in shown.items()))
    return ("\naccounting\n" + "\n".join(lines) + "\n") if lines else ""
