"""Request settings for `OpenAIModel`, from an argument or one environment variable.

    OpenAIModel(settings={"temperature": 0, "max_tokens": 2000})
    HARNESS_MODEL_SETTINGS='{"extra_body": {"thinking": {"type": "disabled"}}}'

A few keys are the harness's own (`HARNESS_KEYS`): whether to stream, which role
carries the system prompt, the strongest ``tool_choice`` to send, whether to ask for
usage in a stream, the model's context window (for the panel), and the limits on one
reply: its size, its time, how long a stream may send nothing, how much reasoning goes
back. Every other key goes into each request as it is: ``max_tokens`` or
``max_completion_tokens``, ``temperature``, ``reasoning_effort``, ``extra_body``
(fields the SDK does not know, such as DeepSeek's ``thinking``)...
An argument wins over the environment, key by key.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SETTINGS_VARIABLE = "HARNESS_MODEL_SETTINGS"
SYSTEM_ROLES = ("system", "developer", "user")
TOOL_CHOICES = ("named", "required", "auto")  # strongest first: what the fallback steps down
LIMITS = ("max_reply_chars", "max_reply_seconds", "max_idle_seconds",
          "max_echoed_reasoning_chars")
HARNESS_KEYS = ("stream", "system_role", "forced_tool_choice", "stream_usage", "context_window",
                *LIMITS)
RESERVED = ("model", "messages", "tools", "tool_choice", "stream_options", "n")
BODY_RESERVED = (*RESERVED, "stream")  # nor inside extra_body, which would override them
SECRET_KEYS = ("extra_headers", "extra_query")  # may hold a key: never printed
MAX_DEPTH = 64  # levels of nesting a setting may have (a JSON schema needs a dozen or two)


@dataclass(frozen=True)
class ModelSettings:
    """How `OpenAIModel` talks to the server. Build it with `ModelSettings.resolve`."""

    stream: bool = True
    """Stream replies (text appears as it is written; cancel closes the connection)."""
    system_role: str = "system"
    """Who says the system prompt: ``"system"``, ``"developer"`` (OpenAI's reasoning
    models) or ``"user"`` (folded into the first user message, for models that refuse
    a system role)."""
    forced_tool_choice: str = "named"
    """The strongest forcing the server accepts: a ``"named"`` tool, ``"required"``
    (some tool), or ``"auto"`` plus a reminder. Lowered by itself when a server refuses."""
    stream_usage: bool = True
    """Ask for token usage at the end of a stream (``stream_options.include_usage``)."""
    context_window: int | None = None
    """The model's context window in tokens, if you know it: the plan panel shows each
    request's context against it. Never sent."""
    max_reply_chars: int = 2_000_000
    """The most one reply may hold, in characters of text, reasoning and tool calls
    (each streamed chunk counts one more): past it the request ends in a `ModelError`,
    and no more of it is read. A body or one streamed event of more than six bytes a
    character is refused before it is read whole."""
    max_reply_seconds: float | None = 1200.0
    """Seconds one request may take, from sending it to the reply's last byte, however
    busy the server keeps the line (keep-alive comments, blank lines): then a
    `ModelError`. ``None``: no limit."""
    max_idle_seconds: float | None = 300.0
    """Seconds a stream may send nothing of the reply (keep-alive comments, empty chunks,
    the same usage or finish_reason again are nothing), the wait for the first piece
    included: then a `ModelError`, with or without a deadline on the run, in a browser tab
    too. Not lower by default: a reasoning model may think for minutes before its first
    piece of text."""
    max_echoed_reasoning_chars: int | None = 200_000
    """A reply's ``reasoning_content`` / ``reasoning`` is sent back on later requests (some
    providers need it) cut to this many characters. Signed or encrypted reasoning
    (``reasoning_details``) is never cut: it would no longer verify."""
    request: Mapping[str, Any] = field(default_factory=dict)
    """Everything else: sent with every request."""

    @classmethod
    def resolve(cls, given: Mapping[str, Any] | None = None) -> ModelSettings:
        """The environment's settings (`SETTINGS_VARIABLE`), overridden by ``given``."""
        given = dict(given or {})
        if too_deep(given):
            raise ValueError(f"the settings are nested more than {MAX_DEPTH} levels deep: "
                             "no request needs that")
        merged = {**from_environment(), **given}
        reserved = sorted(set(merged) & set(RESERVED))
        if reserved:
            raise ValueError(f"settings may not set {reserved}: the harness sends those "
                             "itself (the model name is OpenAIModel's first argument)")
        body = merged.get("extra_body")
        if body is not None and not isinstance(body, Mapping):
            raise ValueError(f"extra_body must be an object of extra request fields, like "
                             f'{{"thinking": {{"type": "disabled"}}}}, not {type(body).__name__}')
        reserved = sorted(set(body or ()) & set(BODY_RESERVED))
        if reserved:
            raise ValueError(f"extra_body may not set {reserved}: the harness sends those "
                             "itself, and extra_body would override them")
        own = {key: merged.pop(key) for key in HARNESS_KEYS if key in merged}
        settings = cls(**own, request=merged)
        settings._check()
        return settings

    def _check(self) -> None:
        if self.system_role not in SYSTEM_ROLES:
            raise ValueError(f"system_role must be one of {SYSTEM_ROLES}, "
                             f"not {self.system_role!r}")
        if self.forced_tool_choice not in TOOL_CHOICES:
            raise ValueError(f"forced_tool_choice must be one of {TOOL_CHOICES}, "
                             f"not {self.forced_tool_choice!r}")
        window = self.context_window
        if window is not None and not _whole_number(window):
            raise ValueError(f"context_window must be a whole number of tokens, like 128000, "
                             f"not {window!r}")
        if not _whole_number(self.max_reply_chars):
            raise ValueError(f"max_reply_chars must be a whole number of characters, like "
                             f"2000000, not {self.max_reply_chars!r}")
        echoed = self.max_echoed_reasoning_chars
        if echoed is not None and not _whole_number(echoed):
            raise ValueError(f"max_echoed_reasoning_chars must be a whole number of "
                             f"characters, or null for no limit, not {echoed!r}")
        for name in ("max_reply_seconds", "max_idle_seconds"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(
                    value, (int, float)) or not value > 0 or value == float("inf")):
                raise ValueError(f"{name} must be a number of seconds above 0, or null for "
                                 f"no limit, not {value!r}")

    def shown(self) -> dict[str, Any]:
        """The settings as JSON-ready data, secrets masked: what doctor prints."""
        own = {key: getattr(self, key) for key in HARNESS_KEYS}
        request = {key: ("***" if key in SECRET_KEYS else value)
                   for key, value in self.request.items()}
        return {**own, **request}


