"""Request settings for `OpenAIModel`, from an argument or one environment variable.

    OpenAIModel(settings={"temperature": 0, "max_tokens": 2000})
    HARNESS_MODEL_SETTINGS='{"extra_body": {"thinking": {"type": "disabled"}}}'

A few keys are the harness's own (`HARNESS_KEYS`): whether to stream, which role
carries the system prompt, the strongest ``tool_choice`` to send, whether to ask for
usage in a stream, and the model's context window (for the panel). Every other key
goes into each request as it is: ``max_tokens`` or ``max_completion_tokens``,
``temperature``, ``reasoning_effort``, ``extra_body`` (fields the SDK does not know,
such as DeepSeek's ``thinking``)...
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
HARNESS_KEYS = ("stream", "system_role", "forced_tool_choice", "stream_usage", "context_window")
RESERVED = ("model", "messages", "tools", "tool_choice", "stream_options", "n")
SECRET_KEYS = ("extra_headers", "extra_query")  # may hold a key: never printed


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
    request: Mapping[str, Any] = field(default_factory=dict)
    """Everything else: sent with every request."""

    @classmethod
    def resolve(cls, given: Mapping[str, Any] | None = None) -> ModelSettings:
        """The environment's settings (`SETTINGS_VARIABLE`), overridden by ``given``."""
        merged = {**from_environment(), **dict(given or {})}
        reserved = sorted(set(merged) & set(RESERVED))
        if reserved:
            raise ValueError(f"settings may not set {reserved}: the harness sends those "
                             "itself (the model name is OpenAIModel's first argument)")
        own = {key: merged.pop(key) for key in HARNESS_KEYS if key in merged}
        settings = cls(**own, request=merged)
        if settings.system_role not in SYSTEM_ROLES:
            raise ValueError(f"system_role must be one of {SYSTEM_ROLES}, "
                             f"not {settings.system_role!r}")
        if settings.forced_tool_choice not in TOOL_CHOICES:
            raise ValueError(f"forced_tool_choice must be one of {TOOL_CHOICES}, "
                             f"not {settings.forced_tool_choice!r}")
        window = settings.context_window
        if window is not None and (not isinstance(window, int) or isinstance(window, bool)
                                   or window < 1):
            raise ValueError(f"context_window must be a whole number of tokens, like 128000, "
                             f"not {window!r}")
        return settings

    def shown(self) -> dict[str, Any]:
        """The settings as JSON-ready data, secrets masked: what doctor prints."""
        own = {key: getattr(self, key) for key in HARNESS_KEYS}
        request = {key: ("***" if key in SECRET_KEYS else value)
                   for key, value in self.request.items()}
        return {**own, **request}


def from_environment() -> dict[str, Any]:
    """The JSON object in ``HARNESS_MODEL_SETTINGS`` (empty when unset)."""
    text = os.environ.get(SETTINGS_VARIABLE, "").strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{SETTINGS_VARIABLE} is not valid JSON ({exc}); an example: "
                         f"{SETTINGS_VARIABLE}='{{\"temperature\": 0}}'") from None
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
