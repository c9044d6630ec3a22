"""Providers' documented request rules, as checks: for fake servers and for replays.

Each ``*_problems(body)`` returns what a provider would refuse in a chat-completions
request body (an empty list: it would accept it). Each mode below turns a rule into a
`FakeOpenAI` rule: a request that breaks it gets the provider's own 400, so a test
sees what a learner would see live.

| rule                         | source                                                    |
|------------------------------|-----------------------------------------------------------|
| tool calls answered in order | OpenAI: "An assistant message with 'tool_calls' must be    |
|                              | followed by tool messages responding to each tool_call_id" |
| reasoning_content goes back  | DeepSeek thinking mode: "The reasoning_content in the      |
|                              | thinking mode must be passed back to the API" (tool turns) |
| no named tool_choice         | DeepSeek thinking mode, some hosts: "does not support this |
|                              | tool_choice"                                              |
| no ``system`` role           | OpenAI o1-mini: "'messages[0].role' does not support      |
|                              | 'system' with this model"                                 |
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.fake_openai import Scripted, http_error

Rule = Callable[[Any], Scripted | None]
ROLES = ("system", "developer", "user", "assistant", "tool")


def openai_problems(body: dict) -> list[str]:
    """What OpenAI's chat-completions endpoint refuses in ``body``."""
    problems: list[str] = []
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["messages must be a non-empty list"]
    open_calls: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ROLES:
            problems.append(f"messages[{i}].role {role!r} is not a role")
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                problems.append(f"messages[{i}] answers {message.get('tool_call_id')!r}, "
                                "which no preceding assistant message called")
            else:
                open_calls.remove(message["tool_call_id"])
            continue
        if open_calls:
            problems.append(f"messages[{i}]: calls {open_calls} were never answered")
            open_calls = []
        if role == "assistant":
            problems += _assistant_problems(i, message)
            open_calls = [c.get("id") for c in message.get("tool_calls") or ()]
        elif not isinstance(message.get("content"), (str, list)):
            problems.append(f"messages[{i}].content must be a string or a list of parts")
    if open_calls:
        problems.append(f"the last calls {open_calls} were never answered")
    problems += _request_problems(body)
    return problems


def _assistant_problems(i: int, message: dict) -> list[str]:
    problems = []
    content, calls = message.get("content"), message.get("tool_calls")
    if content is None and not calls:
        problems.append(f"messages[{i}]: an assistant message needs content or tool_calls")
    if content is not None and not isinstance(content, (str, list)):
        problems.append(f"messages[{i}].content must be a string")
    ids = [c.get("id") for c in calls or ()]
    for j, call in enumerate(calls or ()):
        fn = call.get("function") or {}
        if not isinstance(call.get("id"), str) or not call["id"]:
            problems.append(f"messages[{i}].tool_calls[{j}].id is missing or empty")
        if call.get("type") != "function":
            problems.append(f"messages[{i}].tool_calls[{j}].type must be 'function'")
        if not fn.get("name") or not isinstance(fn.get("arguments"), str):
            problems.append(f"messages[{i}].tool_calls[{j}] needs a name and string arguments")
    if len(set(ids)) != len(ids):
        problems.append(f"messages[{i}] has duplicate tool call ids")
    return problems


def _request_problems(body: dict) -> list[str]:
    problems = []
    tools, choice = body.get("tools"), body.get("tool_choice")
    if choice is not None and not tools:
        problems.append("tool_choice is only allowed when tools are specified")
    if isinstance(choice, dict):
        names = {t["function"]["name"] for t in tools or ()}
        if (choice.get("function") or {}).get("name") not in names:
            problems.append("tool_choice names a tool that is not in tools")
    if "stream_options" in body and body.get("stream") is not True:
        problems.append("stream_options is only allowed when stream is true")
    return problems


def thinking_on(body: dict) -> bool:
    """DeepSeek's thinking mode, unless ``extra_body={"thinking": {"type": "disabled"}}``."""
    return (body.get("thinking") or {}).get("type") != "disabled"


def deepseek_problems(body: dict) -> list[str]:
    """What DeepSeek refuses in thinking mode, besides what OpenAI refuses."""
    problems = openai_problems(body)
    if not thinking_on(body):
        return problems
    for i, message in enumerate(body.get("messages") or ()):
        if message.get("role") == "assistant" and message.get("tool_calls") \
                and "reasoning_content" not in message:
            problems.append(f"Missing `reasoning_content` field in the assistant message at "
                            f"message index {i}. The reasoning_content in the thinking mode "
                            "must be passed back to the API.")
    if isinstance(body.get("tool_choice"), dict):
        problems.append("deepseek-reasoner does not support this tool_choice")
    return problems


# -- modes for FakeOpenAI(rules=[...]) ----------------------------------------------------

def deepseek_thinking() -> Rule:
    """DeepSeek in thinking mode: reasoning_content back on tool turns, no named choice."""
    def rule(body: Any) -> Scripted | None:
        if not isinstance(body, dict) or not thinking_on(body):
            return None
        found = [p for p in deepseek_problems(body) if "reasoning_content" in p
                 or "tool_choice" in p]
        return http_error(400, found[0], code="invalid_request_error") if found else None
    return rule


def refuses_tool_choice(*levels: str) -> Rule:
    """A host that refuses these forcings: ``"named"`` (a function), ``"required"``."""
    def rule(body: Any) -> Scripted | None:
        choice = body.get("tool_choice") if isinstance(body, dict) else None
        level = "named" if isinstance(choice, dict) else choice
        if level in levels:
            return http_error(400, f"This model does not support this tool_choice: {level}",
                              code="invalid_request_error")
        return None
    return rule


def refuses_stream_options() -> Rule:
    """An older server that does not know ``stream_options``."""
    def rule(body: Any) -> Scripted | None:
        if isinstance(body, dict) and "stream_options" in body:
            return http_error(400, "Unrecognized request argument supplied: stream_options")
        return None
    return rule


def refuses_system_role() -> Rule:
    """A model that refuses the ``system`` role (OpenAI's o1-mini did)."""
    def rule(body: Any) -> Scripted | None:
        roles = [m.get("role") for m in body.get("messages") or ()] if isinstance(body, dict) \
            else []
        if "system" in roles:
            return http_error(400, "Unsupported value: 'messages[0].role' does not support "
                              "'system' with this model.", code="unsupported_value")
        return None
    return rule
