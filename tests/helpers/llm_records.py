"""Game records with LLM seats for the viewers' tests: a move that fell back after its replies were rejected, and a
forfeit (tests/ui/test_web.py, tests/ui/test_web_browser.py)."""

from __future__ import annotations

from typing import Any

#: An LLM's note on a move whose replies were rejected, as a record keeps it.
FALLBACK_NOTE = {"source": "fallback", "reasoning": "", "attempts": 2, "parse_failures": 1, "illegal_replies": 1,
                 "truncated": 0, "rejected": [
                     {"kind": "illegal", "reason": "buy:3.0: card 80 costs 12 more", "reply": '{"action": "buy:3.0"}'},
                     {"kind": "parse", "reason": "no JSON object", "reply": "hmm\nlet me see"}],
                 "fallback_reason": "no usable reply in 2 attempt(s), last error: no JSON object",
                 "prompt_tokens": 900, "completion_tokens": 40, "cached_tokens": 512, "cost": None, "latency_s": 1.5,
                 "time_s": 31.5}


def forfeit_record() -> dict[str, Any]:
    """P0 (an LLM) falls back to a random move, then P1 (an LLM) forfeits its first decision."""
    return {"index": 0, "game": "splendor", "num_players": 2, "max_plies": None, "seed": 5,
            "seats": ["llm:model=a", "llm:model=b"], "moves": ["take:white,blue,green"], "plies": 1,
            "scores": [0, 0], "winners": [0], "ranks": [0, 1], "truncated": False, "error": None, "error_seat": None,
            "decisions": [1, 1], "time_s": [31.5, 20.0], "nodes": [0, 0], "llm_notes": [FALLBACK_NOTE],
            "forfeit": 1, "forfeit_reason": "no usable reply in 4 attempt(s), last error: no JSON object",
            "forfeit_note": {**FALLBACK_NOTE, "source": "forfeit", "attempts": 4, "time_s": 20.0,
                             "fallback_reason": "no usable reply in 4 attempt(s), last error: no JSON object"}}
