"""LLM players without a network: a scripted backend stands where the ``openai`` SDK call would be,
so these tests drive the policy logic (parsing, validation, re-prompts, fallbacks, planned token
returns, accounting), the retry loop, the response cache and Splendor's prompt."""

from __future__ import annotations

import json
import logging
import random
import time

import numpy as np
import pytest

from fake_openai_server import legal_ids
from positions import cost, position
from tabletop_rl.agents import make_policy
from tabletop_rl.agents.llm.client import (
    ChatClient,
    ChatReply,
    ChatRequest,
    FatalLLMError,
    LLMTimeoutError,
    LLMUnavailableError,
    ResponseCache,
    RetrySettings,
    TransientLLMError,
    Usage,
    retry_after_seconds,
    status_error,
)
from tabletop_rl.agents.llm.policy import (
    FINAL_ANSWER,
    REJECTED_KEPT,
    ForfeitError,
    LLMPolicy,
    PlannedMove,
    ReplyError,
    _step_down,
    parse_reply,
    server_mode,
)
from tabletop_rl.agents.llm.splendor import PROMPT, SYSTEM_PROMPT
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.actions import ACTION_NAMES
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.render import render_ansi

USAGE = Usage(prompt_tokens=120, completion_tokens=30, reasoning_tokens=5, cached_tokens=100, cost=0.0002)


class Scripted:
    """A backend that answers with the scripted replies in order (an exception is raised instead)."""

    def __init__(self, *replies: str | ChatReply | Exception) -> None:
        self.replies = list(replies)
        self.requests: list[ChatRequest] = []

    def complete(self, request: ChatRequest) -> ChatReply:
        self.requests.append(request)
        assert self.replies, "the policy asked for more replies than the test scripted"
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply if isinstance(reply, ChatReply) else ChatReply(reply, "stop", USAGE, latency_s=0.25)


