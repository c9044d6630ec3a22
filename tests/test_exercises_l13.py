"""Lesson 13's exercise checks accept the reference solutions and reject plausible mistakes,
each with a hint that says what to change."""

from __future__ import annotations

import sys
from pathlib import Path

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
sys.path.insert(0, str(LESSONS))

from exercises.l13 import (  # noqa: E402
    LastMessages,
    broken_request,
    check_keep_rounds,
    check_last_messages_fixed,
    long_run,
)
from solutions import l13  # noqa: E402

from harness import Mechanism  # noqa: E402


def starts(messages: list[dict]) -> list[int]:
    return [i for i in range(2, len(messages)) if messages[i]["role"] == "assistant"]


# -- exercise 1: keep the last rounds --------------------------------------------------


def test_keep_rounds_check_accepts_the_reference(capsys):
    assert check_keep_rounds(l13.KeepRounds) is True
    assert "PASS" in capsys.readouterr().out


def test_keep_rounds_check_rejects_two_messages_a_round(capsys):
    class TwoMessagesARound(Mechanism):  # true until a reply makes two calls
        def __init__(self, rounds=2):
            self.rounds = rounds

        def before_request(self, messages):
            return [*messages[:2], *messages[2:][-2 * self.rounds:]]

    assert check_keep_rounds(TwoMessagesARound) is False
    out = capsys.readouterr().out
    assert "without the assistant message that called it" in out
    assert "cut where a round starts" in out


def test_keep_rounds_check_rejects_dropping_the_task(capsys):
    class NoTask(l13.KeepRounds):
        def before_request(self, messages):
            sent = super().before_request(messages)
            return [sent[0], *sent[2:]]

    assert check_keep_rounds(NoTask) is False
    assert "keep messages[1], the task" in capsys.readouterr().out


def test_keep_rounds_check_rejects_editing_the_transcript_in_place(capsys):
    class InPlace(l13.KeepRounds):
        def before_request(self, messages):
            found = starts(messages)
            if len(found) >= self.rounds:
                del messages[2:found[-self.rounds]]
            return messages

    assert check_keep_rounds(InPlace) is False
    assert "Build a new list and return it" in capsys.readouterr().out


def test_keep_rounds_check_rejects_one_round_too_few(capsys):
    class OneTooFew(l13.KeepRounds):
        def __init__(self, rounds=2):
            super().__init__(rounds - 1)

    assert check_keep_rounds(OneTooFew) is False
    assert "count assistant messages, not messages" in capsys.readouterr().out


def test_keep_rounds_check_rejects_sending_everything(capsys):
    class Everything(l13.KeepRounds):
        def before_request(self, messages):
            return messages

    assert check_keep_rounds(Everything) is False
    assert "drop every round before the last 2" in capsys.readouterr().out


def test_keep_rounds_check_rejects_a_tail_that_overlaps_the_prelude(capsys):
    class Overlap(l13.KeepRounds):  # counts rounds from messages[0]: fine once the run is long
        def before_request(self, messages):
            found = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
            start = found[-self.rounds] if len(found) >= self.rounds else 0
            return [*messages[:2], *messages[start:]]

    assert check_keep_rounds(Overlap) is False
    assert "2 system messages" in capsys.readouterr().out


def test_keep_rounds_check_says_what_to_do_without_a_rounds_parameter(capsys):
    class NoParameter(Mechanism):
        def before_request(self, messages):
            return messages

    assert check_keep_rounds(NoParameter) is False
    assert "give __init__ the parameter rounds" in capsys.readouterr().out


# -- exercise 2: the bug in LastMessages --------------------------------------------------


def test_the_given_rule_really_splits_a_call_from_its_result():
    _, model = long_run(LastMessages)
    n = broken_request(model)
    assert n is not None
    sent = model.requests[n - 1]["messages"]
    assert sent[2]["role"] == "tool"
    _, fixed = long_run(l13.LastMessagesFixed)
    assert broken_request(fixed) is None


def test_last_messages_check_accepts_the_reference(capsys):
    assert check_last_messages_fixed(l13.LastMessagesFixed) is True
    assert "PASS" in capsys.readouterr().out


def test_last_messages_check_rejects_the_bug_itself(capsys):
    assert check_last_messages_fixed(LastMessages) is False
    assert "move it back to the assistant message" in capsys.readouterr().out


def test_last_messages_check_rejects_moving_the_cut_forward(capsys):
    class Forward(LastMessages):
        def before_request(self, messages):
            start = max(2, len(messages) - self.keep)
            while start < len(messages) and messages[start]["role"] == "tool":
                start += 1
            return [*messages[:2], *messages[start:]]

    assert check_last_messages_fixed(Forward) is False
    assert "move the cut back instead" in capsys.readouterr().out


def test_last_messages_check_rejects_dropping_the_orphaned_results(capsys):
    class DropOrphans(LastMessages):
        def before_request(self, messages):
            tail = messages[2:][-self.keep:]
            called = {c["id"] for m in tail for c in m.get("tool_calls") or ()}
            return [*messages[:2], *(m for m in tail
                                     if m["role"] != "tool" or m["tool_call_id"] in called)]

    assert check_last_messages_fixed(DropOrphans) is False
    assert "drops results the model just asked for" in capsys.readouterr().out


