"""The best-card service's domain (ui/klaverjas_best_card.py) without the web: it imports with fastapi and pydantic
unavailable, makes a request into the player's position under the rule knobs, refuses what the rules refuse
naming the field, and ranks the legal cards from the responders in order."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import tabletop_rl
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.ui.klaverjas_best_card import BestCard, Play, Query, RequestError, Trick, position

#: The example of the service's docs: the second trick, N to play after E led the trump ace.
HAND = ["JH", "9H", "AC", "10C", "KS", "7D", "8D"]
TABLE: list[str | Play] = [Play(2, "AH"), Play(3, "7H")]
HISTORY = [Trick(0, ["7S", "8S", "AS", "9S"], winner=2, points=11)]


def query(**changes) -> Query:
    return Query(**{"hand": HAND, "table": TABLE, "history": HISTORY, "trump": "H", "playerPosition": 0,
                    "requestId": "abc-123", **changes})


def test_it_imports_and_answers_with_no_web_framework():
    src = str(Path(tabletop_rl.__file__).resolve().parents[1])
    code = ("import sys\n"
            f"sys.path.insert(0, {src!r})\n"
            "for name in ('fastapi', 'pydantic', 'pydantic_core', 'starlette', 'uvicorn', 'httpx', 'yaml'):\n"
            "    sys.modules[name] = None  # importing any of them now raises ImportError\n"
            "from tabletop_rl.ui.klaverjas_best_card import BestCard, Query\n"
            "print(BestCard().choose(Query(hand=['JH', '9H'], trump='H', playerPosition=0))['legalCards'])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['9H',", "'JH']"]


def test_the_example_is_answered_with_a_legal_card():
    answer = BestCard().choose(query())
    assert set(answer["legalCards"]) == {"JH", "9H"} and answer["bestCard"] in answer["legalCards"]
    assert answer["model"] == {"name": "heuristic", "version": "1"} and answer["requestId"] == "abc-123"
    assert [c["legal"] for c in answer["candidates"]] == [True, True, False]
    assert all(c["reason"] == "fallback" for c in answer["candidates"][:2])


@pytest.mark.parametrize("changes, status, message", [
    ({"hand": ["JH", "JH", "AC", "10C", "KS", "7D", "8D"]}, 400, "hand[1]: card JH already appears in hand[0]"),
    ({"hand": ["JH", "9H", "AC", "10C", "KS", "7D", "1D"]}, 400, "hand[6]: bad card '1D'"),
    ({"trump": "X"}, 400, "trump: bad suit 'X'"),
    ({"leaderPosition": 2, "table": [Play(3, "AH"), Play(0, "7H")]}, 400, "table[0].player: expected seat 2"),
    ({"table": ["AH", "7H"]}, 400, "leaderPosition: required when table[0] is a bare card"),
    ({"playerPosition": 1}, 422, "no legal card: seat 0 is to act, not playerPosition 1"),
    ({"hand": HAND[:6]}, 422, "no legal card: after 1 tricks the hand must hold 7 cards, got 6"),
    ({"history": [Trick(0, ["7S", "8S", "AS", "9S"], winner=0)]}, 422, "history[0].winner is 0, the rules say 2"),
])
def test_a_refusal_names_the_field_as_the_client_wrote_it(changes, status, message):
    with pytest.raises(RequestError, match=re.escape(message)) as refused:
        BestCard().choose(query(**changes))
    assert refused.value.status == status


def test_forced_undertrumping_changes_the_legal_cards():
    """docs/klaverjas.md §8.1 example 3 at the first trick: N (partner) led KC, E trumped with 9H; S holds only lower
    trumps and two diamonds."""
    trumps = ["AH", "10H", "KH", "QH", "8H", "7H"]
    base = query(hand=trumps + ["10D", "9D"], playerPosition=2, table=[Play(0, "KC"), Play(1, "9H")], history=[],
                 rules="amsterdam")
    assert set(BestCard().choose(base)["legalCards"]) == {"10D", "9D"}
    base.amsterdamUndertrump = "forced"
    assert set(BestCard().choose(base)["legalCards"]) == set(trumps)
    base.rules = "rotterdam"
    with pytest.raises(RequestError, match="^amsterdamUndertrump: "):
        position(base)


def test_history_roem_follows_the_stuk_and_quartet_knobs():
    """N played QH and later KH (trump H) in different tricks, then a trick of four 8s; N won all three."""
    history = [Trick(0, ["QH", "7C", "9C", "JC"]), Trick(0, ["KH", "10C", "AC", "QC"]),
               Trick(0, ["8H", "8D", "8S", "8C"])]
    base = {"hand": ["JH", "AH", "7D", "9D", "10D"], "history": history, "trump": "H", "playerPosition": 0}
    same = position(Query(**base))
    declared = position(Query(**base, stukMode="declared_from_hand", quartetValues="low_100"))
    assert same[R.ROEM:R.ROEM + 2].tolist() == [0, 0]  # no trick holds K and Q; four 8s score 0
    assert declared[R.ROEM:R.ROEM + 2].tolist() == [R.STUK_ROEM + 100, 0]


def test_scoring_modes_rank_legal_cards():
    spades = query(hand=["JH", "10S", "AC", "10C", "KS", "7D", "8D"], leaderPosition=3, table=[Play(3, "QS")],
                   history=[Trick(0, ["7C", "8C", "9C", "JC"])], scoringMode="winTrick")
    answer = BestCard().choose(spades)
    assert set(answer["legalCards"]) == {"10S", "KS"} and answer["bestCard"] in {"10S", "KS"}  # both beat QS
    spades.scoringMode = "points"
    assert BestCard().choose(spades)["bestCard"] == "10S"  # the larger swing


def test_the_external_scorer_is_sent_the_request_and_its_choice_kept_to_legal_cards():
    sent = []

    def last_card_first(body, legal):
        sent.append((body, legal))
        return {card: float(i) for i, card in enumerate(sorted(body["hand"]))}, {"name": "fake", "version": "9"}

    answer = BestCard(external=last_card_first).choose(query())
    assert answer["model"] == {"name": "fake", "version": "9"} and answer["candidates"][0]["reason"] == "external model"
    assert answer["bestCard"] == "JH"  # KS scores highest but is not legal; of JH/9H, JH sorts later
    body, legal = sent[0]
    assert sorted(legal) == ["9H", "JH"] and body["table"][0] == {"player": 2, "card": "AH"}
    assert body["history"][0]["plays"] == ["7S", "8S", "AS", "9S"] and body["requestId"] == "abc-123"


def test_a_failed_external_scorer_falls_back_unless_a_model_is_required():
    def down(body, legal):
        raise RuntimeError("external scoring API failed: ConnectError")

    assert BestCard(external=down).choose(query())["model"]["name"] == "heuristic"
    with pytest.raises(RequestError, match="^allowFallback: a model is required") as refused:
        BestCard(external=down).choose(query(allowFallback=False))
    assert refused.value.status == 503