class LegalPlayer:
    """A backend that picks a random legal id from the request's JSON schema (plays whole games)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.requests: list[ChatRequest] = []

    def complete(self, request: ChatRequest) -> ChatReply:
        self.requests.append(request)
        legal = legal_ids(request.response_format["json_schema"]["schema"]["properties"]["action"])
        return ChatReply(move(self.rng.choice(legal)), "stop", USAGE, latency_s=0.01)


def move(action, reasoning: str = "because") -> str:
    return json.dumps({"reasoning": reasoning, "action": action})


def policy(*replies, **options) -> LLMPolicy:
    backend = replies[0] if len(replies) == 1 and not isinstance(replies[0], (str, ChatReply, Exception)) \
        else Scripted(*replies)
    return LLMPolicy(seed=0, backend=backend, **options)


def act(p, game: SplendorGame) -> int:
    return p.act(None, game.legal_mask(), game.policy_info(game.current_player))


def play(p, game: SplendorGame) -> int:
    action = act(p, game)
    game.step(action)
    return action


def fresh() -> SplendorGame:
    return SplendorGame(2, seed=11)


# --- replies and moves -------------------------------------------------------------------------
def test_a_good_reply_is_played_and_accounted():
    game = fresh()
    p = policy(move(3, "three colours"))
    assert act(p, game) == 3
    record = p.moves[0]
    assert (record.source, record.move, record.reasoning, record.attempts) == ("llm", "take:white,green,red",
                                                                               "three colours", 1)
    totals = p.accounting
    assert totals["prompt_tokens"] == 120 and totals["completion_tokens"] == 30
    assert totals["reasoning_tokens"] == 5 and totals["cached_tokens"] == 100
    assert totals["cost"] == pytest.approx(0.0002) and totals["latency_s"] == pytest.approx(0.25)
    assert totals["clean"] and totals["modes"] == {"json_schema": 1}


@pytest.mark.parametrize("action", ["buy:1.0", " BUY:1.0 ", "45", 45, 45.0])
def test_action_by_number_or_name(action):
    game = SplendorGame.from_json(position(2, tokens={0: {"red": 2, "black": 1}}))  # card 0 costs 2 red, 1 black
    assert act(policy(move(action)), game) == game.move_id("buy:1.0")


def test_illegal_reply_is_re_prompted_with_the_error_and_the_previous_reply():
    game = fresh()
    bad = move("buy:3.0")
    p = policy(bad, move(0))
    assert act(p, game) == 0
    retry = p.client.backend.requests[1].messages
    expected_error = game.explain_illegal("buy:3.0")
    assert retry[:2] == p.client.backend.requests[0].messages
    assert retry[2] == {"role": "assistant", "content": bad}
    assert retry[3]["role"] == "user" and expected_error in retry[3]["content"]
    assert (p.moves[0].attempts, p.moves[0].illegal_replies, p.moves[0].parse_failures) == (2, 1, 0)


def test_garbage_is_a_parse_failure_then_re_prompted():
    game = fresh()
    p = policy("I think I'll take some gems {not json", move(1))
    assert act(p, game) == 1
    assert (p.moves[0].parse_failures, p.moves[0].illegal_replies) == (1, 0)
    assert "no JSON object" in p.client.backend.requests[1].messages[-1]["content"]


def test_truncated_reply_is_its_own_category_and_told_so():
    game = fresh()
    p = policy(ChatReply('{"reasoning": "first I will consider', "length", USAGE), move(2), max_tokens=50)
    assert act(p, game) == 2
    assert (p.moves[0].truncated, p.moves[0].parse_failures) == (1, 0)
    assert "cut off at the token limit (50 tokens)" in p.client.backend.requests[1].messages[-1]["content"]


def test_what_a_move_records_of_the_replies_is_cut_to_its_bound():
    game = fresh()
    long_action = "buy:" + "9" * 100_000  # the game's rejection quotes it
    p = policy(move(long_action), move(1, "r" * 100_000), reasoning_chars=50)
    assert act(p, game) == 1
    record = p.moves[0]
    assert record.reasoning.startswith("r" * 50) and record.reasoning[50:].startswith(" [cut:")
    ((rejected),) = record.rejected
    assert len(record.reasoning) < 100 and len(rejected["reason"]) < 500 and len(rejected["reply"]) < 2100
    assert rejected["reply"].startswith(move(long_action)[:1000]) and " [cut: " in rejected["reply"]
    # the model itself is shown its reply and the whole rejection
    assert long_action in p.client.backend.requests[1].messages[-2]["content"]


def test_each_rejected_reply_is_kept_with_its_kind_and_reason():
    game = fresh()
    illegal, cut = move("buy:3.0"), '{"reasoning": "first I will'
    p = policy(illegal, "no json here", ChatReply(cut, "length", USAGE), move(0), max_retries=3)
    assert act(p, game) == 0
    assert p.moves[0].rejected == [
        {"kind": "illegal", "reason": str(_rejection(game, "buy:3.0")), "reply": illegal},
        {"kind": "parse", "reason": f"no JSON object and no '{FINAL_ANSWER}' line found in the reply",
         "reply": "no json here"},
        {"kind": "truncated", "reason": f"no JSON object and no '{FINAL_ANSWER}' line found in the reply",
         "reply": cut}]


def _rejection(game: SplendorGame, action: str) -> ReplyError:
    with pytest.raises(ReplyError) as rejected:
        PROMPT.parse_action(action, game, game.current_player, game.legal_actions())
    return rejected.value


def test_only_the_last_rejected_replies_are_kept():
    p = policy(*(f"reply {k}" for k in range(11)), max_retries=10)
    act(p, fresh())
    record = p.moves[0]
    assert record.parse_failures == 11 and [r["reply"] for r in record.rejected] == [
        f"reply {k}" for k in range(11 - REJECTED_KEPT, 11)]


def test_a_decisions_time_holds_its_failed_calls_and_backoff_waits_beside_the_calls_latency():
    waits: list[float] = []

    def wait(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(seconds)

    p = policy(TransientLLMError("timed out"), ChatReply(move(0), "stop", USAGE, latency_s=0.001), backoff=0.05,
               sleep=wait)
    assert act(p, fresh()) == 0
    record = p.moves[0]
    assert record.network_retries == 1 and record.latency_s == 0.001
    assert record.time_s >= waits[0] > record.latency_s
    assert p.accounting["time_s"] == record.time_s


def test_plain_text_with_final_answer_marker():
    game = fresh()
    p = policy(f"Gems are scarce.\n{FINAL_ANSWER} take:white,blue,green")
    assert act(p, game) == 0 and p.moves[0].reasoning == "Gems are scarce."


@pytest.mark.parametrize("text, expected", [
    ('```json\n{"reasoning": "r", "action": 7}\n```', ("r", 7)),
    ('Here you go: {"action": "pass"} done', ("", "pass")),
    ('{"reasoning": "r", "action": {"type": "PASS"}}', ("r", {"type": "PASS"})),
    ("thinking...\nfinal answer: 12\n", ("thinking...", "12")),
])
def test_parse_reply_forms(text, expected):
    assert parse_reply(text) == expected


@pytest.mark.parametrize("text, problem", [
    ('{"reasoning": "no move"}', 'no "action" field'),
    ("just words", "no JSON object"),
    ("", "no JSON object"),
])
def test_parse_reply_failures(text, problem):
    with pytest.raises(ReplyError, match=problem) as err:
        parse_reply(text)
    assert err.value.kind == "parse"


# --- the structured form -----------------------------------------------------------------------
def _noble_choice_position() -> dict:
    """Seat 0 has 4 white, 4 blue and 4 black bonuses, so nobles 0 (white+blue) and 1 (white+black) visit."""
    bought = [0, 1, 2, 3, 8, 9, 10, 11, 32, 33, 34, 35]
    return position(2, bought={0: bought}, nobles=[0, 1, 2], phase="noble")


STRUCTURED = [
    (position(2), {"type": "TAKE_3_DIFF", "tokens": {"red": 1, "white": 1, "blue": 1}}, "take:white,blue,red"),
    (position(2), {"type": "TAKE_3_DIFF", "tokens": ["black", "green", "red"]}, "take:green,red,black"),
    (position(2), {"type": "TAKE_2_SAME", "tokens": {"green": 2}}, "take2:green"),
    (position(2), {"type": "RESERVE", "cardId": 41}, "reserve:2.1"),
    (position(2), {"type": "RESERVE", "reserveDeckLevel": "LEVEL_3"}, "reserve_deck:3"),
    (position(2, tokens={0: {"red": 2, "black": 1}}), {"type": "PURCHASE", "cardId": 0}, "buy:1.0"),
    (position(2, reserved={0: [20, 5]}, tokens={0: cost(5)}), {"type": "purchase", "cardId": "5"},
     "buy_reserved:1"),
    (_noble_choice_position(), {"type": "CHOOSE_NOBLE", "nobleId": 1}, "noble:1"),
]


@pytest.mark.parametrize("pos, action, name", STRUCTURED)
def test_structured_form(pos, action, name):
    game = SplendorGame.from_json(pos)
    assert act(policy(move(action)), game) == game.move_id(name)


@pytest.mark.parametrize("action, kind, problem", [
    ({"type": "TAKE_3_DIFF", "tokens": {"red": 2}}, "parse", "1 token each"),
    ({"type": "TAKE_3_DIFF", "tokens": {"purple": 1}}, "parse", "'purple' is not one of"),
    ({"type": "TAKE_2_SAME", "tokens": {"gold": 2}}, "parse", "'gold' is not one of"),
    ({"type": "RESERVE", "cardId": 89}, "illegal", "card 89 is not in the market"),
    ({"type": "RESERVE", "reserveDeckLevel": "LEVEL_9"}, "parse", "reserveDeckLevel"),
    ({"type": "PURCHASE", "cardId": 44}, "illegal", "neither in the market nor among your reserved"),
    ({"type": "PURCHASE", "cardId": 0}, "illegal", "buy:1.0: card 0 costs"),
    ({"type": "STEAL", "cardId": 0}, "parse", "unknown move type 'STEAL'"),
    ({"type": "PURCHASE", "cardId": True}, "parse", "cardId must be a card id"),
    ("buy:9.9", "parse", "unknown action name"),
    (99, "illegal", "not a move number"),
    (True, "parse", "action must be"),
])
def test_structured_form_errors_name_the_problem(action, kind, problem):
    game = SplendorGame.from_json(position(2))
    with pytest.raises(ReplyError, match=problem) as err:
        PROMPT.parse_action(action, game, 0, game.legal_actions())
    assert err.value.kind == kind


def _twelve_token_game() -> SplendorGame:
    """Seat 0 holds 9 tokens; taking 3 leaves 12, so two tokens go back."""
    return SplendorGame.from_json(position(2, tokens={0: {"white": 2, "blue": 2, "green": 2, "red": 2, "black": 1}}))


def test_tokens_to_return_given_in_advance_are_used_without_asking():
    game = _twelve_token_game()
    take = {"type": "TAKE_3_DIFF", "tokens": {"white": 1, "blue": 1, "green": 1},
            "tokensToReturn": {"red": 1, "black": 1}}
    p = policy(move(take))
    for _ in range(3):
        play(p, game)
    assert len(p.client.backend.requests) == 1
    assert [m.source for m in p.moves] == ["llm", "planned", "planned"]
    assert [m.move for m in p.moves] == ["take:white,blue,green", "return:red", "return:black"]
    assert game.player(0)["tokens"] == {"white": 3, "blue": 3, "green": 3, "red": 1, "black": 0, "gold": 0}
    assert game.current_player == 1


def test_returns_not_given_in_advance_are_asked_as_short_prompts():
    game = _twelve_token_game()
    p = policy(move(0), move("return:red"), move({"type": "RETURN_TOKENS", "tokens": {"black": 1}}))
    for _ in range(3):
        play(p, game)
    second = p.client.backend.requests[1].messages[1]["content"]
    assert "hold 12 tokens" in second and "2 to return in all" in second and "Bank" not in second
    assert game.player(0)["tokens"]["red"] == 1 and game.player(0)["tokens"]["black"] == 0


def test_a_move_past_ten_tokens_and_its_returns_are_one_reply():
    game = _twelve_token_game()
    take = game.move_id("take:white,blue,green")
    p = policy(move({"move": take, "tokensToReturn": ["red", "black"]}))
    for _ in range(3):
        play(p, game)
    assert len(p.client.backend.requests) == 1
    assert [(m.source, m.move) for m in p.moves] == [("llm", "take:white,blue,green"), ("planned", "return:red"),
                                                     ("planned", "return:black")]
    assert game.player(0)["tokens"] == {"white": 3, "blue": 3, "green": 3, "red": 1, "black": 0, "gold": 0}


def test_without_the_list_a_move_name_carries_its_returns_too():
    game = _twelve_token_game()
    p = policy(move({"move": "take:white,blue,green", "tokensToReturn": {"red": 1, "black": 1}}), legal_list=False)
    for _ in range(3):
        play(p, game)
    assert len(p.client.backend.requests) == 1 and game.current_player == 1
    assert [m.move for m in p.moves] == ["take:white,blue,green", "return:red", "return:black"]


def test_colours_may_be_given_by_the_boards_letters():
    game = _twelve_token_game()
    legal = game.legal_actions()
    returns = PROMPT.parse_action({"move": "take:w,b,g", "tokensToReturn": ["R", "k"]}, game, 0, legal)
    assert returns == PlannedMove(game.move_id("take:white,blue,green"),
                                  (game.move_id("return:red"), game.move_id("return:black")))
    take = PROMPT.parse_action({"type": "TAKE_3_DIFF", "tokens": {"w": 1, "b": 1, "r": 1}}, game, 0, legal)
    assert take.action == game.move_id("take:white,blue,red")
    with pytest.raises(ReplyError, match="'y' is not one of white, blue, green, red, black$"):
        PROMPT.parse_action({"type": "TAKE_2_SAME", "tokens": {"y": 2}}, game, 0, legal)


def test_a_return_carries_the_rest_of_the_returns():
    game = _twelve_token_game()
    p = policy(move("take:white,blue,green"), move({"move": "return:red", "tokensToReturn": ["black"]}))
    for _ in range(3):
        play(p, game)
    assert [m.source for m in p.moves] == ["llm", "llm", "planned"] and len(p.client.backend.requests) == 2
    action = p.client.backend.requests[1].response_format["json_schema"]["schema"]["properties"]["action"]
    assert action["anyOf"][1]["properties"]["move"]["enum"] == legal_ids(action)  # each return leaves one more


def _strict(schema: dict) -> None:
    """Fail unless every object in ``schema`` is as strict mode wants it: no other properties, all required."""
    if "properties" in schema:
        assert schema["additionalProperties"] is False and sorted(schema["required"]) == sorted(schema["properties"])
    for value in schema.values():
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, dict):
                _strict(part)


def test_the_listed_schema_offers_returns_with_exactly_the_moves_that_pass_ten_tokens():
    game = _twelve_token_game()
    legal = game.legal_actions()
    schema = PROMPT.action_schema(game, 0, legal, legal_list=True)
    ids, with_returns = schema["anyOf"]
    assert ids == {"type": "integer", "enum": legal}
    takes = [a for a in legal if ACTION_NAMES[a].startswith("take:")]
    assert len(takes) == 10 and with_returns["properties"]["move"]["enum"] == takes  # reserving gives 10: none due
    assert with_returns["properties"]["tokensToReturn"] == {  # seat 0 holds no gold, and no take brings any
        "type": "array", "items": {"type": "string", "enum": list(R.COLOURS)}, "maxItems": 2}
    p = policy(move(0))
    act(p, game)
    _strict(p.client.backend.requests[0].response_format["json_schema"]["schema"])
    assert PROMPT.action_schema(fresh(), 0, fresh().legal_actions(), legal_list=True) == {
        "type": "integer", "enum": fresh().legal_actions()}  # nobody near ten tokens: the plain list


def test_replies_with_returns_meet_the_schemas():
    jsonschema = pytest.importorskip("jsonschema")
    game = _twelve_token_game()
    legal = game.legal_actions()
    listed, unlisted = (PROMPT.action_schema(game, 0, legal, legal_list=flag) for flag in (True, False))
    with_returns = {"move": game.move_id("take:white,blue,green"), "tokensToReturn": ["red", "black"]}
    for action in (with_returns, 3, {"move": 3, "tokensToReturn": []}):
        jsonschema.validate(action, listed)
    for action in (with_returns, "take:white,blue,green", {"type": "TAKE_3_DIFF", "tokens": ["red"]}):
        jsonschema.validate(action, unlisted)
    for bad in ({"move": game.move_id("reserve:1.0"), "tokensToReturn": ["red"]},
                {"move": 0, "tokensToReturn": ["red", "black", "white"]}, {"move": 0, "tokensToReturn": ["gold"]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, listed)


def test_the_list_marks_the_moves_that_pass_ten_tokens():
    game = _twelve_token_game()
    legal = game.legal_actions()
    lines = PROMPT.user_message(game, 0, legal, legal_list=True).splitlines()[-len(legal):]
    assert lines == [f"{a}: {ACTION_NAMES[a]}" + (" (then return 2)" if ACTION_NAMES[a].startswith("take:") else "")
                     for a in legal]


@pytest.mark.parametrize("returns, problem", [
    (["red", "pink"], "'pink' is not one of"),
    ({"red": 10 ** 12}, "at most 3 tokens are returned after one move, got 1000000000000"),
    (["red"] * 100_000, "at most 3 tokens are returned after one move, got 100000"),
    ("red", "tokensToReturn must be"),
])
def test_returns_that_are_not_understood_make_the_reply_unusable(returns, problem):
    game = _twelve_token_game()
    with pytest.raises(ReplyError, match=problem) as err:
        PROMPT.parse_action({"move": "take:white,blue,green", "tokensToReturn": returns}, game, 0,
                            game.legal_actions())
    assert err.value.kind == "parse"


@pytest.mark.parametrize("returns, kept, problem", [
    (["red", "black", "red"], ["return:red", "return:red"], "take:white,blue,green leaves you 2 to return, not 3"),
    (["gold"], [], "tokensToReturn: return:gold: player 0 has no gold token to return"),
    (["black", "black"], ["return:black"], "tokensToReturn: return:black: player 0 has no black token to return"),
])
def test_the_move_stands_and_returns_that_cannot_be_played_in_turn_are_dropped(returns, kept, problem):
    """A legal move is the model's decision whatever the returns it names after it: those that can be played in
    turn are planned (colour by colour: both reds, then the black), the rest is asked for at the return step, and
    why is named."""
    game = _twelve_token_game()
    move = PROMPT.parse_action({"move": "take:white,blue,green", "tokensToReturn": returns}, game, 0,
                               game.legal_actions())
    assert move.action == game.move_id("take:white,blue,green")
    assert [ACTION_NAMES[a] for a in move.plan] == kept and move.dropped == problem


def test_returns_where_none_is_due_are_dropped():
    game = _twelve_token_game()
    reserve = {"type": "RESERVE", "cardId": game.market(1)[0], "tokensToReturn": {"red": 1}}
    move = PROMPT.parse_action(reserve, game, 0, game.legal_actions())
    assert move.plan == () and move.dropped == "reserve:1.0 leaves you 0 to return, not 1"


def test_fewer_returns_than_due_are_played_and_the_rest_is_asked():
    game = _twelve_token_game()
    p = policy(move({"move": 0, "tokensToReturn": ["red"]}), move("return:black"))
    for _ in range(3):
        play(p, game)
    assert [m.source for m in p.moves] == ["llm", "planned", "llm"] and game.current_player == 1


def test_returns_that_cannot_be_played_are_asked_for_with_the_move_kept_and_the_reason_recorded():
    game = _twelve_token_game()
    take = {"type": "TAKE_3_DIFF", "tokens": {"white": 1, "blue": 1, "green": 1}}
    p = policy(move({**take, "tokensToReturn": {"gold": 2}}), move("return:red"), move("return:red"))
    for _ in range(3):
        play(p, game)
    assert [m.source for m in p.moves] == ["llm", "llm", "llm"] and p.moves[0].illegal_replies == 0
    assert p.moves[0].plan_note == "tokensToReturn: return:gold: player 0 has no gold token to return"
    assert len(p.client.backend.requests) == 3 and game.player(0)["tokens"]["red"] == 0


def test_a_planned_move_that_is_not_legal_drops_the_plan_and_asks():
    game = _twelve_token_game()
    gold = game.move_id("return:gold")  # seat 0 holds none: a plan no check of ours would let through

    class Careless(type(PROMPT)):
        def parse_action(self, value, game, seat, legal):
            return PlannedMove(super().parse_action(value, game, seat, legal).action, (gold, gold))

    p = policy(move("take:white,blue,green"), move("return:white"), move("return:white"), prompt=Careless())
    for _ in range(3):
        play(p, game)
    assert [m.source for m in p.moves] == ["llm", "llm", "llm"]
    assert game.player(0)["tokens"]["white"] == 1


def test_noble_choice_is_a_short_prompt():
    game = SplendorGame.from_json(_noble_choice_position())
    p = policy(move(61))
    assert act(p, game) == 61
    assert "several nobles would visit you" in p.client.backend.requests[0].messages[1]["content"]


def _only_pass_position() -> dict:
    """The players hold every gem, seat 0 has 3 reserved cards and affords nothing: pass is the only move."""
    cards, _ = R.tables()
    needs_red_or_black = [c for c in range(R.NUM_CARDS) if cards[c, R.CARD_COST + 3] or cards[c, R.CARD_COST + 4]]
    by_level = {lv: [c for c in needs_red_or_black if R.level_of(c) == lv - 1] for lv in (1, 2, 3)}
    return position(2, tokens={0: {"white": 4, "blue": 4, "green": 2}, 1: {"green": 2, "red": 4, "black": 4}},
                    reserved={0: by_level[1][4:7]}, market={lv: by_level[lv][:4] for lv in (1, 2, 3)})


def test_a_single_legal_move_is_played_without_asking():
    game = SplendorGame.from_json(_only_pass_position())
    assert game.legal_actions() == [game.move_id("pass")]
    p = policy()  # nothing scripted: a call would fail
    assert act(p, game) == game.move_id("pass")
    assert p.moves[0].source == "forced" and p.moves[0].attempts == 0


# --- fallbacks -------------------------------------------------------------------------------------
def test_random_fallback_after_max_retries():
    game = fresh()
    p = policy("nope", "still nope", max_retries=1, fallback="random")
    action = act(p, game)
    assert game.legal_mask()[action]
    record = p.moves[0]
    assert (record.source, record.attempts, record.parse_failures) == ("fallback", 2, 2)
    assert record.fallback_reason == "no usable reply in 2 attempt(s), last error: no JSON object and no " \
                                     f"'{FINAL_ANSWER}' line found in the reply"
    assert not p.accounting["clean"] and p.accounting["fallback_moves"] == 1


def test_greedy_fallback_plays_greedys_move():
    game = fresh()
    p = policy(move(99), max_retries=0, fallback="greedy")
    greedy = make_policy("greedy", game="splendor")
    assert act(p, game) == greedy.act(None, game.legal_mask(), game.policy_info(0))
    assert p.moves[0].source == "fallback" and p.moves[0].illegal_replies == 1


def test_forfeit_fallback_raises_with_the_seat_and_is_recorded():
    game = fresh()
    game.step(0)
    p = policy("x", max_retries=0, fallback="forfeit")
    with pytest.raises(ForfeitError, match="forfeits") as err:
        act(p, game)
    assert err.value.seat == 1 and p.moves[0].source == "forfeit" and p.accounting["forfeit_moves"] == 1
    assert p.moves[0].rejected[0]["reply"] == "x" and p.moves[0].time_s > 0
    assert p.forfeit_reason == p.moves[0].fallback_reason and p.forfeit_reason.startswith("no usable reply in 1")


# --- response formats -----------------------------------------------------------------------------------
def test_auto_mode_steps_down_through_the_schema_forms_before_the_unconstrained_ones():
    refuse = FatalLLMError("HTTP 400: response_format json_schema is not supported by this model", 400)
    refuse_schema = FatalLLMError("HTTP 400: response_format.schema: extra fields not permitted", 400)
    refuse_json = FatalLLMError("HTTP 400: 'response_format.type' must be 'text'", 400)
    p = policy(refuse, refuse_schema, refuse_json, f"I take three.\n{FINAL_ANSWER} 0")
    assert act(p, fresh()) == 0
    formats = [r.response_format for r in p.client.backend.requests]
    assert formats[0]["type"] == "json_schema"
    assert formats[1]["type"] == "json_object" and formats[1]["schema"] == formats[0]["json_schema"]["schema"]
    assert formats[2] == {"type": "json_object"} and formats[3] is None
    assert p.mode == "text" and p.moves[0].mode == "text" and p.moves[0].attempts == 1


@pytest.mark.parametrize("status, message, next_form", [
    (400, "response_format json_schema is not supported by this model", True),
    (422, "Invalid schema for response_format 'move'", True),
    (500, "1 validation error: {'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or "
          "'json_object'\"}", True),
    (400, "This model's maximum context length is 2048 tokens", False),
    (401, "invalid key for json_schema requests", False),
    (404, "No endpoints found that can handle the requested parameters", False),
])
def test_only_a_refusal_that_names_the_response_format_tries_the_next_form(status, message, next_form):
    error = status_error(status, message)
    assert isinstance(error, FatalLLMError) and error.rejects_format == next_form
    p = policy(error, move(0))
    if next_form:
        assert act(p, fresh()) == 0 and p.mode == "json_object_schema"
    else:
        with pytest.raises(FatalLLMError, match="stopped"):
            act(p, fresh())
        assert len(p.client.backend.requests) == 1


def test_a_server_error_that_does_not_name_the_format_is_retried_not_stepped_down():
    assert isinstance(status_error(500, "CUDA error: out of memory while building the schema grammar"),
                      TransientLLMError)


def test_the_mode_a_server_took_is_where_its_next_players_start():
    refuse = FatalLLMError("HTTP 400: response_format json_schema is not supported", 400)
    first = policy(refuse, move(0), base_url="http://127.0.0.1:7/v1", model="m")
    act(first, fresh())
    later = policy(move(0), base_url="http://127.0.0.1:7/v1/", model="m")  # the same server
    other_model = policy(move(0), base_url="http://127.0.0.1:7/v1", model="n")
    assert later.mode == "json_object_schema" and other_model.mode == "json_schema"
    act(later, fresh())
    act(other_model, fresh())
    assert later.client.backend.requests[0].response_format["type"] == "json_object"
    assert "schema" in later.client.backend.requests[0].response_format and later.moves[0].mode == "json_object_schema"
    assert other_model.client.backend.requests[0].response_format["type"] == "json_schema"


def test_players_refused_at_once_agree_on_the_next_form():
    url = "http://127.0.0.1:8/v1"
    assert _step_down(url, "m", "json_schema") == _step_down(url, "m", "json_schema") == "json_object_schema"
    assert _step_down(url, "m", "json_object") == "text" and _step_down(url, "m", "json_schema") == "text"
    assert _step_down(url, "m", "text") is None and server_mode(url, "m") == "text"


def test_the_llama_cpp_form_can_be_asked_for_by_name():
    p = make_policy("llm:base_url=http://127.0.0.1:9/v1,mode=json_object_schema", game="splendor", seed=0)
    assert p.mode == "json_object_schema" and p.settings["mode"] == "json_object_schema"


def test_a_refused_request_stops_with_a_clear_error():
    p = policy(FatalLLMError("HTTP 401: invalid credentials", 401))
    with pytest.raises(FatalLLMError, match=r"llm player 'llm' stopped: HTTP 401: invalid credentials"):
        act(p, fresh())


def test_a_fixed_mode_is_not_stepped_down():
    p = policy(FatalLLMError("HTTP 400: json_schema not supported", 400), mode="json_schema")
    with pytest.raises(FatalLLMError, match="json_schema not supported"):
        act(p, fresh())


def test_schema_constrains_action_to_legal_ids_and_bounds_reasoning():
    game = fresh()
    p = policy(move(0), reasoning_chars=123)
    act(p, game)
    schema = p.client.backend.requests[0].response_format["json_schema"]["schema"]
    assert schema["properties"]["action"]["enum"] == game.legal_actions()
    assert schema["properties"]["reasoning"]["maxLength"] == 123
    assert schema["required"] == ["reasoning", "action"]


def test_without_legal_list_the_prompt_has_no_list_and_any_form_is_accepted():
    game = fresh()
    p = policy(move({"type": "TAKE_2_SAME", "tokens": {"red": 2}}), legal_list=False)
    assert act(p, game) == game.move_id("take2:red")
    request = p.client.backend.requests[0]
    assert "Legal moves" not in request.messages[1]["content"]
    assert "enum" not in json.dumps(request.response_format)


# --- the prompt ---------------------------------------------------------------------------------------------
def test_system_prompt_is_byte_identical_for_every_request_of_a_game():
    game = SplendorGame(2, seed=4, max_plies=60)
    players = [policy(LegalPlayer(0)), policy(LegalPlayer(1))]
    while not game.is_over:
        play(players[game.current_player], game)
    systems = {r.messages[0]["content"] for p in players for r in p.client.backend.requests}
    assert systems == {SYSTEM_PROMPT}
    assert sum(len(p.client.backend.requests) for p in players) > 20


def test_the_position_is_the_text_board_the_seat_sees_then_the_numbered_moves():
    game = SplendorGame.from_json(position(3, reserved={0: [(5, True)], 1: [(6, True), 41]},
                                           tokens={1: {"gold": 2}}, current_player=0))
    legal = game.legal_actions()
    board = render_ansi(game, viewer=0, color=False)
    assert PROMPT.user_message(game, 0, legal, legal_list=True) == (
        f"You are P0.\n{board}\nLegal moves (reply with the number):\n"
        + "\n".join(f"{a}: {ACTION_NAMES[a]}" for a in legal))
    assert "[#5 " in board and "[#41 " in board and "[#6 " not in board and "[hidden L1]" in board


def _hidden_variants() -> tuple[SplendorGame, SplendorGame, SplendorGame]:
    """A: seat 1 blind-reserved card x, y tops the level-1 deck. B: x and y swapped. C: A with decks reversed.
    Seat 0, to act, holds 9 tokens, so its moves past ten are marked and offered with returns."""
    cards, _ = R.tables()
    x = 30
    y = next(c for c in range(31, 40) if not np.array_equal(cards[c], cards[x]))
    nine = {"white": 2, "blue": 2, "green": 2, "red": 2, "black": 1}
    a = position(2, reserved={1: [(x, True)]}, decks={1: [y]}, tokens={0: nine, 1: {"gold": 1}})
    b = position(2, reserved={1: [(y, True)]}, decks={1: [x]}, tokens={0: nine, 1: {"gold": 1}})
    c = json.loads(json.dumps(a))
    c["decks"] = {level: deck[::-1] for level, deck in c["decks"].items()}
    return tuple(SplendorGame.from_json(p) for p in (a, b, c))


def test_prompts_hide_blind_reserves_and_deck_order():
    games = _hidden_variants()
    requests = []
    for game in games:
        p = policy(move(0))
        act(p, game)
        request = p.client.backend.requests[0]
        requests.append((request.messages, request.response_format))
    assert requests[0] == requests[1] == requests[2]
    assert "anyOf" in json.dumps(requests[0][1]) and "(then return 2)" in requests[0][0][1]["content"]
    a, b, _ = games
    x, y = (g.player(1)["reserved"][0][0] for g in (a, b))
    assert f"#{x} " not in requests[0][0][1]["content"] and "[hidden L1]" in requests[0][0][1]["content"]
    owner_a, owner_b = (PROMPT.user_message(g, 1, g.legal_actions(), legal_list=True) for g in (a, b))
    assert f"[#{x} " in owner_a and f"[#{y} " in owner_b, "the owner must see which card they reserved"


def test_re_dealing_what_a_player_cannot_see_never_changes_their_prompt():
    owner_saw_a_change = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        game = SplendorGame(2 + seed % 3, seed=seed)
        for _ in range(8 + seed):
            legal = game.legal_actions()
            blind = [a for a in legal if 42 <= a <= 44]
            game.step(int(rng.choice(blind if blind and rng.random() < 0.5 else legal)))
        seat, legal = game.current_player, game.legal_actions()
        other = game.seat_view(seat, seed=100 + seed)
        for legal_list in (True, False):
            assert PROMPT.user_message(other, seat, legal, legal_list) == \
                PROMPT.user_message(game, seat, legal, legal_list), f"seed {seed}: seat {seat} sees hidden cards"
            assert PROMPT.action_schema(other, seat, legal, legal_list) == \
                PROMPT.action_schema(game, seat, legal, legal_list), f"seed {seed}: the schema shows hidden cards"
        owner_saw_a_change += sum(PROMPT.user_message(other, q, [], True) != PROMPT.user_message(game, q, [], True)
                                  for q in range(game.num_players) if q != seat)
    assert owner_saw_a_change > 0, "no re-deal changed a blind reserve: the test proves nothing"


# --- spec, key, accounting ----------------------------------------------------------------------------
def test_spec_options_reach_the_policy():
    p = make_policy("llm:model=some/model,base_url=http://127.0.0.1:9/v1,temperature=0.7,max_retries=1,"
                    "fallback=greedy,legal_list=false,mode=json_object", game="splendor", seed=0)
    assert isinstance(p, LLMPolicy)
    assert (p.model, p.temperature, p.max_retries, p.fallback, p.legal_list, p.mode) == \
        ("some/model", 0.7, 1, "greedy", False, "json_object")
    assert p.name == ("llm:model=some/model,base_url=http://127.0.0.1:9/v1,temperature=0.7,max_retries=1,"
                      "fallback=greedy,legal_list=false,mode=json_object")


def test_without_a_preset_the_defaults_are_as_before():
    p = make_policy("llm:base_url=http://127.0.0.1:9/v1", game="splendor", seed=0)
    assert (p.preset, p.fallback, p.legal_list, p.max_retries) == ("", "random", True, 2)
    assert p.settings["preset"] is None and p.name == "llm:base_url=http://127.0.0.1:9/v1"


def test_a_preset_fixes_its_settings_and_names_itself_in_the_spec():
    p = make_policy("llm:base_url=http://127.0.0.1:9/v1,preset=benchmark,legal_list=false", game="splendor", seed=0)
    assert (p.fallback, p.legal_list, p.max_retries) == ("forfeit", False, 3)
    assert p.settings == {"preset": "benchmark", "fallback": "forfeit", "legal_list": False, "max_retries": 3,
                          "model": "openai/gpt-4o-mini", "temperature": 0.2, "max_tokens": 1000,
                          "reasoning_chars": 600, "mode": "auto", "timeout": 600.0, "concurrency": 1,
                          "server_defaults": "local"}
    assert "preset=benchmark" in p.name


def test_the_benchmark_preset_forfeits_after_three_retries_with_the_reason():
    game = fresh()
    p = LLMPolicy(backend=Scripted("a", "b", "c", "d"), preset="benchmark")
    with pytest.raises(ForfeitError, match=r"forfeits: no usable reply in 4 attempt\(s\), last error: no JSON"):
        act(p, game)
    assert p.moves[0].source == "forfeit" and p.accounting["clean"]
    assert p.forfeit_reason.startswith("no usable reply in 4 attempt(s)")
    assert "0: take:" not in p.client.backend.requests[0].messages[1]["content"]


@pytest.mark.parametrize("spec, problem", [
    ("llm:preset=kaggle", "preset='kaggle' is not one of benchmark, textarena"),
    ("llm:preset=benchmark,fallback=random", "preset=benchmark sets fallback=forfeit, legal_list=false, "
                                             "max_retries=3; drop fallback=random or the preset"),
    ("llm:preset=textarena,legal_list=false,max_retries=4", "drop legal_list=false, max_retries=4 or the preset"),
    ("llm:fallback=coinflip,base_url=http://127.0.0.1:9/v1", "fallback='coinflip' is not one of random"),
    ("llm:mode=xml,base_url=http://127.0.0.1:9/v1", "mode='xml' is not one of auto"),
    ("llm:max_retries=-1,base_url=http://127.0.0.1:9/v1", r"^max_retries must be in 0\.\.10, got -1$"),
    ("llm:concurrency=0,base_url=http://127.0.0.1:9/v1", r"^concurrency must be in 1\.\.64, got 0$"),
    ("llm:max_retries=1000000,base_url=http://127.0.0.1:9/v1", r"^max_retries must be in 0\.\.10, got 1000000$"),
    ("llm:max_tokens=100000000,base_url=http://127.0.0.1:9/v1", r"^max_tokens must be in 1\.\.100000, got"),
    ("llm:timeout=1e9,base_url=http://127.0.0.1:9/v1", r"^timeout must be more than 0 and at most 3600, got"),
    ("llm:temperature=-1,base_url=http://127.0.0.1:9/v1", r"^temperature must be in 0\.\.2, got -1"),
    ("llm:net_retries=99,base_url=http://127.0.0.1:9/v1", r"^net_retries must be in 0\.\.20, got 99$"),
    ("llm:concurrency=100000,base_url=http://127.0.0.1:9/v1", r"^concurrency must be in 1\.\.64, got 100000$"),
])
def test_bad_llm_options_are_one_line_errors(spec, problem):
    with pytest.raises(ValueError, match=problem):
        make_policy(spec, game="splendor")


def test_a_remote_server_without_a_key_is_a_clear_error(monkeypatch):
    for name in ("TABLETOP_LLM_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY", "MY_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match=r"no API key for https://openrouter.ai/api/v1: set one of MY_KEY, "
                                         r"TABLETOP_LLM_API_KEY, OPENROUTER_API_KEY \(or api_key_env=NAME\)"):
        make_policy("llm:api_key_env=MY_KEY", game="splendor")


def test_the_key_from_the_environment_never_appears_in_names_or_records(monkeypatch):
    secret = "sk-or-v1-THIS-IS-SECRET"
    monkeypatch.setenv("OPENROUTER_API_KEY", secret)
    p = make_policy("llm:model=m", game="splendor", seed=0)
    assert p.client.backend._secret == secret  # the key was found, and only the SDK seam holds it
    p.client.backend = Scripted(move(0))
    play(p, fresh())
    visible = json.dumps([p.name, repr(p), p.accounting, [m.as_dict() for m in p.moves], vars(p.stats)])
    assert secret not in visible


def test_every_decision_of_a_game_is_accounted():
    game = SplendorGame(2, seed=9, max_plies=80)
    p = policy(LegalPlayer(3))
    random_player = make_policy("random", game="splendor", seed=1)
    llm_turns = 0
    while not game.is_over:
        if game.current_player == 0:
            llm_turns += 1
            play(p, game)
        else:
            play(random_player, game)
    totals = p.accounting
    assert totals["moves"] == llm_turns == p.stats.decisions
    assert totals["llm_moves"] + totals["forced_moves"] + totals["planned_moves"] == llm_turns
    assert totals["attempts"] == len(p.client.backend.requests) == totals["llm_moves"]
    assert totals["prompt_tokens"] == 120 * totals["attempts"]
    p.reset(seed=1)
    assert p.accounting["moves"] == 0 and p.moves == []


# --- the retry loop and the cache ---------------------------------------------------------------------------
def client(*replies, retries: int = 3, cache: ResponseCache | None = None) -> tuple[ChatClient, list[float]]:
    sleeps: list[float] = []
    return ChatClient(Scripted(*replies), f"http://retry-test-{random.random()}/v1", cache=cache, seed=0,
                      retry=RetrySettings(retries=retries, backoff_s=1.0, max_backoff_s=5.0),
                      sleep=sleeps.append), sleeps


REQUEST = ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}])


def test_transient_errors_back_off_exponentially_with_jitter():
    c, sleeps = client(*(TransientLLMError("HTTP 503: busy", 503) for _ in range(3)), "ok")
    reply = c.complete(REQUEST)
    assert reply.text == "ok" and reply.network_retries == 3
    assert 0.5 <= sleeps[0] <= 1.0 and 1.0 <= sleeps[1] <= 2.0 and 2.0 <= sleeps[2] <= 4.0
    assert len(set(sleeps)) == 3


def test_retry_after_is_honoured():
    c, sleeps = client(TransientLLMError("HTTP 429: slow down", 429, retry_after_s=4.5), "ok")
    c.complete(REQUEST)
    assert sleeps == [4.5]


def test_retries_spent_is_unavailable_and_fatal_is_not_retried():
    c, sleeps = client(*(TransientLLMError("timed out") for _ in range(3)), retries=2)
    with pytest.raises(LLMUnavailableError, match="3 attempts failed, last: timed out"):
        c.complete(REQUEST)
    assert len(sleeps) == 2
    c, sleeps = client(FatalLLMError("HTTP 404: no such model", 404), "never")
    with pytest.raises(FatalLLMError, match="no such model"):
        c.complete(REQUEST)
    assert sleeps == [] and len(c.backend.requests) == 1


def test_a_timeout_is_retried_like_any_fault_on_a_remote_server():
    c, sleeps = client(*(LLMTimeoutError(60.0) for _ in range(3)), "ok")
    assert c.complete(REQUEST).network_retries == 3 and len(sleeps) == 3


def test_a_local_server_is_sent_a_timed_out_request_once_more_at_most():
    sleeps: list[float] = []
    faults = (LLMTimeoutError(600.0), TransientLLMError("HTTP 503: loading the model", 503), LLMTimeoutError(600.0))
    c = ChatClient(Scripted(*faults, "never asked"), "http://127.0.0.1:5/v1", retry=RetrySettings(retries=6),
                   sleep=sleeps.append)
    with pytest.raises(LLMUnavailableError, match=r"127.0.0.1:5/v1: 2 attempts timed out, last: request timed out "
                                                  r"after 600 s; not sent again to a local server, which may still "
                                                  r"be computing the replies given up \(raise timeout="):
        c.complete(REQUEST)
    assert len(c.backend.requests) == 3 and len(sleeps) == 2


def test_the_first_timeout_of_a_server_says_why_it_may_recur_and_what_to_change(caplog):
    local = ChatClient(Scripted(LLMTimeoutError(600.0), "ok", LLMTimeoutError(600.0), "ok"), "http://127.0.0.1:6/v1",
                       retry=RetrySettings(retries=6), sleep=lambda s: None)
    remote = ChatClient(Scripted(TransientLLMError("HTTP 502: bad gateway", 502), LLMTimeoutError(60.0), "ok"),
                        "https://llm.invalid/v1", retry=RetrySettings(retries=6), sleep=lambda s: None)
    with caplog.at_level(logging.WARNING, logger="tabletop_rl.agents.llm.client"):
        for c in (local, local, remote):
            c.complete(REQUEST)
    assert [r.getMessage() for r in caplog.records] == [
        "http://127.0.0.1:6/v1 failed: request timed out after 600 s (sent once more, not again after another "
        "timeout: a local server may still be computing the reply given up, and what is sent next waits behind it; "
        "raise timeout=, lower concurrency= or max_tokens=)",
        "http://127.0.0.1:6/v1 failed: request timed out after 600 s (sent once more, not again after another "
        "timeout)",  # the next request's: explained once per server
        "https://llm.invalid/v1 failed: HTTP 502: bad gateway (retry 1/6)",
        "https://llm.invalid/v1 failed: request timed out after 60 s (retry 2/6: the server may still be computing "
        "the reply given up; if it is slow rather than down, raise timeout=, lower concurrency= or max_tokens=)"]


def test_a_very_long_retry_after_is_not_waited_out():
    c, sleeps = client(TransientLLMError("HTTP 429: daily quota", 429, retry_after_s=86400), "ok")
    with pytest.raises(LLMUnavailableError, match="retry after 86400 s"):
        c.complete(REQUEST)
    assert sleeps == []


@pytest.mark.parametrize("headers, seconds", [
    ({"Retry-After": "3"}, 3.0), ({"retry-after-ms": "250"}, 0.25), ({"Retry-After": "soon"}, None), ({}, None),
    ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
])
def test_retry_after_header_forms(headers, seconds):
    assert retry_after_seconds(headers) == seconds


def test_the_cache_answers_repeated_requests_without_a_call(tmp_path):
    c, _ = client("first", "second", cache=ResponseCache(tmp_path))
    assert c.complete(REQUEST).text == "first"
    again = c.complete(REQUEST)
    assert (again.text, again.cached, again.usage) == ("first", True, USAGE)
    other = ChatRequest(model="m", messages=[{"role": "user", "content": "bye"}])
    assert c.complete(other).text == "second" and len(c.backend.requests) == 2


def test_a_cached_rerun_replays_the_game_with_no_calls(tmp_path):
    def run(backend) -> tuple[list[int], LLMPolicy]:
        game = SplendorGame(2, seed=21, max_plies=40)
        p = LLMPolicy(seed=0, backend=backend, cache=str(tmp_path))
        opponent = make_policy("random", game="splendor", seed=2)
        actions = []
        while not game.is_over:
            actions.append(play(p if game.current_player == 0 else opponent, game))
        return actions, p

    first, _ = run(LegalPlayer(5))
    again, p = run(Scripted())  # any call would fail: nothing scripted
    assert again == first and p.accounting["cache_hits"] == p.accounting["attempts"] > 0


def test_a_500_validation_error_about_response_format_is_a_format_refusal_not_an_outage():
    from tabletop_rl.agents.llm.client import FatalLLMError, TransientLLMError, status_error

    llama = status_error(500, "1 validation error: {'loc': ('body', 'response_format', 'type'), "
                              "'msg': \"Input should be 'text' or 'json_object'\"}")
    assert isinstance(llama, FatalLLMError) and llama.rejects_format
    assert isinstance(status_error(500, "internal error"), TransientLLMError)
