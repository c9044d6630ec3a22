"""``python -m harness doctor --live``: what the configured endpoint can do, asked live.

Providers differ in what the harness relies on: tool calls, forcing a tool
(``tool_choice``), usage at the end of a stream, reasoning fields. A few tiny requests
find out, before a lesson depends on it:

    1. tools, tool_choice "auto"     does the model call a tool at all?
    2. a named tool_choice           refused by DeepSeek's thinking mode, some hosts
    3. tool_choice "required"        refused by some servers (older vLLM)
    4. a stream with usage           stream_options.include_usage: usage at the end?
    5. a reasoning field             reasoning_content / reasoning / <think> / parts

The requests are read as a run reads them (the reply's size limit, the harness's own
reading of the bytes) but not through `OpenAIModel.complete`, whose fallbacks would hide
what the server refuses. Each is given `PROBE_SECONDS` at most (or the model's own
``max_reply_seconds``, when shorter), however busy a server keeps the line with
keep-alive comments: the probe always ends. `probe` returns the checks and the settings
the harness will use; `print_probe` prints them as a table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..models import parse_reply
from .openai_model import OpenAIModel, Reading, Within

ECHO = {"type": "function", "function": {
    "name": "echo", "description": "Say a word back.",
    "parameters": {"type": "object", "properties": {"word": {"type": "string"}},
                   "required": ["word"]}}}
ASK = [{"role": "user", "content": "Call the echo tool with the word 'ping'."}]
NAMED = {"type": "function", "function": {"name": "echo"}}
PROBE_SECONDS = 30.0  # the most one probe request may take (a local server loads its model)


@dataclass
class Check:
    """One thing asked of the endpoint, and what it answered."""

    name: str
    ok: bool
    note: str = ""


def probe(model: OpenAIModel, seconds: float | None = None
          ) -> tuple[list[Check], dict[str, Any]]:
    """Ask the endpoint; return the checks and the settings the harness will use.
    ``seconds``: the most each request may take (`PROBE_SECONDS`, or the model's own
    ``max_reply_seconds`` when shorter)."""
    limit = min(s for s in (PROBE_SECONDS if seconds is None else seconds,
                            model.settings.max_reply_seconds) if s is not None)
    within: Within = (limit, None, ("the probe's limit", "the probe's limit"))
    found: list[dict] = []  # every reply message, to look for reasoning in
    checks = [_tools(model, choice, label, found, within) for choice, label in (
        ("auto", "tool calls (auto)"), (NAMED, "named tool_choice"),
        ("required", 'tool_choice "required"'))]
    checks += _stream(model, found, within)
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
    from ..ui.display import escape  # what a server says is shown, never obeyed

    print(escape(f"\nlive checks against {model!r}:", lines=True))
    print(f"  {'check':<24} {'result':<7} note")
    for check in checks:
        print(escape(f"  {check.name:<24} {'yes' if check.ok else 'no':<7} {check.note}"))
    changed = {key: value for key, value in settings.items()
               if key in model.settings.request or value != getattr(model.settings, key, None)}
    print(escape(f"settings the harness will use: {json.dumps(settings)}"))
    if changed:
        print(escape(f"to use them every time: HARNESS_MODEL_SETTINGS='{json.dumps(changed)}'"))


def _ask(model: OpenAIModel, within: Within, tools: list[dict] | None = None,
         choice: Any = None, **stream: Any) -> Reading:
    """One tiny request, built as a run builds it (`OpenAIModel._request`: the settings, the
    model name), streamed only as ``stream`` says, read within the probe's limit."""
    request = model._request(ASK, tools or [], choice, None)
    request.pop("stream", None)
    request.pop("stream_options", None)
    return model._read({**request, **stream}, _quiet, within)


def _tools(model: OpenAIModel, choice: Any, label: str, found: list[dict],
           within: Within) -> Check:
    try:
        message = _ask(model, within, [ECHO], choice).message
    except Exception as exc:
        return Check(label, False, _said(model, exc))
    found.append(message)
    calls = [(c.get("function") or {}).get("name") for c in message.get("tool_calls") or ()
             if isinstance(c, dict)]
    if choice == "auto":
        return Check(label, bool(calls), f"called {calls[0]}" if calls else
                     "answered in text instead of calling the tool")
    return Check(label, True, "accepted" + ("" if calls else ", but no tool was called"))


def _stream(model: OpenAIModel, found: list[dict], within: Within) -> list[Check]:
    note = ""
    try:
        try:
            reading = _ask(model, within, stream=True, stream_options={"include_usage": True})
        except Exception as exc:
            if "stream_options" not in str(exc):
                raise
            note = "stream_options refused: usage is estimated"
            reading = _ask(model, within, stream=True)
    except Exception as exc:
        return [Check("streaming", False, _said(model, exc)),
                Check("usage in a stream", False, "not tried")]
    found.append(reading.message)
    return [Check("streaming", True, f"{reading.chunks} chunks"),
            Check("usage in a stream", reading.usage is not None,
                  note or ("" if reading.usage else "none sent: usage is estimated"))]


def _said(model: OpenAIModel, exc: Exception) -> str:
    """A refusal in one short line, without the key."""
    text = " ".join(f"{type(exc).__name__}: {getattr(exc, 'message', exc)}".split())
    return model.redact(text)[:110]


def _quiet(event_type: str | None = None, **data: Any) -> None:
    """Nobody listens to a probe's stream."""
