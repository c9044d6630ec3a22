"""``python -m harness doctor --live``: what the configured endpoint can do, asked live.

Providers differ in what the harness relies on: tool calls, forcing a tool
(``tool_choice``), usage at the end of a stream, reasoning fields. A few tiny requests
find out, before a lesson depends on it:

    1. tools, tool_choice "auto"     does the model call a tool at all?
    2. a named tool_choice           refused by DeepSeek's thinking mode, some hosts
    3. tool_choice "required"        refused by some servers (older vLLM)
    4. a stream with usage           stream_options.include_usage: usage at the end?
    5. a reasoning field             reasoning_content / reasoning / <think> / parts

The requests go through the SDK directly, not through `OpenAIModel.complete`, whose
fallbacks would hide what the server refuses. `probe` returns the checks and the
settings the harness will use; `print_probe` prints them as a table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..models import parse_reply
from .openai_model import OpenAIModel
from .stream_reader import as_dict
from .streaming import Assembler

ECHO = {"type": "function", "function": {
    "name": "echo", "description": "Say a word back.",
    "parameters": {"type": "object", "properties": {"word": {"type": "string"}},
                   "required": ["word"]}}}
ASK = [{"role": "user", "content": "Call the echo tool with the word 'ping'."}]
NAMED = {"type": "function", "function": {"name": "echo"}}


@dataclass
class Check:
    """One thing asked of the endpoint, and what it answered."""

    name: str
    ok: bool
    note: str = ""


def probe(model: OpenAIModel) -> tuple[list[Check], dict[str, Any]]:
    """Ask the endpoint; return the checks and the settings the harness will use."""
    found: list[dict] = []  # every reply message, to look for reasoning in
    checks = [_tools(model, choice, label, found) for choice, label in (
        ("auto", "tool calls (auto)"), (NAMED, "named tool_choice"),
        ("required", 'tool_choice "required"'))]
    checks += _stream(model, found)
    fields = sorted({key for m in found for key in ("reasoning_content", "reasoning",
                                                   "reasoning_details") if m.get(key)})
    thought = any(parse_reply(m).reasoning for m in found)
    checks.append(Check("reasoning field", bool(fields) or thought,
                        ", ".join(fields) or ("in the content" if thought else "none seen")))
    ok = {check.name: check.ok for check in checks}
    forced = "named" if ok["named tool_choice"] else \
        "required" if ok['tool_choice "required"'] else "auto"
    settings = {**model.settings.shown(), "forced_tool_choice": forced,
                "stream": ok["streaming"], "stream_usage": ok["usage in a stream"]}
    return checks, settings


def print_probe(checks: list[Check], settings: dict[str, Any], model: OpenAIModel) -> None:
    print(f"\nlive checks against {model!r}:")
    print(f"  {'check':<24} {'result':<7} note")
    for check in checks:
        print(f"  {check.name:<24} {'yes' if check.ok else 'no':<7} {check.note}")
    changed = {key: value for key, value in settings.items()
               if key in model.settings.request or value != getattr(model.settings, key, None)}
    print("settings the harness will use:", json.dumps(settings))
    if changed:
        print(f"to use them every time: HARNESS_MODEL_SETTINGS='{json.dumps(changed)}'")


def _create(model: OpenAIModel, tools: list[dict] | None = None, choice: Any = None,
            **stream: Any) -> Any:
    """One tiny request, built as a run builds it (`OpenAIModel._request`: the settings, the
    model name), streamed only as ``stream`` says."""
    request = model._request(ASK, tools or [], choice, None)
    request.pop("stream", None)
    request.pop("stream_options", None)
    return model.client.chat.completions.create(**request, **stream)


def _tools(model: OpenAIModel, choice: Any, label: str, found: list[dict]) -> Check:
    try:
        completion = as_dict(_create(model, [ECHO], choice))
    except Exception as exc:
        return Check(label, False, _said(model, exc))
    message = ((completion.get("choices") or [{}])[0] or {}).get("message") or {}
    found.append(message)
    calls = [c.get("function", {}).get("name") for c in message.get("tool_calls") or ()]
    if choice == "auto":
        return Check(label, bool(calls), f"called {calls[0]}" if calls else
                     "answered in text instead of calling the tool")
    return Check(label, True, "accepted" + ("" if calls else ", but no tool was called"))


def _stream(model: OpenAIModel, found: list[dict]) -> list[Check]:
    request = {"stream": True, "stream_options": {"include_usage": True}}
    note = ""
    try:
        try:
            stream = _create(model, **request)
        except Exception as exc:
            if "stream_options" not in str(exc):
                raise
            note = "stream_options refused: usage is estimated"
            stream = _create(model, stream=True)
        built = Assembler()
        for chunk in stream:
            built.feed(as_dict(chunk))
    except Exception as exc:
        return [Check("streaming", False, _said(model, exc)),
                Check("usage in a stream", False, "not tried")]
    found.append(built.message())
    streamed = built.finish_reason is not None
    return [Check("streaming", streamed, f"{built.chunks} chunks" if streamed else
                  "no finish_reason: the stream looks cut off"),
            Check("usage in a stream", built.usage is not None,
                  note or ("" if built.usage else "none sent: usage is estimated"))]


def _said(model: OpenAIModel, exc: Exception) -> str:
    """A refusal in one short line, without the key."""
    text = " ".join(f"{type(exc).__name__}: {getattr(exc, 'message', exc)}".split())
    return model.redact(text)[:110]