def _whole_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Is ``value`` (JSON-like data) nested more than ``limit`` levels? Without recursion."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def from_environment() -> dict[str, Any]:
    """The JSON object in ``HARNESS_MODEL_SETTINGS`` (empty when unset)."""
    text = os.environ.get(SETTINGS_VARIABLE, "").strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except RecursionError:
        value = None  # nested deeper than Python's parser goes: too deep, said below
        deep = True
    except ValueError as exc:
        raise ValueError(f"{SETTINGS_VARIABLE} is not valid JSON ({exc}); an example: "
                         f"{SETTINGS_VARIABLE}='{{\"temperature\": 0}}'") from None
    else:
        deep = too_deep(value)
    if deep:
        raise ValueError(f"{SETTINGS_VARIABLE} is nested more than {MAX_DEPTH} levels deep: "
                         "no request needs that")
    if not isinstance(value, dict):
        raise ValueError(f"{SETTINGS_VARIABLE} must hold a JSON object, like "
                         f"'{{\"temperature\": 0}}', not {type(value).__name__}")
    return value


def check_request_keys(request: Mapping[str, Any], create: Any) -> None:
    """Refuse a request setting the SDK's ``create`` does not take, naming the fix."""
    import inspect

    params = inspect.signature(create).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return
    unknown = sorted(set(request) - set(params))
    if unknown:
        raise ValueError(f"unknown request setting(s) {unknown}: the openai SDK does not "
                         "take them; send a provider's own fields in extra_body, e.g. "
                         f"settings={{'extra_body': {{{unknown[0]!r}: ...}}}}")