def test_last_messages_check_rejects_moving_back_one_message_only(capsys):
    class BackOne(LastMessages):  # enough when every round has one call
        def before_request(self, messages):
            start = max(2, len(messages) - self.keep)
            if start < len(messages) and messages[start]["role"] == "tool":
                start -= 1
            return [*messages[:2], *messages[start:]]

    assert check_last_messages_fixed(BackOne) is False
    assert "that can be two messages back" in capsys.readouterr().out


def test_last_messages_check_rejects_a_tail_that_repeats_the_prelude(capsys):
    class Repeats(LastMessages):  # the tail is taken from the whole list
        def before_request(self, messages):
            start = max(0, len(messages) - self.keep)
            while start > 0 and messages[start]["role"] == "tool":
                start -= 1
            return [*messages[:2], *messages[start:]]

    assert check_last_messages_fixed(Repeats) is False
    assert "Take the tail from messages[2:]" in capsys.readouterr().out


def test_last_messages_check_rejects_moving_back_a_whole_round_too_far(capsys):
    class RoundTooFar(LastMessages):
        def before_request(self, messages):
            start = max(2, len(messages) - self.keep)
            while start > 2 and messages[start]["role"] == "tool":
                start -= 1
            if start > 2 and messages[start]["role"] == "assistant":
                start = max([i for i in starts(messages) if i < start], default=2)
            return [*messages[:2], *messages[start:]]

    assert check_last_messages_fixed(RoundTooFar) is False
    assert "only as far as the assistant message" in capsys.readouterr().out


def test_keep_rounds_check_rejects_one_round_too_many(capsys):
    class OneTooMany(l13.KeepRounds):
        def __init__(self, rounds=2):
            super().__init__(rounds + 1)

    assert check_keep_rounds(OneTooMany) is False
    assert "drop every round before the last 2" in capsys.readouterr().out


def test_keep_rounds_check_rejects_dropping_the_system_prompt(capsys):
    class NoSystem(l13.KeepRounds):
        def before_request(self, messages):
            return super().before_request(messages)[1:]

    assert check_keep_rounds(NoSystem) is False
    assert "not the system prompt" in capsys.readouterr().out


def test_last_messages_check_rejects_one_message_too_many():
    class OneTooMany(l13.LastMessagesFixed):
        def __init__(self, keep=6):
            super().__init__(keep + 1)

    assert check_last_messages_fixed(OneTooMany) is False


def test_last_messages_check_rejects_dropping_the_system_prompt(capsys):
    class NoSystem(l13.LastMessagesFixed):
        def before_request(self, messages):
            return super().before_request(messages)[1:]

    assert check_last_messages_fixed(NoSystem) is False
    assert "not the system prompt" in capsys.readouterr().out


# -- user messages mid-run (issue 33): a reminder and a stop-gate push-back ---------------


def test_keep_rounds_check_rejects_any_message_but_a_tool_result_starting_a_round(capsys):
    class NonToolStarts(l13.KeepRounds):  # right until a user message comes mid-run
        def before_request(self, messages):
            found = [i for i in range(2, len(messages)) if messages[i]["role"] != "tool"]
            if len(found) < self.rounds:
                return messages
            return [messages[0], messages[1], *messages[found[-self.rounds]:]]

    assert check_keep_rounds(NonToolStarts) is False
    out = capsys.readouterr().out
    assert "a user message mid-run" in out
    assert "reminder and a stop-gate push-back" in out


def test_keep_rounds_check_rejects_rounds_that_start_at_a_user_message(capsys):
    class UserStarts(l13.KeepRounds):  # a reminder taken for the start of a new round
        def before_request(self, messages):
            found = [i for i in range(2, len(messages))
                     if messages[i]["role"] in ("assistant", "user")
                     and not (messages[i]["role"] == "assistant"
                              and i > 2 and messages[i - 1]["role"] == "user")]
            if len(found) < self.rounds:
                return messages
            return [messages[0], messages[1], *messages[found[-self.rounds]:]]

    assert check_keep_rounds(UserStarts) is False


def test_keep_rounds_check_rejects_counting_only_replies_that_call_tools(capsys):
    class CallsOnly(l13.KeepRounds):  # an answer without calls (pushed back) is a round too
        def before_request(self, messages):
            found = [i for i in range(2, len(messages)) if messages[i].get("tool_calls")]
            if len(found) < self.rounds:
                return messages
            return [messages[0], messages[1], *messages[found[-self.rounds]:]]

    assert check_keep_rounds(CallsOnly) is False


def test_last_messages_check_rejects_moving_a_cut_on_a_user_message_back(capsys):
    class BackToAssistant(l13.LastMessagesFixed):  # moves back over a reminder too
        def before_request(self, messages):
            start = max(2, len(messages) - self.keep)
            while start > 2 and messages[start]["role"] != "assistant":
                start -= 1
            return [*messages[:2], *messages[start:]]

    assert check_last_messages_fixed(BackToAssistant) is False
    assert "a cut on a user message" in capsys.readouterr().out


def test_the_gated_run_has_a_reminder_and_a_push_back_mid_run():
    from exercises.l13 import gated_run

    result, _ = gated_run()
    kinds = [e.type for e in result.events]
    assert "reminder" in kinds and "stop_gate" in kinds
    assert result.outcome == "completed"
