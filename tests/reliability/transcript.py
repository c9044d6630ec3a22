"""The message-order invariants every transcript must keep, whatever happened in the run.

A transcript is what the next request sends, so it must be one the OpenAI
chat-completions API accepts:

    system, user, ... assistant(tool_calls=[a, b]), tool(a), tool(b), user(reminder), ...

- roles are only system / user / assistant / tool, and the one system message is first;
- every ``tool_calls`` entry gets exactly one tool message, in call order, right after
  its assistant message: nothing (no reminder, no push back) lands in between;
- no tool message answers a call that was not made;
- an assistant message without tool calls carries text (the API refuses ``content: null``
  unless ``tool_calls`` is set); every other ``content`` is a string.
"""

from __future__ import annotations

import json

ROLES = ("system", "user", "assistant", "tool")


def assert_valid_transcript(messages: list[dict]) -> None:
    """Raise AssertionError, naming the message index, if a wire-format rule is broken."""
    assert len(messages) >= 2, f"a transcript starts with system and task, got {messages!r}"
    assert messages[0]["role"] == "system", "the system message must come first"
    assert messages[1]["role"] == "user", "the task must follow the system message"
    json.dumps(messages)  # plain JSON data: what goes on the wire
    waiting: list[str] = []  # call ids still owed a tool message, in call order
    for i, message in enumerate(messages):
        role = message.get("role")
        assert role in ROLES, f"message {i}: role {role!r} is not one of {ROLES}"
        if waiting:
            assert role == "tool", (f"message {i} ({role}) lands between a tool call and its "
                                    f"result; still owed: {waiting}")
            assert message["tool_call_id"] == waiting[0], (
                f"message {i} answers {message['tool_call_id']!r}, expected {waiting[0]!r}")
            waiting.pop(0)
        elif role == "tool":
            raise AssertionError(f"message {i}: tool message with no open call: {message!r}")
        if role == "system":
            assert i == 0, f"message {i}: a second system message"
        if role == "assistant":
            waiting = _calls(i, message)
            assert waiting or isinstance(message.get("content"), str), (
                f"message {i}: an assistant message without tool_calls needs string content, "
                f"got {message.get('content')!r}")
        else:
            assert isinstance(message.get("content"), str), f"message {i}: content not text"
    assert not waiting, f"the transcript ends with calls unanswered: {waiting}"


def _calls(i: int, message: dict) -> list[str]:
    """The ids of an assistant message's tool calls, checking each call's wire shape."""
    calls = message.get("tool_calls") or []
    assert "tool_calls" not in message or calls, f"message {i}: empty tool_calls list"
    ids = []
    for call in calls:
        assert call.get("type") == "function", f"message {i}: call type {call.get('type')!r}"
        assert isinstance(call.get("id"), str) and call["id"], f"message {i}: call id {call!r}"
        function = call.get("function") or {}
        assert isinstance(function.get("name"), str), f"message {i}: call name {call!r}"
        assert isinstance(function.get("arguments"), str), f"message {i}: arguments {call!r}"
        ids.append(call["id"])
    return ids
